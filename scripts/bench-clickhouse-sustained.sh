#!/usr/bin/env bash
# Issue 26's sustained figure: open-loop load at a fixed rate for minutes into collectors on
# the ClickHouse backend, and whether shipping keeps pace: the spools' depth and oldest age
# sampled every 10 s from each collector's /metrics.
#   - one collector on one server, or (SUSTAINED_COLLECTORS=2) two collectors on a two-shard
#     cluster, each loaded at half the rate, each with its own shard first;
#   - the load is `mamtelemetry-bench --live --event-ids random` (every record a fresh random
#     eventId, as the SDK sends, and the current time; numbered ids would repeat between two
#     generators, and the collectors recognise those as retries) on the same cores as the
#     collectors and ClickHouse;
#   - "depth flat": the spools' mean depth over the last third of the run is within one second
#     of load of the first third's, and no spooled record in the second half of the run waits
#     more than 10 s (a spool that grows slowly shows in its oldest age before its mean);
#     "rate achieved": the collectors acknowledged at least 97%
#     of the offered rate (open loop: a slower collector shows as a lower achieved rate);
#   - after the load, every acknowledged record is in ClickHouse exactly once.
#
#   scripts/bench-clickhouse-sustained.sh OUT.json [--smoke]
#
# Needs BENCH_BIN (the directory holding mamtelemetryd and mamtelemetry-bench).
# SUSTAINED_RATE records/s in total (default 12000), SUSTAINED_SECONDS (default 600),
# SUSTAINED_COLLECTORS 1 or 2 (default 1). Not part of `make bench` (10 minutes a run):
# `make bench-sustained` runs one collector and two. --smoke: 20 s at 2,000 records/s.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing jq:jq
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT.json [--smoke]}
RATE=${SUSTAINED_RATE:-12000}
SECONDS_TOTAL=${SUSTAINED_SECONDS:-600}
N=${SUSTAINED_COLLECTORS:-1}
if [ "${2:-}" = --smoke ]; then RATE=2000; SECONDS_TOTAL=20; fi
case "$N" in 1 | 2) ;; *) echo "SUSTAINED_COLLECTORS must be 1 or 2" >&2; exit 2 ;; esac
BIN=${BENCH_BIN:?set BENCH_BIN to the directory of mamtelemetryd and mamtelemetry-bench}
clickhouse_bench_start "chsustained$N" "$OUT" "(sustained)" --shards "$N"
mapfile -t URLS <"$WORK/ch.urls"
q() { curl -fsS "${URLS[0]}/" --data-binary "$1"; }

COLLECTOR_URLS=()
for i in $(seq 0 $((N - 1))); do
  if [ "$N" = 2 ]; then
    CLUSTER=(--clickhouse-url "${URLS[$i]},${URLS[$((1 - i))]}" --clickhouse-cluster mam_cluster)
  else
    CLUSTER=(--clickhouse-url "${URLS[0]}")
  fi
  start_daemon "$WORK/c$i.log" "$WORK/c$i" "$BIN/mamtelemetryd" --store-backend clickhouse "${CLUSTER[@]}" \
    --clickhouse-database bench --collector-id "$((i + 1))"
  COLLECTOR_URLS+=("$DAEMON_URL")
  DAEMON_PIDS+=("$DAEMON_PID")
done
# "records oldestAgeSeconds forwarderErrors retryChecksSkipped" of collector I, from /metrics
# (a skipped retry check is a request stored without asking ClickHouse: its lookup missed the
# deadline, or came within the pause after a miss)
gauges() {
  curl -fsS -H "Authorization: Bearer $(cat "$WORK/c$1/admin.token")" "${COLLECTOR_URLS[$1]}/metrics" |
    awk '/^mamtelemetry_spool_records[{ ]/ { r += $NF } /^mamtelemetry_spool_oldest_age_seconds[{ ]/ { if ($NF > a) a = $NF }
         /^mamtelemetry_forwarder_errors_total[{ ]/ { e += $NF }
         /^mamtelemetry_clickhouse_retry_check_skipped_total[{ ]/ { k += $NF } END { printf "%d %.1f %d %d\n", r, a, e, k }'
}
parts() { # active parts of the records tables on shard 0 (ClickHouse delays inserts past 150 in a partition)
  q "SELECT count() FROM system.parts WHERE active AND database = 'bench' AND table LIKE 'records%'"
}
# The collectors' logs are kept beside OUT: a stall's cause is in them.
LOGS=${OUT%.json}-logs
keep_logs() {
  mkdir -p "$LOGS" || return 0
  cp "$WORK"/c*.log "$LOGS"/ 2>/dev/null || true
}
at_exit keep_logs

echo "== (sustained) $N collector(s), $RATE records/s in total for $SECONDS_TOTAL s"
LOAD_PIDS=()
for i in $(seq 0 $((N - 1))); do
  MAMTELEMETRY_URL=${COLLECTOR_URLS[$i]} MAMTELEMETRY_DATA_DIR=$WORK/c$i "$BIN/mamtelemetry-bench" --live --event-ids random \
    --rate $((RATE / N)) --duration "$SECONDS_TOTAL" --concurrency 32 --batch-size 500 --logs-fraction 0 \
    --encoding gzip --json >"$WORK/load$i.json" &
  LOAD_PIDS+=("$!")
done
T0=$(monotonic_seconds)
: >"$WORK/samples.tsv"
while :; do
  sleep 10
  alive=0
  for p in "${LOAD_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ "$alive" = 1 ] || break
  line="$(python3 -c "import time; print(round(time.monotonic() - $T0, 1))") $(parts)"
  for i in $(seq 0 $((N - 1))); do line="$line $(gauges "$i")"; done
  echo "$line" >>"$WORK/samples.tsv"
done
for p in "${LOAD_PIDS[@]}"; do wait "$p" || { echo "(sustained) a load generator failed" >&2; exit 1; }; done
DRAIN0=$(monotonic_seconds)
spooled() { local t=0 i; for i in $(seq 0 $((N - 1))); do t=$((t + $(gauges "$i" | cut -d' ' -f1))); done; echo "$t"; }
for _ in $(seq 1 3000); do [ "$(spooled)" = 0 ] && break; sleep 0.2; done
[ "$(spooled)" = 0 ] || { echo "(sustained) the spools did not empty: $(spooled) records left" >&2; exit 1; }
DRAIN=$(python3 -c "print(round($(monotonic_seconds) - $DRAIN0, 1))")
ROWS=$(q "SELECT count() FROM bench.records FINAL")

python3 - "$WORK" "$OUT" "$N" "$RATE" "$SECONDS_TOTAL" "$ROWS" "$DRAIN" "$(q 'SELECT version()')" <<'PY'
import json, os, sys
work, out, n, rate, seconds, rows, drain, version = sys.argv[1:]
n, rate, seconds, rows, drain = int(n), int(rate), int(seconds), int(rows), float(drain)
loads = [json.load(open(os.path.join(work, "load%d.json" % i))) for i in range(n)]
acked = sum(l["accepted"] for l in loads)
achieved = sum(l["recordsPerSecond"] for l in loads)
samples = []
for line in open(os.path.join(work, "samples.tsv")):
    f = line.split()
    t, parts, rest = float(f[0]), int(f[1]), f[2:]
    samples.append({"t": t, "parts": parts, "depth": sum(int(rest[4 * i]) for i in range(n)),
                    "oldestAge": max(float(rest[4 * i + 1]) for i in range(n)),
                    "forwarderErrors": sum(int(rest[4 * i + 2]) for i in range(n)),
                    "retryChecksSkipped": sum(int(rest[4 * i + 3]) for i in range(n))})
third = max(1, len(samples) // 3)
mean = lambda xs: sum(xs) / len(xs) if xs else 0
first, last = samples[:third], samples[-third:]
second_half_oldest = max((s["oldestAge"] for s in samples[len(samples) // 2:]), default=0)
first_depth, last_depth = mean([s["depth"] for s in first]), mean([s["depth"] for s in last])
r = {"version": version, "collectors": n, "rate": rate, "seconds": seconds, "achievedPerSecond": round(achieved),
     "acked": acked, "rows": rows, "exactlyOnce": rows == acked, "drainSeconds": drain,
     "firstThirdDepth": round(first_depth), "lastThirdDepth": round(last_depth),
     "maxDepth": max((s["depth"] for s in samples), default=0),
     "maxOldestAgeSeconds": max((s["oldestAge"] for s in samples), default=0),
     "maxParts": max((s["parts"] for s in samples), default=0),
     "forwarderErrors": samples[-1]["forwarderErrors"] if samples else 0,
     "retryChecksSkipped": samples[-1]["retryChecksSkipped"] if samples else 0,
     "secondHalfOldestAgeSeconds": second_half_oldest,
     "depthFlat": last_depth <= first_depth + rate and second_half_oldest <= 10, "rateAchieved": achieved >= 0.97 * rate,
     "samples": samples}
json.dump(r, open(out, "w"))
print("| sustained, %d collector(s), ClickHouse %s | %d rec/s offered for %d s | acknowledged %d rec/s (rate achieved: %s); spool depth mean first/last third %d/%d, max %d, oldest %.1f s (depth flat: %s); forwarder errors %d, retry checks skipped %d, active parts at most %d; drained in %.1f s after the load; exactly once: %s (%d rows) |" % (
    n, version, rate, seconds, r["achievedPerSecond"], r["rateAchieved"], r["firstThirdDepth"], r["lastThirdDepth"], r["maxDepth"],
    r["maxOldestAgeSeconds"], r["depthFlat"], r["forwarderErrors"], r["retryChecksSkipped"], r["maxParts"], drain, r["exactlyOnce"], rows))
PY
