#!/bin/bash
# journald-harness.sh — run a command next to a private, real systemd-journald (SPEC §11).
#
# Usage: journald-harness.sh <workdir> -- <command> [args...]
#
# Inside a private mount namespace (`unshare -m --propagation private`) this script:
#   1. mounts a tmpfs on /run/systemd, so journald's sockets (/run/systemd/journal/socket,
#      stdout, dev-log) and its config drop-in exist only for this run;
#   2. mounts a tmpfs on /run/log and binds <workdir>/journal onto /run/log/journal, where
#      journald keeps its (volatile) files, so the host can read them while and after the
#      command runs: `journalctl -D <workdir>/journal`;
#   3. starts /lib/systemd/systemd-journald in the background (never systemd as PID 1: its
#      boot-time tmpfiles run would wipe the shared /tmp) and waits for its socket;
#   4. runs the command, which sees the private journal at the usual paths, so
#      sd_journal_sendv, systemd-cat and `journalctl` inside the namespace all use it;
#   5. stops journald with SIGTERM (it syncs and closes its files), and exits with the
#      command's exit status.
# Nothing outside <workdir> is written: the mounts vanish with the namespace, the host's
# journal, /run and /tmp are untouched. Needs root (CAP_SYS_ADMIN for the namespace).
#
# The command is a child of this script rather than exec'd, so journald can be stopped
# after it; its exit status is passed through unchanged (128+N when killed by signal N).
# SIGTERM, SIGINT and SIGHUP sent to the harness are forwarded to the command (SIGHUP is
# the daemon's reload), and the harness waits for it. For anything else — SIGKILL in a
# crash test — signal the command directly: its pid is in <workdir>/command.pid (and
# journald's in <workdir>/journald.pid). If the harness itself is killed, the command and
# journald get SIGTERM (parent-death signal), so nothing is left running.
#
# Exit status: the command's, or 125 when the harness itself could not set up journald.
# Set JOURNALD_HARNESS_VERBOSE=1 to see journald's own messages (stderr).
set -euo pipefail

readonly journald=${JOURNALD_BINARY:-/lib/systemd/systemd-journald}

die() {
    echo "journald-harness: $*" >&2
    exit 125
}

[[ $# -ge 3 && $2 == "--" ]] || die "usage: $0 <workdir> -- <command> [args...]"
workdir=$1
shift 2

if [[ -z ${JOURNALD_HARNESS_INSIDE:-} ]]; then
    [[ $(id -u) -eq 0 ]] || die "must run as root (needs a private mount namespace)"
    [[ -x $journald ]] || die "$journald not found (install systemd)"
    mkdir -p "$workdir/journal"
    workdir=$(cd "$workdir" && pwd -P)
    # No --fork: unshare execs this script again in the same process, so the process the
    # caller started is the harness itself: signals reach it, its exit status is returned.
    exec env JOURNALD_HARNESS_INSIDE=1 unshare --mount --propagation private -- \
        "${BASH:-/bin/bash}" "$0" "$workdir" -- "$@"
fi

# --- inside the private mount namespace ----------------------------------------------
unset JOURNALD_HARNESS_INSIDE

# /run/systemd and /run/log are normally present; where they are not, a tmpfs over the
# whole of /run (private to this namespace) provides them without creating host paths.
if [[ ! -d /run/systemd || ! -d /run/log ]]; then
    mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
    mkdir -p /run/systemd /run/log
fi
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run/systemd
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run/log
mkdir -p /run/log/journal
mount --bind "$workdir/journal" /run/log/journal

# Config drop-in (journald reads /run/systemd/journald.conf.d/): volatile storage in the
# bound directory, no rate limit (tests send bursts), nothing forwarded anywhere else.
mkdir -p /run/systemd/journald.conf.d
cat >/run/systemd/journald.conf.d/harness.conf <<'EOF'
[Journal]
Storage=volatile
RateLimitIntervalSec=0
RateLimitBurst=0
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
Compress=no
Seal=no
EOF

journald_log=/dev/null
[[ -n ${JOURNALD_HARNESS_VERBOSE:-} ]] && journald_log=/dev/stderr

# Children get SIGTERM if this script dies, so a crashed test leaves nothing behind.
orphan_guard=()
command -v setpriv >/dev/null && orphan_guard=(setpriv --pdeathsig TERM --)

# journald must not report to a supervisor the caller may be running under, nor change
# the host kernel's audit settings (it may enable auditing when it can): it runs without
# the audit capabilities.
journald_guard=("${orphan_guard[@]}")
command -v setpriv >/dev/null &&
    journald_guard=(setpriv --pdeathsig TERM --bounding-set -audit_control,-audit_read,-audit_write --)
env -u NOTIFY_SOCKET -u WATCHDOG_USEC -u WATCHDOG_PID -u LISTEN_FDS -u LISTEN_PID \
    "${journald_guard[@]}" "$journald" </dev/null >"$journald_log" 2>&1 &
journald_pid=$!
echo "$journald_pid" >"$workdir/journald.pid"

stop_journald() {
    kill -TERM "$journald_pid" 2>/dev/null || return 0
    # journald flushes and closes its files on SIGTERM; give it 10 s before SIGKILL.
    for _ in $(seq 100); do
        kill -0 "$journald_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$journald_pid" 2>/dev/null || true
    wait "$journald_pid" 2>/dev/null || true
}

for _ in $(seq 200); do
    [[ -S /run/systemd/journal/socket ]] && break
    kill -0 "$journald_pid" 2>/dev/null || die "systemd-journald exited during start-up"
    sleep 0.05
done
if [[ ! -S /run/systemd/journal/socket ]]; then
    stop_journald
    die "systemd-journald did not create /run/systemd/journal/socket within 10 s"
fi

# The command runs as a child (not exec'd) so journald can be stopped after it; signals
# sent to the harness are passed on to the command, whose status then becomes ours.
set +e
"${orphan_guard[@]}" "$@" <&0 &
command_pid=$!
echo "$command_pid" >"$workdir/command.pid"
trap 'kill -TERM "$command_pid" 2>/dev/null' TERM
trap 'kill -INT "$command_pid" 2>/dev/null' INT
trap 'kill -HUP "$command_pid" 2>/dev/null' HUP
while :; do
    # (stderr: bash would otherwise report "Killed" for a command ended by a signal.)
    wait "$command_pid" 2>/dev/null
    status=$?
    # `wait` returns >128 when interrupted by a trapped signal while the child still runs.
    kill -0 "$command_pid" 2>/dev/null || break
done
trap - TERM INT HUP
stop_journald
exit "$status"
