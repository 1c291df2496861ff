#!/usr/bin/env bash
# The ClickHouse backend's figures (issue 14), in one run on one private ClickHouse server:
#   (k1) ingest through a collector on --store-backend clickhouse: events/s acknowledged, and
#        events/s shipped (the load's first POST until the spool is empty again);
#   (k2) baseline: the same rows inserted into ClickHouse directly by a client (curl, gzip
#        JSONEachRow, 50,000 rows per insert as the forwarder sends them), into a copy of the table;
#   (k3) spool drain after an outage: ClickHouse stopped, load acknowledged into the spool,
#        ClickHouse resumed, records/s until the spool is empty;
#   (k4) query (range + app filter, paged) and stats over the same events, read through the
#        daemon's API on the ClickHouse backend and on a SQLite-backend daemon fed the same
#        records.
#   (k5) the CPU each part used: the collector per record acknowledged and shipped,
#        ClickHouse per row while the collector shipped and while the client inserted,
#        the load generator per record; and what they imply: the highest shipped rate the
#        machine's cores allow when the collector and ClickHouse share them (issue 26);
#
#   scripts/bench-clickhouse-backend.sh OUT.json [--smoke]
#
# Needs BENCH_BIN (the directory holding mamtelemetryd and mamtelemetry-bench). Writes OUT.json
# and prints its table rows. Without clickhouse-server it writes {"skipped": reason}.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing jq:jq time:/usr/bin/time
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT.json [--smoke]}
SMOKE=0
[ "${2:-}" = --smoke ] && SMOKE=1
if [ "$SMOKE" = 1 ]; then D=2; else D=${BENCH_SECONDS:-15}; fi
CONC=${BENCH_CONCURRENCY:-16}
BATCH=${BENCH_BATCH:-500}
BIN=${BENCH_BIN:?set BENCH_BIN to the directory of mamtelemetryd and mamtelemetry-bench}
# With ClickHouse's query log, so that step (k4) can read what the collector's page
# statements cost ClickHouse itself.
clickhouse_bench_start chbackend "$OUT" "(k) ClickHouse backend" --query-log
CH=$(head -n 1 "$WORK/ch.urls")
CH_PID=$(cat "$WORK/ch/shard-0/clickhouse.pid")
q() { curl -fsS "$CH/" --data-binary "$1"; }
now_s() { monotonic_seconds; }

# Two daemons: a collector on the ClickHouse backend and one on SQLite.
start_daemon "$WORK/chd.log" "$WORK/chd" "$BIN/mamtelemetryd" \
  --store-backend clickhouse --clickhouse-url "$CH" --clickhouse-database bench --collector-id 1
CHD=$DAEMON_URL
CHD_PID=$DAEMON_PID
DAEMON_PIDS+=("$DAEMON_PID")
start_daemon "$WORK/sqld.log" "$WORK/sqld" "$BIN/mamtelemetryd"
SQL=$DAEMON_URL
DAEMON_PIDS+=("$DAEMON_PID")
spool() {  # records waiting in the collector's spool, as its files hold them (`--store-layout`)
  layout_total "$BIN/mamtelemetryd" "$WORK/chd" records
}
wait_spool_empty() {  # seconds waited (bounded by 600)
  local t0 t1
  t0=$(now_s)
  for _ in $(seq 1 6000); do [ "$(spool)" = 0 ] && break; sleep 0.1; done
  [ "$(spool)" = 0 ] || { echo "(k) the spool did not empty: $(spool) records left" >&2; exit 1; }
  t1=$(now_s)
  python3 -c "print(round($t1 - $t0, 3))"
}
timings() {  # sum and count of the collector's duration histograms (spool removal, group commit, insert), JSON
  curl -fsS -H "Authorization: Bearer $(cat "$WORK/chd/admin.token")" "$CHD/metrics" | python3 -c '
import json, sys
names = {"removal": "mamtelemetry_forwarder_spool_removal_seconds", "commit": "mamtelemetry_commit_duration_seconds",
         "insert": "mamtelemetry_forwarder_insert_duration_seconds"}
out = {k: {"sum": 0.0, "count": 0} for k in names}
for line in sys.stdin:
    for k, n in names.items():
        for part in ("sum", "count"):
            if line.startswith(n + "_" + part + " ") or line.startswith(n + "_" + part + "{"):
                out[k][part] += float(line.rsplit(" ", 1)[1])
print(json.dumps(out))' || echo '{}'
}
load() {  # closed-loop events for $2 s against daemon $1, JSON result; the generator's CPU seconds in $WORK/load.cpu
  MAMTELEMETRY_URL=$1 MAMTELEMETRY_DATA_DIR=$3 /usr/bin/time -f '%U %S' -o "$WORK/load.cpu" "$BIN/mamtelemetry-bench" --duration "$2" --concurrency "$CONC" \
    --batch-size "$BATCH" --logs-fraction 0 --encoding gzip --json
}

echo "== (k1) ingest through a collector on the ClickHouse backend, $D s"
K1_CPU0="$(cpu_seconds "$CHD_PID") $(cpu_seconds "$CH_PID")"
K1_CPU_T0=$(now_s)
load "$CHD" "$D" "$WORK/chd" >"$WORK/k1.json"
cp "$WORK/load.cpu" "$WORK/k1-load.cpu"
ACKED_AT=$(now_s)
# The shipped window starts at the load's first POST: the generator builds its record pool
# first (seconds in a debug build), which is not shipping time.
T0=$(python3 -c "import json,sys;print($ACKED_AT - json.load(open(sys.argv[1]))['seconds'])" "$WORK/k1.json")
SETTLE=$(wait_spool_empty)
T1=$(python3 -c "print($ACKED_AT + $SETTLE)")
K1_CPU1="$(cpu_seconds "$CHD_PID") $(cpu_seconds "$CH_PID")"
SHIPPED_ROWS=$(q "SELECT count() FROM bench.records FINAL")
timings >"$WORK/k1-timings.json"

echo "== (k2) baseline: the same rows inserted into ClickHouse directly (curl, gzip JSONEachRow)"
q "CREATE TABLE bench.direct AS bench.records"
q "SELECT * FROM bench.records FINAL FORMAT JSONEachRow" >"$WORK/rows.json"
split -l 50000 "$WORK/rows.json" "$WORK/rows.part."
for f in "$WORK"/rows.part.*; do gzip -3 "$f"; done
K2_CPU0=$(cpu_seconds "$CH_PID")
K2_START=$(now_s)
for f in "$WORK"/rows.part.*.gz; do
  curl -fsS -H 'Content-Encoding: gzip' "$CH/?query=INSERT%20INTO%20bench.direct%20FORMAT%20JSONEachRow" --data-binary @"$f"
done
K2_END=$(now_s)
K2_CPU1=$(cpu_seconds "$CH_PID")
DIRECT_ROWS=$(q "SELECT count() FROM bench.direct")

echo "== (k3) outage: ClickHouse stopped, $D s of load into the spool, then resumed"
scripts/clickhouse/server.sh stop --dir "$WORK/ch" >/dev/null
load "$CHD" "$D" "$WORK/chd" >"$WORK/k3.json"
SPOOLED=$(spool)
timings >"$WORK/k3-load-timings.json"
scripts/clickhouse/server.sh resume --dir "$WORK/ch" >/dev/null
DRAIN=$(wait_spool_empty)
timings >"$WORK/k3-timings.json"
TOTAL_ROWS=$(q "SELECT count() FROM bench.records FINAL")

echo "== (k4) query and stats through the API: ClickHouse backend vs SQLite backend, same records"
# The SQLite daemon gets the same records as JSON (their raw column), in the same batch size.
q "SELECT raw FROM bench.records FINAL FORMAT TSVRaw" | split -l "$BATCH" - "$WORK/raw.part."
for f in "$WORK"/raw.part.*; do
  curl -fsS -o /dev/null -H "Authorization: Bearer $(cat "$WORK/sqld/admin.token")" -H 'Content-Type: application/x-ndjson' \
    "$SQL/v1/telemetry" --data-binary @"$f"
done
APP=com.contoso.outlook
SCAN_T0=$(date +%s)
MAMTELEMETRY_DATA_DIR=$WORK/chd python3 Benchmarks/baselines.py scan "$CHD" "$APP" -2h now ndjson >"$WORK/k4-scan-ch.json" || true
SCAN_T1=$(date +%s)
MAMTELEMETRY_DATA_DIR=$WORK/sqld python3 Benchmarks/baselines.py scan "$SQL" "$APP" -2h now ndjson >"$WORK/k4-scan-sqlite.json" || true
# Issue 26's baseline for reads: ClickHouse's own SELECT of the same rows (filter and order in
# the server, the raw records as NDJSON), best of 3, the response read in full, as the scans
# above read the daemon's pages.
clickhouse_select() {
  python3 - "$CH" "$APP" <<'PY'
import http.client, json, sys, time, urllib.parse
url, app = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(url)
now = int(time.time() * 1000)
sql = ("SELECT raw FROM bench.records WHERE kind = 'event' AND app = '%s' AND time >= %d AND time <= %d "
       "ORDER BY id FORMAT TabSeparatedRaw" % (app, now - 7_200_000, now))
best, rows, first = None, 0, None
for _ in range(3):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    s = time.monotonic()
    c.request("POST", "/", body=sql.encode())
    r = c.getresponse(); head = r.read(1); fb = time.monotonic() - s; rest = r.read()
    took = time.monotonic() - s
    if r.status != 200: raise SystemExit("ClickHouse answered %d: %s" % (r.status, (head + rest)[:300]))
    rows = head.count(b"\n") + rest.count(b"\n")
    if best is None or took < best: best, first = took, fb
print(json.dumps({"matched": rows, "seconds": round(best, 4), "matchedPerSecond": round(rows / best) if best else 0,
                  "firstByteMs": round(first * 1000, 1)}))
PY
}
clickhouse_select >"$WORK/k4-scan-select.json" || echo '{}' >"$WORK/k4-scan-select.json"
# What the collector's pages cost ClickHouse itself: the page statements it sent during the
# scan (from system.query_log, exactly as received: duration, rows read, rows returned), and
# the same statements sent again straight to ClickHouse, one after another, best of 3, the
# answers read in full. Their rate is the most any collector could reach with these
# statements: the rest of the scan's time is the collector's own.
clickhouse_pages() {
  python3 - "$CH" "$SCAN_T0" "$SCAN_T1" <<'PY'
import http.client, json, sys, time, urllib.parse
url, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
u = urllib.parse.urlparse(url)
def post(sql):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    c.request("POST", "/", body=sql.encode())
    r = c.getresponse(); body = r.read()
    if r.status != 200: raise SystemExit("ClickHouse answered %d: %s" % (r.status, body[:300]))
    return body
post("SYSTEM FLUSH LOGS")
log = post("SELECT query, query_duration_ms, read_rows, result_rows FROM system.query_log WHERE type = 2 "
           "AND query_start_time >= toDateTime(%d) AND query_start_time <= toDateTime(%d) "
           "AND query LIKE '%%FROM bench.records%%' AND query LIKE '%%ORDER BY id%%LIMIT%%' "
           "ORDER BY event_time, query_start_time FORMAT JSONEachRow" % (t0, t1 + 1))
pages = [json.loads(line) for line in log.splitlines() if line.strip()]
if not pages: raise SystemExit("no page statement of the scan in system.query_log")
best = None
for _ in range(3):
    s = time.monotonic()
    rows = sum(post(p["query"]).count(b"\n") for p in pages)
    took = time.monotonic() - s
    best = took if best is None else min(best, took)
print(json.dumps({"statements": len(pages), "durationSeconds": sum(int(p["query_duration_ms"]) for p in pages) / 1000,
                  "readRows": sum(int(p["read_rows"]) for p in pages), "resultRows": sum(int(p["result_rows"]) for p in pages),
                  "replaySeconds": round(best, 4), "replayRows": rows}))
PY
}
clickhouse_pages >"$WORK/k4-scan-pages.json" || echo '{}' >"$WORK/k4-scan-pages.json"
stats() {  # best of 3 of GET /v1/stats/enrollment over the last two hours: "seconds sha1"
  python3 - "$1" "$2" <<'PY'
import hashlib, http.client, json, sys, time, urllib.parse
url, token = sys.argv[1], open(sys.argv[2]).read().strip()
u = urllib.parse.urlparse(url)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
now = int(time.time() * 1000)
path = "/v1/stats/enrollment?" + urllib.parse.urlencode({"since": now - 7_200_000, "until": now})
best, body = None, b""
for _ in range(3):
    s = time.monotonic()
    c.request("GET", path, headers={"Authorization": "Bearer " + token, "Accept": "application/json"})
    r = c.getresponse(); body = r.read(); took = time.monotonic() - s
    if r.status != 200: raise SystemExit("stats answered %d: %s" % (r.status, body[:300]))
    best = took if best is None else min(best, took)
a = json.loads(body)
print(json.dumps({"seconds": round(best, 4), "count": a["total"]["count"], "answer": a.get("total")}))
PY
}
stats "$CHD" "$WORK/chd/admin.token" >"$WORK/k4-stats-ch.json" || echo '{}' >"$WORK/k4-stats-ch.json"
stats "$SQL" "$WORK/sqld/admin.token" >"$WORK/k4-stats-sqlite.json" || echo '{}' >"$WORK/k4-stats-sqlite.json"

python3 - "$WORK" "$OUT" "$T0" "$T1" "$SHIPPED_ROWS" "$K2_START" "$K2_END" "$DIRECT_ROWS" "$SPOOLED" "$DRAIN" "$TOTAL_ROWS" "$(q 'SELECT version()')" \
  "$K1_CPU0" "$K1_CPU1" "$K2_CPU0" "$K2_CPU1" "$(nproc)" "$K1_CPU_T0" <<'PY'
import json, os, sys
work, out = sys.argv[1], sys.argv[2]
k1c0, k1c1 = [float(x) for x in sys.argv[13].split()], [float(x) for x in sys.argv[14].split()]
k2c0, k2c1, cores, cpu_t0 = float(sys.argv[15]), float(sys.argv[16]), int(sys.argv[17]), float(sys.argv[18])
t0, t1, shipped, k2s, k2e = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
direct, spooled, drain, total, version = int(sys.argv[8]), int(sys.argv[9]), float(sys.argv[10]), int(sys.argv[11]), sys.argv[12]
L = lambda n: json.load(open(os.path.join(work, n)))
def opt(n):
    try: return L(n)
    except Exception: return {}
k1, k3 = L("k1.json"), L("k3.json")
r = {
    "version": version,
    "acked": k1["accepted"], "ackedPerSecond": round(k1["recordsPerSecond"]),
    "shippedRows": shipped, "shippedPerSecond": round(shipped / (t1 - t0)), "shipSeconds": round(t1 - t0, 3),
    "directRows": direct, "directSeconds": round(k2e - k2s, 3), "directPerSecond": round(direct / (k2e - k2s)),
    "outageAcked": k3["accepted"], "outageAckedPerSecond": round(k3["recordsPerSecond"]), "spooled": spooled,
    "drainSeconds": drain, "drainPerSecond": round(spooled / drain) if drain else 0,
    "totalRows": total, "exactlyOnce": total == k1["accepted"] + k3["accepted"],
    "scan": {"clickhouse": opt("k4-scan-ch.json"), "sqlite": opt("k4-scan-sqlite.json"), "select": opt("k4-scan-select.json"),
             "pages": opt("k4-scan-pages.json")},
    "stats": {"clickhouse": opt("k4-stats-ch.json"), "sqlite": opt("k4-stats-sqlite.json")},
}
# Mean spool removal and group commit while shipping under load (k1), and while only draining
# (k3 after ClickHouse resumed: the outage's own commits are taken out).
tk1, tk3l, tk3 = opt("k1-timings.json"), opt("k3-load-timings.json"), opt("k3-timings.json")
def mean(a, b, k):
    n = a.get(k, {}).get("count", 0) - b.get(k, {}).get("count", 0)
    return {"meanMs": round(1000 * (a[k]["sum"] - b.get(k, {}).get("sum", 0)) / n, 2) if n else None, "count": n}
if tk1 and tk3l and tk3:
    r["timings"] = {"load": {k: mean(tk1, {}, k) for k in ("removal", "commit", "insert")},
                    "drain": {k: mean(tk3, tk3l, k) for k in ("removal", "commit", "insert")}}
# CPU per record (microseconds): the collector and ClickHouse from before the generator
# built its pool (both idle meanwhile, apart from the forwarder's polls) until the spool was
# empty, and the cores they kept busy on average over that span; ClickHouse alone over the
# direct insert; the generator over its whole run (building its record pool included, so an
# upper bound). A shipped record costs the collector's share plus ClickHouse's; with both on
# this machine's cores, cores / (their sum) is the highest shipped rate the CPU allows,
# whatever the pipeline does.
gen = sum(float(x) for x in open(os.path.join(work, "k1-load.cpu")).read().split())
us = lambda seconds, n: round(1e6 * seconds / n, 2) if n else None
collector, clickhouse = us(k1c1[0] - k1c0[0], shipped), us(k1c1[1] - k1c0[1], shipped)
cpu = {"cores": cores, "collectorUsPerRecord": collector, "clickhouseUsPerRowShipped": clickhouse,
       "generatorUsPerRecord": us(gen, k1["accepted"]), "clickhouseUsPerRowDirect": us(k2c1 - k2c0, direct),
       "directCoresUsed": round((k2c1 - k2c0) / (k2e - k2s), 2),
       "shippedCoresUsed": round((k1c1[0] - k1c0[0] + k1c1[1] - k1c0[1]) / (t1 - cpu_t0), 2)}
if collector and clickhouse:
    cpu["shipCeilingPerSecond"] = round(cores * 1e6 / (collector + clickhouse))
    cpu["shipCeilingVsDirect"] = round(cpu["shipCeilingPerSecond"] / r["directPerSecond"], 3)
r["cpu"] = cpu
json.dump(r, open(out, "w"))
PY
python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ratio = lambda a, b: "%.3fx" % (a / b) if b else "-"
print("| (k) ClickHouse backend, ClickHouse %s | measured | vs baseline |" % r["version"])
print("|---|---|---|")
print("| ingest through a collector, acknowledged | %d rec/s (%d events) | %s direct insert (%d rows/s) |" % (
    r["ackedPerSecond"], r["acked"], ratio(r["ackedPerSecond"], r["directPerSecond"]), r["directPerSecond"]))
print("| ingest through a collector, shipped (spool empty) | %d rec/s (%d rows in %.2f s) | %s direct insert |" % (
    r["shippedPerSecond"], r["shippedRows"], r["shipSeconds"], ratio(r["shippedPerSecond"], r["directPerSecond"])))
print("| direct insert by a client (baseline) | %d rows/s (%d rows, gzip JSONEachRow, 50,000 per insert, %.2f s) | 1x |" % (
    r["directPerSecond"], r["directRows"], r["directSeconds"]))
print("| spool drain after an outage | %d rec/s (%d spooled, %.2f s; acked during the outage %d rec/s) | %s direct insert |" % (
    r["drainPerSecond"], r["spooled"], r["drainSeconds"], r["outageAckedPerSecond"], ratio(r["drainPerSecond"], r["directPerSecond"])))
print("| every acknowledged record in ClickHouse exactly once | %s (%d rows) | |" % (r["exactlyOnce"], r["totalRows"]))
if "timings" in r:
    ms = lambda t: "-" if t["meanMs"] is None else "%.2f ms (%d)" % (t["meanMs"], t["count"])
    tl, td = r["timings"]["load"], r["timings"]["drain"]
    print("| mean spool removal / group commit / insert, shipping under load | %s / %s / %s | draining: %s / %s / %s |" % (
        ms(tl["removal"]), ms(tl["commit"]), ms(tl["insert"]), ms(td["removal"]), ms(td["commit"]), ms(td["insert"])))
c = r.get("cpu", {})
if c.get("shipCeilingPerSecond"):
    print("| CPU per record: collector / ClickHouse while shipping / generator (whole run) | %.1f / %.1f / %.1f us | ClickHouse per row, direct insert: %.1f us (%.2f of %d cores busy) |" % (
        c["collectorUsPerRecord"], c["clickhouseUsPerRowShipped"], c["generatorUsPerRecord"], c["clickhouseUsPerRowDirect"],
        c["directCoresUsed"], c["cores"]))
    print("| shipped rate the cores allow, collector and ClickHouse sharing them | %d rec/s (collector and ClickHouse: %.2f cores busy on average, the generator's pool building included) | %s direct insert (target 0.7x) |" % (
        c["shipCeilingPerSecond"], c["shippedCoresUsed"], ratio(c["shipCeilingPerSecond"], r["directPerSecond"])))
sc, ss = r["scan"]["clickhouse"], r["scan"]["sqlite"]
print("| query, range + app filter, NDJSON pages | ClickHouse backend %d matched/s (%d matched) | %s SQLite backend (%d matched/s, %d matched) |" % (
    sc.get("matchedPerSecond", 0), sc.get("matched", 0), ratio(sc.get("matchedPerSecond", 0), ss.get("matchedPerSecond", 0)),
    ss.get("matchedPerSecond", 0), ss.get("matched", 0)))
sel = r["scan"].get("select", {})
print("| query, the same pages vs ClickHouse's own SELECT ... ORDER BY id FORMAT TabSeparatedRaw | ClickHouse backend %d matched/s (first byte %.1f ms at worst) | %s ClickHouse's SELECT (%d rows/s, %d rows, first byte %.1f ms; target 0.7x) |" % (
    sc.get("matchedPerSecond", 0), sc.get("firstByteMsMax", 0), ratio(sc.get("matchedPerSecond", 0), sel.get("matchedPerSecond", 0)),
    sel.get("matchedPerSecond", 0), sel.get("matched", 0), sel.get("firstByteMs", 0)))
pg = r["scan"].get("pages", {})
if pg.get("replaySeconds") and sc.get("matched"):
    ceiling = sc["matched"] / pg["replaySeconds"]
    print("| the collector's %d page statements, sent straight to ClickHouse | %d matched/s (%.3f s; ClickHouse's log: %.3f s, %d rows read for %d returned) | %s ClickHouse's SELECT: the most any collector reaches with these statements |" % (
        pg["statements"], ceiling, pg["replaySeconds"], pg["durationSeconds"], pg["readRows"], pg["resultRows"],
        ratio(ceiling, sel.get("matchedPerSecond", 0))))
tc, ts = r["stats"]["clickhouse"], r["stats"]["sqlite"]
print("| stats, enrollment over the last 2 h | ClickHouse backend %.4f s (%d events) | %s SQLite backend's time (%.4f s, %d events; same answer: %s) |" % (
    tc.get("seconds", 0), tc.get("count", 0), ratio(tc.get("seconds", 0), ts.get("seconds", 0)), ts.get("seconds", 0),
    ts.get("count", 0), tc.get("answer") == ts.get("answer")))
PY
