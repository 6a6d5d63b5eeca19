#!/bin/sh
# Install the Debian packages newsd needs. Idempotent: packages already
# installed are skipped without touching apt.
#   scripts/install-deps.sh          what `make`, `make demo` and `make install`
#                                    need: the compiler and the libraries
#   scripts/install-deps.sh --test   also what `make check` and `make fuzz` need:
#                                    clang, cmocka, a PostgreSQL server, pytest,
#                                    wrk, Chromium and Node.js for the page test
#   scripts/install-deps.sh --bench  also what `make bench` needs beyond the
#                                    build: groonga-bin, a peer of issue 31
#                                    (make check does not: bench-smoke skips it)
#   scripts/install-deps.sh --list [--test] [--bench]   print the package names only
set -eu

BUILD="
build-essential pkg-config curl python3
libmicrohttpd-dev libsqlite3-dev sqlite3 libjansson-dev libutf8proc-dev
libstemmer-dev libexttextcat-dev libcurl4-openssl-dev libxml2-dev zlib1g-dev
libpq-dev nettle-dev libzstd-dev liblz4-dev libxxhash-dev tzdata
"
TEST="
clang libclang-rt-dev libcmocka-dev postgresql
python3-pytest python3-pytest-xdist python3-requests wrk
python3-jsonschema python3-yaml chromium python3-readability nginx openssl
python3-feedparser
"
BENCH="
groonga-bin
"

test=no
bench=no
list=no
for arg in "$@"; do
    case "$arg" in
    --test) test=yes ;;
    --bench) bench=yes ;;
    --list) list=yes ;;
    *) echo "usage: $0 [--list] [--test] [--bench]" >&2; exit 2 ;;
    esac
done
PACKAGES=$BUILD
[ "$test" = yes ] && PACKAGES="$PACKAGES $TEST"
[ "$bench" = yes ] && PACKAGES="$PACKAGES $BENCH"
if [ "$list" = yes ]; then
    echo $PACKAGES
    exit 0
fi

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

# make web-test drives chromium with playwright-core from npm. A machine whose
# Node.js comes from elsewhere with npm bundled keeps it; Debian's otherwise.
if [ "$test" = yes ] && ! command -v npm >/dev/null 2>&1; then
    missing="$missing nodejs npm"
fi

if [ -z "$missing" ]; then
    exit 0
fi

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
