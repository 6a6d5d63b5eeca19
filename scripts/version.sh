#!/bin/sh
# Write build/gen/newsd_version.h (the version of newsd: VERSION, and the commit
# when built from a git checkout); rewritten only when it changes, so that
# an unchanged tree rebuilds nothing.
set -eu
out=$1
cd "$(dirname "$0")/.."
version=$(cat VERSION)
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit-dirty"
fi
tmp="$out.tmp"
mkdir -p "$(dirname "$out")"
printf '#define NEWSD_VERSION "%s"\n#define NEWSD_COMMIT "%s"\n' "$version" "$commit" > "$tmp"
if cmp -s "$tmp" "$out"; then rm -f "$tmp"; else mv "$tmp" "$out"; fi
