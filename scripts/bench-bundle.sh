#!/usr/bin/env bash
# Step (j) of bench.sh on its own, for A/B runs of two builds: a fresh daemon from BIN_DIR,
# 100,000 records of the dumped dataset seeded as one device (80% events, 20% logs), then
# the device's zip bundle read REPS times.
# Usage: scripts/bench-bundle.sh BIN_DIR [REPS]   (BIN_DIR holds mamtelemetryd and mamtelemetry-bench)
# SETTLE=40 waits for the compactor to merge the seeded batches first (default 1 s: it is
# still merging, as in make bench).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."
BIN=$1
REPS=${2:-3}
DATASET=${BENCH_DATASET:-/tmp/mamtelemetry-bench-dataset}
[ -f "$DATASET/events.ndjson" ] || load_generator "$BIN" --dump "$DATASET" --dump-records 200000 >/dev/null
make_temp_dir mamtelemetry-bundle
TMP=$TEMP_DIR
start_daemon "$TMP/daemon.log" "$TMP/data" "$BIN/mamtelemetryd"
# Registered after the directory's removal, so it runs first: the daemon stops, then its data goes.
at_exit stop_pid "$DAEMON_PID"
export MAMTELEMETRY_DATA_DIR=$TMP/data
python3 Benchmarks/baselines.py bundle-seed "$DAEMON_URL" "$DATASET" bench-bundle-device 100000
sleep "${SETTLE:-1}"
for _ in $(seq 1 "$REPS"); do
  python3 Benchmarks/baselines.py bundle "$DAEMON_URL" bench-bundle-device -1d
done
