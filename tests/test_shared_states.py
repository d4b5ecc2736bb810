"""The table of match states the workers of one host share (service/workers/shared_states.py)."""

from __future__ import annotations

import json
import os
import random
import zlib

from service.workers.shared_states import HEADER_BYTES, SLOT_BYTES, SLOTS, StateTable

STATE = b'{"m": {"id": "abc"}, "t": ["d1", "d2"]}'


def table(rows: int = 3, row: int | None = 0) -> StateTable:
    states = StateTable(rows)
    states.row = row
    return states


def same_bucket_as(match_id: str, skip: int = 0) -> str:
    """Another id whose bucket (two slots) is the same as ``match_id``'s; ``skip`` passes
    over that many such ids first."""
    buckets = SLOTS // 2
    bucket = zlib.crc32(match_id.encode()) % buckets
    n = 0
    while True:
        other = f"other-{n}"
        if other != match_id and zlib.crc32(other.encode()) % buckets == bucket:
            if skip == 0:
                return other
            skip -= 1
        n += 1


def test_a_published_state_is_read_back_only_when_newer_than_the_readers_copy() -> None:
    states = table()
    assert states.put("match-1", 7, STATE)
    assert states.newest("match-1", newer_than=-1) == (7, STATE)
    assert states.newest("match-1", newer_than=6) == (7, STATE)
    assert states.newest("match-1", newer_than=7) is None
    assert states.newest("match-2", newer_than=-1) is None


def test_the_newest_version_over_every_workers_row_wins() -> None:
    states = table()
    states.put("match-1", 4, b"four")
    states.row = 2
    states.put("match-1", 9, b"nine")
    states.row = 1
    states.put("match-1", 6, b"six")
    assert states.newest("match-1", newer_than=0) == (9, b"nine")


def test_a_worker_may_leave_its_own_row_out_of_the_search() -> None:
    states = table()
    states.put("match-1", 9, b"mine")  # row 0: this worker's
    states.row = 1
    states.put("match-1", 6, b"theirs")
    states.row = 0
    assert states.newest("match-1", newer_than=0) == (9, b"mine")
    assert states.newest("match-1", newer_than=0, others_only=True) == (6, b"theirs")
    assert states.newest("match-1", newer_than=6, others_only=True) is None


def test_another_match_in_the_same_slot_is_never_taken_for_it() -> None:
    states = table()
    second, third = same_bucket_as("match-1"), same_bucket_as("match-1", skip=1)
    states.put("match-1", 3, b"mine")
    states.put(second, 8, b"theirs")  # the bucket's other slot: both are kept
    assert states.newest("match-1", newer_than=-1) == (3, b"mine")
    assert states.newest(second, newer_than=-1) == (8, b"theirs")
    states.put(third, 2, b"third")  # replaces the one written longer ago: match-1
    assert states.newest("match-1", newer_than=-1) is None
    assert states.newest(second, newer_than=-1) == (8, b"theirs")
    assert states.newest(third, newer_than=-1) == (2, b"third")


def test_a_match_written_again_keeps_its_slot_and_its_bucket_mate() -> None:
    states = table()
    mate, third = same_bucket_as("match-1"), same_bucket_as("match-1", skip=1)
    states.put("match-1", 1, b"one")
    states.put(mate, 5, b"mate")
    states.put("match-1", 2, b"two")  # its own slot again, not the mate's
    assert states.newest(mate, newer_than=-1) == (5, b"mate")
    states.put(third, 1, b"third")  # now the mate was written longer ago: it goes
    assert states.newest("match-1", newer_than=-1) == (2, b"two")
    assert states.newest(mate, newer_than=-1) is None


def test_a_slot_being_written_or_spoiled_is_read_as_nothing() -> None:
    states = table()
    states.put("match-1", 5, STATE)
    at = 2 * (zlib.crc32(b"match-1") % (SLOTS // 2)) * SLOT_BYTES  # its bucket's first slot
    memory = states._memory
    sequence = int.from_bytes(memory[at : at + 8], "little")
    memory[at : at + 8] = (sequence + 1).to_bytes(8, "little")  # a writer is in the middle
    assert states.newest("match-1", newer_than=-1) is None
    memory[at : at + 8] = (sequence + 2).to_bytes(8, "little")
    assert states.newest("match-1", newer_than=-1) == (5, STATE)
    start = at + HEADER_BYTES  # the state's first byte
    memory[start : start + 1] = b"X"  # half of a write that raced the reader
    assert states.newest("match-1", newer_than=-1) is None


def test_a_process_without_a_row_and_a_state_too_large_publish_nothing() -> None:
    states = table(row=None)
    assert not states.put("match-1", 1, STATE)
    states.row = 0
    assert not states.put("match-1", 1, random.Random(1).randbytes(SLOT_BYTES))  # compressed too
    assert states.newest("match-1", newer_than=-1) is None


def test_rows_are_handed_out_once_and_a_dead_workers_row_is_emptied() -> None:
    states = StateTable(2)
    first, second = states.assign(), states.assign()
    assert {first, second} == {0, 1}
    assert states.assign() is None
    states.row = first
    states.put("match-1", 2, STATE)
    states.release(first)
    assert states.newest("match-1", newer_than=-1) is None
    assert states.assign() == first


def test_a_forked_worker_reads_what_its_sibling_published() -> None:
    states = StateTable(2)
    states.assign()
    child = os.fork()
    if child == 0:  # the worker of row 0
        os._exit(0 if states.put("match-1", 11, STATE) else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert states.newest("match-1", newer_than=10) == (11, STATE)


def test_a_row_holds_the_states_of_4096_matches() -> None:
    """Each worker's last commits of 4,096 live matches are nearly all still there for the
    other worker (2,048 slots of 4 KiB held at most 2,048; 4,096 of 2 KiB held 3,332 of them)."""
    states = table()
    for number in range(4096):
        assert states.put(f"match-{number}", 1, STATE)
    found = sum(
        states.newest(f"match-{number}", newer_than=0) is not None for number in range(4096)
    )
    assert found >= 3700


def a_state(players: int, seed: int) -> bytes:
    """A stored state about as large as a match's of ``players`` seats (shuffled tile codes)."""
    rng = random.Random(seed)
    codes = [f"{colour}{number}" for colour in "RBKO" for number in range(1, 14)] * 2
    rng.shuffle(codes)
    racks = [codes[14 * seat : 14 * (seat + 1)] for seat in range(players)]
    return json.dumps({"m": {"id": "m", "racks": racks, "pool": codes[14 * players :]},
                       "t": ["d" * 43] * players}).encode()  # fmt: skip


def test_a_state_larger_than_a_slot_is_kept_compressed_and_read_back_whole() -> None:
    states = table()
    large = a_state(4, seed=5) + b" " * 2 * SLOT_BYTES  # more than a slot holds
    assert len(large) > SLOT_BYTES
    assert states.put("large", 3, large)
    assert states.newest("large", newer_than=2) == (3, large)
    assert states.newest("large", newer_than=3) is None
    for players in (2, 3, 4):  # a match's state, whichever way it is kept
        state = a_state(players, seed=players)
        assert states.put(f"match-{players}", 1, state)
        assert states.newest(f"match-{players}", newer_than=0) == (1, state)


def test_a_spoiled_compressed_state_is_read_as_nothing() -> None:
    states = table()
    large = a_state(4, seed=6) * 2
    assert states.put("match-1", 5, large)
    at = 2 * (zlib.crc32(b"match-1") % (SLOTS // 2)) * SLOT_BYTES  # its bucket's first slot
    start = at + HEADER_BYTES
    states._memory[start + 9 : start + 10] = b"X"  # half of a write that raced the reader
    assert states.newest("match-1", newer_than=-1) is None
