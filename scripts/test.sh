#!/usr/bin/env bash
# Runs the whole suite on both storage configurations: SQLite (default) and PostgreSQL + Redis.
# Pass file paths to run only those. Set KILN_TEST_ONLY=sqlite|postgres to run one configuration.
# KILN_TEST_QUICK=1: the fast subset while working (SQLite only; no browser, crash, deployment, process or kiln sync resilience/scale files).
# Files that never start a Kiln, and browser files, run once (in the SQLite pass): see below.
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
if [ ${#files[@]} -eq 0 ]; then mapfile -t files < <(find test -name '*.test.ts' | sort); fi
if [ -n "${KILN_TEST_QUICK:-}" ]; then
  mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -vE '/(browser|crash|deploy|ops|two-process|faults)\.|/sync-cli\.(resilience|scale)\.')
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
# A file that starts a Kiln but whose subject does not depend on the server's storage says so on a line of its
# own, `// kiln-test: once` (the `kiln sync` client's files: the server side of their requests is the sync API,
# whose own files run on both; the blob stores' file, which tests all three stores itself in one pass).
both=()
for f in "${files[@]}"; do
  if grep -qE "from '\./support/(kiln|child|instance)\.ts'" "$f" && ! grep -q "from './support/browser.ts'" "$f" &&
    ! grep -qx '// kiln-test: once' "$f"; then
    both+=("$f")
  fi
done
# Test processes (one per file, hundreds per run) keep V8's compiled code on disk: each later one compiles
# nothing an earlier one compiled (Kiln's own children do the same, in bin/kiln.js).
export NODE_COMPILE_CACHE=${NODE_COMPILE_CACHE:-${TMPDIR:-/tmp}/kiln-test-compile-cache}
# Node 24 runs the TypeScript as it is (its types stripped, nothing to transform: tsconfig's
# erasableSyntaxOnly keeps it so), about 0.8 s of CPU less per test file than through tsx, which
# Node 22 still needs.
loader=()
node -e 'process.exit(process.features.typescript ? 0 : 1)' || loader=(--import tsx)
status=0
run() {
  local storage=$1
  shift
  [ $# -gt 0 ] || return 0
  echo "== storage: $storage ($# files)"
  local reporters=()
  # KILN_TEST_TIMES=dir also writes each file's time to dir/<storage>.tsv (seconds, file, pass/FAIL), and each
  # failed test with its error to dir/<storage>.failures.
  if [ -n "${KILN_TEST_TIMES:-}" ]; then
    mkdir -p "$KILN_TEST_TIMES"
    reporters=(--test-reporter=spec --test-reporter-destination=stdout
      --test-reporter=./scripts/file-times.mjs --test-reporter-destination="$KILN_TEST_TIMES/$storage.tsv"
      --test-reporter=./scripts/failures.mjs --test-reporter-destination="$KILN_TEST_TIMES/$storage.failures")
  fi
  KILN_TEST_STORAGE=$storage node "${loader[@]}" --test "${reporters[@]}" --test-concurrency=2 --test-timeout=600000 "$@" ||
    status=1
}
# Slow files first (browser, crash, and kiln sync's resilience and scale files), so a run does not end on one long file running alone.
slow_first() {
  [ $# -gt 0 ] || return 0
  printf '%s\n' "$@" | grep -E '/(browser|crash)\.|/sync-cli\.(resilience|scale)\.' || true
  printf '%s\n' "$@" | grep -vE '/(browser|crash)\.|/sync-cli\.(resilience|scale)\.' || true
}
pg_pass() {
  export KILN_TEST_PG_URL=${KILN_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/test}
  export KILN_TEST_REDIS_URL=${KILN_TEST_REDIS_URL:-redis://127.0.0.1:6379}
  # Asked for by name with KILN_TEST_ONLY=postgres, a once-file still runs there.
  if [ "${KILN_TEST_ONLY:-}" = postgres ]; then run postgres "$@"; else run postgres "${both[@]}"; fi
}
mapfile -t files < <(slow_first "${files[@]}")
mapfile -t both < <(slow_first "${both[@]}")
case "${KILN_TEST_ONLY:-}" in
  sqlite) run sqlite "${files[@]}" ;;
  postgres) pg_pass "${files[@]}" ;;
  *)
    # Both passes at once: their files wait on processes, databases and browsers often enough that two
    # passes of two files each keep a 2-core machine busier than one pass after the other. The
    # PostgreSQL pass's report is printed after the SQLite pass's.
    pg_log=$(mktemp)
    (
      status=0
      pg_pass
      exit $status
    ) >"$pg_log" 2>&1 &
    pg_pid=$!
    run sqlite "${files[@]}"
    wait $pg_pid || status=1
    cat "$pg_log"
    rm -f "$pg_log"
    ;;
esac
exit $status
