#!/usr/bin/env bash
# Instructions per operation of each hot path, counted by valgrind's callgrind, against the
# checked-in baseline Benchmarks/callgrind-baseline.tsv. Instruction counts do not depend on
# what else the machine is doing, so unlike timings they can catch a regression on a shared
# machine. Each path (Benchmarks/Sources/HotPaths) runs twice under callgrind, with 0 and with
# N operations of one 1,000-event request; the difference / N is the cost of one operation,
# without start-up and preparation (decoding the sample, filling the store `scan` reads).
#
# Usage: scripts/callgrind.sh [--update] [--tolerance PCT] [PATH...]     (make callgrind)
#   --update       rewrite the baseline with this run's counts (after an intended change)
#   --tolerance    allowed growth in percent before a path fails (default 5)
#   PATH...        only these paths (decode flags compress commit scan render rollup)
# CALLGRIND_NO_BUILD=1 reuses the built Benchmarks/.build/release/hotpath-count.
# Exit status 1 when any path costs more than baseline × (1 + tolerance).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."
ROOT=$PWD
BASELINE=$ROOT/Benchmarks/callgrind-baseline.tsv
TOLERANCE=5
UPDATE=0
PATHS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update) UPDATE=1 ;;
    --tolerance) TOLERANCE=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "usage: $0 [--update] [--tolerance PCT] [PATH...]" >&2; exit 2 ;;
    *) PATHS+=("$1") ;;
  esac
  shift
done

# Operations per path: enough that the per-operation cost dominates the run-to-run
# difference of the surrounding process, few enough to keep the whole script short.
declare -A OPS=([decode]=5 [flags]=20 [compress]=5 [commit]=5 [scan]=3 [render]=3 [rollup]=20)
[ ${#PATHS[@]} -gt 0 ] || PATHS=(decode flags compress commit scan render rollup)
for p in "${PATHS[@]}"; do
  [ -n "${OPS[$p]:-}" ] || { echo "unknown path '$p' (known: ${!OPS[*]})" >&2; exit 2; }
done

command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
if [ -z "${CALLGRIND_NO_BUILD:-}" ]; then
  echo "== building hotpath-count (release)"
  # SwiftPM keeps the build plan of a path dependency: a source file added to the root
  # package since the last build is not seen ("cannot find ... in scope") until it re-plans.
  rm -f Benchmarks/.build/release/description.json
  (cd Benchmarks && swift build -c release --product hotpath-count)
fi
BUILT=$ROOT/Benchmarks/.build/release/hotpath-count
[ -x "$BUILT" ] || { echo "$BUILT not built" >&2; exit 2; }

make_temp_dir callgrind
TMP=$TEMP_DIR
# Valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift toolchain writes and gives up,
# so it runs a copy without debug info (the counts are the same; only line numbers are lost).
BIN=$TMP/hotpath-count
strip --strip-debug -o "$BIN" "$BUILT"
# Swift seeds its hash function per process; a fixed seed keeps dictionary work identical.
export SWIFT_DETERMINISTIC_HASHING=1 TMPDIR=$TMP

instructions() { # path ops -> total instructions of the whole run
  local out=$TMP/$1.$2.out
  valgrind --tool=callgrind --callgrind-out-file="$out" "$BIN" "$1" "$2" >"$TMP/$1.$2.log" 2>&1 ||
    { cat "$TMP/$1.$2.log" >&2; echo "hotpath-count $1 $2 failed under callgrind" >&2; return 1; }
  awk '/^totals:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$out"
}

baseline_of() { if [ -f "$BASELINE" ]; then awk -F'\t' -v p="$1" '$1 == p { print $2 }' "$BASELINE"; fi; }

printf '%-9s %16s %14s %16s %9s  %s\n' path "instr/operation" "instr/record" baseline change verdict
FAILED=0
declare -A MEASURED=()
for p in "${PATHS[@]}"; do
  n=${OPS[$p]}
  base0=$(instructions "$p" 0)
  total=$(instructions "$p" "$n")
  per_op=$(( (total - base0) / n ))
  MEASURED[$p]=$per_op
  ref=$(baseline_of "$p")
  if [ -z "$ref" ]; then
    change="-"; verdict="no baseline"
  else
    change=$(python3 -c "print('%+.2f%%' % (($per_op - $ref) * 100 / $ref))")
    verdict=$(python3 -c "
d = ($per_op - $ref) * 100 / $ref
print('REGRESSED' if d > $TOLERANCE else 'improved (run --update)' if d < -$TOLERANCE else 'ok')")
    [ "$verdict" != REGRESSED ] || FAILED=1
  fi
  printf '%-9s %16s %14s %16s %9s  %s\n' "$p" "$per_op" "$(( per_op / 1000 ))" "${ref:--}" "$change" "$verdict"
done

if [ "$UPDATE" = 1 ]; then
  {
    echo "# path	instructions per operation (one 1,000-event request; scripts/callgrind.sh --update)"
    for p in decode flags compress commit scan render rollup; do
      if [ -n "${MEASURED[$p]:-}" ]; then v=${MEASURED[$p]}; else v=$(baseline_of "$p"); fi
      [ -z "$v" ] || printf '%s\t%s\n' "$p" "$v"
    done
  } >"$TMP/baseline.tsv"
  mv "$TMP/baseline.tsv" "$BASELINE"
  echo "baseline written: $BASELINE"
  exit 0
fi
if [ "$FAILED" = 1 ]; then
  echo "a path costs more than ${TOLERANCE}% over its baseline ($BASELINE)" >&2
  exit 1
fi
