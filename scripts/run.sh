#!/usr/bin/env bash
# Serves the referee locally: a Redis that keeps its data under var/redis (unless REDIS_URL
# points elsewhere), gunicorn on HOST:PORT, the deadline sweeper and the webhook dispatcher
# (when service/sweeper.py and service/dispatcher.py exist). Ctrl-C, SIGTERM or `make stop`
# stops all of them. Called by `make run`.
#
# Environment: PORT (8000), HOST (127.0.0.1), REDIS_PORT (6380), REDIS_URL (default: the local
# Redis started here), VENV (.venv); everything else (REFEREE_TEST_MODE, ...) passes through.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

export PORT=${PORT:-8000}
export HOST=${HOST:-127.0.0.1}
REDIS_PORT=${REDIS_PORT:-6380}
venv=${VENV:-.venv}
python="$venv/bin/python"
run_dir="$root/var/run"
log_dir="$root/var/log"
redis_dir="$root/var/redis"

pids=()          # children, in start order: stopped in reverse order
names=()

is_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

port_in_use() {  # true when something accepts connections on 127.0.0.1:$1
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

stop_child() {   # stop_child PID NAME: SIGTERM, up to 30 s for a graceful exit, then SIGKILL
    local pid=$1 name=$2
    is_alive "$pid" || return 0
    echo "stopping $name (pid $pid)..."
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 300); do
        is_alive "$pid" || break
        sleep 0.1
    done
    if is_alive "$pid"; then
        echo "$name did not stop in time: killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM HUP
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        stop_child "${pids[$i]}" "${names[$i]}"
        rm -f "$run_dir/${names[$i]}.pid"
    done
    rm -f "$run_dir/run.pid"
    exit "$status"
}

start() {        # start NAME COMMAND...: runs COMMAND in the background, records its pid
    # Each child gets a session of its own, so that Ctrl-C reaches only this script, which then
    # stops the children in order: the sweeper and gunicorn (gracefully) before Redis.
    local name=$1
    shift
    setsid "$@" &
    pids+=("$!")
    names+=("$name")
    echo "$!" >"$run_dir/$name.pid"
}

wait_for_redis() {  # answers PONG (and not -LOADING) within 30 s, or fails
    local pid=$1
    for _ in $(seq 300); do
        if ! is_alive "$pid"; then
            echo "redis-server exited; see $log_dir/redis.log" >&2
            tail -n 20 "$log_dir/redis.log" >&2 || true
            return 1
        fi
        if { exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT"; } 2>/dev/null; then
            printf 'PING\r\n' >&3
            local reply=""
            read -r -t 1 reply <&3 || true
            exec 3>&-
            [[ "$reply" == "+PONG"* ]] && return 0
        fi
        sleep 0.1
    done
    echo "redis-server did not answer PING within 30 s" >&2
    return 1
}

mkdir -p "$run_dir" "$log_dir"

if [ -f "$run_dir/run.pid" ] && is_alive "$(cat "$run_dir/run.pid")"; then
    echo "already running (pid $(cat "$run_dir/run.pid")); stop it with 'make stop'" >&2
    exit 1
fi
if port_in_use "$PORT"; then
    echo "port $PORT is already in use; stop what uses it or choose another PORT" >&2
    exit 1
fi

# Ctrl-C and SIGTERM (`make stop`) are the normal way to stop: after the cleanup, exit 0.
trap cleanup EXIT
trap 'exit 0' INT TERM
trap 'exit 129' HUP
echo "$$" >"$run_dir/run.pid"

if [ -n "${REDIS_URL:-}" ]; then
    echo "using the Redis at REDIS_URL=$REDIS_URL (no local Redis started)"
else
    if port_in_use "$REDIS_PORT"; then
        echo "port $REDIS_PORT is already in use; choose another REDIS_PORT," \
            "or point REDIS_URL at that Redis" >&2
        exit 1
    fi
    redis_bin=$(scripts/redis-server-path)
    mkdir -p "$redis_dir"
    echo "starting Redis on port $REDIS_PORT (data in var/redis, log in var/log/redis.log)..."
    start redis "$redis_bin" deploy/redis.conf --port "$REDIS_PORT" --dir "$redis_dir" \
        --logfile "$log_dir/redis.log"
    wait_for_redis "${pids[-1]}"
    export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
fi

# Metrics of every gunicorn worker are summed through files here (service/observability.py).
export PROMETHEUS_MULTIPROC_DIR="$root/var/prometheus"
rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"

echo "starting gunicorn on http://$HOST:$PORT ..."
start gunicorn "$venv/bin/gunicorn" -c deploy/gunicorn.conf.py 'service.app:create_app()'

if [ -f service/sweeper.py ]; then
    echo "starting the deadline sweeper..."
    start sweeper "$python" -m service.sweeper
fi
if [ -f service/dispatcher.py ]; then
    echo "starting the webhook dispatcher..."
    start dispatcher "$python" -m service.dispatcher
fi

if scripts/test-mode.sh is-on; then
    echo "running in TEST MODE (see the first lines above); press Ctrl-C (or run 'make stop') to stop"
else
    echo "running; press Ctrl-C (or run 'make stop') to stop"
fi
# Stop everything as soon as any child exits, with that child's status.
set +e
wait -n "${pids[@]}"
status=$?
set -e
for i in "${!pids[@]}"; do
    if ! is_alive "${pids[$i]}"; then
        echo "${names[$i]} exited (status $status); stopping the rest" >&2
        break
    fi
done
exit "$status"
