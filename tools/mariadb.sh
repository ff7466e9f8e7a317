#!/usr/bin/env bash
# Runs a command against a private MariaDB server: a fresh datadir in a temp directory, a
# mariadbd process listening on 127.0.0.1 on a free port, removed again when the command
# ends (whatever its outcome).
#
#   tools/mariadb.sh run -- <command> [args...]
#
# The command sees MARIADB_HOST, MARIADB_PORT, MARIADB_USER (root, no password) and
# MARIADB_SOCKET, and `mariadb` works with "$MARIADB_ARGS". Needs the Debian packages
# mariadb-server and mariadb-client (tools/mariadb.sh install installs them).
set -euo pipefail

install() {
  if ! command -v mariadbd >/dev/null && ! [ -x /usr/sbin/mariadbd ]; then
    local sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null ||
      true
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      mariadb-server mariadb-client >/dev/null
  fi
}

# Globals: the EXIT trap reads them after run() returns.
dir="" port="" pid=""

run() {
  dir=$(mktemp -d /tmp/rcop-mariadb.XXXXXX)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  local daemon=/usr/sbin/mariadbd
  [ -x "$daemon" ] || daemon=$(command -v mariadbd)
  local user_opt=()
  [ "$(id -u)" = 0 ] && user_opt=(--user=root)
  mariadb-install-db --no-defaults "${user_opt[@]}" --datadir="$dir/data" --auth-root-authentication-method=normal \
    --skip-test-db >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; exit 1; }
  "$daemon" --no-defaults "${user_opt[@]}" --datadir="$dir/data" --socket="$dir/sock" \
    --bind-address=127.0.0.1 --port="$port" --pid-file="$dir/pid" \
    --log-error="$dir/error.log" --skip-log-bin --innodb-buffer-pool-size=64M 2>>"$dir/error.log" &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
  for _ in $(seq 1 100); do
    if mariadb --no-defaults -uroot -h127.0.0.1 -P"$port" -e 'SELECT 1' >/dev/null 2>&1; then
      break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then cat "$dir/error.log" >&2; exit 1; fi
    sleep 0.2
  done
  export MARIADB_HOST=127.0.0.1 MARIADB_PORT=$port MARIADB_USER=root MARIADB_SOCKET=$dir/sock
  export MARIADB_ARGS="--no-defaults -uroot -h127.0.0.1 -P$port"
  "$@"
}

case "${1:-}" in
  install) install ;;
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    run "$@"
    ;;
  *) echo "usage: $0 install | run -- <command...>" >&2; exit 2 ;;
esac
