#!/usr/bin/env bash
# A/B of two builds (or of one build under two environments) on the same data: the read side
# (query pages, JSON and NDJSON, a one-device bundle, and stats over 720 hours from the
# rollups) of A and B, each on its own copy of one data directory, read as the admin (a
# caller with pii: json, ndjson, bundle) and as a caller without pii (a read+bundle token:
# json-read, ndjson-read, bundle-read), then ingest into an empty one (a 10 s closed loop,
# then 10 s at a fixed rate), alternated ROUNDS times so a noisy minute hits both. The data
# is written once, by build A with compaction held off (AB_OWN_SEED=1: by each build); each build then compacts its copy in
# its own segment format before it is read, so a change of format is measured too.
#   scripts/bench-ab.sh A_BIN_DIR B_BIN_DIR [OUT_DIR]
# Knobs: AB_SECONDS (ingest, default 25), AB_ROUNDS (2), AB_BUNDLE_RECORDS (100000),
# AB_RATE (the fixed ingest rate, default 20000/s), AB_ENV_A / AB_ENV_B (space-separated
# VAR=value pairs for that side's daemons, e.g. AB_ENV_B="GLIBC_TUNABLES=glibc.malloc.arena_max=4"
# with the same build on both sides), AB_FRESH=1 (no compaction on either side: reads of
# fresh batches), AB_OWN_SEED=1 (each build writes the data it reads), AB_KEEP=1 keeps the
# data directories (printed at the end) for a closer look.
# Prints one JSON object per measurement and a table; the daemon's CPU time, minor page
# faults and, for ingest, the bytes it read and wrote per record are read from /proc (faults
# and bytes do not depend on the CPU's speed or its other load).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_missing jq:jq
cd "$(dirname "$0")/.."
A=${1:?usage: $0 A_BIN_DIR B_BIN_DIR [OUT_DIR]}
B=${2:?usage: $0 A_BIN_DIR B_BIN_DIR [OUT_DIR]}
SECONDS_INGEST=${AB_SECONDS:-25}
ROUNDS=${AB_ROUNDS:-2}
BUNDLE_RECORDS=${AB_BUNDLE_RECORDS:-100000}
RATE=${AB_RATE:-20000}
read -r -a ENV_A <<<"${AB_ENV_A:-}"
read -r -a ENV_B <<<"${AB_ENV_B:-}"
# AB_FRESH=1: both sides hold compaction off throughout, so the reads are of fresh batches
# (what a live dashboard reads) rather than of compacted segments.
if [ "${AB_FRESH:-0}" = 1 ]; then
  ENV_A+=(MAMTELEMETRY_STORE_COMPACT_AFTER_SECONDS=31536000)
  ENV_B+=(MAMTELEMETRY_STORE_COMPACT_AFTER_SECONDS=31536000)
fi
TMP=$(mktemp -d /tmp/mamtelemetry-ab.XXXXXX)
OUT=${3:-$TMP/out}
mkdir -p "$OUT"
DPID=""
cleanup() {
  stop_pid "$DPID"
  if [ "${AB_KEEP:-0}" = 1 ]; then echo "data kept in $TMP"; else rm -rf "$TMP"/seed* "$TMP"/a* "$TMP"/b* "$TMP/dump"; fi
}
at_exit cleanup
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
minor_faults() { awk '{print $10}' "/proc/$1/stat"; }
# Bytes the process read and wrote through system calls (files and sockets: `rchar` + `wchar`
# of /proc/PID/io). Under ingest most of it is SQLite's pages: the WAL written, read back by
# the checkpoint and written again into the database (BENCHMARKS.md, "What a commit writes").
io_chars() { awk '/^(rchar|wchar):/{s += $2} END{printf "%.0f\n", s}' "/proc/$1/io"; }

start() { # BIN DIR [env...]: starts a daemon on DIR, sets DPID and URL
  local bin=$1 dir=$2
  shift 2
  start_daemon "$OUT/daemons.log" "$dir" env "$@" "$bin/mamtelemetryd"
  DPID=$DAEMON_PID
  URL=$DAEMON_URL
  export MAMTELEMETRY_DATA_DIR=$dir MAMTELEMETRY_URL=$URL
}
stop() { stop_pid "$DPID"; DPID=""; }

seed() { # BIN DIR: the query data, written by BIN with compaction held off
  mkdir -p "$2"
  start "$1" "$2" MAMTELEMETRY_STORE_COMPACT_AFTER_SECONDS=31536000
  [ -d "$TMP/dump" ] || load_generator "$1" --dump "$TMP/dump" --dump-records 100000 >/dev/null
  load_generator "$1" --duration "$SECONDS_INGEST" --concurrency 16 --batch-size 500 --encoding gzip --json >"$OUT/$(basename "$2").json"
  python3 Benchmarks/baselines.py bundle-seed "$URL" "$TMP/dump" bench-bundle-device "$BUNDLE_RECORDS" >/dev/null
  # A caller without pii (its token is in the control database the side reads).
  "$1/mamtelemetryctl" tokens create --name bench-read --scope read --scope bundle 2>/dev/null >"$2.read-token"
  stop
}
# AB_OWN_SEED=1: each build writes the data it reads (a change of the layout fresh batches are
# written in shows only so); otherwise A writes it once and both read copies of it.
if [ "${AB_OWN_SEED:-0}" = 1 ]; then
  echo "== seeding each side with its own build ($SECONDS_INGEST s of the load generator, compaction held off)"
  seed "$A" "$TMP/seed-a"
  seed "$B" "$TMP/seed-b"
else
  echo "== seeding with A ($SECONDS_INGEST s of the load generator, compaction held off)"
  seed "$A" "$TMP/seed"
fi
# History for the stats step, in a data directory of its own (so the query window above does
# not take it in): events spread over the 720 hours before this one.
mkdir -p "$TMP/seed-history"
start "$A" "$TMP/seed-history"
load_generator "$A" --duration "$((SECONDS_INGEST / 2))" --concurrency 16 --batch-size 500 --encoding gzip \
  --logs-fraction 0 --spread-hours 720 --json >"$OUT/seed-history.json"
stop

side_env() { if [ "$1" = b ]; then echo "${ENV_B[@]}"; else echo "${ENV_A[@]}"; fi; }

for side in a b; do
  bin=$A
  [ "$side" = b ] && bin=$B
  if [ "${AB_OWN_SEED:-0}" = 1 ]; then
    mv "$TMP/seed-$side" "$TMP/$side"
    mv "$TMP/seed-$side.read-token" "$TMP/$side.read-token"
  else
    cp -a "$TMP/seed" "$TMP/$side"
    cp "$TMP/seed.read-token" "$TMP/$side.read-token"
  fi
  cp -a "$TMP/seed-history" "$TMP/$side-history"
  # shellcheck disable=SC2046
  start "$bin" "$TMP/$side" $(side_env "$side")
  # B's daemon reads both sides' stores (A may predate `--store-layout`).
  wait_compaction_settled "$B/mamtelemetryd" "$TMP/$side" 5 120 >/dev/null
  stop
  echo "$side: $(for figure in rows records storedBytes; do layout_total "$B/mamtelemetryd" "$TMP/$side" "$figure" event; done | paste -sd ' ') (rows, events, stored bytes)"
done

for round in $(seq 1 "$ROUNDS"); do
  for side in a b; do
    bin=$A
    [ "$side" = b ] && bin=$B
    # shellcheck disable=SC2046
    start "$bin" "$TMP/$side" $(side_env "$side")
    sleep 1
    for what in json ndjson bundle json-read ndjson-read bundle-read stats ingest; do
      token=""
      case $what in *-read) token=$(cat "$TMP/$side.read-token") ;; esac
      before=$(cpu_ticks "$DPID")
      faults=$(minor_faults "$DPID")
      if [ "${what%-read}" = bundle ]; then
        result=$(BENCH_TOKEN=$token python3 Benchmarks/baselines.py bundle "$URL" bench-bundle-device -1d)
      elif [ "$what" = stats ]; then
        stop
        # shellcheck disable=SC2046
        start "$bin" "$TMP/$side-history" $(side_env "$side")
        sleep 1
        before=$(cpu_ticks "$DPID")
        faults=$(minor_faults "$DPID")
        result=$(python3 Benchmarks/baselines.py stats "$URL" 720)
      elif [ "$what" = ingest ]; then
        # Into an empty store: the most a 10 s closed loop gets, then 10 s at a fixed rate,
        # whose CPU time and faults are what the table reports (per 100,000 records).
        stop
        rm -rf "$TMP/$side-ingest"
        mkdir -p "$TMP/$side-ingest"
        # shellcheck disable=SC2046
        start "$bin" "$TMP/$side-ingest" $(side_env "$side")
        max=$(load_generator "$bin" --live --duration 10 --concurrency 16 --batch-size 500 --encoding gzip --json)
        before=$(cpu_ticks "$DPID")
        faults=$(minor_faults "$DPID")
        wrote=$(io_chars "$DPID")
        fixed=$(load_generator "$bin" --live --rate "$RATE" --duration 10 --concurrency 64 --batch-size 500 --encoding gzip --json)
        result=$(python3 -c "import json,sys;m,f=json.loads(sys.argv[1]),json.loads(sys.argv[2]);print(json.dumps({'maxRecordsPerSecond':m['recordsPerSecond'],'records':f['records'],'p99Ms':f['latencyMsP99'],'rssKiB':int(sys.argv[3]),'ioBytesPerRecord':int(sys.argv[4])/max(f['records'],1)}))" "$max" "$fixed" "$(rss_kib "$DPID")" "$(($(io_chars "$DPID") - wrote))")
      else
        result=$(BENCH_TOKEN=$token python3 Benchmarks/baselines.py scan "$URL" com.contoso.outlook -2h now "${what%-read}")
      fi
      after=$(cpu_ticks "$DPID")
      faulted=$(($(minor_faults "$DPID") - faults))
      echo "{\"side\":\"$side\",\"round\":$round,\"what\":\"$what\",\"daemonCpuSeconds\":$((after - before))e-2,\"minorFaults\":$faulted,\"result\":$result}" |
        tee -a "$OUT/ab.jsonl"
    done
    stop
  done
done

python3 - "$OUT/ab.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| measurement | A | B | B / A |")
print("|---|---|---|---|")
def pick(r, metric):
    if metric in ("daemonCpuSeconds", "minorFaults"):
        if r["what"] == "ingest":  # per 100,000 records at the fixed rate
            return r[metric] * 100000.0 / max(r["result"]["records"], 1)
        return r[metric]
    if "." in metric:  # stats: enrollment.rollupsEventsPerSecond
        outer, inner = metric.split(".")
        return r["result"].get(outer, {}).get(inner)
    return r["result"].get(metric)
for what, key in (("json", "matchedPerSecond"), ("ndjson", "matchedPerSecond"), ("bundle", "recordsPerSecond"),
                  ("json-read", "matchedPerSecond"), ("ndjson-read", "matchedPerSecond"), ("bundle-read", "recordsPerSecond"),
                  ("stats", None), ("ingest", "maxRecordsPerSecond")):
    metrics = [key, "daemonCpuSeconds", "minorFaults", "firstByteMsMax"] if key else [
        "enrollment.rollupsEventsPerSecond", "launches.rollupsEventsPerSecond", "actions.rollupsEventsPerSecond"]
    if what == "ingest":
        metrics = [key, "daemonCpuSeconds", "minorFaults", "p99Ms", "rssKiB", "ioBytesPerRecord"]
    for metric in metrics:
        vals = {}
        for side in ("a", "b"):
            got = [pick(r, metric) for r in rows if r["side"] == side and r["what"] == what]
            vals[side] = [v for v in got if v is not None]
        if not vals["a"] or not vals["b"]:
            continue
        ma, mb = sum(vals["a"]) / len(vals["a"]), sum(vals["b"]) / len(vals["b"])
        fmt = lambda v: " / ".join("%.4g" % x for x in v)
        print("| %s %s | %s | %s | %.2fx |" % (what, metric, fmt(vals["a"]), fmt(vals["b"]), mb / ma if ma else 0))
PY
