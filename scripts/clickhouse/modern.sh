#!/usr/bin/env bash
# Proves the ClickHouse backend's SQL against a current ClickHouse engine, which cannot run
# as a server here (only Debian's 18.16 does): PyPI's chdb embeds one in process.
#   1. ClickHouseTranscriptTests (swift test) drives the real backend (migration, forwarder,
#      reads, stats, incidents, devices, follow, sizes, retention) against a private 18.16 and
#      writes every statement the client sent, as the binder built it, with 18.16's answer;
#   2. chdb-replay.py runs each one through chdb in the form a 19.11+ server gets it
#      (`{pN:Type}` placeholders and their values) and compares the answers with 18.16's.
# The statements come only from the Swift code that sends them, so this cannot drift from it.
# chdb is installed, pinned, into .build-venv-chdb/ (git-ignored). Run by scripts/test.sh;
# needs `swift build --build-tests` first. Exits non-zero on any difference.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=$PWD/.build-venv-chdb
version=${CHDB_VERSION:-4.4.0}
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('chdb') != '$version')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "chdb==$version"
fi
transcript=$(mktemp /tmp/mamtelemetry-clickhouse-transcript.XXXXXX)
trap 'rm -f "$transcript"' EXIT
MAMTELEMETRYD_TEST_TRANSCRIPT=$transcript swift test --skip-build --filter ClickHouseTranscriptTests
"$venv/bin/python" scripts/clickhouse/chdb-replay.py "$transcript"
