#!/usr/bin/env bash
# Issue 26's scale-out figure: two collectors on a two-shard private ClickHouse cluster, both
# loaded at once, all four processes on this machine's cores. Reports
#   - records/s acknowledged by both collectors together, and shipped (the load's start until
#     both spools are empty), exactly once (one row per acknowledged record);
#   - the baseline: the same rows inserted by a client into the Distributed table
#     (gzip JSONEachRow, 50,000 rows per insert, insert_distributed_sync=1 as the collectors do);
#     the CPU is counted from before the generators build their record pools (the collectors
#     idle meanwhile), the rates from the first generator's first POST;
#   - the CPU each part used per record (collectors, shards, generators) and the shipped rate
#     the cores allow when collectors and shards share them: cores / (their CPU per record).
# The one-collector figures are step (k) of scripts/bench.sh (scripts/bench-clickhouse-backend.sh).
#
#   scripts/bench-clickhouse-scaleout.sh OUT.json [--smoke]
#
# Needs BENCH_BIN (the directory holding mamtelemetryd and mamtelemetry-bench); BENCH_SECONDS
# (default 15), BENCH_CONCURRENCY (default 16, split between the two collectors), BENCH_BATCH
# (default 500). Without clickhouse-server it writes {"skipped": reason}.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing jq:jq time:/usr/bin/time
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT.json [--smoke]}
if [ "${2:-}" = --smoke ]; then D=2; else D=${BENCH_SECONDS:-15}; fi
CONC=${BENCH_CONCURRENCY:-16}
BATCH=${BENCH_BATCH:-500}
BIN=${BENCH_BIN:?set BENCH_BIN to the directory of mamtelemetryd and mamtelemetry-bench}
clickhouse_bench_start chscaleout "$OUT" "(scale-out)" --shards 2
mapfile -t URLS <"$WORK/ch.urls"
SHARD_PIDS=("$(cat "$WORK/ch/shard-0/clickhouse.pid")" "$(cat "$WORK/ch/shard-1/clickhouse.pid")")
q() { curl -fsS "${URLS[0]}/" --data-binary "$1"; }

# Each collector starts with a different shard first in its list, as two sites would.
COLLECTOR_URLS=()
COLLECTOR_PIDS=()
for i in 0 1; do
  start_daemon "$WORK/c$i.log" "$WORK/c$i" "$BIN/mamtelemetryd" --store-backend clickhouse \
    --clickhouse-url "${URLS[$i]},${URLS[$((1 - i))]}" --clickhouse-cluster mam_cluster \
    --clickhouse-database bench --collector-id "$((i + 1))"
  COLLECTOR_URLS+=("$DAEMON_URL")
  COLLECTOR_PIDS+=("$DAEMON_PID")
  DAEMON_PIDS+=("$DAEMON_PID")
done
spooled() { # records waiting in both spools
  echo $(($(layout_total "$BIN/mamtelemetryd" "$WORK/c0" records) + $(layout_total "$BIN/mamtelemetryd" "$WORK/c1" records)))
}
cpu_all() { # "collector0 collector1 shard0 shard1" CPU seconds
  echo "$(cpu_seconds "${COLLECTOR_PIDS[0]}") $(cpu_seconds "${COLLECTOR_PIDS[1]}") $(cpu_seconds "${SHARD_PIDS[0]}") $(cpu_seconds "${SHARD_PIDS[1]}")"
}

echo "== (scale-out 1) two collectors, two shards, $D s of load on both at once"
CPU0=$(cpu_all)
CPU_T0=$(monotonic_seconds)
LOAD_PIDS=()
for i in 0 1; do
  # Each generator's end time: its load started its own `seconds` before (building the
  # record pool first is not shipping time).
  (MAMTELEMETRY_URL=${COLLECTOR_URLS[$i]} MAMTELEMETRY_DATA_DIR=$WORK/c$i /usr/bin/time -f '%U %S' -o "$WORK/load$i.cpu" \
    "$BIN/mamtelemetry-bench" --duration "$D" --concurrency $((CONC / 2)) --batch-size "$BATCH" --logs-fraction 0 \
    --encoding gzip --json >"$WORK/load$i.json" && monotonic_seconds >"$WORK/load$i.end") &
  LOAD_PIDS+=("$!")
done
for p in "${LOAD_PIDS[@]}"; do wait "$p" || { echo "(scale-out) a load generator failed" >&2; exit 1; }; done
for _ in $(seq 1 6000); do [ "$(spooled)" = 0 ] && break; sleep 0.1; done
[ "$(spooled)" = 0 ] || { echo "(scale-out) the spools did not empty: $(spooled) records left" >&2; exit 1; }
T1=$(monotonic_seconds)
CPU1=$(cpu_all)
T0=$(python3 -c 'import json,sys; w=sys.argv[1]; print(min(float(open("%s/load%d.end" % (w, i)).read()) - json.load(open("%s/load%d.json" % (w, i)))["seconds"] for i in (0, 1)))' "$WORK")
SHIPPED=$(q "SELECT count() FROM bench.records FINAL")
PER_SHARD="$(curl -fsS "${URLS[0]}/" --data-binary "SELECT count() FROM bench.records_local") $(curl -fsS "${URLS[1]}/" --data-binary "SELECT count() FROM bench.records_local")"

echo "== (scale-out 2) baseline: the same rows inserted into the Distributed table by a client"
for u in "${URLS[@]}"; do
  curl -fsS "$u/" --data-binary "CREATE TABLE bench.direct_local AS bench.records_local"
done
q "CREATE TABLE bench.direct AS bench.records_local ENGINE = Distributed(mam_cluster, bench, direct_local, cityHash64(app, device))"
q "SELECT * FROM bench.records FINAL FORMAT JSONEachRow" >"$WORK/rows.json"
split -l 50000 "$WORK/rows.json" "$WORK/rows.part."
for f in "$WORK"/rows.part.*; do gzip -3 "$f"; done
SHARDS_CPU0="$(cpu_seconds "${SHARD_PIDS[0]}") $(cpu_seconds "${SHARD_PIDS[1]}")"
K2_START=$(monotonic_seconds)
for f in "$WORK"/rows.part.*.gz; do
  curl -fsS -H 'Content-Encoding: gzip' \
    "${URLS[0]}/?insert_distributed_sync=1&query=INSERT%20INTO%20bench.direct%20FORMAT%20JSONEachRow" --data-binary @"$f"
done
K2_END=$(monotonic_seconds)
SHARDS_CPU1="$(cpu_seconds "${SHARD_PIDS[0]}") $(cpu_seconds "${SHARD_PIDS[1]}")"
DIRECT=$(q "SELECT count() FROM bench.direct")

python3 - "$WORK" "$OUT" "$T0" "$T1" "$SHIPPED" "$PER_SHARD" "$CPU0" "$CPU1" "$K2_START" "$K2_END" "$DIRECT" \
  "$SHARDS_CPU0" "$SHARDS_CPU1" "$(nproc)" "$(q 'SELECT version()')" "$CPU_T0" <<'PY'
import json, os, sys
a = sys.argv
work, out = a[1], a[2]
t0, t1, shipped = float(a[3]), float(a[4]), int(a[5])
per_shard = [int(x) for x in a[6].split()]
c0, c1 = [float(x) for x in a[7].split()], [float(x) for x in a[8].split()]
k2s, k2e, direct = float(a[9]), float(a[10]), int(a[11])
s0, s1 = [float(x) for x in a[12].split()], [float(x) for x in a[13].split()]
cores, version, cpu_t0 = int(a[14]), a[15], float(a[16])
loads = [json.load(open(os.path.join(work, "load%d.json" % i))) for i in (0, 1)]
acked = sum(l["accepted"] for l in loads)
gen = sum(sum(float(x) for x in open(os.path.join(work, "load%d.cpu" % i)).read().split()) for i in (0, 1))
us = lambda seconds, n: round(1e6 * seconds / n, 2) if n else None
collectors, shards = us(c1[0] - c0[0] + c1[1] - c0[1], shipped), us(c1[2] - c0[2] + c1[3] - c0[3], shipped)
r = {
    "version": version, "collectors": 2, "shards": 2,
    "acked": acked, "ackedPerSecond": round(sum(l["recordsPerSecond"] for l in loads)),
    "shippedRows": shipped, "rowsPerShard": per_shard, "exactlyOnce": shipped == acked,
    "shipSeconds": round(t1 - t0, 3), "shippedPerSecond": round(shipped / (t1 - t0)),
    "directRows": direct, "directSeconds": round(k2e - k2s, 3), "directPerSecond": round(direct / (k2e - k2s)),
    "cpu": {"cores": cores, "collectorsUsPerRecord": collectors, "shardsUsPerRowShipped": shards,
            "generatorsUsPerRecord": us(gen, acked),
            "shardsUsPerRowDirect": us(s1[0] - s0[0] + s1[1] - s0[1], direct),
            "shippedCoresUsed": round((c1[0] - c0[0] + c1[1] - c0[1] + c1[2] - c0[2] + c1[3] - c0[3]) / (t1 - cpu_t0), 2)},
}
if collectors and shards:
    r["cpu"]["shipCeilingPerSecond"] = round(cores * 1e6 / (collectors + shards))
json.dump(r, open(out, "w"))
ratio = lambda x, y: "%.3fx" % (x / y) if y else "-"
c = r["cpu"]
print("| (scale-out) 2 collectors, 2 shards, ClickHouse %s | measured | vs baseline |" % version)
print("|---|---|---|")
print("| acknowledged, both collectors | %d rec/s (%d records) | %s direct insert |" % (r["ackedPerSecond"], acked, ratio(r["ackedPerSecond"], r["directPerSecond"])))
print("| shipped (both spools empty) | %d rec/s (%d rows in %.2f s; per shard %s; exactly once: %s) | %s direct insert |" % (
    r["shippedPerSecond"], shipped, r["shipSeconds"], " + ".join(map(str, per_shard)), r["exactlyOnce"], ratio(r["shippedPerSecond"], r["directPerSecond"])))
print("| direct insert into the Distributed table (baseline) | %d rows/s (%d rows, %.2f s) | 1x |" % (r["directPerSecond"], direct, r["directSeconds"]))
print("| CPU per record: collectors / shards while shipping / generators (whole run) | %s / %s / %s us | shards per row, direct insert: %s us |" % (
    c["collectorsUsPerRecord"], c["shardsUsPerRowShipped"], c["generatorsUsPerRecord"], c["shardsUsPerRowDirect"]))
if "shipCeilingPerSecond" in c:
    print("| shipped rate the cores allow, collectors and shards sharing them | %d rec/s (collectors and shards: %.2f of %d cores busy on average, the generators' pool building included) | %s direct insert (target 0.7x) |" % (
        c["shipCeilingPerSecond"], c["shippedCoresUsed"], cores, ratio(c["shipCeilingPerSecond"], r["directPerSecond"])))
if not r["exactlyOnce"]:
    raise SystemExit("(scale-out) %d rows in ClickHouse for %d acknowledged records" % (shipped, acked))
PY
