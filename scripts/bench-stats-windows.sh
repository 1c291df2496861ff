#!/usr/bin/env bash
# Stats over windows whose edges fall inside minutes, on a fresh store of a few million events
# (release build): the last hour and the last 24 h ending now, and a whole past hour, each from
# the rollups (hourly + minute) and with source=records, best of 3 (Benchmarks/baselines.py
# stats-windows). History: events spread over the 24 h ending now for HISTORY_SECONDS of closed-
# loop ingest, then the last hour's traffic for LIVE_SECONDS (the current hour included).
# Usage: scripts/bench-stats-windows.sh [HISTORY_SECONDS] [LIVE_SECONDS]   (default 20 20)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."
ROOT=$PWD
SCRATCH=${BENCH_SCRATCH:-.build-release}
BIN=${BENCH_BIN:-$ROOT/$SCRATCH/release}
make_temp_dir mamtelemetry-stats-windows
TMP=$TEMP_DIR
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do stop_pid "$p"; done
}
at_exit cleanup

start_daemon "$TMP/daemon.log" "$TMP/data" "$BIN/mamtelemetryd"
PIDS+=("$DAEMON_PID")
export MAMTELEMETRY_URL=$DAEMON_URL MAMTELEMETRY_DATA_DIR=$TMP/data
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
ingest() { # SECONDS HOURS
  echo "== ingest $1 s, event times over the $2 h ending now"
  load_generator "$BIN" --duration "$1" --concurrency 16 --batch-size 1000 --encoding gzip --logs-fraction 0 \
    --spread-hours "$2" --to-now --pid "$DAEMON_PID" --json
  echo
}
ingest "${1:-20}" 24
ingest "${2:-20}" 1
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== stats windows"
python3 Benchmarks/baselines.py stats-windows "$DAEMON_URL"
