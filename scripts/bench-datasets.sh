#!/usr/bin/env bash
# Fleet vs GUID-heavy data: steps (a) ingest, (c) compression and (d) query of
# scripts/bench.sh, run once per data set of `mamtelemetry-bench --data`, each on a fresh
# daemon holding only that data set's events, with raw zlib level 6 of the same data set's
# NDJSON (one core, per batch) measured in the same run as the baseline. bench.sh calls it;
# alone: BENCH_BIN=DIR scripts/bench-datasets.sh OUT_DIR (DIR holds mamtelemetryd and
# mamtelemetry-bench). Knobs as bench.sh: BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_BATCH,
# BENCH_SMOKE=1 (2 s, tiny dumps: figures mean nothing).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."
OUT=${1:?usage: BENCH_BIN=DIR $0 OUT_DIR}
BIN=${BENCH_BIN:?set BENCH_BIN to the directory with the built binaries}
if [ "${BENCH_SMOKE:-0}" = 1 ]; then D=2; DUMP=20000; POLL=2; else D=${BENCH_SECONDS:-15}; DUMP=200000; POLL=8; fi
CONC=${BENCH_CONCURRENCY:-16}
BATCH=${BENCH_BATCH:-500}
mkdir -p "$OUT"
TMP=$(mktemp -d /tmp/mamtelemetry-datasets.XXXXXX)
DPID=""
cleanup() {
  stop_pid "$DPID"
  rm -rf "$TMP"
}
at_exit cleanup

for set in guid fleet; do
  echo "== data set '$set': fresh daemon, events only, $D s"
  : >"$OUT/$set-daemon.log"
  start_daemon "$OUT/$set-daemon.log" "$TMP/$set" "$BIN/mamtelemetryd"
  DPID=$DAEMON_PID
  url=$DAEMON_URL
  # The clients authenticate with this daemon's first-start admin token (read from its data
  # directory), not the one of bench.sh's daemon that the caller's environment names.
  export MAMTELEMETRY_DATA_DIR=$TMP/$set
  "$BIN/mamtelemetry-bench" --data "$set" --batch-size "$BATCH" --dump "$TMP/$set-dump" --dump-records "$DUMP"
  python3 Benchmarks/baselines.py zlib "$TMP/$set-dump/events.ndjson" "$BATCH" >"$OUT/$set-zlib.json"
  MAMTELEMETRY_URL=$url "$BIN/mamtelemetry-bench" --data "$set" --duration "$D" --concurrency "$CONC" \
    --batch-size "$BATCH" --encoding gzip --logs-fraction 0 --pid "$DPID" --json >"$OUT/$set-a.json"
  # (c) as bench.sh reads it, after the compactor: wait until the count of batches still
  # uncompacted stops falling, then sum raw and stored bytes of the event rows (prod and ppe).
  wait_compaction_settled "$TMP/$set" "$POLL" 60 >/dev/null
  python3 - "$TMP/$set" >"$OUT/$set-c.json" <<'PY'
import json, os, sqlite3, sys
raw = stored = events = 0
for env in ("prod", "ppe"):
    path = os.path.join(sys.argv[1], env, "records.sqlite")
    if os.path.exists(path):
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        for count, r, s in db.execute("SELECT sum(count), sum(rawBytes), sum(storedBytes) FROM batch WHERE kind = 0"):
            events += count or 0; raw += r or 0; stored += s or 0
print(json.dumps({"events": events, "rawBytes": raw, "storedBytes": stored, "ratio": round(raw / stored, 2) if stored else 0}))
PY
  python3 Benchmarks/baselines.py scan "$url" com.contoso.outlook -2h now >"$OUT/$set-d.json"
  stop_pid "$DPID"; DPID=""
  rm -rf "${TMP:?}/$set" "$TMP/$set-dump"
done

python3 - "$OUT" "${BENCH_SMOKE:-0}" <<'PY' | tee "$OUT/datasets.txt"
import json, os, sys
out = sys.argv[1]
L = lambda n: json.load(open(os.path.join(out, n)))
print("| data set | (a) ingest, events only | vs raw zlib-6 rec/s | (c) stored ratio | vs zlib-6 per batch | (d) query scan | raw zlib-6 (same data) |")
print("|---|---|---|---|---|---|---|")
for s in ("guid", "fleet"):
    a, c, d, z = L(s + "-a.json"), L(s + "-c.json"), L(s + "-d.json"), L(s + "-zlib.json")
    scan = c["events"] / d["seconds"] if d.get("seconds") else 0
    print("| %s | %.0f rec/s (errors %s) | %.3fx | %.2fx | %.2fx | %.0f events/s (%d matched) | %.0f rec/s, %.2fx per batch |" % (
        s, a["recordsPerSecond"], a["errors"] or "none", a["recordsPerSecond"] / z["recordsPerSecond"], c["ratio"],
        c["ratio"] / z["ratioPerBatch"], scan, d.get("matched", 0), z["recordsPerSecond"], z["ratioPerBatch"]))
if sys.argv[2] == "1": print("(smoke mode: figures are not meaningful)")
# A refused request or an empty query means the step measured nothing: fail the run.
broken = [s for s in ("guid", "fleet") if L(s + "-a.json")["errors"] or not L(s + "-d.json").get("matched")]
if broken: sys.exit("data sets with refused requests or no query matches: %s" % ", ".join(broken))
PY
