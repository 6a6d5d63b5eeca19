#!/usr/bin/env bash
# bench/run.sh [--smoke] N — the newsd benchmark (bench/README.md).
#
# Generates N articles (bench/gen, deterministic from SEED, profile PROFILE),
# loads them through `newsd import`, then:
#   1. starts `newsd serve` on the fresh store with the count cache off
#      (NEWSD_ENGINE_COUNT_CACHE=0) and times its first index build (start
#      to /healthz 200) and the background merges after it (to no merge
#      running); runs the query mix over HTTP, cold;
#   2. restarts it with the count cache on (the restart time: start to
#      listening and to healthy) and runs the mix again, warm;
#   3. runs the mix in-process (bench_index), cold then warm, and against the
#      peers (issue 31), each loaded with the same articles just before its
#      queries and removed after them (the disk holds one at a time): the
#      plain FTS5 baseline, FTS5 with filter terms (fts5_baseline --meta)
#      and Groonga over HTTP (groonga_baseline; not in the smoke run, nor
#      where groonga is not installed);
#      then streams one export of a broad query (issue 27) and walks the
#      same matches by cursor paging (BENCH_EXPORT: its parameters);
#   4. the percolator (bench_percolate): 10,000 saved searches against each
#      article, on one core, and the same by testing every search;
#   5. the freshness probe (bench/fresh.py): a marker article imported while
#      RATE articles/s are, searched for until found;
# then prints the report (bench/report.py). Every latency pass is timed and
# numbered: pass 0 is each query's first run in that process, the later
# passes are repeats. A full run writes the report to
# bench/results/<date>-<profile>-<N>.md; --smoke (CI) only prints it, with
# short settings. Speed is never asserted: the exit status says whether the
# harness worked (every request answered, the cold runs were cold).
#
# Knobs (environment): PROFILE (newsapi | full; default newsapi), SEED (42),
# BENCH_REPS (timed passes, first run included: 4; smoke 2), BENCH_SECONDS
# (per throughput level: 15; smoke 0.5), BENCH_CLIENTS (1,2,4,16; smoke
# 1,4), BENCH_FRESH_RATE (5000 articles/s; smoke 1000), BENCH_FRESH_SECONDS
# (20; smoke 1; 0 skips the probe), BENCH_EXTENSIONS (1: the extensions of
# issues 25-27, engine and FTS5 servers interleaved, bench/bench_extensions.py;
# smoke 0: make check has no minute to spare), BENCH_FTS5_COUNTS (1: the
# FTS5 side of the counts and of the query-language shapes, newsd's FTS5
# backend built into the store; 0 skips it: at 10 M that build alone is
# most of an hour), BENCH_KEEP=1 keeps the stores in bench/work/,
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
for b in "$newsd" "$bin/gen" "$bin/bench_index" "$bin/bench_http" "$bin/fts5_baseline" \
    "$bin/bench_percolate" "$bin/bench_counts"; do
    if [ ! -x "$b" ]; then
        echo "bench: $b is missing: run 'make bench' (it builds them)" >&2
        exit 1
    fi
done
PYTHON="${PYTHON:-$(test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)}"

profile="${PROFILE:-newsapi}"
seed="${SEED:-42}"
if [ "$smoke" = 1 ]; then
    reps="${BENCH_REPS:-2}" seconds="${BENCH_SECONDS:-0.5}" clients="${BENCH_CLIENTS:-1,4}"
    fresh_seconds="${BENCH_FRESH_SECONDS:-1}" fresh_rate="${BENCH_FRESH_RATE:-1000}"
    fresh_timeout=15 extensions="${BENCH_EXTENSIONS:-0}"
else
    reps="${BENCH_REPS:-4}" seconds="${BENCH_SECONDS:-15}" clients="${BENCH_CLIENTS:-1,2,4,16}"
    fresh_seconds="${BENCH_FRESH_SECONDS:-20}" fresh_rate="${BENCH_FRESH_RATE:-5000}"
    fresh_timeout=30 extensions="${BENCH_EXTENSIONS:-1}"
fi
case "$profile" in
# the peak: the store (table and index files) with one peer at a time, or,
# at the end, with FTS5's tables in it and its copy for the extensions
# (10 M newsapi: table 1.1 KB an article, index files 0.9, FTS5's tables
# 1.0, each FTS5 baseline 2.1-2.2)
newsapi) kb_per_article=$([ "$extensions" = 1 ] && echo 6 || echo 5) ;;
full) kb_per_article=20 ;; # about 17 KB at 1 M (2026-11-25)
*)
    echo "bench: PROFILE must be newsapi or full" >&2
    exit 2
    ;;
esac
if [ "$reps" -lt 2 ]; then
    echo "bench: BENCH_REPS must be at least 2 (a first run and a repeat)" >&2
    exit 2
fi

work="bench/work/$profile-$N-$seed"
store="$work/store"
base="$work/baseline.db"
base_meta="$work/baseline-meta.db"
raw="$work/raw.tsv"
rm -rf "$work"
mkdir -p "$work"

need_kb=$((N * kb_per_article))
avail_kb=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
if [ "$avail_kb" -lt "$need_kb" ]; then
    echo "bench: $N articles need about $((need_kb / 1048576)) GiB free in $work;" \
        "$((avail_kb / 1048576)) GiB are" >&2
    exit 1
fi

server_pid=""
server_started="" # when start_server started it (wall-clock seconds): --since of the waits
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
cleanup() {
    stop_server
    if [ "${BENCH_KEEP:-0}" != 1 ]; then
        rm -rf "$store" "$store-fts5" "$base" "$base-wal" "$base-shm" "$base_meta" \
            "$base_meta-wal" "$base_meta-shm" "$work/groonga"
    fi
}
trap cleanup EXIT
# A peer's database, measured: removed unless BENCH_KEEP=1.
drop_peer() {
    [ "${BENCH_KEEP:-0}" = 1 ] || rm -f "$1" "$1-wal" "$1-shm"
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
step() { printf 'bench: %s (%s)\n' "$1" "$(date -u +%H:%M:%S)" >&2; }
free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME CACHE: `newsd serve` on the store, the count cache off
# (CACHE=0: NEWSD_ENGINE_COUNT_CACHE=0, the benchmark switch) or as
# configured (CACHE=1: the variable unset); waits until /healthz answers 200
# (the first start builds the index: minutes for millions of articles, so up
# to 3 hours) and records when it listened and when it was healthy. No
# crawler, no access log, no query time limit (a slow query is measured, not
# cut off with a 503).
start_server() {
    local name="$1" cache="$2" port
    port=$(free_port)
    url="http://127.0.0.1:$port"
    local envset=(env -u NEWSD_ENGINE_COUNT_CACHE)
    [ "$cache" = 0 ] && envset=(env NEWSD_ENGINE_COUNT_CACHE=0)
    server_started=$(now)
    "${envset[@]}" "$newsd" serve --store "$store" --listen "127.0.0.1:$port" --no-crawl --quiet \
        --query-timeout-ms 0 >"$work/$name.out" 2>"$work/$name.err" &
    server_pid=$!
    if ! "$bin/bench_http" --url "$url" --wait-healthy 10800 --since "$server_started" --pid "$server_pid" \
        --name "$name" >>"$raw"; then
        echo "bench: newsd serve ($name) did not become healthy:" >&2
        cat "$work/$name.err" >&2
        exit 1
    fi
}

t_start=$(now)
{
    printf 'run\tN\t%s\n' "$N"
    # the binaries' commit (the report stamps it, not the tree it renders from)
    printf 'run\tnewsd_version\t%s\n' "$("$newsd" --version | head -n 1)"
    printf 'run\tprofile\t%s\n' "$profile"
    printf 'run\tseed\t%s\n' "$seed"
    printf 'run\treps\t%s\n' "$reps"
    printf 'run\tseconds\t%s\n' "$seconds"
    printf 'run\tclients\t%s\n' "$clients"
    printf 'run\tsmoke\t%s\n' "$smoke"
    printf 'run\tfresh_seconds\t%s\n' "$fresh_seconds"
} >"$raw"

gen=("$bin/gen" --seed "$seed" --profile "$profile")

step "generating $N $profile articles alone (the generator's share of the import time)"
t0=$(now)
"${gen[@]}" --stats "$N" 2>"$work/gen.stats" >/dev/null
t1=$(now)
printf 'load\tgen\t%s\t%s\t0\n' "$N" "$(elapsed "$t0" "$t1")" >>"$raw"
"$bin/gen" --seed "$seed" --sources >"$work/sources.jsonl"

step "newsd import"
"$newsd" sources import --create --store "$store" "$work/sources.jsonl" >/dev/null
t0=$(now)
"${gen[@]}" "$N" | "$newsd" import --create --store "$store" - >"$work/import.out"
t1=$(now)
store_bytes=$(du -sb "$store" | cut -f1)
printf 'load\tnewsd\t%s\t%s\t%s\n' "$N" "$(elapsed "$t0" "$t1")" "$store_bytes" >>"$raw"
key=$("$newsd" keys create --store "$store" --name bench)

# A measuring program that fails (an err line, a crash) does not stop the
# run: the report shows what was measured and the exit status is 1.
failed=0
mix=bench/querymix.tsv
lat_args=(--mix "$mix" --reps "$reps" --warmup 0 --clients "$clients" --seconds "$seconds")
lang_args=(--mix bench/querymix-lang.tsv --reps "$reps" --warmup 0 --clients 1 --seconds 0)

step "newsd serve: first index build, its merges, then the mix over HTTP, count cache off"
start_server serve-first 0
# The first build cuts segments of 131,072 documents and merges them in the
# background (docs/engine.md "Merges"): a few seconds at 1 M, minutes at
# 10 M. The passes measure the index the server then keeps; how long it
# took to get there is a figure of its own (settled_seconds).
if ! "$bin/bench_http" --url "$url" --wait-settled 3600 --since "$server_started" --pid "$server_pid" \
    --name serve-first >>"$raw"; then
    echo "bench: the first build's merges did not end within an hour" >&2
    failed=1
fi
"$bin/bench_http" --url "$url" --key "$key" --pid "$server_pid" --name http-cold "${lat_args[@]}" \
    >>"$raw" || failed=1
# Issue 31 item 6: the query language's own forms (prefixes, proximity,
# field terms), a mix of their own; the FTS5 server below answers it too.
"$bin/bench_http" --url "$url" --key "$key" --pid "$server_pid" --name lang-engine \
    "${lang_args[@]}" >>"$raw" || failed=1
# Issue 26: counts per bucket and facets over HTTP, count cache off.
# (each shape is milliseconds: five times the passes, for a p95 of some use)
"$bin/bench_counts" --url "$url" --key "$key" --reps "$((reps * 5))" --no-inprocess \
    --http-name counts-http >>"$raw" || failed=1
stop_server
# The index files the first start wrote, against the rest of the store.
engine_dir="$store/newsd.db.engine"
engine_bytes=0
if [ -d "$engine_dir" ]; then
    engine_bytes=$(du -sb "$engine_dir" | cut -f1)
    printf 'size\tnewsd\tengine-files\t%s\n' "$engine_bytes" >>"$raw"
    printf 'stat\tnewsd\tengine_file_count\t%s\n' "$(find "$engine_dir" -type f | wc -l)" >>"$raw"
fi
printf 'size\tnewsd\tstore\t%s\n' "$(($(du -sb "$store" | cut -f1) - engine_bytes))" >>"$raw"
# Where the index files' bytes go (`newsd index sizes`): the index proper
# apart from the document store (each article's JSON, a copy of the rows
# like FTS5's fts_content), so that the size target counts the index only.
if [ -d "$engine_dir" ] &&
    "$newsd" index sizes --store "$store" >"$work/index-sizes.txt" 2>"$work/index-sizes.err"; then
    awk '$2 ~ /^[0-9]+$/ && NF == 4 { printf "size\tnewsd\tpart-%s\t%s\n", $1, $2 }
         $1 == "segments" { printf "stat\tnewsd\tindex_segments\t%s\n", $2 }' \
        "$work/index-sizes.txt" >>"$raw"
fi

step "newsd serve: restart on the built store, then the mix over HTTP, count cache on"
start_server serve-restart 1
"$bin/bench_http" --url "$url" --key "$key" --pid "$server_pid" --name http-warm "${lat_args[@]}" \
    >>"$raw" || failed=1
# Issue 27: every match of a broad query (most articles) as NDJSON, then
# the same matches walked by cursor paging, the baseline of the same run.
step "export: every match of a broad query, then the same by cursor paging"
"$bin/bench_http" --url "$url" --key "$key" --pid "$server_pid" --name export \
    --export "${BENCH_EXPORT:-q=the%20OR%20of%20OR%20and%20OR%20a%20OR%20in}" >>"$raw" || failed=1
stop_server

step "in-process queries (index.h), count cache off"
NEWSD_ENGINE_COUNT_CACHE=0 "$bin/bench_index" --store "$store" --name newsd-cold "${lat_args[@]}" \
    >>"$raw" 2>"$work/bench_index-cold.err" || failed=1
step "in-process queries (index.h), count cache on"
env -u NEWSD_ENGINE_COUNT_CACHE "$bin/bench_index" --store "$store" --name newsd-warm \
    "${lat_args[@]}" >>"$raw" 2>"$work/bench_index-warm.err" || failed=1

fts5_counts="${BENCH_FTS5_COUNTS:-1}"
counts_args=()
if [ "$fts5_counts" != 1 ]; then
    counts_args=(--no-fts5)
    printf 'stat\tfts5-counts\tskipped\tBENCH_FTS5_COUNTS=%s\n' "$fts5_counts" >>"$raw"
fi
step "counts and facets (issue 26): in-process, engine (count cache off) and FTS5 GROUP BY"
"$bin/bench_counts" --store "$store" --reps "$((reps * 5))" "${counts_args[@]}" >>"$raw" \
    2>"$work/bench_counts.err" || failed=1
# The peers one at a time, each built just before its queries and removed
# after them (BENCH_KEEP=1 keeps them): at 10 M the store, both FTS5
# baselines and Groonga at once were more than a 60 GB disk holds.
step "FTS5 baseline build"
"${gen[@]}" "$N" | "$bin/fts5_baseline" build --db "$base" --sources "$work/sources.jsonl" >>"$raw"
step "FTS5 baseline queries"
"$bin/fts5_baseline" query --db "$base" "${lat_args[@]}" >>"$raw" || failed=1
drop_peer "$base"
step "FTS5 baseline with filter terms build (issue 31)"
"${gen[@]}" "$N" | "$bin/fts5_baseline" build --meta --db "$base_meta" \
    --sources "$work/sources.jsonl" >>"$raw"
step "FTS5 with filter terms baseline queries"
"$bin/fts5_baseline" query --meta --db "$base_meta" "${lat_args[@]}" >>"$raw" || failed=1
drop_peer "$base_meta"

# Issue 31: Groonga as users run it, a persistent HTTP server, loaded with
# the same articles and sent the mix as `select` requests
# (bench/groonga_baseline.c). Skipped by the smoke run (make check must not
# need groonga) and where groonga is not installed (scripts/install-deps.sh
# --bench installs it): the report says which.
groonga_skip=""
if [ "$smoke" = 1 ]; then
    groonga_skip="smoke run"
elif ! command -v groonga >/dev/null 2>&1; then
    groonga_skip="groonga is not installed (scripts/install-deps.sh --bench)"
fi
if [ -n "$groonga_skip" ]; then
    printf 'stat\tgroonga\tskipped\t%s\n' "$groonga_skip" >>"$raw"
else
    step "Groonga baseline: load, indexes, then the mix over HTTP"
    gdir="$work/groonga"
    rm -rf "$gdir"
    mkdir -p "$gdir"
    (
        groonga -n "$gdir/db" shutdown </dev/null >/dev/null
        gport=$(free_port)
        gurl="http://127.0.0.1:$gport"
        # as many worker threads as the most clients of the mix (default 2)
        gthreads=$(tr ',' '\n' <<<"$clients" | sort -n | tail -1)
        # its own session: a groonga server that is signalled signals its
        # process group, which would otherwise be this script's
        setsid groonga -s --protocol http --bind-address 127.0.0.1 --port "$gport" \
            --max-threads "$gthreads" "$gdir/db" >"$work/groonga.out" 2>"$work/groonga.err" &
        gpid=$!
        trap 'curl -s "$gurl/d/shutdown" >/dev/null || kill "$gpid" 2>/dev/null; wait "$gpid" 2>/dev/null' EXIT
        for _ in $(seq 100); do
            curl -sf "$gurl/d/status" >/dev/null && break
            sleep 0.1
        done
        printf 'run\tgroonga_threads\t%s\n' "$gthreads" >>"$raw"
        "${gen[@]}" "$N" | "$bin/groonga_baseline" build --url "$gurl" \
            --sources "$work/sources.jsonl" >>"$raw" || exit 1
        # blocks in use: Groonga's files are sparse, their length is not their size
        printf 'size\tgroonga\tfiles\t%s\n' "$(($(du -sk "$gdir" | cut -f1) * 1024))" >>"$raw"
        printf 'mem\tgroonga\topened\t%s\n' "$(awk '/^VmRSS/ { print $2 }' "/proc/$gpid/status")" \
            >>"$raw"
        "$bin/groonga_baseline" query --url "$gurl" "${lat_args[@]}" >>"$raw" || exit 1
        for f in VmRSS RssAnon VmHWM; do
            printf 'mem\tgroonga\t%s\t%s\n' "$f" "$(awk -v f="$f:" '$1 == f { print $2 }' \
                "/proc/$gpid/status")" >>"$raw"
        done
    ) || failed=1
    rm -rf "$gdir"
fi

[ "$fts5_counts" != 1 ] || (
    step "counts and facets over HTTP on an FTS5 server (the baseline's endpoint)"
    export NEWSD_INDEX=fts5
    start_server serve-fts5 0
    "$bin/bench_counts" --url "$url" --key "$key" --reps "$((reps * 5))" --no-inprocess \
        --http-name counts-http-fts5 >>"$raw" || exit 1
    "$bin/bench_http" --url "$url" --key "$key" --pid "$server_pid" --name lang-fts5 \
        "${lang_args[@]}" >>"$raw" || exit 1
    stop_server
) || failed=1

# Issues 25-27 over HTTP: the engine and the FTS5 backend as two servers at
# once, on the store and a copy of it (one server per store), measured in
# alternating rounds: counts and facets, the mix with and without
# dedupe=true, /v2/stories, similarTo, the export. The store has both
# indexes by now (the FTS5 server above built its tables in it).
ext_raw="$work/extensions.raw"
if [ "$extensions" = 1 ]; then
    step "extensions (issues 25-27): engine and FTS5 servers interleaved"
    rm -rf "$store-fts5"
    cp -a --reflink=auto "$store" "$store-fts5"
    "$PYTHON" bench/bench_extensions.py run --newsd "$newsd" --bench-bin "$bin" --store "$store" \
        --fts5-store "$store-fts5" --key "$key" --rounds 3 --reps "$reps" \
        --export "${BENCH_EXPORT:-q=the%20OR%20of%20OR%20and%20OR%20a%20OR%20in}" \
        >"$ext_raw" 2>"$work/extensions.err" || failed=1
    rm -rf "$store-fts5"
fi

# Issue 17: 10,000 saved searches against each new article, one core, over
# the store's first articles (at most 20,000: the rate does not depend on N).
step "saved searches: the percolator against testing every search"
perc_articles=$((N < 20000 ? N : 20000))
perc_seconds=2
perc_searches=10000
# (the smoke run: 2,000 searches, 2 s instead of 11 s of make check; the
# report's line says how many were filed)
[ "$smoke" = 1 ] && perc_seconds=0.5 && perc_searches=2000
"$bin/bench_percolate" --store "$store" --searches "$perc_searches" --articles "$perc_articles" \
    --seconds "$perc_seconds" --seed "$seed" >>"$raw" || failed=1

if [ "$fresh_seconds" != 0 ]; then
    step "freshness: a marker article searchable while $fresh_rate articles/s are imported"
    start_server serve-fresh 1
    "$PYTHON" bench/fresh.py --newsd "$newsd" --store "$store" --url "$url" --key "$key" \
        --gen "$bin/gen" --profile "$profile" --seed "$seed" --rate "$fresh_rate" \
        --seconds "$fresh_seconds" --timeout "$fresh_timeout" >>"$raw" || failed=1
    stop_server
fi

t_end=$(now)
printf 'run\twall\t%s\n' "$(elapsed "$t_start" "$t_end")" >>"$raw"

out="$work/report.md"
if [ "$smoke" = 0 ]; then
    mkdir -p bench/results
    out="bench/results/$(date -u +%Y-%m-%d)-$profile-$N.md"
fi
"$PYTHON" bench/report.py "$raw" --gen-stats "$work/gen.stats" --out "$out" || failed=1
if [ "$extensions" = 1 ] && [ -s "$ext_raw" ]; then
    { printf '\n## Extensions over HTTP, engine and FTS5 servers interleaved (issues 25-27)\n\n'
      "$PYTHON" bench/bench_extensions.py report "$ext_raw"; } >>"$out" || failed=1
fi
step "report written to $out"
if [ "$failed" != 0 ]; then
    echo "bench: a measuring step failed, or a cold run was not cold (see the report)" >&2
    exit 1
fi
