#!/usr/bin/env bash
# Step (j) of bench.sh on its own, for A/B runs of two builds: a fresh daemon from BIN_DIR,
# 100,000 records of the dumped dataset seeded as one device (80% events, 20% logs), then
# the device's zip bundle read REPS times.
# Usage: scripts/bench-bundle.sh BIN_DIR [REPS]   (BIN_DIR holds mamtelemetryd and mamtelemetry-bench)
# SETTLE=40 waits for the compactor to merge the seeded batches first (default 1 s: it is
# still merging, as in make bench).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1
REPS=${2:-3}
DATASET=${BENCH_DATASET:-/tmp/mamtelemetry-bench-dataset}
[ -f "$DATASET/events.ndjson" ] || "$BIN/mamtelemetry-bench" --dump "$DATASET" --dump-records 200000 >/dev/null
TMP=$(mktemp -d /tmp/mamtelemetry-bundle.XXXXXX)
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$BIN/mamtelemetryd" --data-dir "$TMP/data" --listen "127.0.0.1:$PORT" >"$TMP/daemon.log" 2>&1 &
DPID=$!
trap 'kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
export MAMTELEMETRY_DATA_DIR=$TMP/data
python3 Benchmarks/baselines.py bundle-seed "http://127.0.0.1:$PORT" "$DATASET" bench-bundle-device 100000
sleep "${SETTLE:-1}"
for _ in $(seq 1 "$REPS"); do
  python3 Benchmarks/baselines.py bundle "http://127.0.0.1:$PORT" bench-bundle-device -1d
done
