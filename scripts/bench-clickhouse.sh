#!/usr/bin/env bash
# The benchmark's ClickHouse peer (step (i) of scripts/bench.sh): the same events the bench
# generator dumps (`mamtelemetry-bench --dump`), stored in one private ClickHouse server and
# asked the same questions as our daemon.
#
#   scripts/bench-clickhouse.sh run EVENTS.ndjson OUT.json [APP]
#       for each codec (lz4, ClickHouse's default, then zstd): starts a server
#       (scripts/clickhouse/server.sh, data in a temporary directory), creates a MergeTree
#       table of the indexed keys plus the raw JSON, sorted by (app, device, time), times the
#       insert, the range + app query returning raw JSON and the count by status code, reads
#       bytes per event from system.parts and stops the server; writes OUT.json (lz4's
#       figures at the top level, both under "codecs").
#   scripts/bench-clickhouse.sh rows OUTDIR
#       prints the bench summary's table rows: ClickHouse beside our figures from OUTDIR
#       (a-closed.json, c-ratio.txt, d-scan.json, h-stats.json, i-clickhouse.json).
#
# If clickhouse-server is missing and cannot be installed, `run` writes {"skipped": reason}
# and exits 0, and `rows` prints that reason instead of the rows.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."

run() {
  local events=$1 out=$2 app=${3:-com.contoso.outlook}
  if ! command -v clickhouse-client >/dev/null || [ ! -x /usr/sbin/clickhouse-server ]; then
    if ! scripts/deps.sh bench >/dev/null 2>&1; then
      echo "(i) ClickHouse peer skipped: clickhouse-server is not installed and apt-get could not install it"
      printf '{"skipped": "clickhouse-server could not be installed"}\n' >"$out"
      return 0
    fi
  fi
  local work
  work=$(mktemp -d /tmp/mamtelemetry-bench-clickhouse.XXXXXX)
  # At exit, so an interrupted bench never leaves a server running or its data behind.
  at_exit stop_servers "$work"
  # TabSeparated escapes backslashes; JSON lines hold no raw tab or newline.
  sed 's/\\/\\\\/g' "$events" >"$work/events.tsv"
  # ClickHouse's default codec (lz4, fast reads) and zstd (smaller); 18.16 sets it per server.
  measure "$work/events.tsv" "$events" "$app" "$work/lz4" lz4
  measure "$work/events.tsv" "$events" "$app" "$work/zstd" zstd
  python3 - "$work/lz4/result.json" "$work/zstd/result.json" "$out" <<'PY'
import json, sys
lz4, zstd = (json.load(open(p)) for p in sys.argv[1:3])
r = dict(lz4, codecs={"lz4": lz4, "zstd": zstd})
json.dump(r, open(sys.argv[3], "w"))
for name, c in (("lz4", lz4), ("zstd", zstd)): print(name, json.dumps(c))
PY
}

# Stops the servers under WORK (one per codec) and removes it.
stop_servers() { # WORK
  local d
  for d in "$1/lz4" "$1/zstd"; do scripts/clickhouse/server.sh stop --dir "$d" >/dev/null 2>&1 || true; done
  rm -rf "$1"
}

# One private server with codec $5 in directory $4: load $1 (TSV of the raw lines of $2),
# time the queries for app $3, write $4/result.json, stop the server.
measure() {
  local tsv=$1 events=$2 app=$3 dir=$4 codec=$5 url="" rc base
  # server.sh exits 3 when a port is taken, and 1 when the server died starting (seen once in
  # CI with nothing in its logs, most likely a port taken between the check and the bind by
  # a test running beside it): either way a fresh directory on another free base is tried.
  for attempt in 1 2 3; do
    base=$(free_port_block 10 3)
    rc=0
    scripts/clickhouse/server.sh start --dir "$dir" --http-port "$base" --compression "$codec" >"$dir.urls" || rc=$?
    [ "$rc" = 3 ] || [ "$rc" = 1 ] || break
    echo "(i) ClickHouse did not start (server.sh exit $rc, attempt $attempt); trying other ports" >&2
    rm -rf "$dir"
  done
  [ "$rc" = 0 ] || { echo "(i) could not start ClickHouse (server.sh exit $rc)" >&2; exit 1; }
  url=$(head -n 1 "$dir.urls")
  q() { curl -fsS "$url/" --data-binary "$1"; }
  # "seconds bytes" of one request, the response read in full by curl and thrown away.
  timed() { curl -fsS -o /dev/null -w '%{time_total} %{size_download}\n' "$url/" --data-binary "$1"; }
  # The fastest of three runs of query $1, in seconds; with $2, every run must return $2 bytes.
  best_of_3() {
    local runs
    runs=$(timed "$1"; timed "$1"; timed "$1")
    if [ -n "${2:-}" ] && [ "$(cut -d' ' -f2 <<<"$runs" | sort -u)" != "$2" ]; then
      echo "(i) expected $2 bytes from: $1; got $(cut -d' ' -f2 <<<"$runs" | tr '\n' ' ')" >&2
      exit 1
    fi
    cut -d' ' -f1 <<<"$runs" | sort -g | head -n 1
  }

  # The server derives every key column from the raw record (DEFAULT expressions), as our
  # daemon's ingest does, so the insert below is only the raw NDJSON. visitParamExtract*
  # (not JSONExtract, which 18.16 lacks) reads the first field of that name: `time`, `name`
  # and `appId` are top level in the generator's events, `statusCode` occurs only in `data`.
  q "CREATE TABLE events (
      time DateTime DEFAULT parseDateTimeBestEffort(visitParamExtractString(raw, 'time')),
      app String DEFAULT visitParamExtractString(raw, 'appId'),
      device String DEFAULT visitParamExtractString(raw, 'deviceId'),
      session String DEFAULT visitParamExtractString(raw, 'sessionId'),
      identity String DEFAULT visitParamExtractString(raw, 'identity'),
      name String DEFAULT visitParamExtractString(raw, 'name'),
      statusCode UInt16 DEFAULT toUInt16(visitParamExtractUInt(raw, 'statusCode')),
      raw String
    ) ENGINE = MergeTree ORDER BY (app, device, time)"
  local rows raw_bytes insert_s
  rows=$(wc -l <"$events")
  raw_bytes=$(stat -c %s "$events")
  insert_s=$(curl -fsS -o /dev/null -w '%{time_total}\n' "$url/?query=INSERT%20INTO%20events%20(raw)%20FORMAT%20TabSeparated" \
    --data-binary @"$tsv")
  [ "$(q "SELECT count() FROM events")" = "$rows" ] || { echo "(i) ClickHouse holds $(q "SELECT count() FROM events") rows, expected $rows" >&2; exit 1; }
  # One part per partition, as after background merges settle, so bytes on disk are stable.
  q "OPTIMIZE TABLE events FINAL"

  # The same window as step (d): the last two hours (the dump's events are from the last ten minutes).
  local window="time >= now() - 7200 AND time <= now()"
  local in_window matched matched_bytes rows_s rows_sorted_s stats_s
  in_window=$(q "SELECT count() FROM events WHERE $window")
  matched=$(q "SELECT count() FROM events WHERE app = '$app' AND $window")
  matched_bytes=$(q "SELECT sum(length(raw) + 1) FROM events WHERE app = '$app' AND $window")
  # The matched events' raw JSON, one per line (NDJSON), checked to be every byte of them.
  rows_s=$(best_of_3 "SELECT raw FROM events WHERE app = '$app' AND $window FORMAT TabSeparatedRaw" "$matched_bytes")
  rows_sorted_s=$(best_of_3 "SELECT raw FROM events WHERE app = '$app' AND $window ORDER BY time FORMAT TabSeparatedRaw" "$matched_bytes")
  stats_s=$(best_of_3 "SELECT statusCode, count() FROM events WHERE name = 'EnrollmentCall' AND $window GROUP BY statusCode FORMAT TabSeparated")
  local parts
  parts=$(q "SELECT sum(rows), sum(data_compressed_bytes), sum(data_uncompressed_bytes), sum(bytes_on_disk), count() FROM system.parts WHERE active AND database = 'default' AND table = 'events' FORMAT TabSeparated")
  local version
  version=$(q "SELECT version()")
  python3 - "$dir/result.json" "$codec" "$version" "$rows" "$raw_bytes" "$insert_s" "$in_window" "$matched" "$matched_bytes" "$rows_s" "$rows_sorted_s" "$stats_s" "$parts" <<'PY'
import json, sys
(out, codec, version, rows, raw_bytes, insert_s, in_window, matched, matched_bytes,
 rows_s, rows_sorted_s, stats_s, parts) = sys.argv[1:]
rows, raw_bytes, in_window, matched, matched_bytes = map(int, (rows, raw_bytes, in_window, matched, matched_bytes))
insert_s, rows_s, rows_sorted_s, stats_s = map(float, (insert_s, rows_s, rows_sorted_s, stats_s))
p_rows, compressed, uncompressed, on_disk, part_count = map(int, parts.split("\t"))
r = {
    "version": version, "codec": codec, "events": rows, "rawBytesPerEvent": round(raw_bytes / rows, 1),
    "insertSeconds": insert_s, "insertRowsPerSecond": round(rows / insert_s),
    "eventsInWindow": in_window, "matched": matched, "matchedBytes": matched_bytes,
    "querySeconds": rows_s, "queryRowsPerSecond": round(matched / rows_s),
    "queryWindowEventsPerSecond": round(in_window / rows_s),
    "querySortedSeconds": rows_sorted_s, "querySortedRowsPerSecond": round(matched / rows_sorted_s),
    "statsSeconds": stats_s, "statsEventsPerSecond": round(in_window / stats_s),
    "parts": part_count, "compressedBytesPerEvent": round(compressed / p_rows, 1),
    "onDiskBytesPerEvent": round(on_disk / p_rows, 1), "uncompressedBytesPerEvent": round(uncompressed / p_rows, 1),
    "ratioVsRaw": round(raw_bytes / compressed, 2),
}
json.dump(r, open(out, "w"))
PY
  scripts/clickhouse/server.sh stop --dir "$dir"
}

rows() {
  python3 - "$1" <<'PY'
import json, os, sys
out = sys.argv[1]
L = lambda n: json.load(open(os.path.join(out, n)))
ch = L("i-clickhouse.json")
if "skipped" in ch:
    print("(i) ClickHouse peer skipped: %s" % ch["skipped"]); sys.exit(0)
def opt(n):
    try: return L(n)
    except Exception: return {}
a, d, h = opt("a-closed.json"), opt("d-scan.json"), opt("h-stats.json")
ours_matched = d["matched"] / d["seconds"] if d.get("seconds") else 0
ours_stats = h.get("enrollment", {}).get("rollupsEventsPerSecond", 0)
ev = [l.split("|") for l in open(os.path.join(out, "c-ratio.txt")) if l.strip()]
ev = [r for r in ev if r[1] == "event"]
# A format drift in step (c)'s rows printed 0.0 B here once: fail instead.
if not ev: sys.exit("c-ratio.txt holds no event rows (environment|kind|records|raw|stored|...)")
ours_bpe = sum(int(r[4]) for r in ev) / max(1, sum(int(r[2]) for r in ev))
z = ch["codecs"]["zstd"]
ratio = lambda ours, peer: "%.3fx" % (ours / peer) if peer else "-"
print("| (i) same events, same question | ours | ClickHouse %s | ours / ClickHouse |" % ch["version"])
print("|---|---|---|---|")
def row(name, ours, peer, vs): print("| %s | %s | %s | %s |" % (name, ours, peer, vs))
row("range + app filter, raw JSON returned", "%.0f matched events/s (step d)" % ours_matched,
    "%.0f rows/s (%d of %d in window, %.3f s, best of 3; ordered by time %.0f; zstd %.0f)" % (
        ch["queryRowsPerSecond"], ch["matched"], ch["eventsInWindow"], ch["querySeconds"], ch["querySortedRowsPerSecond"],
        z["queryRowsPerSecond"]),
    ratio(ours_matched, ch["queryRowsPerSecond"]))
row("enrollment count by status code", "%.0f events/s (rollups, step h)" % ours_stats,
    "%.0f events/s (%d events in window, %.3f s, best of 3; zstd %.0f)" % (
        ch["statsEventsPerSecond"], ch["eventsInWindow"], ch["statsSeconds"], z["statsEventsPerSecond"]),
    ratio(ours_stats, ch["statsEventsPerSecond"]))
row("bytes per event on disk, lz4 (default)", "%.1f B (step c)" % ours_bpe,
    "%.1f B compressed, %.1f B with marks and index (raw %.1f B, %.2fx)" % (
        ch["compressedBytesPerEvent"], ch["onDiskBytesPerEvent"], ch["rawBytesPerEvent"], ch["ratioVsRaw"]),
    ratio(ours_bpe, ch["compressedBytesPerEvent"]))
row("bytes per event on disk, zstd", "%.1f B (step c)" % ours_bpe,
    "%.1f B compressed, %.1f B with marks and index (%.2fx)" % (
        z["compressedBytesPerEvent"], z["onDiskBytesPerEvent"], z["ratioVsRaw"]),
    ratio(ours_bpe, z["compressedBytesPerEvent"]))
row("insert", "%.0f rec/s (step a: gzip HTTP, durable acks)" % a.get("recordsPerSecond", 0),
    "%.0f rows/s (%d events in one TSV POST, %.2f s, no fsync; zstd %.0f)" % (
        ch["insertRowsPerSecond"], ch["events"], ch["insertSeconds"], z["insertRowsPerSecond"]),
    ratio(a.get("recordsPerSecond", 0), ch["insertRowsPerSecond"]))
PY
}

case "${1:-}" in
  run) shift; run "$@" ;;
  rows) shift; rows "$@" ;;
  *) sed -n '6,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
