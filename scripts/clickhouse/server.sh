#!/usr/bin/env bash
# Starts and stops private ClickHouse servers for tests and benchmarks: Debian's
# clickhouse-server (18.16), run by hand with a config, data path and ports of our own
# (no systemd, nothing in /etc/clickhouse-server is read or changed, data under DIR only).
#
#   scripts/clickhouse/server.sh start --dir DIR [--shards N] [--http-port P] [--tcp-port P]
#                                      [--interserver-port P] [--cluster NAME] [--timeout S]
#                                      [--compression lz4|zstd] [--query-log]
#   scripts/clickhouse/server.sh stop  --dir DIR [--shard K] [--timeout S]
#   scripts/clickhouse/server.sh resume --dir DIR [--shard K] [--timeout S]
#   scripts/clickhouse/server.sh urls  --dir DIR
#
# Shard k (0-based) listens on 127.0.0.1 only, at HTTP P+10k, native TCP T+10k and
# interserver I+10k. Defaults: P=8123, T=P+1, I=P+2 (so two instances started with
# different --http-port bases never collide, and none takes the system server's 9000/9009).
# Every shard's config declares the cluster NAME (default mam_cluster) with N shards of one
# replica each, pointing at the shards' TCP ports, so `Distributed(NAME, db, table)` works on
# any of them. `start` exits 3 if a port is taken, before starting or when a server finds it
# taken at start-up (callers picking ports may retry with another base). It installs
# clickhouse-server/clickhouse-client if missing, waits until each server answers `SELECT 1`
# over HTTP (bounded by --timeout, default 60 s; on failure it prints the server's log tail,
# stops what it started and exits 1) and prints one HTTP URL per line, shard 0 first. `stop`
# sends SIGTERM to each pid file's server and waits (SIGKILL after --timeout); the data stays.
# --query-log records every query in system.query_log (log_queries=1), so a benchmark can
# read ClickHouse's own duration and rows read for the statements a collector sent.
# `resume` starts stopped shards again from their config and data (ports unchanged), e.g. to
# end an outage test. --shard K limits stop/resume to shard K.
# DIR/shard-k/ holds config.xml, users.xml, data/, tmp/, log/, stdout.log, url and the pid.
#
# Quirks of 18.16 this script works around (checked against this package):
#  - without <listen_host> it listens on ::1 and 127.0.0.1 and, where IPv6 is off, logs an
#    <Error> "Cannot assign requested address: [::1]" at every start; each shard lists only
#    <listen_host>127.0.0.1 (the address the cluster definition uses);
#  - path, tmp_path, user_files_path and format_schema_path default under /var/lib/clickhouse/,
#    so all four are set under DIR, and the logger's log/errorlog under DIR/log;
#  - the config root element is <yandex> (current releases accept it beside <clickhouse>);
#  - the server binary has no --version flag (ask `SELECT version()`), and there is no
#    built-in Keeper: `ON CLUSTER` DDL needs ZooKeeper, so callers create the local and
#    Distributed tables on every shard themselves;
#  - the codec is server-wide (<compression>, --compression here): no per-column CODEC(...);
#    nor JSONExtract*, DateTime64, input() or (without an experimental setting) LowCardinality;
#  - it runs as root without complaint; nothing here depends on the user it runs as.
set -euo pipefail

usage() {
  sed -n '6,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

CMD=${1:-}
[ -n "$CMD" ] || usage
shift
DIR=""
SHARDS=1
HTTP_BASE=8123
TCP_BASE=""
INTER_BASE=""
CLUSTER=mam_cluster
TIMEOUT=60
COMPRESSION=lz4
SHARD=""
QUERY_LOG=0
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR=$2; shift ;;
    --shards) SHARDS=$2; shift ;;
    --http-port) HTTP_BASE=$2; shift ;;
    --tcp-port) TCP_BASE=$2; shift ;;
    --interserver-port) INTER_BASE=$2; shift ;;
    --cluster) CLUSTER=$2; shift ;;
    --timeout) TIMEOUT=$2; shift ;;
    --compression) COMPRESSION=$2; shift ;;
    --shard) SHARD=$2; shift ;;
    --query-log) QUERY_LOG=1 ;;
    *) usage ;;
  esac
  shift
done
[ -n "$DIR" ] || usage
[ -n "$TCP_BASE" ] || TCP_BASE=$((HTTP_BASE + 1))
[ -n "$INTER_BASE" ] || INTER_BASE=$((HTTP_BASE + 2))
SERVER=/usr/sbin/clickhouse-server

install_if_missing() {
  [ -x "$SERVER" ] && command -v clickhouse-client >/dev/null && return 0
  echo "clickhouse: installing Debian's clickhouse-server and clickhouse-client" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  local apt=(${sudo:+"$sudo"} env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)
  "${apt[@]}" install -y -qq --no-install-recommends clickhouse-server clickhouse-client >/dev/null ||
    { "${apt[@]}" update -qq && "${apt[@]}" install -y -qq --no-install-recommends clickhouse-server clickhouse-client >/dev/null; }
}

# Writes DIR/shard-k/{config,users}.xml for shard $1 of $SHARDS.
write_config() {
  local k=$1 d=$DIR/shard-$1 i replicas=""
  mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas" "$d/log"
  for ((i = 0; i < SHARDS; i++)); do
    replicas+="            <shard><replica><host>127.0.0.1</host><port>$((TCP_BASE + 10 * i))</port></replica></shard>"$'\n'
  done
  cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<!-- Generated by scripts/clickhouse/server.sh: shard $k of $SHARDS, private to $d. -->
<yandex>
    <logger>
        <level>information</level>
        <log>$d/log/clickhouse-server.log</log>
        <errorlog>$d/log/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$((HTTP_BASE + 10 * k))</http_port>
    <tcp_port>$((TCP_BASE + 10 * k))</tcp_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <interserver_http_port>$((INTER_BASE + 10 * k))</interserver_http_port>
    <max_connections>1024</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <!-- Small caches: tests and the benchmark share a 2-core machine with other processes. -->
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
    <mark_cache_size>268435456</mark_cache_size>
    <path>$d/data/</path>
    <tmp_path>$d/tmp/</tmp_path>
    <user_files_path>$d/user_files/</user_files_path>
    <format_schema_path>$d/format_schemas/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <!-- Lets start/stop check that the server answering on a port is this one (system.macros). -->
    <!-- The codec of every MergeTree part (18.16 has no per-column CODEC): lz4 is the default. -->
    <compression>
        <case><min_part_size>0</min_part_size><min_part_size_ratio>0</min_part_size_ratio><method>$COMPRESSION</method></case>
    </compression>
    <macros><mam_server_dir>$d</mam_server_dir></macros>
    <remote_servers>
        <$CLUSTER>
$replicas        </$CLUSTER>
    </remote_servers>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
    <query_log><database>system</database><table>query_log</table><flush_interval_milliseconds>1000</flush_interval_milliseconds></query_log>
</yandex>
XML
  cat >"$d/users.xml" <<'XML'
<?xml version="1.0"?>
<!-- Generated by scripts/clickhouse/server.sh: one passwordless user reachable from loopback only. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>in_order</load_balancing>
            <log_queries>LOG_QUERIES</log_queries>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
XML
  sed -i "s|LOG_QUERIES|$QUERY_LOG|" "$d/users.xml"
}

log_tail() {
  local d=$1
  echo "--- $d/log/clickhouse-server.err.log (tail)" >&2
  # stdout to stderr first, then tail's own errors away: the other order sends both away.
  tail -n 20 "$d/log/clickhouse-server.err.log" >&2 2>/dev/null || true
  echo "--- $d/log/clickhouse-server.log (tail)" >&2
  tail -n 10 "$d/log/clickhouse-server.log" >&2 2>/dev/null || true
  echo "--- $d/stdout.log (tail)" >&2
  tail -n 20 "$d/stdout.log" >&2 2>/dev/null || true
}

# The data directory of the server answering on HTTP port $1 (empty if none or not ours).
whoami_at() {
  curl -fsS --max-time 2 "http://127.0.0.1:$1/" --data-binary \
    "SELECT substitution FROM system.macros WHERE macro = 'mam_server_dir'" 2>/dev/null || true
}

# The HTTP, TCP and interserver ports in shard directory $1's config.xml, one per line.
config_ports() {
  sed -n 's#.*<\(http_port\|tcp_port\|interserver_http_port\)>\([0-9]*\)</.*#\2#p' "$1/config.xml"
}

# Fails before anything starts when a port of shard directories "$@" is taken: otherwise
# another server's answer on the same port could pass for ours, and ours would exit with
# "Address already in use". Taken means listened on, or held by any TCP socket but one in
# TIME-WAIT (which the server's SO_REUSEADDR binds over): a client's connection whose
# kernel-chosen local port is ours makes 18.16 exit 70 at start-up as surely as a listener.
check_ports_free() {
  local d p
  for d in "$@"; do
    for p in $(config_ports "$d"); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null ||
        { command -v ss >/dev/null && [ "$(ss -Htan "( sport = :$p )" | grep -cv '^TIME-WAIT')" != 0 ]; }; then
        echo "clickhouse: port $p ($(basename "$d")) is already in use on 127.0.0.1; pick another --http-port base" >&2
        exit 3
      fi
    done
  done
}

# Whether shard directory $1's error log says, since its last launch, a port was taken.
port_was_taken() {
  tail -n "+$(($(cat "$1/errlog.start" 2>/dev/null || echo 0) + 1))" "$1/log/clickhouse-server.err.log" 2>/dev/null |
    grep -q 'Address already in use'
}

shard_dirs() { find "$DIR" -mindepth 1 -maxdepth 1 -type d -name 'shard-*' 2>/dev/null | sort -t- -k2 -n; }

# The shard directories a command acts on: --shard K, or every shard under DIR.
selected_dirs() {
  if [ -n "$SHARD" ]; then
    [ -f "$DIR/shard-$SHARD/config.xml" ] || { echo "clickhouse: no shard $SHARD under $DIR" >&2; exit 1; }
    echo "$DIR/shard-$SHARD"
  else
    shard_dirs
  fi
}

running() { [ -f "$1/clickhouse.pid" ] && kill -0 "$(cat "$1/clickhouse.pid")" 2>/dev/null; }

# Stops the servers of shard directories "$@" (SIGTERM, SIGKILL after --timeout); data stays.
stop_dirs() {
  local d pid
  for d in "$@"; do
    [ -f "$d/clickhouse.pid" ] || continue
    kill -TERM "$(cat "$d/clickhouse.pid")" 2>/dev/null || true
  done
  for d in "$@"; do
    [ -f "$d/clickhouse.pid" ] || continue
    pid=$(cat "$d/clickhouse.pid")
    local waited=0
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$waited" -eq $((TIMEOUT * 10)) ]; then
        echo "clickhouse: $d (pid $pid) still running after ${TIMEOUT}s; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
      elif [ "$waited" -gt $((TIMEOUT * 10)) ] && [ $(((waited - TIMEOUT * 10) % 50)) = 0 ]; then
        # Killed but not yet reaped (a zombie answers kill -0): wait quietly, again SIGKILL
        # every 5 s in case the first one was lost.
        kill -KILL "$pid" 2>/dev/null || true
      fi
      # A zombie whose parent does not reap it holds no port and no file: done with it.
      if [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ]; then break; fi
      sleep 0.1
      waited=$((waited + 1))
    done
    rm -f "$d/clickhouse.pid"
  done
}

# Starts the server of shard directory $1 in the background and records its pid.
launch_one() {
  # Where this launch's error-log lines begin (port_was_taken reads only those).
  { wc -l <"$1/log/clickhouse-server.err.log" || echo 0; } 2>/dev/null >"$1/errlog.start"
  # setsid: the server must outlive this script and not get the caller's terminal signals.
  (cd "$1" && exec setsid "$SERVER" --config-file="$1/config.xml" >>"$1/stdout.log" 2>&1 </dev/null) &
  echo $! >"$1/clickhouse.pid"
}

# Starts the servers of shard directories "$@" from their config.xml and waits until each
# answers SELECT 1 as itself; on failure prints the log tail, stops them and exits 1.
launch_dirs() {
  local d pid port
  for d in "$@"; do
    if running "$d"; then
      echo "clickhouse: $d is already running (pid $(cat "$d/clickhouse.pid")); stop it first" >&2
      exit 1
    fi
  done
  check_ports_free "$@"
  for d in "$@"; do
    launch_one "$d"
  done
  for d in "$@"; do
    pid=$(cat "$d/clickhouse.pid")
    port=$(config_ports "$d" | head -n 1)
    local deadline=$((SECONDS + TIMEOUT)) relaunched=0
    until [ "$(curl -fsS --max-time 2 "http://127.0.0.1:$port/?query=SELECT%201" 2>/dev/null)" = 1 ] && [ "$(whoami_at "$port")" = "$d" ]; do
      # Whether it is alive is read once per round: read twice, a server dying between the
      # reads would skip the relaunch below and still be reported as exited.
      local alive=1
      kill -0 "$pid" 2>/dev/null || alive=0
      if [ "$alive" = 0 ] && port_was_taken "$d"; then
        # A port taken between the check and the bind (by a listener, or as the local end
        # of some client's connection): another base is the cure, which exit 3 asks for.
        echo "clickhouse: $(basename "$d") (pid $pid) could not bind a port:" >&2
        log_tail "$d"
        stop_dirs "$@"
        exit 3
      fi
      if [ "$alive" = 0 ] && [ "$relaunched" -lt 5 ]; then
        # Any other death at start-up is tried again a few times, 1 to 5 s apart, in case
        # it was transient; a real fault (a bad config) dies the same way every time and is
        # reported with the logs. The exit status says how it died.
        relaunched=$((relaunched + 1))
        local status=0
        wait "$pid" 2>/dev/null || status=$?
        echo "clickhouse: $(basename "$d") (pid $pid) died during start-up (exit status $status); starting it again ($relaunched of 5)" >&2
        log_tail "$d"
        sleep "$relaunched"
        launch_one "$d"
        pid=$(cat "$d/clickhouse.pid")
        continue
      fi
      if [ "$alive" = 0 ]; then
        echo "clickhouse: $(basename "$d") (pid $pid, http $port) exited during start-up" >&2
        log_tail "$d"
        stop_dirs "$@"
        exit 1
      fi
      if [ "$SECONDS" -ge "$deadline" ]; then
        echo "clickhouse: $(basename "$d") (pid $pid) did not answer SELECT 1 on http://127.0.0.1:$port within ${TIMEOUT}s" >&2
        log_tail "$d"
        stop_dirs "$@"
        exit 1
      fi
      sleep 0.2
    done
    echo "http://127.0.0.1:$port" >"$d/url"
  done
}

start_all() {
  install_if_missing
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  local k d
  for d in $(shard_dirs); do
    if running "$d"; then
      echo "clickhouse: $d is already running (pid $(cat "$d/clickhouse.pid")); stop it first" >&2
      exit 1
    fi
  done
  local dirs=()
  for ((k = 0; k < SHARDS; k++)); do
    write_config "$k"
    dirs+=("$DIR/shard-$k")
  done
  launch_dirs "${dirs[@]}"
  for d in "${dirs[@]}"; do cat "$d/url"; done
}

print_urls() {
  local d
  for d in $(shard_dirs); do cat "$d/url"; done
}

case "$CMD" in
  start) start_all ;;
  stop) mapfile -t dirs < <(selected_dirs); stop_dirs "${dirs[@]}" ;;
  resume) DIR=$(cd "$DIR" && pwd); mapfile -t dirs < <(selected_dirs); launch_dirs "${dirs[@]}"; print_urls ;;
  urls) print_urls ;;
  *) usage ;;
esac
