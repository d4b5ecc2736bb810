"""The fast readings of a body and of an empty query string read what the slow ones read.

A body's JSON is read by orjson, and by the standard library where orjson refuses it: the
value is the standard library's either way.

A move's body is read by :func:`service.api.schemas.plain_table_body` when it is well formed,
and by the marshmallow schema otherwise (which then names the fault); a query string left
empty gets what the schema loads from nothing, worked out once.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from marshmallow import ValidationError

from service.api.errors import BadRequest
from service.api.fields import MAX_SET_TILES, MAX_TABLE_SETS
from service.api.matches import events_query, view_query
from service.api.parsing import _defaults, _parse
from service.api.schemas import plain_table_body, table_body_schema

CODES = st.sampled_from(["R1", "B13", "K7", "O9", "J", "J=R1", "J=J", "R0", "R14", "X5", "", "r5"])
VALUES = st.one_of(CODES, st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False))
SETS = st.one_of(st.lists(CODES, max_size=5), st.lists(VALUES, max_size=3), VALUES)
BODIES = st.one_of(
    st.fixed_dictionaries({"table": st.lists(SETS, max_size=4)}),
    st.fixed_dictionaries({"table": SETS, "extra": VALUES}),
    st.dictionaries(st.sampled_from(["table", "tabel"]), st.lists(SETS, max_size=3)),
    VALUES,
    st.lists(VALUES, max_size=2),
)


def schema_load(data: Any) -> Any:
    try:
        return table_body_schema.load(data)
    except ValidationError as error:
        return error


@given(BODIES)
def test_a_body_read_the_fast_way_is_what_the_schema_reads(data: Any) -> None:
    fast = plain_table_body(data)
    if fast is not None:
        assert fast == schema_load(data)


@pytest.mark.parametrize(
    "data",
    [
        {"table": [["R1", "R2", "R3"], ["J=B4", "B5", "B6"]]},
        {"table": []},
        {"table": [[]]},
    ],
)
def test_well_formed_bodies_are_read_the_fast_way(data: Any) -> None:
    assert plain_table_body(data) == table_body_schema.load(data)


@pytest.mark.parametrize(
    "data",
    [
        {"table": [["R1"]], "extra": 1},  # unknown field: the schema names it
        {"table": [["R0"]]},  # not a tile
        {"table": [["R1"]] * (MAX_TABLE_SETS + 1)},  # too many sets
        {"table": [["R1"] * (MAX_SET_TILES + 1)]},  # too long a set
        {"table": [[1]]},
        {"table": "R1"},
        [],
    ],
)
def test_anything_else_is_left_to_the_schema(data: Any) -> None:
    assert plain_table_body(data) is None


def test_an_empty_query_string_gets_the_schemas_defaults() -> None:
    assert _defaults(view_query) == view_query.load({})
    assert _defaults(events_query) == events_query.load({}) == {"after": 0, "limit": 100}


def test_a_move_with_a_bad_body_is_still_refused_naming_the_fault(client: Any) -> None:
    created = client.post("/v1/matches", json={"players": [{"name": "A"}, {"name": "B"}]})
    match = created.get_json()
    token = match["seats"][match["match"]["current_seat"]]["token"]
    answer = client.put(
        f"/v1/matches/{match['id']}/draft",
        json={"table": [["R0"]], "extra": 1},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == 400
    fields = {error["field"] for error in answer.get_json()["errors"]}
    assert fields == {"table.0.0", "extra"}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def standard_reading(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as error:
        return type(error)


def our_reading(raw: bytes) -> Any:
    try:
        return _parse(raw)
    except BadRequest:
        return BadRequest


def same(ours: Any, theirs: Any) -> bool:
    """Equal, NaN included, and of the same types (1 is not 1.0)."""
    if isinstance(theirs, float) and math.isnan(theirs):
        return isinstance(ours, float) and math.isnan(ours)
    if isinstance(theirs, list):
        return (
            isinstance(ours, list)
            and len(ours) == len(theirs)
            and all(same(a, b) for a, b in zip(ours, theirs, strict=True))
        )
    if isinstance(theirs, dict):
        return (
            isinstance(ours, dict)
            and list(ours) == list(theirs)
            and all(same(ours[key], theirs[key]) for key in theirs)
        )
    return type(ours) is type(theirs) and ours == theirs


@given(
    JSON_VALUES | st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]),
)
def test_a_body_is_read_as_the_standard_library_reads_it(
    value: Any, ascii_only: bool, encoding: str
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode(encoding)
    theirs = standard_reading(raw)
    if isinstance(theirs, type):  # refused: refused here too, as a 400
        assert our_reading(raw) is BadRequest
    else:
        assert same(our_reading(raw), theirs)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 2}',  # the last of duplicate keys
        b"[NaN, Infinity, -Infinity, 1e400]",  # orjson refuses these; the standard reads them
        b"123456789012345678901234567890",  # beyond 64 bits (orjson: a float)
        b"[18446744073709551616, -9223372036854775809, 9223372036854775808]",
        b"[1e-400, -0, -0.0, 1.7976931348623157e308, 5e-324, 0.1e1]",
        b'"\\ud800"',  # a lone surrogate escape
        b'\xef\xbb\xbf{"table": []}',  # a UTF-8 byte order mark
        b"[" * 2000 + b"]" * 2000,  # deeper than orjson reads
        b'{"table": [["R1", "R2", "R3"]]} ',
    ],
)
def test_what_orjson_refuses_or_reads_differently_is_the_standard_librarys(raw: bytes) -> None:
    assert same(our_reading(raw), standard_reading(raw)) or (
        our_reading(raw) is BadRequest and isinstance(standard_reading(raw), type)
    )


@pytest.mark.parametrize("raw", [b"", b"{", b"[1,]", b"\xff", b"{'a': 1}", b"[" * 100_000])
def test_malformed_json_is_a_bad_request(raw: bytes) -> None:
    assert our_reading(raw) is BadRequest
