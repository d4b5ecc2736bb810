#!/usr/bin/env bash
# Usage: scripts/pip-install.sh PYTHON PIP-ARGS...
# Runs `PYTHON -m pip install PIP-ARGS` with pip's own output (each package, and the download
# progress bars on a terminal), less the noise about index folders that do not exist.
set -euo pipefail

python=$1
shift

# pip draws its progress bars on stdout (only on a terminal): leave stdout alone and filter
# stderr, where the "Location ... is ignored" warnings of a missing --find-links folder go.
"$python" -m pip install --disable-pip-version-check "$@" \
    2> >(grep --line-buffered -v "^WARNING: Location '.*' is ignored" >&2) || {
    status=$?
    echo "pip install $* failed (status $status)" >&2
    exit "$status"
}
