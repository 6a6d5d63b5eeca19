#!/bin/sh
# Long libFuzzer runs, one harness at a time at low priority, for the
# record in docs/reliability.md: executions, coverage, corpus, findings.
#   tests/reliability/fuzz_long.sh SECONDS [NAME...]   (default: every harness)
# Needs the clang harnesses (make build/fuzz/bin/fuzz_NAME). New corpus
# entries go to build/fuzz/corpus/NAME, crashes to build/fuzz/artifacts/NAME/,
# the log of a run to build/fuzz/logs/NAME.log; a summary line per harness
# is printed. Crashing inputs must then be copied into fuzz/corpus/NAME/.
set -u
secs=${1:?usage: fuzz_long.sh SECONDS [NAME...]}
shift
cd "$(dirname "$0")/../.."
names="$*"
if [ -z "$names" ]; then
    for f in fuzz/fuzz_*.c; do n=$(basename "$f" .c); names="$names ${n#fuzz_}"; done
fi
for n in $names; do
    bin=build/fuzz/bin/fuzz_$n
    [ -x "$bin" ] || { echo "$n: $bin missing (make $bin)"; continue; }
    mkdir -p build/fuzz/corpus/$n build/fuzz/artifacts/$n build/fuzz/logs
    dict=""
    [ -f fuzz/$n.dict ] && dict="-dict=fuzz/$n.dict"
    start=$(date +%s)
    # -timeout: an input that takes 10 s is a finding too (a hang).
    nice -n 15 "$bin" $dict -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/$n/ \
        build/fuzz/corpus/$n fuzz/corpus/$n > build/fuzz/logs/$n.log 2>&1
    rc=$?
    end=$(date +%s)
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' build/fuzz/logs/$n.log | awk '{print $2}')
    last=$(grep -E '^#[0-9]+' build/fuzz/logs/$n.log | tail -1)
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | awk '{print $2}')
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | awk '{print $2}')
    corp=$(echo "$last" | grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' | awk '{print $2}')
    crashes=$(ls build/fuzz/artifacts/$n | wc -l)
    echo "$n: exit $rc, $((end - start)) s, execs ${execs:-?}, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, artifacts $crashes"
done
