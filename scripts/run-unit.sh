#!/bin/sh
# make unit: run each cmocka binary given (paths from the top of the tree)
# from tests/unit and end with every skip they printed
# (tests/unit/test_skip.h: "SKIP by design: ..." or "SKIP precondition: ...")
# so that a test that did not run is never silent.
#
# UNIT_JOBS (default 1) binaries run at once (make check gives it the
# number of cores): each one's output is kept and printed whole, in the
# order given, as a serial run prints it, and the run fails with the first
# failing binary in that order (the ones after it ran too, but are not
# shown). The binaries share nothing: their stores are in directories of
# their own (mkdtemp), their listeners on ports the kernel picks.
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
export work
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c \
    'n=$(basename "$1"); rc=0; (cd tests/unit && "../../$1") >"$work/$n.out" 2>&1 || rc=$?;
     echo "$rc" >"$work/$n.rc"' sh {}

for t in "$@"; do
    echo "== $t"
    out=$work/$(basename "$t").out
    cat "$out"
    # cmocka's count ("[  SKIPPED ] 2 test(s), listed below:"), then the reasons
    grep -E '^\[  SKIPPED \] [0-9]+ test' "$out" | sed "s|^|$(basename "$t"): |" >>"$skips" || true
    grep -E '^SKIP (by design|precondition): ' "$out" | sed "s|^|$(basename "$t"): |" >>"$skips" || true
    rc=$(cat "$work/$(basename "$t").rc")
    [ "$rc" -eq 0 ] || exit "$rc"
done
echo "== unit: skips"
if [ -s "$skips" ]; then cat "$skips"; else echo "    none"; fi
