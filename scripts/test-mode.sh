#!/usr/bin/env bash
# Usage: scripts/test-mode.sh notice | is-on
# Test mode (REFEREE_TEST_MODE, read as service/config.py reads a flag: 1, true, yes, on) lets a
# client fix the deal (`seed`, `setup`), run a match's clock ahead (POST /v1/matches/{id}/clock)
# and register http and loopback webhooks. `notice` says whether it is on, on the first line
# `make run` prints; `is-on` answers by its exit status.
set -euo pipefail

value=${REFEREE_TEST_MODE:-}
case "$(printf '%s' "$value" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')" in
    1 | true | yes | on) on=1 ;;
    *) on=0 ;;
esac

case "${1:-notice}" in
    is-on) [ "$on" = 1 ] ;;
    notice)
        if [ "$on" = 1 ]; then
            echo "==> TEST MODE IS ON (REFEREE_TEST_MODE=$value): clients may fix the deal, run a match's"
            echo "    clock ahead and register http webhooks. Never serve players like this."
        else
            echo "==> test mode is off (REFEREE_TEST_MODE=1 make run allows fixed deals and the test clock)"
        fi
        ;;
    *) echo "usage: $0 notice | is-on" >&2; exit 2 ;;
esac
