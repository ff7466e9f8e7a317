#!/usr/bin/env bash
# A private MariaDB server for oracle scripts: the MySQL-compatible reference that the collation
# tables and (later) the expression corpus are checked against.
#
#   tools/mariadb.sh run -- <command...>
#
# Starts mariadbd as a plain process on 127.0.0.1 on a free port with a fresh temporary datadir
# (mariadb-install-db), waits until it answers, runs <command...> with these set:
#
#   MARIADB_HOST, MARIADB_PORT, MARIADB_USER (root, no password), MARIADB_SOCKET
#   MARIADB_DATABASE  an empty database `oracle`, the CLI's default
#   MARIADB_CLI   a ready `mariadb` command line (batch mode, no column names):
#                 $MARIADB_CLI -e 'SELECT 1'
#
# then stops the server and removes the datadir (in a trap, also on failure or Ctrl-C) and exits
# with the command's status. Needs the Debian packages mariadb-server and mariadb-client; set
# MARIADB_INSTALL=1 to have the script apt-get them when mariadbd is missing.
set -euo pipefail

usage() {
    echo "usage: $0 run -- <command...>" >&2
    exit 2
}

[[ $# -ge 2 && $1 == run && $2 == -- ]] || usage
shift 2
[[ $# -ge 1 ]] || usage

find_bin() {
    local name
    for name in "$@"; do
        if command -v "$name" >/dev/null 2>&1; then
            command -v "$name"
            return 0
        fi
        for dir in /usr/sbin /usr/bin /usr/local/sbin /usr/local/bin; do
            if [[ -x $dir/$name ]]; then
                echo "$dir/$name"
                return 0
            fi
        done
    done
    return 1
}

if ! find_bin mariadbd >/dev/null && [[ ${MARIADB_INSTALL:-0} == 1 ]]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi
MARIADBD=$(find_bin mariadbd) || { echo "mariadb.sh: mariadbd not found (apt-get install mariadb-server)" >&2; exit 1; }
INSTALL_DB=$(find_bin mariadb-install-db mysql_install_db) || { echo "mariadb.sh: mariadb-install-db not found" >&2; exit 1; }
CLIENT=$(find_bin mariadb mysql) || { echo "mariadb.sh: mariadb client not found (apt-get install mariadb-client)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rcop-mariadb.XXXXXX")
PID=""
cleanup() {
    if [[ -n $PID ]] && kill -0 "$PID" 2>/dev/null; then
        kill "$PID" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$PID" 2>/dev/null || true
        wait "$PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free port: ask the kernel for one.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
USER_OPT=()
if [[ $(id -u) == 0 ]]; then
    USER_OPT=(--user=root)
fi

"$INSTALL_DB" --no-defaults --datadir="$WORK/data" --auth-root-authentication-method=normal \
    --skip-test-db "${USER_OPT[@]}" >"$WORK/install.log" 2>&1 || {
    cat "$WORK/install.log" >&2
    exit 1
}

"$MARIADBD" --no-defaults --datadir="$WORK/data" --bind-address=127.0.0.1 --port="$PORT" \
    --socket="$WORK/sock" --pid-file="$WORK/pid" --skip-grant-tables=0 --skip-log-bin \
    --innodb-buffer-pool-size=16M --character-set-server=utf8mb4 \
    --collation-server=utf8mb4_general_ci "${USER_OPT[@]}" >"$WORK/server.log" 2>&1 &
PID=$!

export MARIADB_HOST=127.0.0.1 MARIADB_PORT=$PORT MARIADB_USER=root MARIADB_SOCKET=$WORK/sock
export MARIADB_DATABASE=oracle
CLI_BASE="$CLIENT --no-defaults --host=127.0.0.1 --port=$PORT --user=root --protocol=tcp --batch --skip-column-names"

ready=0
for _ in $(seq 1 300); do
    if ! kill -0 "$PID" 2>/dev/null; then
        cat "$WORK/server.log" >&2
        echo "mariadb.sh: mariadbd exited before it was ready" >&2
        exit 1
    fi
    if $CLI_BASE -e 'SELECT 1' >/dev/null 2>&1; then
        ready=1
        break
    fi
    sleep 0.1
done
if [[ $ready != 1 ]]; then
    cat "$WORK/server.log" >&2
    echo "mariadb.sh: mariadbd did not answer in 30 s" >&2
    exit 1
fi

$CLI_BASE -e "CREATE DATABASE $MARIADB_DATABASE"
export MARIADB_CLI="$CLI_BASE --database=$MARIADB_DATABASE"

set +e
"$@"
status=$?
set -e
exit "$status"
