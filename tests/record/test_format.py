"""The two forms of a record: what they hold, that they round-trip, and hostile input refused."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service import record
from service.game import rules_to_dict
from service.record import RecordError, RecordFormatError
from service.rules import Rules
from tests.record.games import bots_only

PLAYED = bots_only(4, rules=Rules(), seed=11).record()
WHOLE = record.to_json(PLAYED)


def test_the_json_form_names_its_format_and_holds_every_part() -> None:
    assert WHOLE["format"] == "rummikub-record/1"
    assert set(WHOLE) >= {
        "match_id", "game_number", "rules", "players", "first_player_draw", "first_seat",
        "deal", "turns", "result",
    }  # fmt: skip
    assert WHOLE["rules"] == rules_to_dict(Rules())
    assert [turn["n"] for turn in WHOLE["turns"]] == list(range(1, len(WHOLE["turns"]) + 1))
    assert {turn["by"] for turn in WHOLE["turns"]} == {"bot"}


def vars_of(rules: Rules) -> list[tuple[str, Any]]:
    return [(name, getattr(rules, name)) for name in rules.__dataclass_fields__]


def test_the_text_form_starts_with_the_format_and_has_a_line_a_turn() -> None:
    text = record.to_text(PLAYED)
    lines = text.splitlines()
    assert lines[0] == "rummikub-record/1"
    body = lines[lines.index("") + 1 :]
    assert len(body) == len(PLAYED.turns)
    assert body[0].split()[:4] == ["1", str(PLAYED.first_seat), PLAYED.turns[0].action.value, "bot"]


def test_names_with_quotes_spaces_and_other_scripts_round_trip_through_the_text_form() -> None:
    players = tuple(
        record.RecordPlayer(p.seat, name, p.bot, ref)
        for p, name, ref in zip(
            PLAYED.players,
            ['Ann "the tile" Lee', "  Bo  ", "Åsa \\ Öberg", "李"],
            [None, "u 1", None, 'r"2'],
            strict=True,
        )
    )
    renamed = type(PLAYED)(
        **{**{f: getattr(PLAYED, f) for f in PLAYED.__slots__}, "players": players}
    )
    assert record.from_text(record.to_text(renamed)) == renamed


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda r: r.update(format="rummikub-record/2"), "format"),
        (lambda r: r.pop("deal"), "deal"),
        (lambda r: r["turns"][0].update(n=2), "turns.0.n"),
        (lambda r: r["turns"][0].update(seat=True), "turns.0.seat"),
        (lambda r: r["turns"][0].update(at=float("nan")), "turns.0.at"),
        (lambda r: r["turns"][0].update(action="redeal"), "turns.0.action"),
        (lambda r: r["turns"][0].update(by="god"), "turns.0.by"),
        (lambda r: r["deal"]["pool"].append("R14"), "deal.pool.50"),
        (lambda r: r["deal"]["racks"][0].append({"tile": "R1"}), "deal.racks.0.14"),
        (lambda r: r["rules"].update(turn_seconds="60"), "rules.turn_seconds"),
        (lambda r: r["rules"].update(wild_jokers=True), "rules.wild_jokers"),
        (lambda r: r["players"].append(dict(r["players"][0])), "players"),
        (lambda r: r["players"][0].update(name="x" * 500), "players.0.name"),
        (lambda r: r.update(turns=[r["turns"][0]] * 6000), "turns"),
        (lambda r: r["result"].update(scores=[1, 2]), "result"),
    ],
)
def test_a_malformed_record_is_refused_naming_where(change: Any, where: str) -> None:
    data = copy.deepcopy(WHOLE)
    change(data)
    with pytest.raises(RecordFormatError) as refused:
        record.from_json(data)
    assert refused.value.where == where


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", "line 1"),
        ("rummikub-record/2\n", "line 1"),
        ('rummikub-record/1\n[Match "m"\n', "line 2"),
        ('rummikub-record/1\n[Match "m"]\n[Rules "tile_set"]\n', "line 3"),
        ("rummikub-record/1\n\n1 0 play", "line 3"),
        ("rummikub-record/1\n\n1 0 play player 1.0 R1 R2 R3", "line 3"),
        ("rummikub-record/1\n\n1 0 timeout referee 1e999999 kept", "line 3"),
    ],
)
def test_a_malformed_text_is_refused_naming_the_line(text: str, line: str) -> None:
    with pytest.raises(RecordFormatError) as refused:
        record.from_text(text)
    assert refused.value.where.startswith(line) or refused.value.where == line


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


def leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, dict):
        return [p for key, value in data.items() for p in leaves(value, (*path, key))] + [path]
    if isinstance(data, list):
        return [p for i, value in enumerate(data) for p in leaves(value, (*path, i))] + [path]
    return [path]


@settings(max_examples=300)
@given(where=st.floats(0, 1, exclude_max=True), value=json_values)
def test_a_record_with_any_part_replaced_by_anything_is_refused_or_judged(
    where: float, value: Any
) -> None:
    data = copy.deepcopy(WHOLE)
    paths = leaves(data)
    path = paths[int(where * len(paths))]
    if not path:
        data = value
    else:
        holder = data
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = value
    try:
        changed = record.from_json(data)
    except RecordFormatError:
        return
    try:
        verdict = record.verify(changed, solver_budget=2.0)
    except RecordError:
        return
    assert isinstance(verdict.valid, bool)


@settings(max_examples=300)
@given(line=st.integers(0, 200), text=st.text(max_size=40))
def test_a_text_with_any_line_replaced_by_anything_is_refused_or_judged(
    line: int, text: str
) -> None:
    lines = record.to_text(PLAYED).splitlines()
    lines[line % len(lines)] = text
    try:
        changed = record.from_text("\n".join(lines))
    except RecordFormatError:
        return
    try:
        record.verify(changed, solver_budget=2.0)
    except RecordError:
        return


def test_the_json_form_survives_json() -> None:
    assert record.from_json(json.loads(json.dumps(WHOLE))) == PLAYED
