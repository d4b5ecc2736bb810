"""Fast JSON for what the service writes and reads back itself: stored states and events, and
the API's answers (orjson, with the standard library as a fallback; Flask uses it through
``service.api.jsonprovider``).

orjson is several times faster than ``json`` on a match's state (about 1.5 KB, written on
every move and sent back on every view). It refuses what is not valid Unicode, such as a lone
surrogate, which Python's ``json`` reads from a ``"\\ud800"`` escape and writes back as one; the
API refuses such names, and for anything else that slips through, :func:`dumps` and
:func:`loads` fall back to the standard library rather than fail a request.

Request bodies are read by orjson too, and by the standard library for whatever orjson refuses
or would read differently, an integer beyond 64 bits (``service/api/parsing.py``): the standard
library's reading is the one the contract tests pin down, and the body's value is the same.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps", "loads", "number"]


def dumps(value: Any) -> bytes:
    """``value`` as compact JSON (UTF-8)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:  # not valid Unicode, an int beyond 64 bits...
        return json.dumps(value, separators=(",", ":")).encode()


def loads(text: str | bytes) -> Any:
    """The value of the JSON document ``text``."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # a lone surrogate escape written by the fallback above
        return json.loads(text)


def number(value: float) -> str:
    """The shortest text that reads back as ``value``, as ``repr`` writes it but for the form
    of a small exponent (``0.00001``, not ``1e-05``: Redis and Lua read both): the store's
    arguments to Redis (times, scores). orjson's writing of one float costs 1,100 instructions
    against ``repr``'s 7,300 (callgrind), and a draft's commit writes four. Not a finite
    number: ``repr``'s text (JSON has none)."""
    if value - value == 0:  # finite: inf - inf and nan - nan are nan
        return orjson.dumps(value).decode()
    return repr(value)
