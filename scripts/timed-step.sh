#!/bin/sh
# One step of `make check`, then how long it took: CI's log shows where
# the time goes (make check is to stay under 15 minutes on CI's machine).
# usage: scripts/timed-step.sh NAME COMMAND [ARG...]
name=$1
shift
start=$(date +%s)
"$@"
rc=$?
echo "== make check: $name took $(($(date +%s) - start)) s (exit $rc)"
exit $rc
