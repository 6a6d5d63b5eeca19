#!/bin/sh
# make unit: run each cmocka binary given (paths from the top of the tree)
# from tests/unit, stop at the first that fails, and end with every skip
# they printed (tests/unit/test_skip.h: "SKIP by design: ..." or
# "SKIP precondition: ...") so that a test that did not run is never silent.
set -eu
out=$(mktemp)
skips=$(mktemp)
trap 'rm -f "$out" "$skips"' EXIT
for t in "$@"; do
    echo "== $t"
    rc=0
    (cd tests/unit && "../../$t") >"$out" 2>&1 || rc=$?
    cat "$out"
    # cmocka's count ("[  SKIPPED ] 2 test(s), listed below:"), then the reasons
    grep -E '^\[  SKIPPED \] [0-9]+ test' "$out" | sed "s|^|$(basename "$t"): |" >>"$skips" || true
    grep -E '^SKIP (by design|precondition): ' "$out" | sed "s|^|$(basename "$t"): |" >>"$skips" || true
    [ "$rc" -eq 0 ] || exit "$rc"
done
echo "== unit: skips"
if [ -s "$skips" ]; then cat "$skips"; else echo "    none"; fi
