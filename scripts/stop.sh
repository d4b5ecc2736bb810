#!/usr/bin/env bash
# Stops what `make run` started: asks scripts/run.sh to shut down (it stops its children in
# order), then stops any child left behind by a run that was killed, using var/run/*.pid.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
run_dir="$root/var/run"

is_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# stop_pid FILE PATTERN: stops the process named in FILE if its command line matches PATTERN
# (so a recycled pid is never signalled), waiting up to 40 s before SIGKILL.
stop_pid() {
    local file=$1 pattern=$2 pid
    [ -f "$file" ] || return 0
    pid=$(cat "$file")
    if is_alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$pattern"; then
        echo "stopping $(basename "$file" .pid) (pid $pid)..."
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 400); do
            is_alive "$pid" || break
            sleep 0.1
        done
        if is_alive "$pid"; then
            echo "pid $pid did not stop in time: killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$file"
}

if [ ! -d "$run_dir" ] || [ -z "$(ls -A "$run_dir" 2>/dev/null)" ]; then
    echo "nothing running"
    exit 0
fi

stop_pid "$run_dir/run.pid" "scripts/run.sh"
stop_pid "$run_dir/sweeper.pid" "service.sweeper"
stop_pid "$run_dir/dispatcher.pid" "service.dispatcher"
stop_pid "$run_dir/gunicorn.pid" "gunicorn"
stop_pid "$run_dir/redis.pid" "redis-server"
echo "stopped"
