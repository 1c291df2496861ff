#!/usr/bin/env bash
# Smoke test of scripts/clickhouse/server.sh: starts two private shards, creates a local
# MergeTree table on both and a Distributed table over them, inserts through the Distributed
# table on shard 0, and checks that shard 1 reads every row back through its own Distributed
# table and that the rows were spread over both shards; stops shard 1, resumes it and reads
# every row again; then stops the servers.
# Usage: scripts/clickhouse/smoke.sh [--http-port BASE]   (default: a free base above 20000)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$(dirname "$0")/../.."
SERVER=scripts/clickhouse/server.sh
BASE=""
[ "${1:-}" = "--http-port" ] && BASE=$2
DIR=$(mktemp -d /tmp/mamtelemetry-clickhouse-smoke.XXXXXX)
cleanup() { "$SERVER" stop --dir "$DIR" || true; rm -rf "$DIR"; }
at_exit cleanup

# A base for server.sh's block of consecutive ports.
free_base() { free_port_block 100 23; }
# server.sh exits 3 when a port is taken: only then is another free base worth a try.
rc=3
for _ in 1 2 3 4 5; do
  rc=0
  "$SERVER" start --dir "$DIR" --shards 2 --http-port "${BASE:-$(free_base)}" >"$DIR/urls" || rc=$?
  if [ "$rc" != 3 ] || [ -n "$BASE" ]; then break; fi
done
[ "$rc" = 0 ] || { echo "clickhouse smoke: could not start two shards" >&2; exit 1; }
mapfile -t URLS <"$DIR/urls"
q() { curl -fsS "$1/" --data-binary "$2"; }

for u in "${URLS[@]}"; do
  q "$u" "CREATE TABLE events_local (time DateTime, app String, n UInt64) ENGINE = MergeTree ORDER BY (app, time)"
  q "$u" "CREATE TABLE events AS events_local ENGINE = Distributed(mam_cluster, default, events_local, n)"
done
ROWS=1000
# insert_distributed_sync: the INSERT returns only after both shards hold their rows.
curl -fsS "${URLS[0]}/?insert_distributed_sync=1" --data-binary \
  "INSERT INTO events SELECT toDateTime('2026-01-01 00:00:00') + number, concat('app', toString(number % 6)), number FROM system.numbers LIMIT $ROWS"
total=$(q "${URLS[1]}" "SELECT count() FROM events")
a=$(q "${URLS[0]}" "SELECT count() FROM events_local")
b=$(q "${URLS[1]}" "SELECT count() FROM events_local")
echo "clickhouse smoke: $total rows through the Distributed table (shard 0 holds $a, shard 1 holds $b)"
[ "$total" = "$ROWS" ] || { echo "clickhouse smoke: expected $ROWS rows, read $total" >&2; exit 1; }
if [ "$a" -eq 0 ] || [ "$b" -eq 0 ] || [ $((a + b)) != "$ROWS" ]; then
  echo "clickhouse smoke: rows not split over both shards ($a + $b)" >&2
  exit 1
fi
# An outage of shard 1 and its return (what the backend's outage test does): the rows it held
# are back after `resume`, on the same port.
"$SERVER" stop --dir "$DIR" --shard 1
if q "${URLS[1]}" "SELECT 1" >/dev/null 2>&1; then echo "clickhouse smoke: shard 1 still answers after stop" >&2; exit 1; fi
"$SERVER" resume --dir "$DIR" --shard 1 >/dev/null
again=$(q "${URLS[0]}" "SELECT count() FROM events")
[ "$again" = "$ROWS" ] || { echo "clickhouse smoke: $again rows after shard 1 was stopped and resumed, expected $ROWS" >&2; exit 1; }
echo "clickhouse smoke: shard 1 stopped and resumed, $again rows through the Distributed table"
echo "clickhouse smoke: passed ($(q "${URLS[0]}" "SELECT version()"))"
