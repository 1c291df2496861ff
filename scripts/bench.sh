#!/usr/bin/env bash
# Reproduces every SPEC §10 figure in one run, with its baselines measured in the same run:
#   (a) closed-loop max ingest (gzip bodies, zlib store, durable acks)
#   (b) open-loop at half that rate: p99 ack latency (from intended send time)
#   (c) store compression ratio (sum rawBytes / sum storedBytes from the batch table), after
#       compaction, and stored bytes against raw zlib-6 in 1,000-line batches
#   (d) query scan rate: time range + app filter, paged with nextCursor (JSON and NDJSON)
#   (j) bundle of one device with 100,000 records (records/s)
#   (e) idle RSS and RSS under load
#   (h) stats over 30 days of history: from the hourly rollups vs reading every record
#   (h2) stats over windows with minute edges (the last hour and the last 24 h ending now or on
#       whole minutes, with the live traffic of (a)/(b) in the current hour; a whole past hour):
#       from the hourly and minute rollups vs reading every record
#   baselines: raw zlib level 6 of the same NDJSON on one core; systemd-journal-remote
#   ingesting the same log records over HTTP (vs. our logs-only ingest);
#   (g) OTLP/HTTP protobuf logs ingest of the same kind of records, beside our NDJSON (f);
#   (i) peer: ClickHouse holding the same events, the same queries (scripts/bench-clickhouse.sh).
#   (k) the ClickHouse backend: ingest acked and shipped vs a client inserting the same rows
#       directly, spool drain after an outage, reads vs the SQLite backend
#       (scripts/bench-clickhouse-backend.sh), with the CPU each part uses and the shipped
#       rate the cores allow; then two collectors on a two-shard cluster, the same figures
#       (scripts/bench-clickhouse-scaleout.sh).
#   then (a), (c), (d) on the fleet and the GUID-heavy data sets, each against raw zlib-6 of itself.
# Usage: scripts/bench.sh [--smoke] [--out DIR]      (make bench)
# --smoke runs each step for ~2 s so CI keeps the suite working; its figures mean nothing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."
ROOT=$PWD
SMOKE=0
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SMOKE=1 ;;
    --out) OUT=$2; shift ;;
    *) echo "usage: $0 [--smoke] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
if [ "$SMOKE" = 1 ]; then D=2; DUMP=20000; BUNDLE_RECORDS=10000; else D=${BENCH_SECONDS:-15}; DUMP=200000; BUNDLE_RECORDS=100000; fi
STATS_HOURS=${BENCH_STATS_HOURS:-720}
CONC=${BENCH_CONCURRENCY:-16}
BATCH=${BENCH_BATCH:-500}
SCRATCH=${BENCH_SCRATCH:-.build-release}

JR=/usr/lib/systemd/systemd-journal-remote
install_missing jq:jq "systemd-journal-remote:$JR" curl:curl

if [ -n "${BENCH_BIN:-}" ]; then
  BENCH_NO_BUILD=1  # CI's smoke run reuses the test build's binaries
fi
if [ -z "${BENCH_NO_BUILD:-}" ]; then
  echo "== building release (scratch $SCRATCH)"
  swift build -c release --scratch-path "$SCRATCH" --product mamtelemetryd
  swift build -c release --scratch-path "$SCRATCH" --product mamtelemetry-bench
fi
BIN=${BENCH_BIN:-$ROOT/$SCRATCH/release}
DAEMON=$BIN/mamtelemetryd
GEN=$BIN/mamtelemetry-bench

# The results (out/, unless --out) and the dataset stay in TMP; the data directories go.
TMP=$(mktemp -d /tmp/mamtelemetry-bench.XXXXXX)
[ -n "$OUT" ] || OUT=$TMP/out
mkdir -p "$OUT"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do stop_pid "$p"; done
  rm -rf "$TMP/data" "$TMP/jr"
}
at_exit cleanup

: >"$OUT/daemon.log"
start_daemon "$OUT/daemon.log" "$TMP/data" "$DAEMON"
DPID=$DAEMON_PID
URL=$DAEMON_URL
PIDS+=("$DPID")
export MAMTELEMETRY_URL=$URL MAMTELEMETRY_DATA_DIR=$TMP/data

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/load.txt"
sleep 2
IDLE_KIB=$(rss_kib "$DPID")
# Again after the first idle interval (10 s), when the daemon has released its cold code
# pages a second time (HeapTrimService); the figure above is 2 s after start.
[ "$SMOKE" = 1 ] || sleep 11
IDLE_SETTLED_KIB=$(rss_kib "$DPID")

echo "== dataset ($DUMP records of each kind) for the baselines"
"$GEN" --dump "$TMP/dataset" --dump-records "$DUMP"

echo "== (a) closed loop, $D s, concurrency $CONC, batch $BATCH, gzip"
"$GEN" --duration "$D" --concurrency "$CONC" --batch-size "$BATCH" --encoding gzip --pid "$DPID" --json >"$OUT/a-closed.json"
cat "$OUT/a-closed.json"; echo
MAX=$(json_field "$OUT/a-closed.json" recordsPerSecond)
HALF=$(python3 -c "print(max(100, int(float('$MAX') / 2)))")
echo "load after (a): $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"

echo "== (b) open loop at $HALF records/s (half of max), $D s"
"$GEN" --duration "$D" --concurrency 128 --batch-size "$BATCH" --encoding gzip --rate "$HALF" --pid "$DPID" --json >"$OUT/b-open.json"
cat "$OUT/b-open.json"; echo

echo "== (c) store compression ratio, after the compactor merged the batches into segments"
# The compactor takes batches 5 s old; wait until the count of batches still uncompacted stops
# falling. (This and the ratio below read what the store holds with `mamtelemetryd --store-layout`.)
echo "batches left uncompacted: $(wait_compaction_settled "$BIN/mamtelemetryd" "$TMP/data" 8 60)"
"$BIN/mamtelemetryd" --data-dir "$TMP/data" --store-layout >"$OUT/c-layout.json"
# One line per environment and kind that holds rows: env|kind|records|raw|stored|bloom|segments|rows
jq -r '.environments[] | .environment as $env | .kinds[] | select(.rows > 0)
  | [$env, .kind, .records, .rawBytes, .storedBytes, .bloomBytes, .segments, .rows] | map(tostring) | join("|")' \
  "$OUT/c-layout.json" | tee "$OUT/c-ratio.txt"
# Raw zlib-6 in 1,000-line batches over the generator's NDJSON of each kind, its bytes per
# raw byte applied to the raw bytes the store holds of that kind: what zlib alone would keep.
python3 - "$OUT/c-ratio.txt" "$TMP/dataset" >"$OUT/c-ratio.json" <<'PY'
import json, sys, zlib
rows = [l.split("|") for l in open(sys.argv[1]) if l.strip()]
def zlib_per_raw(path):
    lines = open(path, "rb").read().splitlines(keepends=True)
    raw = sum(len(l) for l in lines)
    return sum(len(zlib.compress(b"".join(lines[i:i + 1000]), 6)) for i in range(0, len(lines), 1000)) / raw
per_raw = {"event": zlib_per_raw(sys.argv[2] + "/events.ndjson"), "log": zlib_per_raw(sys.argv[2] + "/logs.ndjson")}
raw = sum(int(r[3]) for r in rows); stored = sum(int(r[4]) for r in rows); bloom = sum(int(r[5]) for r in rows)
zlib_bytes = sum(int(r[3]) * per_raw[r[1]] for r in rows)
ev = [r for r in rows if r[1] == "event"]
er = sum(int(r[3]) for r in ev); es = sum(int(r[4]) for r in ev)
print(json.dumps({"rawBytes": raw, "storedBytes": stored, "bloomBytes": bloom, "ratio": round(raw / stored, 2) if stored else 0,
                  "eventRatio": round(er / es, 2) if es else 0, "events": sum(int(r[2]) for r in ev),
                  "segments": sum(int(r[6]) for r in rows), "rows": sum(int(r[7]) for r in rows),
                  "zlib6Per1000Bytes": round(zlib_bytes), "storedVsZlib6": round(stored / zlib_bytes, 3) if zlib_bytes else 0,
                  "storedWithBloomVsZlib6": round((stored + bloom) / zlib_bytes, 3) if zlib_bytes else 0}))
PY
cat "$OUT/c-ratio.json"

echo "== (d) query scan: time range + app filter"
EVENTS_IN_WINDOW=$(json_field "$OUT/c-ratio.json" events)
python3 Benchmarks/baselines.py scan "$URL" com.contoso.outlook -2h now >"$OUT/d-scan.json" || true
cat "$OUT/d-scan.json"
python3 Benchmarks/baselines.py scan "$URL" com.contoso.outlook -2h now ndjson >"$OUT/d-scan-ndjson.json" || true
cat "$OUT/d-scan-ndjson.json"

echo "== (j) bundle of one device with $BUNDLE_RECORDS records (80% events, 20% logs)"
python3 Benchmarks/baselines.py bundle-seed "$URL" "$TMP/dataset" bench-bundle-device "$BUNDLE_RECORDS"
python3 Benchmarks/baselines.py bundle "$URL" bench-bundle-device -1d | tee "$OUT/j-bundle.json"

echo "== (h) stats over a long window: hourly rollups vs reading every record, same daemon and answer"
# History for the stats: events spread over the $STATS_HOURS whole hours before this one.
"$GEN" --duration "$D" --concurrency "$CONC" --batch-size "$BATCH" --encoding gzip --logs-fraction 0 --spread-hours "$STATS_HOURS" --json >"$OUT/h-history.json"
python3 Benchmarks/baselines.py stats "$URL" "$STATS_HOURS" | tee "$OUT/h-stats.json"
echo "== (h2) stats over windows with edges inside minutes: last hour, last 24 h (to now), a whole past hour"
python3 Benchmarks/baselines.py stats-windows "$URL" | tee "$OUT/h2-stats-windows.json"

echo "== (e) RSS"
LOAD_PEAK=$(python3 -c "import json;print(max(json.load(open('$OUT/a-closed.json')).get('daemonPeakRSSMiB',0), json.load(open('$OUT/b-open.json')).get('daemonPeakRSSMiB',0)))")
echo "idle ${IDLE_KIB} KiB (2 s after start), ${IDLE_SETTLED_KIB} KiB (13 s), peak under load ${LOAD_PEAK} MiB"

echo "== baseline: raw zlib level 6, one core, batches of $BATCH"
python3 Benchmarks/baselines.py zlib "$TMP/dataset/events.ndjson" "$BATCH" | tee "$OUT/z-zlib.json"

echo "== our logs-only ingest, identity encoding, $D s (same shape as the journal-remote peer)"
"$GEN" --duration "$D" --concurrency "$CONC" --batch-size "$BATCH" --encoding identity --logs-fraction 1 --pid "$DPID" --json >"$OUT/f-logs.json"
cat "$OUT/f-logs.json"; echo

echo "== (g) OTLP/HTTP logs ingest (protobuf, as an OpenTelemetry exporter sends), identity encoding, $D s"
"$GEN" --duration "$D" --concurrency "$CONC" --batch-size "$BATCH" --encoding identity --logs-fraction 1 --logs-protocol otlp --pid "$DPID" --json >"$OUT/g-otlp.json"
cat "$OUT/g-otlp.json"; echo

echo "== peer: systemd-journal-remote, same log records, export format over HTTP"
python3 Benchmarks/baselines.py export "$TMP/dataset/logs.ndjson" "$TMP/dataset/logs.export"
JPORT=$(free_port)
mkdir -p "$TMP/jr"
"$JR" --listen-http="127.0.0.1:$JPORT" --output="$TMP/jr/remote.journal" --split-mode=none >"$OUT/journal-remote.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$JPORT") 2>/dev/null && break; sleep 0.1; done
python3 Benchmarks/baselines.py journal-remote "$JPORT" "$TMP/dataset/logs.export" "$BATCH" "$D" | tee "$OUT/p-journal-remote.json"

echo "== (i) peer: ClickHouse (Debian's 18.16, one private server), the same events and queries"
# After the load steps, so ClickHouse never shares the CPU with our daemon under load.
scripts/bench-clickhouse.sh run "$TMP/dataset/events.ndjson" "$OUT/i-clickhouse.json"

echo "== (k) ClickHouse backend: collector ingest and shipping vs direct insert, outage drain, reads vs SQLite"
SMOKE_FLAG=""; [ "$SMOKE" = 1 ] && SMOKE_FLAG=--smoke
BENCH_BIN=$BIN BENCH_SECONDS=$D BENCH_CONCURRENCY=$CONC BENCH_BATCH=$BATCH \
  scripts/bench-clickhouse-backend.sh "$OUT/k-clickhouse-backend.json" ${SMOKE_FLAG:+"$SMOKE_FLAG"} | tee "$OUT/k-clickhouse-backend.txt"
echo "== (k) scale-out: two collectors on a two-shard ClickHouse cluster"
BENCH_BIN=$BIN BENCH_SECONDS=$D BENCH_CONCURRENCY=$CONC BENCH_BATCH=$BATCH \
  scripts/bench-clickhouse-scaleout.sh "$OUT/k-clickhouse-scaleout.json" ${SMOKE_FLAG:+"$SMOKE_FLAG"} | tee "$OUT/k-clickhouse-scaleout.txt"

if [ "$SMOKE" = 1 ]; then
  # `make bench-sustained` measures ten minutes; the smoke run keeps its script working.
  echo "== (k) sustained shipping, smoke: 20 s at 2,000 records/s, one collector"
  BENCH_BIN=$BIN scripts/bench-clickhouse-sustained.sh "$OUT/k-clickhouse-sustained.json" --smoke | tee "$OUT/k-clickhouse-sustained.txt"
fi

echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"

python3 - "$OUT" "$IDLE_KIB" "$EVENTS_IN_WINDOW" "$SMOKE" "$IDLE_SETTLED_KIB" <<'PY' | tee "$OUT/summary.txt"
import json, os, sys
out, idle_kib, window, smoke = sys.argv[1], int(sys.argv[2]), int(sys.argv[3] or 0), sys.argv[4] == "1"
idle_settled_kib = int(sys.argv[5])
L = lambda n: json.load(open(os.path.join(out, n)))
a, b, c, z, f, p = L("a-closed.json"), L("b-open.json"), L("c-ratio.json"), L("z-zlib.json"), L("f-logs.json"), L("p-journal-remote.json")
g = L("g-otlp.json")
try: d = L("d-scan.json")
except Exception: d = {}
scan = window / d["seconds"] if d.get("seconds") else 0
peak = max(a.get("daemonPeakRSSMiB", 0), b.get("daemonPeakRSSMiB", 0), f.get("daemonPeakRSSMiB", 0), g.get("daemonPeakRSSMiB", 0))
def row(name, value, target, ok, base=""):
    return "| %s | %s | %s | %s | %s |" % (name, value, target, "met" if ok else "MISSED", base)
print("| figure | measured | SPEC §10 target | | vs baseline |")
print("|---|---|---|---|---|")
print(row("ingest, closed loop (gzip, durable)", "%.0f rec/s (%.1f MB/s raw, daemon CPU %.0f%%)" % (a["recordsPerSecond"], a["rawMBPerSecond"], a.get("daemonCPUPercent", 0)),
          ">= 50,000/s", a["recordsPerSecond"] >= 50000, "%.3fx raw zlib-6 one core (%.0f rec/s)" % (a["recordsPerSecond"] / z["recordsPerSecond"], z["recordsPerSecond"])))
print(row("ack latency at %.0f rec/s open loop" % b.get("offeredRecordsPerSecond", 0),
          "p50 %.1f / p95 %.1f / p99 %.1f / max %.1f ms (achieved %.0f rec/s)" % (b["latencyMsP50"], b["latencyMsP95"], b["latencyMsP99"], b["latencyMsMax"], b["recordsPerSecond"]),
          "p99 <= 100 ms", b["latencyMsP99"] <= 100))
print(row("store compression ratio", "%.2fx (events %.2fx)" % (c["ratio"], c["eventRatio"]), ">= 8x", c["ratio"] >= 8,
          "%.2fx of raw zlib-6 per %s-line batch (%.2fx); whole file %.2fx" % (c["eventRatio"] / z["ratioPerBatch"], a["batchSize"], z["ratioPerBatch"], z["ratioWholeFile"])))
print(row("stored bytes after compaction vs raw zlib-6 in 1,000-line batches", "%.3fx (%.3fx with Bloom filters; %d segments of %d rows)" % (c["storedVsZlib6"], c["storedWithBloomVsZlib6"], c["segments"], c["rows"]),
          "<= 0.8x", c["storedVsZlib6"] <= 0.8))
print(row("query scan (range + app filter)", "%.0f events/s (%d in window, %d matched, %d pages, %.2f s)" % (scan, window, d.get("matched", 0), d.get("pages", 0), d.get("seconds", 0)),
          ">= 500,000/s", scan >= 500000))
for name, scan_file in (("JSON", "d-scan.json"), ("NDJSON", "d-scan-ndjson.json")):
    try: m = L(scan_file)
    except Exception: m = {}
    print(row("query matches returned, %s" % name, "%.0f matched/s (%d matched, first byte max %.1f ms)" % (m.get("matchedPerSecond", 0), m.get("matched", 0), m.get("firstByteMsMax", 0)),
              ">= 500,000/s, first byte < 50 ms", m.get("matchedPerSecond", 0) >= 500000 and m.get("firstByteMsMax", 1e9) < 50,
              "%.2fx raw zlib-6 one core (%.0f rec/s)" % (m.get("matchedPerSecond", 0) / z["recordsPerSecond"], z["recordsPerSecond"])))
try: bu = L("j-bundle.json")
except Exception: bu = {}
print(row("bundle, one device", "%.0f records/s (%d records, %.2f s, %.1f MB zip)" % (bu.get("recordsPerSecond", 0), bu.get("records", 0), bu.get("seconds", 0), bu.get("bytes", 0) / 1e6),
          ">= 200,000/s", bu.get("recordsPerSecond", 0) >= 200000,
          "%.2fx raw zlib-6 one core (%.0f rec/s)" % (bu.get("recordsPerSecond", 0) / z["recordsPerSecond"], z["recordsPerSecond"])))
print(row("RSS under load (peak)", "%.1f MiB" % peak, "<= 100 MiB", peak <= 100))
print(row("RSS idle", "%.1f MiB 2 s after start, %.1f MiB after an idle interval" % (idle_kib / 1024, idle_settled_kib / 1024), "<= 30 MiB", max(idle_kib, idle_settled_kib) / 1024 <= 30))
print(row("logs ingest (identity)", "%.0f rec/s" % f["recordsPerSecond"], "-", True,
          "%.2fx systemd-journal-remote (%.0f rec/s)" % (f["recordsPerSecond"] / max(p["recordsPerSecond"], 1), p["recordsPerSecond"])))
print(row("OTLP/HTTP logs ingest (protobuf, identity)", "%.0f rec/s (daemon CPU %.0f%%, %d accepted)" % (g["recordsPerSecond"], g.get("daemonCPUPercent", 0), g["accepted"]), "-", True,
          "%.2fx our NDJSON logs ingest (%.0f rec/s, daemon CPU %.0f%%)" % (g["recordsPerSecond"] / max(f["recordsPerSecond"], 1), f["recordsPerSecond"], f.get("daemonCPUPercent", 0))))
h = L("h-stats.json")
e = h["enrollment"]
print(row("stats, enrollment over %d h of history (%d events)" % (h["hours"], h["eventsInWindow"]),
          "%.0f events/s from rollups (%.3f s; launches %.0f, actions %.0f)" % (e["rollupsEventsPerSecond"], e["rollupsSeconds"],
              h["launches"]["rollupsEventsPerSecond"], h["actions"]["rollupsEventsPerSecond"]),
          ">= 10,000,000/s", e["rollupsEventsPerSecond"] >= 10_000_000,
          "%.1fx reading every record (%.0f events/s); same answer: %s" % (e["speedup"], e["recordsEventsPerSecond"],
              all(h[w]["sameAnswer"] for w in ("enrollment", "launches", "actions")))))
h2 = L("h2-stats-windows.json")
for name, label in (("lastHour", "the last hour to now"), ("lastHourFromMinute", "the last hour from a minute's start to now"),
                    ("last24h", "the last 24 h to now"), ("last24hMinuteEdges", "the last 24 h on whole minutes"),
                    ("pastHour", "a whole past hour")):
    w = h2[name]
    e = w["enrollment"]
    print(row("stats, enrollment over %s (%d events)" % (label, w["eventsInWindow"]),
              "%.0f events/s from rollups (%.4f s; launches %.0f, actions %.0f)" % (e["rollupsEventsPerSecond"], e["rollupsSeconds"],
                  w["launches"]["rollupsEventsPerSecond"], w["actions"]["rollupsEventsPerSecond"]),
              ">= 20,000,000/s", e["rollupsEventsPerSecond"] >= 20_000_000,
              "%.1fx reading every record (%.0f events/s); same answer: %s" % (e["speedup"], e["recordsEventsPerSecond"],
                  all(w[x]["sameAnswer"] for x in ("enrollment", "launches", "actions")))))
errs = {k: v for k, v in [("a", a["errors"]), ("b", b["errors"]), ("f", f["errors"]), ("g", g["errors"])] if v}
print("errors by run:", errs or "none", "| pool wrapped (duplicates):", {k: x["poolWrapped"] for k, x in [("a", a), ("b", b), ("f", f), ("g", g)]})
if smoke: print("(smoke mode: figures are not meaningful)")
PY
scripts/bench-clickhouse.sh rows "$OUT" | tee -a "$OUT/summary.txt"
grep -h '^|' "$OUT/k-clickhouse-backend.txt" "$OUT/k-clickhouse-scaleout.txt" | tee -a "$OUT/summary.txt" || true
# ---- Four data sets: steps (a), (c) and (d) once per data set of `mamtelemetry-bench
# --data`, each on a fresh daemon, beside raw zlib-6 of the same data; the worst of the four.
echo "== data sets guid, fleet, small, verbose (scripts/bench-datasets.sh)"
BENCH_BIN=$BIN BENCH_SMOKE=$SMOKE BENCH_SECONDS=$D BENCH_CONCURRENCY=$CONC BENCH_BATCH=$BATCH \
  scripts/bench-datasets.sh "$OUT/datasets"

if [ "$SMOKE" = 1 ] && [ "$OUT" = "$TMP/out" ]; then
  # A smoke run's figures mean nothing: it leaves no 25 MB behind in /tmp once it passed
  # (a failed one stops before this line and keeps its files for reading).
  rm -rf "$TMP"
else
  echo "results in $OUT"
fi
