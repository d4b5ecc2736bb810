#!/usr/bin/env bash
# Usage: scripts/pip-install.sh PYTHON PIP-ARGS...
# Runs `PYTHON -m pip install PIP-ARGS` quietly: prints nothing on success, and pip's output
# (less the noise about missing local index folders) on failure.
set -euo pipefail

python=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if ! "$python" -m pip install --disable-pip-version-check --quiet "$@" >"$log" 2>&1; then
    grep -v "^WARNING: Location '.*' is ignored" "$log" >&2 || true
    echo "pip install $* failed" >&2
    exit 1
fi
