#!/bin/sh
# make unit: run each cmocka binary given (paths from the top of the tree)
# from tests/unit and end with every skip they printed
# (tests/unit/test_skip.h: "SKIP by design: ..." or "SKIP precondition: ...")
# so that a test that did not run is never silent.
#
# An argument PATH:ARG runs PATH with the one argument ARG: a binary whose
# groups can run apart (test_index_engine 1, 2, 3) is given as several
# runs, so that on two cores it does not outlast everything else.
#
# UNIT_JOBS (default 1) binaries run at once (make unit gives it twice the
# number of cores: they wait more than they compute): each one's output is
# kept and printed whole, in the order given, as a serial run prints it,
# and the run fails with the first failing binary in that order (the ones
# after it ran too, but are not shown). The binaries share nothing: their
# stores are in directories of their own (mkdtemp), their listeners on
# ports the kernel picks.
set -eu
jobs=${UNIT_JOBS:-1}
case "$jobs" in
'' | *[!0-9]* | 0) echo "run-unit: UNIT_JOBS must be a positive number" >&2; exit 2 ;;
esac
work=$(mktemp -d)
skips=$work/skips
: >"$skips"
trap 'rm -rf "$work"' EXIT

# Each binary's output to $work/<name>.out, its exit status to $work/<name>.rc
# (xargs starts the next one as soon as any of the running ones ends).
# A run's name: the binary's, then -ARG for PATH:ARG.
export work
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c \
    'n=$(basename "$1" | tr : -); rc=0
     case $1 in *:*) set -- "${1%%:*}" "${1#*:}" ;; esac
     (cd tests/unit && "../../$@") >"$work/$n.out" 2>&1 || rc=$?
     echo "$rc" >"$work/$n.rc"' sh {}

for t in "$@"; do
    echo "== $t"
    n=$(basename "$t" | tr : -)
    out=$work/$n.out
    cat "$out"
    # cmocka's count ("[  SKIPPED ] 2 test(s), listed below:"), then the reasons
    grep -E '^\[  SKIPPED \] [0-9]+ test' "$out" | sed "s|^|$n: |" >>"$skips" || true
    grep -E '^SKIP (by design|precondition): ' "$out" | sed "s|^|$n: |" >>"$skips" || true
    rc=$(cat "$work/$n.rc")
    [ "$rc" -eq 0 ] || exit "$rc"
done
echo "== unit: skips"
if [ -s "$skips" ]; then cat "$skips"; else echo "    none"; fi
