"""service.jsoncodec: orjson where it can, the standard library where orjson refuses."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service import jsoncodec

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


@given(json_values)
def test_what_is_written_reads_back_equal_and_is_plain_json(value) -> None:
    written = jsoncodec.dumps(value)
    assert jsoncodec.loads(written) == value
    assert json.loads(written) == value


@pytest.mark.parametrize("value", [{"name": "Ann\ud800"}, {"seed": 2**70}, ["\udfff", 1.5]])
def test_values_orjson_refuses_fall_back_to_the_standard_library(value) -> None:
    written = jsoncodec.dumps(value)
    assert jsoncodec.loads(written) == value
    assert jsoncodec.loads(written.decode()) == value


def test_the_output_is_compact_and_keeps_key_order() -> None:
    assert jsoncodec.dumps({"b": 1, "a": [1, 2]}) == b'{"b":1,"a":[1,2]}'


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53))
def test_a_number_is_written_as_text_that_reads_back_the_same(value) -> None:
    text = jsoncodec.number(value)
    assert float(text) == value
    assert json.loads(text) == value  # plain JSON: Lua's tonumber and Redis's scores read it


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_what_is_not_a_finite_number_is_written_as_repr_writes_it(value) -> None:
    assert jsoncodec.number(value) == repr(value)
