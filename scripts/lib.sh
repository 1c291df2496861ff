# shellcheck shell=bash
# What the scripts share: sourced, never run. From any script in scripts/ or below:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"            (scripts/clickhouse: "/../lib.sh")
# It defines functions and one EXIT trap (at_exit); it changes no option and no directory.

# ---- cleanup ------------------------------------------------------------------------
# Commands to run when the script exits, last registered first. One trap for every helper,
# so a script and this file never replace each other's. INT and TERM exit (130, 143), which
# runs the same list.
LIB_AT_EXIT=()
at_exit() { # COMMAND [ARGS...]: run at exit, with these arguments as given now
  LIB_AT_EXIT+=("$(printf '%q ' "$@")")
}
lib_run_at_exit() {
  local i
  for ((i = ${#LIB_AT_EXIT[@]} - 1; i >= 0; i--)); do eval "${LIB_AT_EXIT[i]}" || true; done
  LIB_AT_EXIT=()
}
trap lib_run_at_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A new temporary directory /tmp/PREFIX.XXXXXX in TEMP_DIR, removed at exit (KEEP_TEMP=1
# keeps it and prints where). A function sets the variable, as $(...) could not register it.
make_temp_dir() { # PREFIX
  TEMP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  at_exit lib_remove_temp_dir "$TEMP_DIR"
}
lib_remove_temp_dir() {
  if [ "${KEEP_TEMP:-0}" = 1 ]; then echo "kept $1" >&2; else rm -rf "$1"; fi
}

# ---- ports --------------------------------------------------------------------------
# A TCP port on 127.0.0.1 that nothing has bound now, picked at random below the kernel's
# ephemeral range (net.ipv4.ip_local_port_range): a port in that range can be the local end
# of any client's connection at the moment a server binds it, which fails the bind (18.16
# exits 70). A race with another process is still possible, so servers that can say "port
# taken" are retried by their callers. Falls back to the kernel's pick if the range starts low.
free_port() {
  python3 - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200 if low > 12000 else 0):
    port = random.randrange(10000, low - 1000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])
PY
}

# The first port of a block for a server that takes several consecutive ones: a free port
# rounded down to a multiple of STEP, plus OFFSET (so the block stays below 65536).
free_port_block() { # STEP OFFSET
  local port
  port=$(free_port)
  echo $((port / $1 * $1 + $2))
}

# ---- processes ----------------------------------------------------------------------
# Stops PID: TERM, then KILL if it is still running after SECONDS (default 30), and reaps it
# when it is this shell's child. A pid that is already gone is fine.
stop_pid() { # PID [SECONDS]
  local pid=$1 limit=${2:-30} i
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < limit * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# Polls URL until it answers 2xx. Fails after SECONDS (default 10), or at once when PID (if
# given) has exited: a daemon that died is not waited for.
wait_http() { # URL [SECONDS] [PID]
  local url=$1 limit=${2:-10} pid=${3:-} i
  for ((i = 0; i < limit * 10; i++)); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  curl -fsS -o /dev/null "$url"
}

# Starts a daemon on a free loopback port: COMMAND (the mamtelemetryd binary, possibly behind
# `env VAR=value`) and its arguments, plus --data-dir DATA_DIR --listen 127.0.0.1:PORT, with
# output appended to LOG. Waits for DAEMON_PROBE (default /healthz; 10 s, DAEMON_WAIT_SECONDS)
# and sets DAEMON_PID, DAEMON_PORT and DAEMON_URL. When it does not answer, prints the end of
# its log and fails. The caller stops it (stop_pid "$DAEMON_PID").
start_daemon() { # LOG DATA_DIR COMMAND [ARGS...]
  local log=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  DAEMON_PORT=$(free_port)
  DAEMON_URL=http://127.0.0.1:$DAEMON_PORT
  "$@" --data-dir "$dir" --listen "127.0.0.1:$DAEMON_PORT" >>"$log" 2>&1 &
  DAEMON_PID=$!
  if ! wait_http "$DAEMON_URL${DAEMON_PROBE:-/healthz}" "${DAEMON_WAIT_SECONDS:-10}" "$DAEMON_PID"; then
    echo "the daemon ($*) did not answer ${DAEMON_PROBE:-/healthz}; the end of $log:" >&2
    tail -n 20 "$log" >&2
    return 1
  fi
}

# ---- the load generator -------------------------------------------------------------
# Runs the load generator of the build in BIN_DIR: mamtelemetry-bench, or for a build from
# before it was a program of its own `mamtelemetryctl bench` (same options), so A/B scripts
# can compare against older builds.
load_generator() { # BIN_DIR [OPTIONS...]
  local bin=$1
  shift
  if [ -x "$bin/mamtelemetry-bench" ]; then "$bin/mamtelemetry-bench" "$@"; else "$bin/mamtelemetryctl" bench "$@"; fi
}

# ---- a benchmark beside a private ClickHouse --------------------------------------------
# For scripts/bench-clickhouse-*.sh. Without clickhouse-server (and unable to install it)
# writes {"skipped": ...} to OUT and exits 0. Otherwise sets WORK (/tmp/mamtelemetry-bench-
# NAME.XXXXXX) and DAEMON_PIDS (the caller adds its daemons), stops those and the server and
# removes WORK at exit, and starts the server under WORK/ch with SERVER_ARGS (three tries
# when its ports were taken meanwhile); its URLs are in WORK/ch.urls.
clickhouse_bench_start() { # NAME OUT LABEL [SERVER_ARGS...]
  local name=$1 out=$2 label=$3 rc=0
  shift 3
  if [ ! -x /usr/sbin/clickhouse-server ] && ! scripts/deps.sh bench >/dev/null 2>&1; then
    printf '{"skipped": "clickhouse-server could not be installed"}\n' >"$out"
    echo "$label skipped: clickhouse-server could not be installed"
    exit 0
  fi
  WORK=$(mktemp -d "/tmp/mamtelemetry-bench-$name.XXXXXX")
  DAEMON_PIDS=()
  at_exit clickhouse_bench_cleanup
  for _ in 1 2 3; do
    rc=0
    scripts/clickhouse/server.sh start --dir "$WORK/ch" --http-port "$(free_port_block 10 3)" "$@" >"$WORK/ch.urls" || rc=$?
    [ "$rc" = 3 ] || break
  done
  [ "$rc" = 0 ] || { echo "$label could not start ClickHouse (server.sh exit $rc)" >&2; exit 1; }
}
clickhouse_bench_cleanup() {
  local p
  for p in "${DAEMON_PIDS[@]}"; do stop_pid "$p"; done
  scripts/clickhouse/server.sh stop --dir "$WORK/ch" --timeout 10 >/dev/null 2>&1 || true
  rm -rf "$WORK"
}

# ---- small readers ------------------------------------------------------------------
# The top-level KEY of the JSON object in FILE ("" when absent).
json_field() { # FILE KEY
  python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print(d.get(sys.argv[2],""))' "$1" "$2"
}

# A monotonic clock in seconds (fractional), for timing a step.
monotonic_seconds() {
  python3 -c 'import time;print(time.monotonic())'
}

# CPU time PID has used so far (user + system, its threads included), in seconds.
cpu_seconds() { # PID
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat"
}

# Resident set size of PID in KiB.
rss_kib() { # PID
  awk '/^VmRSS:/{print $2}' "/proc/$1/status"
}

# Installs the Debian packages named that are missing (PACKAGE:COMMAND pairs, or a path to
# test with -x), with sudo unless root; quiet unless apt fails.
install_missing() { # PACKAGE:COMMAND_OR_PATH...
  local pkgs=() pair pkg probe sudo=""
  for pair in "$@"; do
    pkg=${pair%%:*}
    probe=${pair#*:}
    if [[ $probe == /* ]]; then [ -x "$probe" ] || pkgs+=("$pkg"); else command -v "$probe" >/dev/null 2>&1 || pkgs+=("$pkg"); fi
  done
  [ ${#pkgs[@]} -gt 0 ] || return 0
  echo "== installing ${pkgs[*]}"
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${pkgs[@]}" >/dev/null ||
    { $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${pkgs[@]}" >/dev/null; }
}

# ---- what the store holds: `mamtelemetryd --store-layout` ------------------------------
# The daemon reads its own files (read-only, beside a running daemon) and prints JSON, so no
# script knows how rows or segments are stored. DAEMON is the mamtelemetryd binary to ask.
# The sum of one per-kind figure (records, rows, segments, uncompacted, rawBytes, storedBytes,
# keysBytes, guidTableBytes, payloadBytes, bloomBytes) over DATA_DIR's environments, of KIND (event, log) or all.
layout_total() { # DAEMON DATA_DIR FIGURE [KIND]
  "$1" --data-dir "$2" --store-layout |
    jq --arg figure "$3" --arg kind "${4:-}" '[.environments[].kinds[] | select($kind == "" or .kind == $kind) | .[$figure]] | add // 0'
}

# Batches the compactor has not yet merged into segments, over DATA_DIR's environments.
uncompacted_batches() { # DAEMON DATA_DIR
  layout_total "$1" "$2" uncompacted
}

# Waits until the count of uncompacted batches stops falling (checked every SECONDS, at most
# TRIES times; the newest run may stay a batch until more records follow it); prints it.
wait_compaction_settled() { # DAEMON DATA_DIR SECONDS TRIES
  local last=-1 left
  for _ in $(seq 1 "$4"); do
    left=$(uncompacted_batches "$1" "$2")
    [ "$left" = "$last" ] && break
    last=$left
    sleep "$3"
  done
  echo "$last"
}
