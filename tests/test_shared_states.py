"""The table of match states the workers of one host share (service/workers/shared_states.py)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from service.workers.shared_states import HEADER_BYTES, SLOT_BYTES, WAYS, StateTable

STATE = b'{"m": {"id": "abc"}, "t": ["d1", "d2"]}'


def table(rows: int = 3, row: int | None = 0) -> StateTable:
    states = StateTable(rows)
    states.row = row
    return states


def same_bucket_as(match_id: str, skip: int = 0) -> str:
    """Another id whose bucket (:data:`WAYS` slots) is the same as ``match_id``'s; ``skip``
    passes over that many such ids first."""
    bucket = StateTable._bucket(match_id)
    n = 0
    while True:
        other = f"other-{n}"
        if other != match_id and StateTable._bucket(other) == bucket:
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


def mates_of(match_id: str, count: int) -> list[str]:
    """``count`` other ids of ``match_id``'s bucket."""
    return [same_bucket_as(match_id, skip=n) for n in range(count)]


def test_another_match_in_the_same_slot_is_never_taken_for_it() -> None:
    states = table()
    mates = mates_of("match-1", WAYS)
    states.put("match-1", 3, b"mine")
    for number, mate in enumerate(mates[:-1]):  # the bucket's other slots: all are kept
        states.put(mate, 10 + number, mate.encode())
    assert states.newest("match-1", newer_than=-1) == (3, b"mine")
    for number, mate in enumerate(mates[:-1]):
        assert states.newest(mate, newer_than=-1) == (10 + number, mate.encode())
    states.put(mates[-1], 2, b"last")  # replaces the one written longest ago: match-1
    assert states.newest("match-1", newer_than=-1) is None
    assert states.newest(mates[0], newer_than=-1) == (10, mates[0].encode())
    assert states.newest(mates[-1], newer_than=-1) == (2, b"last")


def test_a_match_written_again_keeps_its_slot_and_its_bucket_mates() -> None:
    states = table()
    mates = mates_of("match-1", WAYS)
    states.put("match-1", 1, b"one")
    for mate in mates[:-1]:
        states.put(mate, 5, b"mate")
    states.put("match-1", 2, b"two")  # its own slot again, not a mate's
    assert all(states.newest(mate, newer_than=-1) == (5, b"mate") for mate in mates[:-1])
    states.put(mates[-1], 1, b"last")  # now the first mate was written longest ago: it goes
    assert states.newest("match-1", newer_than=-1) == (2, b"two")
    assert states.newest(mates[0], newer_than=-1) is None
    assert states.newest(mates[1], newer_than=-1) == (5, b"mate")


def test_a_slot_another_worker_holds_a_newer_version_of_goes_first() -> None:
    """A state another row holds newer is nobody's newest: it makes room before an older
    one that is (the other worker holds the newer version itself, and readers find it)."""
    states = table(rows=2)
    mates = mates_of("match-1", WAYS)
    states.put("match-1", 1, b"oldest")  # written longest ago, but the newest of match-1
    for mate in mates[:-1]:
        states.put(mate, 1, b"mate")
    states.row = 1
    states.put(mates[1], 2, b"newer")  # the other worker moved mates[1] on
    states.row = 0
    states.put(mates[-1], 1, b"last")
    assert states.newest("match-1", newer_than=-1) == (1, b"oldest")
    assert states.newest(mates[1], newer_than=-1) == (2, b"newer")
    assert states.newest(mates[1], newer_than=-1, others_only=True) == (2, b"newer")
    states.row = 1
    assert states.newest(mates[1], newer_than=-1, others_only=True) is None  # row 0's went
    assert states.newest(mates[-1], newer_than=-1, others_only=True) == (1, b"last")


def test_a_slot_being_written_or_spoiled_is_read_as_nothing() -> None:
    states = table()
    states.put("match-1", 5, STATE)
    at = StateTable._bucket("match-1") * SLOT_BYTES  # its bucket's first slot, row 0
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


def test_the_last_commits_of_live_matches_outlive_as_many_fresh_matches_played() -> None:
    """Two workers: each of 4,096 live matches last committed by one of them (the other
    holding the version before), then 4,096 fresh matches played by both in turn (as
    bench/api.py's mix before its drafts). The worker behind on a live match still finds the
    other's last commit of nearly every one: with two slots a bucket and no regard for the
    newer versions in the other row, it found 2,736 of them."""
    states = table(rows=2)
    live = [f"live-{number}" for number in range(4096)]
    for number, match_id in enumerate(live):
        for version, row in ((1, 1 - number % 2), (2, number % 2)):
            states.row = row
            states.put(match_id, version, STATE)
    for number in range(4096):
        for version in (1, 2, 3):
            states.row = (number + version) % 2
            states.put(f"fresh-{number}", version, STATE)
    found = 0
    for number, match_id in enumerate(live):
        states.row = 1 - number % 2  # the worker behind
        found += states.newest(match_id, newer_than=1, others_only=True) == (2, STATE)
    assert found >= 4000  # 4,092 with eight slots a bucket


def shared_kib() -> int:
    """This process's resident pages of shared memory (``RssShmem``), in KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssShmem:"):
            return int(line.split()[1])
    raise AssertionError("no RssShmem in /proc/self/status")


def test_a_row_no_worker_wrote_in_costs_its_readers_no_memory() -> None:
    """Reading a page of shared memory maps it into the reader: the rows nobody writes (the
    master maps two a worker) are not read, so they are no part of any worker's memory."""
    states = table(rows=4)
    for number in range(4096):
        states.put(f"match-{number}", 1, STATE)  # row 0's pages mapped here by the writes
    before = shared_kib()
    for number in range(8192):
        states.newest(f"match-{number}", newer_than=0)
    grown = shared_kib() - before
    assert grown < 4 * 1024  # the few pages of row 0 no write touched; not rows 1 to 3


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
    at = StateTable._bucket("match-1") * SLOT_BYTES  # its bucket's first slot, row 0
    start = at + HEADER_BYTES
    states._memory[start + 9 : start + 10] = b"X"  # half of a write that raced the reader
    assert states.newest("match-1", newer_than=-1) is None
