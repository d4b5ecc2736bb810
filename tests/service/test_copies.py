"""A worker's copies of matches (``service/store/copies.py``): the most recent decoded, the
ones before kept as their stored state and decoded again when asked for."""

from __future__ import annotations

import gc
import random
import tracemalloc
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from service import game, jsoncodec
from service.game import Match, PlayerSpec
from service.rules import Rules
from service.store.copies import DecodedCache

SEATS = ("digest-a", "digest-b")
_BASE = game.new_match(
    "m0", [PlayerSpec("Ann"), PlayerSpec("Bo")], rules=Rules(), rng=random.Random(3), now=1.0
).match


def match(number: int, version: int = 1) -> Match:
    return replace(_BASE, id=f"m{number}", version=version)


def stored(copy: Match) -> bytes:
    return jsoncodec.dumps({"m": game.to_dict(copy), "t": list(SEATS)})


class Decoder:
    """Decodes a stored state as the store does, counting the states it decoded."""

    def __init__(self) -> None:
        self.decoded: list[str] = []

    def __call__(self, state: str | bytes) -> tuple[Match, tuple[str, ...]]:
        data = jsoncodec.loads(state)
        self.decoded.append(data["m"]["id"])
        return game.from_dict(data["m"]), tuple(data["t"])


def filled(size: int, kept: int, count: int) -> tuple[DecodedCache, Decoder]:
    decoder = Decoder()
    cache = DecodedCache(size, kept=kept, decode=decoder)
    for number in range(count):
        cache.put(match(number), SEATS, stored(match(number)))
    return cache, decoder


def test_a_copy_pushed_out_of_the_decoded_ones_is_decoded_again_from_its_state() -> None:
    cache, decoder = filled(2, 4, 3)  # m0 pushed out by m2
    copy = cache.get("m0")
    assert copy == (match(0), SEATS)
    assert decoder.decoded == ["m0"]
    assert cache.get("m0") == (match(0), SEATS)  # decoded again, it is held decoded
    assert decoder.decoded == ["m0"]


def test_the_decoded_copies_hold_the_most_recent_matches() -> None:
    cache, decoder = filled(2, 4, 3)
    assert cache.get("m1") == (match(1), SEATS)
    assert cache.get("m2") == (match(2), SEATS)
    assert decoder.decoded == []


def test_past_the_kept_states_the_oldest_are_forgotten() -> None:
    cache, _ = filled(2, 3, 7)  # m0 and m1 past the 5 held
    assert cache.get("m0") is None
    assert cache.get("m1") is None
    assert cache.get("m2") == (match(2), SEATS)


def test_a_copy_put_without_its_state_is_forgotten_when_pushed_out() -> None:
    cache = DecodedCache(1, kept=4, decode=Decoder())
    cache.put(match(0), SEATS)
    cache.put(match(1), SEATS, stored(match(1)))
    assert cache.get("m0") is None


def test_without_a_decoder_nothing_is_kept_past_the_decoded_copies() -> None:
    cache = DecodedCache(1, kept=4)
    cache.put(match(0), SEATS, stored(match(0)))
    cache.put(match(1), SEATS, stored(match(1)))
    assert cache.get("m0") is None


def test_a_newer_version_replaces_a_kept_state_and_an_older_one_does_not() -> None:
    cache, decoder = filled(1, 4, 2)  # m0 version 1 kept as its state
    newer = match(0, version=5)
    cache.put(newer, SEATS, stored(newer))
    assert cache.get("m0") == (newer, SEATS)
    cache.put(match(9), SEATS, stored(match(9)))  # m0 version 5 kept as its state
    cache.put(match(0, version=3), SEATS, stored(match(0, version=3)))
    assert cache.get("m0") == (newer, SEATS)
    assert decoder.decoded == ["m0"]


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(1, 4),
    kept=st.integers(0, 4),
    steps=st.lists(st.tuples(st.booleans(), st.integers(0, 6)), max_size=40),
)
def test_a_copy_is_the_newest_version_put_or_none(
    size: int, kept: int, steps: list[tuple[bool, int]]
) -> None:
    """Puts of ever newer versions and gets in any order: a get answers the newest version
    put of that match or nothing, and at most ``size + kept`` matches are held."""
    cache = DecodedCache(size, kept=kept, decode=Decoder())
    newest: dict[int, int] = {}
    for putting, number in steps:
        if putting:
            newest[number] = newest.get(number, 0) + 1
            copy = match(number, newest[number])
            cache.put(copy, SEATS, stored(copy))
        else:
            got = cache.get(f"m{number}")
            assert got is None or got[0] == match(number, newest[number])
    held = [number for number in newest if cache.get(f"m{number}") is not None]
    assert len(held) <= size + kept


def test_a_kept_state_costs_about_its_length() -> None:
    """orjson's answer holds about 8 KB whatever its length: kept as it was, 14,336 states took
    a worker some 115 MB (service/store/copies.py keeps a copy of its length)."""
    count = 200
    tracemalloc.start()
    try:
        cache = DecodedCache(1, kept=count, decode=Decoder())
        for number in range(count):
            cache.put(match(number), SEATS, stored(match(number)))  # each state made here
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    length = len(stored(match(0)))
    assert held / count < length + 1024
