#!/bin/sh
# make demo: load the bundled sample into a local store, create a demo key,
# serve on 127.0.0.1:8080 (NEWSD_LISTEN overrides) and print working curl lines.
set -eu

NEWSD=${1:-build/newsd}
STORE=${2:-build/demo-store}
LISTEN=${NEWSD_LISTEN:-127.0.0.1:8080}

mkdir -p "$STORE"
if [ ! -f "$STORE/.sample-loaded" ]; then
    echo "demo: loading the sample catalogue and articles into $STORE ..."
    "$NEWSD" sources import --create --store "$STORE" data/sample/sources.json
    "$NEWSD" import --create --store "$STORE" data/sample/articles.jsonl
    touch "$STORE/.sample-loaded"
fi
# FEEDS=1: the bundled catalogue of feeds too; the server below polls them
# (a new feed is due at once, then every 5 minutes, adapting; docs/feeds.md).
if [ "${FEEDS:-}" = 1 ] && [ ! -f "$STORE/.feeds-loaded" ]; then
    echo "demo: adding the bundled feed catalogue (data/feeds.jsonl) to $STORE ..."
    "$NEWSD" feeds import --store "$STORE" data/feeds.jsonl
    touch "$STORE/.feeds-loaded"
fi
if [ ! -s "$STORE/demo.key" ]; then
    "$NEWSD" keys create --store "$STORE" --name demo > "$STORE/demo.key.tmp"
    mv "$STORE/demo.key.tmp" "$STORE/demo.key"
fi
KEY=$(cat "$STORE/demo.key")

FIFO=$(mktemp -u)
mkfifo "$FIFO"
"$NEWSD" serve --store "$STORE" --listen "$LISTEN" --config data/sample/demo.conf > "$FIFO" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null; rm -f "$FIFO"; exit 0' INT TERM
if ! read -r READY < "$FIFO"; then
    rm -f "$FIFO"
    echo "demo: newsd did not start (is $LISTEN already in use? set NEWSD_LISTEN=127.0.0.1:PORT)" >&2
    wait $PID || true
    exit 1
fi
rm -f "$FIFO"
BASE=${READY#listening on }
echo
echo "newsd is serving the sample on $BASE (Ctrl-C stops it). Try:"
echo
echo "  curl -s '$BASE/v2/top-headlines?country=us&apiKey=$KEY'"
echo "  curl -s '$BASE/v2/everything?q=bitcoin&apiKey=$KEY'"
echo "  curl -s -H 'X-Api-Key: $KEY' '$BASE/v2/top-headlines/sources?language=en'"
echo
if [ -f "$STORE/.feeds-loaded" ]; then
    echo "Live news: this server polls the $(wc -l < data/feeds.jsonl) feeds of the bundled catalogue"
    echo "(unverified URLs; see docs/feeds.md). What they yield, a few minutes from now:"
    echo "  $NEWSD feeds list --store '$STORE'"
    echo "  curl -s '$BASE/v2/everything?q=the&sortBy=publishedAt&apiKey=$KEY'"
else
    echo "Live news: add the bundled feed catalogue; this server starts polling it at once:"
    echo "  $NEWSD feeds import --store '$STORE' data/feeds.jsonl && touch '$STORE/.feeds-loaded'"
    echo "(or stop and run: make demo FEEDS=1)"
fi
echo
wait $PID
