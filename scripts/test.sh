#!/usr/bin/env bash
# Runs the whole suite on both storage configurations: SQLite (default) and PostgreSQL + Redis.
# Pass file paths to run only those. Set KILN_TEST_ONLY=sqlite|postgres to run one configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
if [ ${#files[@]} -eq 0 ]; then mapfile -t files < <(find test -name '*.test.ts' | sort); fi
# Formatting and lint (Biome, 120 columns), then the types.
npx biome ci --colors=off
npx tsc -p .
# Child-process tests run bin/kiln.js, which uses the dist/ bundle only when it is fresh: build it.
npm run --silent build
status=0
run() {
  echo "== storage: $1"
  KILN_TEST_STORAGE=$1 node --import tsx --test --test-concurrency=2 --test-timeout=600000 "${files[@]}" || status=1
}
if [ "${KILN_TEST_ONLY:-sqlite}" != postgres ]; then run sqlite; fi
if [ "${KILN_TEST_ONLY:-postgres}" != sqlite ]; then
  export KILN_TEST_PG_URL=${KILN_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/test}
  export KILN_TEST_REDIS_URL=${KILN_TEST_REDIS_URL:-redis://127.0.0.1:6379}
  run postgres
fi
exit $status
