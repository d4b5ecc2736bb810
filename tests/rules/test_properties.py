"""Invariants of the rules core, checked on generated sets and turns."""

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from service.rules import (
    COLOURS,
    JOKER,
    Rules,
    StalemateScoring,
    Tile,
    TileSet,
    check_conservation,
    check_turn,
    classify,
    conserves,
    full_set,
    score_stalemate,
    score_went_out,
    tiles_of,
)

numbers = st.integers(min_value=1, max_value=13)
colours = st.sampled_from(COLOURS)


@st.composite
def runs(draw: st.DrawFn) -> list[Tile]:
    colour = draw(colours)
    start = draw(st.integers(min_value=1, max_value=11))
    length = draw(st.integers(min_value=3, max_value=14 - start))
    run = [Tile(colour, n) for n in range(start, start + length)]
    for i in draw(st.sets(st.integers(0, length - 1), max_size=2)):
        if sum(not t.is_joker for t in run) > 1:
            run[i] = JOKER
    return run


@st.composite
def groups(draw: st.DrawFn) -> list[Tile]:
    number = draw(numbers)
    chosen = draw(st.permutations(COLOURS))[: draw(st.integers(3, 4))]
    group = [Tile(colour, number) for colour in chosen]
    for i in draw(st.sets(st.integers(0, len(group) - 1), max_size=2)):
        if sum(not t.is_joker for t in group) > 1:
            group[i] = JOKER
    return group


@given(groups(), st.randoms())
def test_a_group_stays_valid_in_any_order(group: list[Tile], rnd: random.Random) -> None:
    shuffled = list(group)
    rnd.shuffle(shuffled)
    assert classify(shuffled).valid


@given(runs())
def test_a_valid_run_listed_in_descending_order_is_refused(run: list[Tile]) -> None:
    assert classify(run).valid
    numbered = [t for t in run if not t.is_joker]
    if len(numbered) >= 2:
        assert not classify(list(reversed(run))).valid


@given(st.lists(st.one_of(runs(), groups()), max_size=6), st.randoms())
def test_a_valid_table_regrouped_with_a_rack_tile_conserves_every_tile(
    sets: list[list[Tile]], rnd: random.Random
) -> None:
    before = sets[:-1] if sets else []
    after = sets
    added = tiles_of(after) - tiles_of(before)
    rack = added + Counter({Tile(rnd.choice(COLOURS), rnd.randint(1, 13)): 1})
    if check_turn(before, after, rack, melded=True) == []:
        assert tiles_of(after) == tiles_of(before) + added
        assert not added - rack


@settings(max_examples=200)
@given(
    st.lists(st.one_of(runs(), groups()), max_size=5),
    st.lists(st.lists(st.sampled_from(sorted(full_set(), key=str)), max_size=5), max_size=5),
    st.booleans(),
)
def test_an_accepted_turn_never_creates_or_loses_a_tile(
    before: list[list[Tile]], after: list[list[Tile]], melded: bool
) -> None:
    rack = Counter(tiles_of(after) - tiles_of(before))
    if check_turn(before, after, rack, melded=melded, rules=Rules()) == []:
        assert tiles_of(before) + (tiles_of(after) - tiles_of(before)) == tiles_of(after)
        assert not tiles_of(before) - tiles_of(after)
        assert all(classify(s).valid for s in after)


@given(st.lists(st.one_of(runs(), groups()), min_size=1, max_size=4), st.booleans())
def test_checking_a_turn_changes_none_of_its_inputs(sets: list[list[Tile]], melded: bool) -> None:
    before = [list(s) for s in sets]
    after = [list(s) for s in reversed(sets)]
    rack: Counter[Tile] = Counter({JOKER: 1})
    snapshot = ([list(s) for s in before], [list(s) for s in after], Counter(rack))
    check_turn(before, after, rack, melded=melded)
    assert (before, after, rack) == snapshot


def deals(players: int) -> st.SearchStrategy[list[list[Tile]]]:
    box = sorted(full_set(TileSet.STANDARD).elements(), key=str)

    @st.composite
    def build(draw: st.DrawFn) -> list[list[Tile]]:
        tiles = draw(st.permutations(box))
        sizes = [draw(st.integers(0, 14)) for _ in range(players)]
        racks, at = [], 0
        for size in sizes:
            racks.append(tiles[at : at + size])
            at += size
        return racks

    return build()


@given(st.integers(2, 4).flatmap(deals), st.data())
def test_the_scores_of_a_game_sum_to_zero(racks: list[list[Tile]], data: st.DataObject) -> None:
    winner = data.draw(st.integers(0, len(racks) - 1))
    racks[winner] = []
    assert sum(score_went_out(racks, winner).scores) == 0
    for scoring in StalemateScoring:
        outcome = score_stalemate(racks, scoring=scoring, next_seat=winner)
        assert sum(outcome.scores) == 0
        assert outcome.scores[outcome.winner] >= 0


# a few tiles, so that a draft often keeps, loses or adds each; named jokers are jokers
_FEW = [Tile.parse(code) for code in ("R1", "R2", "B13", "K5", "K5", "J", "J=R1", "J=O7")]
few_tiles = st.lists(st.sampled_from(_FEW), max_size=7)


@given(
    before=st.lists(few_tiles, max_size=3),
    after=st.lists(few_tiles, max_size=4),
    rack=st.lists(st.sampled_from([tile.plain for tile in _FEW]), max_size=6),
)
@settings(max_examples=400)
def test_conserves_says_what_check_conservation_finds(
    before: list[list[Tile]], after: list[list[Tile]], rack: list[Tile]
) -> None:
    """A draft's quick check answers as the full one: nothing wrong exactly when it finds no
    violation (``save_draft`` asks it first, and the full check only when it says no)."""
    on_table, on_rack = tiles_of(before), Counter(rack)
    found = check_conservation(on_table, tiles_of(after), on_rack)
    assert conserves(on_table, after, on_rack) is (not found)
