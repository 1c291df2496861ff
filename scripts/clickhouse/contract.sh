#!/usr/bin/env bash
# The API contract suites (Tests/contract-suites.txt) on the ClickHouse backend: starts one
# private ClickHouse (scripts/clickhouse/server.sh), runs those suites with every test daemon
# on `--store-backend clickhouse` and every in-process IngestHarness likewise (each in a
# database of its own, see Tests/TestSupport/TestBackend.swift), and stops the server at the
# end, also on failure.
# Needs a build with tests (`swift build --build-tests`); extra arguments go to `swift test`.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$(dirname "$0")/../.."
SERVER=scripts/clickhouse/server.sh
DIR=$(mktemp -d /tmp/mamtelemetry-clickhouse-contract.XXXXXX)
cleanup() { "$SERVER" stop --dir "$DIR" --timeout 10 || true; rm -rf "$DIR"; }
at_exit cleanup

# A base for server.sh's block of consecutive ports.
free_base() { free_port_block 100 23; }
# server.sh exits 3 when a port is taken: only then is another base worth a try.
rc=3
for _ in 1 2 3 4 5; do
  rc=0
  "$SERVER" start --dir "$DIR" --http-port "$(free_base)" >"$DIR/urls" || rc=$?
  [ "$rc" = 3 ] || break
done
[ "$rc" = 0 ] || { echo "clickhouse contract: could not start ClickHouse" >&2; exit 1; }

# One regular expression of the listed suites (comments and blank lines skipped).
suites=$(grep -v '^\s*\(#\|$\)' Tests/contract-suites.txt | paste -sd'|')
echo "clickhouse contract: $(head -n 1 "$DIR/urls"), suites: ${suites//|/ }"
MAMTELEMETRYD_TEST_BACKEND=clickhouse MAMTELEMETRYD_TEST_CLICKHOUSE_URL=$(head -n 1 "$DIR/urls") \
  swift test --skip-build --no-parallel --filter "^(IntegrationTests|TelemetryServerTests)\.($suites)/" "$@"
