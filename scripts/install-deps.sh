#!/bin/sh
# Install every Debian package newsd needs to build, test, fuzz and demo.
# Idempotent: packages already installed are skipped without touching apt.
set -eu

PACKAGES="
build-essential pkg-config clang libclang-rt-dev
libmicrohttpd-dev libsqlite3-dev sqlite3 libjansson-dev libutf8proc-dev
libstemmer-dev libexttextcat-dev libcurl4-openssl-dev libxml2-dev zlib1g-dev
libpq-dev postgresql libcmocka-dev nettle-dev
python3 python3-pytest python3-requests curl wrk
python3-jsonschema python3-yaml chromium python3-readability
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

# make web-test drives chromium with playwright-core from npm. A machine whose
# Node.js comes from elsewhere with npm bundled keeps it; Debian's otherwise.
if ! command -v npm >/dev/null 2>&1; then
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
