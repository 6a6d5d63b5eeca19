#!/usr/bin/env bash
# bench/run.sh [--smoke] N — the newsd benchmark (bench/README.md).
#
# Generates N articles (bench/gen, deterministic from SEED), loads them
# through `newsd import` and into the plain FTS5 baseline, runs the query mix
# (bench/querymix.tsv) in-process (bench_index), against the baseline
# (fts5_baseline) and over HTTP against `newsd serve` (bench_http), then
# prints the report (bench/report.py). A full run writes it to
# bench/results/<date>-<N>.md; --smoke (CI) only prints it, with short
# settings. Speed is never asserted: the exit status says only whether the
# harness worked.
#
# Knobs (environment): SEED (42), BENCH_REPS, BENCH_WARMUP, BENCH_SECONDS,
# BENCH_CLIENTS (1,2,4,16), BENCH_KEEP=1 keeps the stores in bench/work/,
# NEWSD_BIN (build/newsd) and BENCH_BIN (build/release/bench) for binaries
# kept elsewhere (a long run survives a rebuild of the tree).
set -euo pipefail

smoke=0
if [ "${1:-}" = "--smoke" ]; then
    smoke=1
    shift
fi
N="${1:-}"
case "$N" in
'' | *[!0-9]*)
    echo "usage: bench/run.sh [--smoke] N" >&2
    exit 2
    ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bin="${BENCH_BIN:-build/release/bench}"
newsd="${NEWSD_BIN:-build/newsd}"
for b in "$newsd" "$bin/gen" "$bin/bench_index" "$bin/bench_http" "$bin/fts5_baseline"; do
    if [ ! -x "$b" ]; then
        echo "bench: $b is missing: run 'make bench' (it builds them)" >&2
        exit 1
    fi
done
PYTHON="${PYTHON:-$(test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)}"

seed="${SEED:-42}"
if [ "$smoke" = 1 ]; then
    reps="${BENCH_REPS:-1}" warmup="${BENCH_WARMUP:-0}" seconds="${BENCH_SECONDS:-2}"
else
    reps="${BENCH_REPS:-3}" warmup="${BENCH_WARMUP:-1}" seconds="${BENCH_SECONDS:-15}"
fi
clients="${BENCH_CLIENTS:-1,2,4,16}"

work="bench/work/$N-$seed"
store="$work/store"
base="$work/baseline.db"
raw="$work/raw.tsv"
rm -rf "$work"
mkdir -p "$work"

# newsd's store and the baseline take about 9 and 6 KB per article here.
need_kb=$((N * 16))
avail_kb=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
if [ "$avail_kb" -lt "$need_kb" ]; then
    echo "bench: $N articles need about $((need_kb / 1048576)) GiB free in $work;" \
        "$((avail_kb / 1048576)) GiB are" >&2
    exit 1
fi

server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ "${BENCH_KEEP:-0}" != 1 ]; then
        rm -rf "$store" "$base" "$base-wal" "$base-shm"
    fi
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
step() { printf 'bench: %s (%s)\n' "$1" "$(date -u +%H:%M:%S)" >&2; }

t_start=$(now)
{
    printf 'run\tN\t%s\n' "$N"
    printf 'run\tseed\t%s\n' "$seed"
    printf 'run\treps\t%s\n' "$reps"
    printf 'run\twarmup\t%s\n' "$warmup"
    printf 'run\tseconds\t%s\n' "$seconds"
    printf 'run\tclients\t%s\n' "$clients"
    printf 'run\tsmoke\t%s\n' "$smoke"
} >"$raw"

step "generating $N articles alone (for the generator's share of the import time)"
t0=$(now)
"$bin/gen" --seed "$seed" --stats "$N" 2>"$work/gen.stats" >/dev/null
t1=$(now)
printf 'load\tgen\t%s\t%s\t0\n' "$N" "$(elapsed "$t0" "$t1")" >>"$raw"
"$bin/gen" --seed "$seed" --sources >"$work/sources.jsonl"

step "newsd import"
"$newsd" sources import --store "$store" "$work/sources.jsonl" >/dev/null
t0=$(now)
"$bin/gen" --seed "$seed" "$N" | "$newsd" import --store "$store" - >"$work/import.out"
t1=$(now)
store_bytes=$(du -sb "$store" | cut -f1)
printf 'load\tnewsd\t%s\t%s\t%s\n' "$N" "$(elapsed "$t0" "$t1")" "$store_bytes" >>"$raw"

step "FTS5 baseline build"
"$bin/gen" --seed "$seed" "$N" |
    "$bin/fts5_baseline" build --db "$base" --sources "$work/sources.jsonl" >>"$raw"

# A measuring program that fails (an err line, a crash) does not stop the
# run: the report shows what was measured and the exit status is 1.
failed=0
step "in-process queries (index.h)"
"$bin/bench_index" --store "$store" --mix bench/querymix.tsv --reps "$reps" \
    --warmup "$warmup" --clients "$clients" --seconds "$seconds" >>"$raw" \
    2>"$work/bench_index.err" || failed=1
# The first open builds the engine's index and writes its files.
sed -n 's/^bench_index: .* index opened in \([0-9.]*\) s$/run\tindex_first_open\t\1/p' \
    "$work/bench_index.err" >>"$raw"

step "FTS5 baseline queries"
"$bin/fts5_baseline" query --db "$base" --mix bench/querymix.tsv --reps "$reps" \
    --warmup "$warmup" --clients "$clients" --seconds "$seconds" >>"$raw" || failed=1

step "HTTP queries"
key=$("$newsd" keys create --store "$store" --name bench)
fifo="$work/serve.out"
t_serve=$(now)
"$newsd" serve --store "$store" --listen 127.0.0.1:0 --quiet >"$fifo" 2>"$work/serve.err" &
server_pid=$!
url=""
# The engine builds its index before listening: minutes for millions of
# articles, so wait as long as the server lives (up to 3 hours).
for _ in $(seq 1 108000); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$fifo" | head -n 1)
    [ -n "$url" ] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "bench: newsd serve exited:" >&2
        cat "$work/serve.err" >&2
        exit 1
    fi
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "bench: newsd serve did not say where it listens" >&2
    exit 1
fi
# A restart: the server maps the files bench_index wrote.
printf 'run\tserve_start\t%s\n' "$(elapsed "$t_serve" "$(now)")" >>"$raw"
"$bin/bench_http" --url "$url" --key "$key" --pid "$server_pid" --mix bench/querymix.tsv \
    --reps "$reps" --warmup "$warmup" --clients "$clients" --seconds "$seconds" >>"$raw" ||
    failed=1
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""

t_end=$(now)
printf 'run\twall\t%s\n' "$(elapsed "$t_start" "$t_end")" >>"$raw"

out="$work/report.md"
if [ "$smoke" = 0 ]; then
    mkdir -p bench/results
    out="bench/results/$(date -u +%Y-%m-%d)-$N.md"
fi
"$PYTHON" bench/report.py "$raw" --gen-stats "$work/gen.stats" --out "$out"
step "report written to $out"
if [ "$failed" != 0 ]; then
    echo "bench: a measuring step failed (see the report's errors)" >&2
    exit 1
fi
