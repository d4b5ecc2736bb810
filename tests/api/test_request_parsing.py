"""The fast readings of a move's body and of an empty query string load what the schemas load.

A move's body is read by :func:`service.api.schemas.plain_table_body` when it is well formed,
and by the marshmallow schema otherwise (which then names the fault); a query string left
empty gets what the schema loads from nothing, worked out once.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from marshmallow import ValidationError

from service.api.fields import MAX_SET_TILES, MAX_TABLE_SETS
from service.api.matches import events_query, view_query
from service.api.parsing import _defaults
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
