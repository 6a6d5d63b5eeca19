#!/bin/sh
# A throwaway PostgreSQL for the cluster tests and benchmarks (tests/cluster).
#
#   scripts/pg-test-server.sh start DIR     initdb in DIR (created), start on a
#                                           free loopback port, create database
#                                           newsd; prints its postgresql:// URI
#   scripts/pg-test-server.sh stop DIR      fast shutdown (DIR is kept)
#   scripts/pg-test-server.sh kill DIR      immediate shutdown (a crash: no
#                                           checkpoint, recovery at next start)
#   scripts/pg-test-server.sh restart DIR   start again on the same port
#   scripts/pg-test-server.sh uri DIR       the URI again
#   scripts/pg-test-server.sh destroy DIR   stop and remove DIR
#
# Uses Debian's packages (postgresql-15: /usr/lib/postgresql/<v>/bin). The
# server refuses to run as root, so as root it runs as NEWSD_PG_USER (default
# nobody) through runuser, and DIR is handed to that user. fsync is off (a
# test server: the OS cache survives a killed server, not a power cut);
# synchronous_commit stays on so an acknowledged commit survives "kill".
set -eu

usage() {
    echo "usage: $0 start|stop|kill|restart|uri|destroy DIR" >&2
    exit 2
}

[ $# -eq 2 ] || usage
cmd=$1
dir=$2

pgbin=${NEWSD_PG_BIN:-}
if [ -z "$pgbin" ]; then
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            pgbin=$d
            break
        fi
    done
fi
if [ -z "$pgbin" ]; then
    echo "pg-test-server: no PostgreSQL server binaries (apt-get install postgresql)" >&2
    exit 1
fi

as_user=""
if [ "$(id -u)" -eq 0 ]; then
    as_user=${NEWSD_PG_USER:-nobody}
fi

# Run a server binary as the unprivileged user when we are root.
pg() {
    if [ -n "$as_user" ]; then
        runuser -u "$as_user" -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

uri() {
    echo "postgresql://newsd@127.0.0.1:$(cat "$dir/port")/newsd"
}

start_server() {
    # -w waits until the server accepts connections.
    pg "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $(cat "$dir/port") -k $dir" start >/dev/null
}

case $cmd in
start)
    if [ -e "$dir/data/PG_VERSION" ]; then
        echo "pg-test-server: $dir already holds a cluster (use restart)" >&2
        exit 1
    fi
    mkdir -p "$dir"
    chmod 0755 "$dir"
    if [ -n "$as_user" ]; then
        chown "$as_user" "$dir"
        # Parents are left as they are: the user must already reach DIR.
        if ! runuser -u "$as_user" -- test -w "$dir"; then
            echo "pg-test-server: $as_user cannot reach $dir; use a directory under /tmp" >&2
            exit 1
        fi
    fi
    pg "$pgbin/initdb" -D "$dir/data" -U newsd --auth=trust -E UTF8 --locale=C.UTF-8 \
        >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
fsync = off
full_page_writes = off
shared_buffers = 64MB
max_connections = 100
log_min_messages = warning
EOF
    free_port >"$dir/port"
    start_server
    pg "$pgbin/createdb" -h 127.0.0.1 -p "$(cat "$dir/port")" -U newsd newsd
    uri
    ;;
stop)
    pg "$pgbin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
kill)
    pg "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
restart)
    start_server
    ;;
uri)
    uri
    ;;
destroy)
    if [ -e "$dir/data/postmaster.pid" ]; then
        pg "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
*)
    usage
    ;;
esac
