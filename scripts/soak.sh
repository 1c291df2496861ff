#!/usr/bin/env bash
# Hours of steady load against one daemon, watching what a long-running service must keep
# flat: memory, disk against its cap, descriptors, threads, query latency, errors.
#
#   scripts/soak.sh                      the soak (`make soak`): 120 min, release build
#   scripts/soak.sh --short              5 min on the debug build, short retention interval, as
#                                        a test step (scripts/test.sh): fails on any error, on a
#                                        cap overshoot (> 10%) or on RSS stepping up across
#                                        retention passes
#   scripts/soak.sh --minutes N --rate R --update-benchmarks --out DIR
#                                        SOAK_EVENT_IDS=random gives every event a fresh random
#                                        GUID, as the SDK does (default: numbered ids; both reach
#                                        the retry-id index as keyed hashes, at random places; the
#                                        GUIDs make the payload larger and less compressible)
#                                        SOAK_NOTE="..." adds a sentence about the run (its
#                                        machine, why it was cut short) to BENCHMARKS.md
#                                        SOAK_WITHOUT=follow,queries,bundles leaves those out,
#                                        to tell which of them a memory figure comes from
#
# What runs, all at once, for the whole duration:
#   - ingest at half the maximum rate (or --rate), measured first with a closed loop: 10 s on
#     the empty store with --short; otherwise after filling the store to 90% of its cap (closed
#     loop; retention holds it just under the cap), over 60 s there, where the soak runs:
#     `mamtelemetry-bench --live`, which stamps every record with a fresh eventId and the
#     current time, so nothing is a duplicate and the store keeps growing;
#   - retention by size (prod cap SOAK_CAP_BYTES) and by age (verbose and other logs age out
#     within minutes: fractional days), with the growth trigger and the timer; compaction on;
#   - queries every sample: a window with no record (before the soak began) and the last minute
#     of one app; a follow stream of one device; a bundle of that device every minute.
# Every sample (30 s; 10 s with --short) records RSS (anonymous and file-backed, read before
# the sample's own queries, and the peak since the last sample), descriptors, threads, the
# store's live bytes (what the cap bounds) and its files on disk, both queries' latency,
# bundle latency and errors; the anonymous RSS is also read once a second (rss.tsv), for the
# step check. At the end, acknowledged records are checked against the
# store (records now stored + records retention deleted), a table and a plot (gnuplot) are
# written to the output directory, and --update-benchmarks puts them into BENCHMARKS.md.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."
ROOT=$PWD

MINUTES=120
SHORT=0
RATE=""
OUT=""
UPDATE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --short) SHORT=1 ;;
    --minutes) MINUTES=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --out) OUT=$2; shift ;;
    --update-benchmarks) UPDATE=1 ;;
    *) echo "usage: $0 [--short] [--minutes N] [--rate R] [--out DIR] [--update-benchmarks]" >&2; exit 2 ;;
  esac
  shift
done

if [ "$SHORT" = 1 ]; then
  [ "$MINUTES" = 120 ] && MINUTES=5
  SAMPLE=${SOAK_SAMPLE_SECONDS:-10}
  BIN=${SOAK_BIN:-$ROOT/.build/debug}
  CAP=${SOAK_CAP_BYTES:-48000000}
  RETENTION_INTERVAL=20
  # Days as fractions: verbose logs 2 min, other logs 4 min; events go by size.
  VERBOSE_DAYS=0.0014
  LOGS_DAYS=0.0028
else
  SAMPLE=${SOAK_SAMPLE_SECONDS:-30}
  BIN=${SOAK_BIN:-}
  CAP=${SOAK_CAP_BYTES:-1000000000}
  RETENTION_INTERVAL=60
  # Verbose logs 5 min, other logs 10 min; events go by size.
  VERBOSE_DAYS=0.0035
  LOGS_DAYS=0.007
fi
EVENTS_DAYS=1
EVENT_IDS=${SOAK_EVENT_IDS:-numbered}
WITHOUT=${SOAK_WITHOUT:-}
# Whether SOAK_WITHOUT names this part of the load.
left_out() { [[ ",$WITHOUT," == *",$1,"* ]]; }
SECONDS_TOTAL=$((MINUTES * 60))

install_missing jq:jq curl:curl gnuplot-nox:gnuplot

if [ -z "$BIN" ]; then
  # The daemon as `make` builds what the package installs: the Swift runtime linked
  # statically (3 MiB less file-backed RSS than the shared libraries under this load). Its own
  # scratch directory, so the bench's dynamically linked release build is not rebuilt.
  SCRATCH=${SOAK_SCRATCH:-.build-static}
  echo "== building release, Swift runtime static (scratch $SCRATCH)"
  swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" --product mamtelemetryd
  swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" --product mamtelemetry-bench
  BIN=$ROOT/$SCRATCH/release
fi
DAEMON=$BIN/mamtelemetryd
GEN=$BIN/mamtelemetry-bench

TMP=$(mktemp -d /tmp/mamtelemetry-soak.XXXXXX)
# Without --out the run's files live in the temporary directory: removed when the run
# passes, kept (and named) when it fails, so a failed CI run can still be read.
OUT_IN_TMP=0
[ -n "$OUT" ] || { OUT=$TMP/out; OUT_IN_TMP=1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PIDS=()
# shellcheck disable=SC2317 # run by at_exit, which shellcheck cannot follow
cleanup() {
  local p
  for p in "${PIDS[@]}"; do stop_pid "$p"; done
  rm -rf "$TMP/data"
}
at_exit cleanup

DATA=$TMP/data
: >"$OUT/daemon.log"
start_daemon "$OUT/daemon.log" "$DATA" "$DAEMON" \
  --retention-prod-max-bytes "$CAP" --retention-prod-events-days "$EVENTS_DAYS" \
  --retention-prod-logs-days "$LOGS_DAYS" --retention-prod-verbose-logs-days "$VERBOSE_DAYS" \
  --retention-interval-seconds "$RETENTION_INTERVAL"
DPID=$DAEMON_PID
URL=$DAEMON_URL
PIDS+=("$DPID")
TOKEN=$(cat "$DATA/admin.token")
export MAMTELEMETRY_URL=$URL MAMTELEMETRY_TOKEN=$TOKEN
AUTH=(-H "Authorization: Bearer $TOKEN")
START_MS=$(date +%s%3N)

used_bytes() { # the prod store's pages that hold data: what its size cap is compared with
  "$DAEMON" --data-dir "$DATA" --store-layout 2>/dev/null | jq '[.environments[] | select(.environment == "prod") | .usedBytes] | add // 0' ||
    echo 0
}

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/machine.txt"
RATE_MEASURED=0
MAX_SECONDS=10
# Closed-loop load of live records for DURATION seconds, its JSON report on stdout.
closed_loop() { "$GEN" --live --event-ids "$EVENT_IDS" --duration "$1" --concurrency 16 --batch-size 500 --encoding identity --json; }
if [ "$SHORT" = 0 ]; then
  # The long soak runs at its cap, where every commit also pays for retention's deletes and
  # a larger index: the store is filled first (30 s at a time), with --rate too, and the
  # maximum is measured there, over a minute that takes in a retention pass. Retention holds
  # the store under the cap, so "full" is 90% of it.
  echo "== filling the store to 90% of its cap (closed loop, live records)"
  ROUND=0
  while [ "$(used_bytes)" -lt "$((CAP * 9 / 10))" ]; do
    ROUND=$((ROUND + 1))
    [ "$ROUND" -le 40 ] || { echo "the store did not reach 90% of its cap in 20 minutes"; exit 1; }
    closed_loop 30 >"$OUT/fill-$ROUND.json"
  done
  MAX_SECONDS=60
fi
if [ -z "$RATE" ]; then
  RATE_MEASURED=1
  echo "== maximum ingest ($MAX_SECONDS s closed loop, live records)"
  closed_loop "$MAX_SECONDS" >"$OUT/max.json"
  RATE=$(python3 -c "import json;print(int(json.load(open('$OUT/max.json'))['recordsPerSecond'] / 2))")
fi
echo "== soak: $MINUTES min at $RATE records/s ($EVENT_IDS eventIds), prod cap $CAP bytes, sample every $SAMPLE s" | tee -a "$OUT/machine.txt"
[ -z "$WITHOUT" ] || echo "== left out: $WITHOUT" | tee -a "$OUT/machine.txt"

# The load for the whole soak; its JSON (acknowledged records, errors, latency) comes at the end.
"$GEN" --live --event-ids "$EVENT_IDS" --rate "$RATE" --duration "$SECONDS_TOTAL" --concurrency 64 --batch-size 500 --encoding identity \
  --json >"$OUT/load.json" 2>"$OUT/load.err" &
LOADPID=$!
PIDS+=("$LOADPID")

# One device of the load, for the follow stream and the bundles.
DEVICE=""
for _ in $(seq 1 50); do
  DEVICE=$(curl -fsS "${AUTH[@]}" "$URL/v1/events?limit=1" 2>/dev/null |
    python3 -c 'import json,sys;r=json.load(sys.stdin)["events"];print(r[0]["deviceId"] if r else "")' 2>/dev/null || true)
  [ -n "$DEVICE" ] && break
  sleep 0.2
done
[ -n "$DEVICE" ] || { echo "no record arrived"; exit 1; }
: >"$OUT/follow.ndjson"
FOLLOWPID=""
if ! left_out follow; then
  curl -sN "${AUTH[@]}" -H "Accept: application/x-ndjson" "$URL/v1/events?follow=true&device=$DEVICE" >"$OUT/follow.ndjson" 2>/dev/null &
  FOLLOWPID=$!
  PIDS+=("$FOLLOWPID")
fi

GAP_SINCE=$((START_MS - 7200000))
GAP_UNTIL=$((START_MS - 3600000))
# Milliseconds a GET took, or "err" when it did not answer 200.
timed_get() {
  local out
  out=$(curl -s -o "$2" -w '%{http_code} %{time_total}' "${AUTH[@]}" "$URL$1" 2>/dev/null || echo "000 0")
  if [ "${out%% *}" = 200 ]; then python3 -c "print(round(${out##* } * 1000, 1))"; else echo err; fi
}
metric_sum() { # metric_sum NAME [LABEL-SUBSTRING]: the sum of a metric's series
  python3 - "$1" "${2:-}" "$OUT/metrics.txt" <<'PY'
import sys
name, match, path = sys.argv[1], sys.argv[2], sys.argv[3]
total = 0.0
for line in open(path):
    if line.startswith(name) and (line[len(name)] in " {") and match in line:
        total += float(line.rsplit(" ", 1)[1])
print(int(total))
PY
}

printf 't_s\trss_kib\tanon_kib\tfile_kib\tfds\tthreads\tused_bytes\tdisk_bytes\tnomatch_ms\tmatch_ms\tbundle_ms\terrors\tacked\tretained\tfollow_lines\tretention_passes\tpeak_rss_kib\twritten_bytes\n' >"$OUT/samples.tsv"
ERRORS=0
NEXT_BUNDLE=0
BUNDLE_MS=""
T0=$(date +%s)
# The anonymous RSS once a second, for the report's step check (see soak-report.py): it swings
# by 30-40 MiB within seconds, too much for the few samples below to give its level. Beside it,
# from the daemon's metrics, the heap in use and SQLite's share of it (KiB), which tell a peak
# of memory in use (a bundle, a merge, commits queued behind a retention step) from free heap
# not yet trimmed; the scrape, once a second, is part of the load.
(
  while kill -0 "$DPID" 2>/dev/null; do
    ANON=$(awk '/^RssAnon:/{print $2}' "/proc/$DPID/status" 2>/dev/null)
    SPLIT=$(curl -fsS "${AUTH[@]}" "$URL/metrics" 2>/dev/null |
      awk '/^mamtelemetry_heap_in_use_bytes /{h=$2} /^mamtelemetry_sqlite_memory_bytes /{q=$2}
           END{if (h != "" && q != "") printf "%d\t%d", h / 1024, q / 1024; else printf "\t"}')
    printf '%s\t%s\t%s\n' "$(($(date +%s) - T0))" "$ANON" "$SPLIT"
    sleep 1
  done
) >"$OUT/rss.tsv" &
PIDS+=("$!")
while :; do
  NOW=$(date +%s)
  T=$((NOW - T0))
  [ "$T" -gt "$SECONDS_TOTAL" ] && break
  kill -0 "$DPID" 2>/dev/null || { echo "the daemon exited"; ERRORS=$((ERRORS + 1)); break; }
  # Memory first, before this sample's own queries and bundle: the RSS under the steady load,
  # and the highest RSS since the last sample (VmHWM, reset after each read), which takes in
  # the bundles and queries in between.
  read -r RSS ANON FILE THREADS PEAK < <(awk '/^VmRSS:/{r=$2}/^RssAnon:/{a=$2}/^RssFile:/{f=$2}/^Threads:/{t=$2}/^VmHWM:/{h=$2}END{print r, a, f, t, h}' "/proc/$DPID/status")
  echo 5 >"/proc/$DPID/clear_refs" 2>/dev/null || true
  NOMATCH="" MATCH=""
  if ! left_out queries; then
    NOMATCH=$(timed_get "/v1/events?since=$GAP_SINCE&until=$GAP_UNTIL&limit=1000" /dev/null)
    MATCH=$(timed_get "/v1/events?since=-1m&app=com.contoso.outlook&limit=1000" /dev/null)
    [ "$NOMATCH" = err ] && ERRORS=$((ERRORS + 1))
    [ "$MATCH" = err ] && ERRORS=$((ERRORS + 1))
  fi
  if [ "$T" -ge "$NEXT_BUNDLE" ] && ! left_out bundles; then
    BUNDLE_MS=$(timed_get "/v1/bundles?device=$DEVICE&since=-10m" "$TMP/bundle.zip")
    if [ "$BUNDLE_MS" = err ] || ! python3 -c "import zipfile,sys;z=zipfile.ZipFile(sys.argv[1]);assert z.testzip() is None;z.read('manifest.json')" "$TMP/bundle.zip" 2>/dev/null; then
      ERRORS=$((ERRORS + 1))
      BUNDLE_MS=err
    fi
    NEXT_BUNDLE=$((T + 60))
  fi
  if [ -n "$FOLLOWPID" ] && ! kill -0 "$FOLLOWPID" 2>/dev/null; then
    echo "the follow stream ended"
    ERRORS=$((ERRORS + 1))
  fi
  curl -fsS "${AUTH[@]}" "$URL/metrics" >"$OUT/metrics.txt" 2>/dev/null || ERRORS=$((ERRORS + 1))
  # Any answer the daemon gave other than 2xx counts (refusals under load included).
  REFUSED=$(python3 - "$OUT/metrics.txt" <<'PY'
import re, sys
n = 0
for line in open(sys.argv[1]):
    if line.startswith("mamtelemetry_http_requests_total{"):
        m = re.search(r'status="(\d+)"', line)
        if m and not m.group(1).startswith("2"):
            n += int(float(line.rsplit(" ", 1)[1]))
print(n)
PY
)
  FDS=$(find "/proc/$DPID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  USED=$(used_bytes)
  DISK=$(du -cb "$DATA"/prod/records.sqlite* 2>/dev/null | tail -1 | cut -f1)
  ACKED=$(metric_sum mamtelemetry_records_accepted_total)
  RETAINED=$(metric_sum mamtelemetry_retention_deleted_records_total)
  PASSES=$(metric_sum mamtelemetry_retention_passes_total)
  FOLLOWED=$(wc -l <"$OUT/follow.ndjson")
  # What the daemon has written to disk so far (database, WAL, checkpoints).
  WRITTEN=$(awk '/^write_bytes:/{print $2}' "/proc/$DPID/io" 2>/dev/null || echo "")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$T" "$RSS" "$ANON" "$FILE" "$FDS" "$THREADS" "$USED" \
    "$DISK" "$NOMATCH" "$MATCH" "${BUNDLE_MS:-}" "$((ERRORS + REFUSED))" "$ACKED" "$RETAINED" "$FOLLOWED" "$PASSES" "$PEAK" "$WRITTEN" |
    tee -a "$OUT/samples.tsv"
  BUNDLE_MS=""
  SLEEP=$((T0 + T + SAMPLE - $(date +%s)))
  [ "$SLEEP" -gt 0 ] && sleep "$SLEEP"
done

wait "$LOADPID" || ERRORS=$((ERRORS + 1))
# Let the last commits and a retention pass settle, then stop the daemon and count what it holds.
sleep 2
curl -fsS "${AUTH[@]}" "$URL/metrics" >"$OUT/metrics.txt"
RETAINED=$(metric_sum mamtelemetry_retention_deleted_records_total)
ACCEPTED=$(metric_sum mamtelemetry_records_accepted_total)
[ -z "$FOLLOWPID" ] || kill "$FOLLOWPID" 2>/dev/null || true
stop_pid "$DPID"
STORED=$(layout_total "$DAEMON" "$DATA" records)
# The daemon's own log lines at error or above (stderr: "TIME LEVEL mamtelemetryd: ...").
grep -cE '^[^ ]+ (error|critical) ' "$OUT/daemon.log" >"$OUT/daemon-errors.txt" || true

BENCHMARKS_ARGS=()
[ "$UPDATE" = 1 ] && BENCHMARKS_ARGS=(--benchmarks "$ROOT/BENCHMARKS.md")
STATUS=0
python3 "$ROOT/scripts/soak-report.py" --out "$OUT" --cap "$CAP" --rate "$RATE" --minutes "$MINUTES" --short "$SHORT" \
  --stored "$STORED" --retained "$RETAINED" --accepted "$ACCEPTED" --errors "$ERRORS" \
  --command "${WITHOUT:+SOAK_WITHOUT=$WITHOUT }scripts/soak.sh$([ "$SHORT" = 1 ] && echo ' --short') --minutes $MINUTES$([ "$RATE_MEASURED" = 0 ] && echo " --rate $RATE")" \
  --rate-measured "$RATE_MEASURED" --note "${SOAK_NOTE:-}" "${BENCHMARKS_ARGS[@]}" || STATUS=$?
if [ "$OUT_IN_TMP" = 1 ]; then
  if [ "$STATUS" = 0 ]; then rm -rf "$TMP"; else echo "soak.sh: the run's files are kept in $OUT" >&2; fi
fi
exit "$STATUS"
