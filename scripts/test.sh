#!/usr/bin/env bash
# Runs the whole suite on both storage configurations: SQLite (default) and PostgreSQL + Redis.
# Pass file paths to run only those. Set KILN_TEST_ONLY=sqlite|postgres to run one configuration.
# KILN_TEST_QUICK=1: the fast subset while working (SQLite only; no browser, crash, deployment or process files).
# Files that never start a Kiln, and browser files, run once (in the SQLite pass): see below.
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
if [ ${#files[@]} -eq 0 ]; then mapfile -t files < <(find test -name '*.test.ts' | sort); fi
if [ -n "${KILN_TEST_QUICK:-}" ]; then
  mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -vE '/(browser|crash|deploy|ops|two-process|faults)\.')
  export KILN_TEST_ONLY=sqlite
fi
# Formatting and lint (Biome, 120 columns), then the types.
npx biome ci --colors=off
npx tsc -p .
# Child-process tests run bin/kiln.js, which uses the dist/ bundle only when it is fresh: build it.
npm run --silent build
# A file runs on both storages when it starts a Kiln (it loads test/support/kiln.ts, child.ts or
# instance.ts) and drives it over HTTP; the rest run once, in the SQLite pass: pure-core files, which
# never touch storage, and browser files (test/support/browser.ts), whose storage paths the HTTP files
# already cover on both.
both=()
for f in "${files[@]}"; do
  if grep -qE "from '\./support/(kiln|child|instance)\.ts'" "$f" && ! grep -q "from './support/browser.ts'" "$f"; then
    both+=("$f")
  fi
done
status=0
run() {
  local storage=$1
  shift
  [ $# -gt 0 ] || return 0
  echo "== storage: $storage ($# files)"
  local reporters=()
  # KILN_TEST_TIMES=dir also writes each file's time to dir/<storage>.tsv (seconds, file, pass/FAIL).
  if [ -n "${KILN_TEST_TIMES:-}" ]; then
    mkdir -p "$KILN_TEST_TIMES"
    reporters=(--test-reporter=spec --test-reporter-destination=stdout
      --test-reporter=./scripts/file-times.mjs --test-reporter-destination="$KILN_TEST_TIMES/$storage.tsv")
  fi
  KILN_TEST_STORAGE=$storage node --import tsx --test "${reporters[@]}" --test-concurrency=2 --test-timeout=600000 "$@" ||
    status=1
}
if [ "${KILN_TEST_ONLY:-sqlite}" != postgres ]; then run sqlite "${files[@]}"; fi
if [ "${KILN_TEST_ONLY:-postgres}" != sqlite ]; then
  export KILN_TEST_PG_URL=${KILN_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/test}
  export KILN_TEST_REDIS_URL=${KILN_TEST_REDIS_URL:-redis://127.0.0.1:6379}
  # Asked for by name with KILN_TEST_ONLY=postgres, a once-file still runs there.
  if [ "${KILN_TEST_ONLY:-}" = postgres ]; then run postgres "${files[@]}"; else run postgres "${both[@]}"; fi
fi
exit $status
