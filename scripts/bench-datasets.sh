#!/usr/bin/env bash
# Four data sets of different shape: steps (a) ingest (and the daemon's peak RSS), (c)
# compression and (d) query (right after the burst, and again once compaction settled) of
# scripts/bench.sh, run once per data set of `mamtelemetry-bench --data` (guid, fleet, small
# events, verbose logs), each on a fresh daemon holding only that data set's records of one
# kind, with raw zlib level 6 of the same NDJSON (one core, per batch) measured in the same
# run as the baseline; the last row is the worst of the four for each figure. bench.sh calls it;
# alone: BENCH_BIN=DIR scripts/bench-datasets.sh OUT_DIR (DIR holds mamtelemetryd and
# mamtelemetry-bench). Knobs as bench.sh: BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_BATCH,
# BENCH_SMOKE=1 (2 s, tiny dumps: figures mean nothing).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing jq:jq
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

for set in guid fleet small verbose; do
  # The verbose set is a log data set: its records go to /v1/logs and are read back as logs.
  if [ "$set" = verbose ]; then kind=log; route=logs; fraction=1; else kind=event; route=events; fraction=0; fi
  echo "== data set '$set': fresh daemon, ${kind}s only, $D s"
  : >"$OUT/$set-daemon.log"
  start_daemon "$OUT/$set-daemon.log" "$TMP/$set" "$BIN/mamtelemetryd"
  DPID=$DAEMON_PID
  url=$DAEMON_URL
  # The clients authenticate with this daemon's first-start admin token (read from its data
  # directory), not the one of bench.sh's daemon that the caller's environment names.
  export MAMTELEMETRY_DATA_DIR=$TMP/$set
  "$BIN/mamtelemetry-bench" --data "$set" --batch-size "$BATCH" --dump "$TMP/$set-dump" --dump-records "$DUMP"
  python3 Benchmarks/baselines.py zlib "$TMP/$set-dump/$route.ndjson" "$BATCH" >"$OUT/$set-zlib.json"
  MAMTELEMETRY_URL=$url "$BIN/mamtelemetry-bench" --data "$set" --duration "$D" --concurrency "$CONC" \
    --batch-size "$BATCH" --encoding gzip --logs-fraction "$fraction" --pid "$DPID" --json >"$OUT/$set-a.json"
  # (d) on fresh data, right after the burst, while the compactor still merges it (issue 25:
  # what a live dashboard reads); again below once compaction settled.
  python3 Benchmarks/baselines.py scan "$url" com.contoso.outlook -2h now json "$route" >"$OUT/$set-d-fresh.json"
  # (c) as bench.sh reads it, after the compactor: wait until the count of batches still
  # uncompacted stops falling, then sum the records' raw and stored bytes (prod and ppe).
  wait_compaction_settled "$BIN/mamtelemetryd" "$TMP/$set" "$POLL" 60 >/dev/null
  "$BIN/mamtelemetryd" --data-dir "$TMP/$set" --store-layout |
    jq -c --arg kind "$kind" '[.environments[].kinds[] | select(.kind == $kind)] as $k
      | {records: ([$k[].records] | add // 0), rawBytes: ([$k[].rawBytes] | add // 0), storedBytes: ([$k[].storedBytes] | add // 0),
         keysBytes: ([$k[].keysBytes] | add // 0), guidTableBytes: ([$k[].guidTableBytes] | add // 0), fileBytes: ([.environments[].fileBytes] | add // 0)}
      | .ratio = (if .storedBytes > 0 then (.rawBytes / .storedBytes * 100 | round) / 100 else 0 end)' >"$OUT/$set-c.json"
  python3 Benchmarks/baselines.py scan "$url" com.contoso.outlook -2h now json "$route" >"$OUT/$set-d.json"
  stop_pid "$DPID"; DPID=""
  rm -rf "${TMP:?}/$set" "$TMP/$set-dump"
done

python3 - "$OUT" "${BENCH_SMOKE:-0}" <<'PY' | tee "$OUT/datasets.txt"
import json, os, sys
out = sys.argv[1]
SETS = ("guid", "fleet", "small", "verbose")
L = lambda n: json.load(open(os.path.join(out, n)))
print("| data set | (a) ingest, one kind | vs raw zlib-6 rec/s | (a) peak RSS | (c) stored ratio | stored vs zlib-6 bytes | keys / payload (GUID table's share of keys) | file vs zlib-6 bytes | (d) matched/s fresh (first byte) | (d) matched/s settled | (d) window records/s settled | raw zlib-6 (same data) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
rows = {}
for s in SETS:
    a, c, d, z = L(s + "-a.json"), L(s + "-c.json"), L(s + "-d.json"), L(s + "-zlib.json")
    fresh = L(s + "-d-fresh.json")
    scan = c["records"] / d["seconds"] if d.get("seconds") else 0
    stored_vs_zlib = z["ratioPerBatch"] / c["ratio"] if c["ratio"] else 0
    zlib_bytes = c["rawBytes"] / z["ratioPerBatch"] if z["ratioPerBatch"] else 0
    file_vs_zlib = c["fileBytes"] / zlib_bytes if zlib_bytes else 0
    keys_share = c["keysBytes"] / (c["storedBytes"] - c["keysBytes"]) if c["storedBytes"] > c["keysBytes"] else 0
    guid_share = c["guidTableBytes"] / c["keysBytes"] if c["keysBytes"] else 0
    ingest = a["recordsPerSecond"] / z["recordsPerSecond"] if z["recordsPerSecond"] else 0
    peak = a.get("daemonPeakRSSMiB", 0)
    fresh_rate, settled_rate = fresh.get("matchedPerSecond", 0), d.get("matchedPerSecond", 0)
    rows[s] = (ingest, stored_vs_zlib, file_vs_zlib, scan, peak, fresh_rate, settled_rate, fresh.get("firstByteMsMax", 0))
    print("| %s (%s) | %.0f rec/s (errors %s) | %.3fx | %.1f MiB | %.2fx | %.2fx | %.2f (%.0f%%) | %.2fx | %.0f (%.1f ms) | %.0f (%d matched) | %.0f | %.0f rec/s, %.2fx per batch |" % (
        s, "logs" if s == "verbose" else "events", a["recordsPerSecond"], a["errors"] or "none", ingest, peak, c["ratio"], stored_vs_zlib,
        keys_share, guid_share * 100, file_vs_zlib, fresh_rate, rows[s][7], settled_rate, d.get("matched", 0), scan,
        z["recordsPerSecond"], z["ratioPerBatch"]))
# The worst set per figure: lowest for rates and ratios to beat, highest for bytes, RSS and latency.
worst = lambda i, pick: pick(SETS, key=lambda s: rows[s][i])
print("| **worst of %d** | | %.3fx (%s) | %.1f MiB (%s) | | %.2fx (%s) | | %.2fx (%s) | %.0f (%s); %.1f ms (%s) | %.0f (%s) | %.0f (%s) | |" % (
    len(SETS), rows[worst(0, min)][0], worst(0, min), rows[worst(4, max)][4], worst(4, max), rows[worst(1, max)][1], worst(1, max),
    rows[worst(2, max)][2], worst(2, max), rows[worst(5, min)][5], worst(5, min), rows[worst(7, max)][7], worst(7, max),
    rows[worst(6, min)][6], worst(6, min), rows[worst(3, min)][3], worst(3, min)))
if sys.argv[2] == "1": print("(smoke mode: figures are not meaningful)")
# A refused request or an empty query means the step measured nothing: fail the run.
broken = [s for s in SETS if L(s + "-a.json")["errors"] or not L(s + "-d.json").get("matched") or not L(s + "-d-fresh.json").get("matched")]
if broken: sys.exit("data sets with refused requests or no query matches: %s" % ", ".join(broken))
PY
