import pickle
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from service.rules import JOKER, Colour, InvalidTileCode, Tile, TileSet, full_set


@pytest.mark.parametrize("code", ["R7", "B13", "K1", "O10", "J"])
def test_a_tile_code_round_trips(code: str) -> None:
    assert Tile.parse(code).code == code


def test_a_tile_repr_can_be_pasted_back() -> None:
    tile = Tile.parse("O12")
    assert eval(repr(tile)) == tile


@pytest.mark.parametrize(
    "code", ["", "R", "R0", "R14", "X5", "r5", "R07", "JJ", "J1", "R 5", "R1.0", "Ｒ5", "R٣"]
)
def test_anything_else_is_not_a_tile_code(code: str) -> None:
    with pytest.raises(InvalidTileCode):
        Tile.parse(code)


def test_a_non_string_is_not_a_tile_code() -> None:
    with pytest.raises(InvalidTileCode):
        Tile.parse(7)  # type: ignore[arg-type]


def test_the_standard_set_holds_106_tiles_two_of_each_and_two_jokers() -> None:
    box = full_set(TileSet.STANDARD)
    assert sum(box.values()) == 106 == TileSet.STANDARD.size
    assert box[Tile(Colour.RED, 7)] == 2
    assert box[JOKER] == 2


def test_the_xp_set_holds_160_tiles_three_of_each_and_four_jokers() -> None:
    box = full_set(TileSet.XP)
    assert sum(box.values()) == 160 == TileSet.XP.size
    assert set(box.values()) == {3, 4}
    assert box[JOKER] == 4


def test_identical_tiles_are_interchangeable_in_a_multiset() -> None:
    assert Counter([Tile.parse("R7"), Tile.parse("R7")]) == Counter({Tile.parse("R7"): 2})


def test_a_joker_left_on_a_rack_costs_30_and_a_tile_its_number() -> None:
    assert JOKER.penalty == 30
    assert Tile.parse("K12").penalty == 12


def test_a_tile_pickled_in_one_process_is_the_same_key_in_another() -> None:
    # A tile keeps its hash; string hashes differ between processes, so a pickle must not
    # carry it across (multisets sent to another process would miss their own keys).
    rack = Counter([Tile.parse("R7"), Tile.parse("R7"), JOKER])
    script = (
        "import pickle, sys\n"
        "from service.rules import JOKER, Tile\n"
        "rack = pickle.loads(sys.stdin.buffer.read())\n"
        "print(rack[Tile.parse('R7')], rack[JOKER], Tile.parse('R7') in rack)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=pickle.dumps(rack),
        capture_output=True,
        cwd=Path(__file__).resolve().parents[2],
        env={"PYTHONHASHSEED": "random", "PATH": ""},
        check=True,
    )
    assert done.stdout.split() == [b"2", b"1", b"True"]


@pytest.mark.parametrize("tile_set", list(TileSet))
def test_the_box_is_made_of_the_tiles_parse_answers(tile_set: TileSet) -> None:
    """Every deal shares one object per tile (a match dealt from tiles of its own held 52
    more objects in every copy of it a worker kept), and each box is a multiset of its own."""
    box = full_set(tile_set)
    assert all(tile is Tile.parse(tile.code) for tile in box)
    box[JOKER] += 1
    assert full_set(tile_set)[JOKER] == tile_set.jokers
