#!/usr/bin/env bash
# One command to run every test on a fresh Debian machine: installs the system packages
# (journald, systemd-analyze, promtool/prometheus, unzip, ...), builds, and runs
#   1. the Swift test suite: unit tests and integration tests that drive the built binaries
#      over loopback (real zlib, SQLite, journald in a private mount namespace, Prometheus);
#   2. the parser fuzzers (libFuzzer + ASan), bounded (FUZZ_SECONDS per target, default 15);
#   3. schemathesis against the running daemon's OpenAPI document (bounded);
#   4. the support console in a real browser (Debian's Chromium driven by Playwright), bounded;
#   5. the benchmark suite in smoke mode, so it never rots (figures are not asserted), after a
#      two-shard private ClickHouse (scripts/clickhouse/smoke.sh) the backend and peer rely on,
#      and the API contract suites of 1 run again on the ClickHouse backend
#      (scripts/clickhouse/contract.sh), and every statement the backend sends replayed on
#      a current ClickHouse embedded by PyPI's chdb (scripts/clickhouse/modern.sh);
#   6. the OpenTelemetry Python SDK installed for the OTLP interoperability test (part of 1);
#   7. the .deb built from this tree (debug binaries) and installed into a throw-away root;
#   8. `swift format lint --strict` with the checked-in .swift-format (generated code excluded);
#   9. the Prometheus rules under dashboards/ with `promtool test rules` (scripts/alert-rules.sh),
#      and every shell script with shellcheck (scripts/shellcheck.sh);
#  10. a five-minute soak of the debug daemon (scripts/soak.sh --short): steady ingest with
#      queries, a follow stream, bundles, retention by size and age and compaction; fails on
#      any error, on the store passing its cap by more than 10%, or on RSS stepping up;
#  11. instructions per hot-path operation under valgrind's callgrind (scripts/callgrind.sh,
#      release build of Benchmarks/hotpath-count): fails when a path (decode, commit, scan,
#      render, rollup, ...) costs more than 5% over Benchmarks/callgrind-baseline.tsv.
#      Counts, not timings: they repeat to 0.2% on this shared machine.
# Under CI=true the build treats warnings in our targets as errors (see Package.swift).
# Every step runs; the script fails if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
./scripts/deps.sh test || exit 1
# shellcheck source=/dev/null # written by deps.sh when it installed a toolchain
[[ -f /tmp/mamtelemetry-swift-path ]] && source /tmp/mamtelemetry-swift-path
swift build --build-tests || exit 1

failed=()
# The last lines each failed step printed, repeated under the summary at the end: a CI page
# that shows only the end of the log still says why a step failed.
failed_tails=()
STEP_LOG=$(mktemp /tmp/mamtelemetry-test-step.XXXXXX)
trap 'rm -f "$STEP_LOG"' EXIT
# Each step says how long it took, so the wall time of the whole command can be read by part.
step() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  # A process substitution, not a pipe: a process a step left behind (a server it failed to
  # stop) would keep a pipe open, and the command would wait for it.
  if ! "$@" > >(tee "$STEP_LOG") 2>&1; then
    # The tee may still be writing the step's last lines (its process is not waited for).
    sleep 1
    echo "== $name FAILED"
    failed+=("$name")
    failed_tails+=("$(printf -- '-- %s, its last lines:\n' "$name"; tail -n 25 "$STEP_LOG")")
  fi
  echo "== $name: $((SECONDS - start)) s"
}
step "swift format lint" ./scripts/format.sh --lint
step "shellcheck" ./scripts/shellcheck.sh
# Every alerting and recording rule under dashboards/ against its promtool unit tests.
step "alert rules" ./scripts/alert-rules.sh
step "fuzz" ./scripts/fuzz.sh "${FUZZ_SECONDS:-15}"
# The OpenTelemetry Python SDK for OTLPExporterTests (pinned, in .build-venv-otel/).
step "otel sdk" ./scripts/otel-venv.sh
step "schemathesis" ./scripts/schemathesis.sh
step "browser console" ./scripts/browser-test.sh
step "clickhouse smoke" ./scripts/clickhouse/smoke.sh
# The API contract suites again, every test daemon on a private ClickHouse (the backend
# switch is in Tests/TestSupport/TestBackend.swift, the suites in Tests/contract-suites.txt).
step "clickhouse contract" ./scripts/clickhouse/contract.sh
# Every statement the backend sends, replayed on a current ClickHouse (chdb, in process).
step "clickhouse modern" ./scripts/clickhouse/modern.sh
step "bench smoke" env BENCH_BIN=.build/debug ./scripts/bench.sh --smoke
step "deb package" ./scripts/deb-test.sh
step "soak (5 min)" ./scripts/soak.sh --short
# The hot paths' instruction counts against the checked-in baseline: the ingest CPU per
# record grew by 70% over a week of features while this ran only by hand.
step "callgrind" ./scripts/callgrind.sh
# The Swift suite last, so its summary closes the log, in two runs. The targets whose tests
# stay in the test process (routers and stores over temporary directories) two tests at a
# time; then, one test at a time, the targets (and the bundle memory suite) that start the
# built daemons, private ClickHouse servers, or read the test process's own memory: beside
# another test a peak RSS is that test's too, and on two cores daemons starve each other.
PROCESS_TARGETS='^(IntegrationTests|ClickHouseStoreTests|ProcessMemoryTests)\.|^BundlesTests\.BundleMemoryTests'
step "swift test, in process (2 at a time)" env SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=2 \
  swift test --skip-build --skip "$PROCESS_TARGETS"
step "swift test, processes (1 at a time)" swift test --skip-build --no-parallel --filter "$PROCESS_TARGETS"

echo "== test command: $SECONDS s in all"
if ((${#failed[@]})); then
  printf '%s\n' "${failed_tails[@]}"
  echo "failed steps: ${failed[*]}"
  exit 1
fi
echo "all steps passed"
