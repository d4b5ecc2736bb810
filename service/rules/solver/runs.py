"""How the open runs of one colour move on from one number to the next.

The solver reads the table number by number. For each colour it keeps the runs
still *open* (they took a tile at the last number), each as a *code*: 1 or 2 for a
run of that length, 3 for a run of three or more, which may end at any time. A
state is the sorted tuple of codes; copies of a tile are interchangeable, so
runs with equal codes are too.

At a number ``v`` a colour receives real tiles, jokers that continue open runs,
jokers laid *before* a new run (``J J R3``: a prefix), and the ends of locked
runs (see :mod:`service.rules.solver.position`). :func:`run_moves` lists every
useful way to spend them: which open runs continue (with a real tile or a
joker), which end, which new runs start. A move whose resulting state is
*dominated* by another's (every run at least as long, extra runs complete) is
left out: anything the weaker state can still do, the stronger can too.

In *essential* mode (after the initial meld) a joker is only laid where the set
needs it: a run of three or more takes a joker only to bridge a gap, marked with
the code ``GAP`` (the run must go on with a real tile); jokers go before a new run
only at 12 and 13, where they cannot go after it. Every other joker is *spare* and
is added at the end to any run or group of three that can take it.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from itertools import combinations_with_replacement, product
from typing import Final

__all__ = [
    "COMPLETE",
    "GAP",
    "Fate",
    "RunMove",
    "RunState",
    "dominates",
    "is_closable",
    "run_moves",
    "weaker_states",
]

RunState = tuple[int, ...]
COMPLETE = 3
GAP = 4  # three or more tiles, the last a joker bridging to a real tile still to come
# Bounds on the memo caches below (least recently used entries go first; run_moves's, the
# older half); the stress
# positions of bench/solver_tail.py fill about a tenth of each.
DOMINANCE_CACHE = 1 << 16
STATES_CACHE = 1 << 12
MOVES_CACHE = 1 << 16
# how strong each code is; grows strictly with dominance between codes
_STRENGTH = {1: 2, GAP: 3, 2: 4, COMPLETE: 6}


class Fate:
    """What happens to one open run at the next number."""

    REAL: Final = "R"  # continues with a real tile
    JOKER: Final = "J"  # continues with a joker
    LOCKED: Final = "L"  # continues into a locked run that starts here
    END: Final = "E"  # ends (only a complete run may)


# A plain class, not a frozen dataclass (read-only by use, never hashed or compared): compiled, a
# frozen dataclass stays a Python class whose __init__ sets each field through
# object.__setattr__, several thousand instructions a move, where a plain class is native.
class RunMove:
    """One way for a colour's runs to take the tiles of a number.

    ``fates`` matches the old state's codes in order, ``codes`` gives the new code
    of each run that continues (0 for the others). ``new_prefixes`` gives, for
    each new run started by a real tile, the jokers laid before it;
    ``locked_prefixes`` the same for each locked run that starts fresh here.
    ``prefix_value`` is what the prefix jokers stand for, summed.
    """

    def __init__(
        self,
        state: RunState,
        fates: tuple[str, ...],
        codes: tuple[int, ...],
        new_prefixes: tuple[int, ...],
        locked_prefixes: tuple[int, ...],
        prefix_value: int,
    ) -> None:
        self.state = state
        self.fates = fates
        self.codes = codes
        self.new_prefixes = new_prefixes
        self.locked_prefixes = locked_prefixes
        self.prefix_value = prefix_value


def is_closable(state: RunState) -> bool:
    """Whether every open run of ``state`` is long enough to end now."""
    return all(code == COMPLETE for code in state)


def strength(state: RunState) -> int:
    """A number that grows strictly whenever a state dominates another."""
    return sum(_STRENGTH[code] for code in state)


def _covers(strong: int, weak: int) -> bool:
    """Whether a run of code ``strong`` can do whatever one of code ``weak`` can."""
    return strong in (weak, COMPLETE) or (strong == 2 and weak in (1, GAP))


@lru_cache(maxsize=DOMINANCE_CACHE)
def dominates(strong: RunState, weak: RunState) -> bool:
    """Whether ``strong`` can do whatever ``weak`` can from here on.

    True when each run of ``weak`` can be matched with a distinct run of ``strong``
    that covers it, and the runs of ``strong`` left over are complete (they can end
    at once).
    """
    if not weak:
        return all(code == COMPLETE for code in strong)
    if len(strong) < len(weak):
        return False
    first, rest = weak[0], weak[1:]
    tried: set[int] = set()
    for index, code in enumerate(strong):
        if code in tried or not _covers(code, first):
            continue
        tried.add(code)
        if dominates(strong[:index] + strong[index + 1 :], rest):
            return True
    return False


@lru_cache(maxsize=STATES_CACHE)
def weaker_states(state: RunState) -> frozenset[RunState]:
    """Every state that ``state`` dominates, itself included.

    Each run may be replaced by a weaker code (or dropped, when complete); runs of equal
    code are interchangeable, so each block of them picks a multiset of replacements
    (:func:`_block_weaker`), not one replacement per run in every order.
    """
    blocks = [_block_weaker(code, state.count(code)) for code in sorted(set(state))]
    return frozenset(
        tuple(sorted(code for picked in picks for code in picked)) for picks in product(*blocks)
    )


_BELOW = {COMPLETE: (0, 1, 2, COMPLETE, GAP), 2: (1, 2, GAP), 1: (1,), GAP: (GAP,)}


@lru_cache(maxsize=64)
def _block_weaker(code: int, runs: int) -> tuple[tuple[int, ...], ...]:
    """What ``runs`` open runs of code ``code`` may become, up to their order (0: dropped)."""
    return tuple(
        tuple(c for c in picked if c)
        for picked in combinations_with_replacement(_BELOW[code], runs)
    )


# run_moves's answers by its arguments: a plain dict, not lru_cache, whose wrapper (a generic
# call with keywords, the key made from them) cost a third as much as the moves themselves
# when compiled; past MOVES_CACHE entries it drops its older half
_MOVES: Final[dict[tuple[object, ...], tuple[RunMove, ...]]] = {}


def run_moves(
    state: RunState,
    reals: int,
    jokers: int,
    locked_starts: int,
    prefix: int,
    locked_ends: int,
    number: int,
    *,
    meld: bool = False,
    essential: bool = False,
) -> tuple[RunMove, ...]:
    """List the undominated ways to spend a number's tiles on one colour's runs
    (:func:`_run_moves`), remembered."""
    key = (state, reals, jokers, locked_starts, prefix, locked_ends, number, meld, essential)
    found = _MOVES.get(key)
    if found is None:
        if len(_MOVES) >= MOVES_CACHE:
            for older in list(_MOVES)[: MOVES_CACHE // 2]:
                _MOVES.pop(older, None)
        found = _run_moves(
            state,
            reals,
            jokers,
            locked_starts,
            prefix,
            locked_ends,
            number,
            meld=meld,
            essential=essential,
        )
        _MOVES[key] = found
    return found


def _run_moves(
    state: RunState,
    reals: int,
    jokers: int,
    locked_starts: int,
    prefix: int,
    locked_ends: int,
    number: int,
    *,
    meld: bool,
    essential: bool,
) -> tuple[RunMove, ...]:
    """List the undominated ways to spend a number's tiles on one colour's runs.

    ``reals`` real tiles and ``jokers`` continuing jokers go to runs at ``number``;
    ``locked_starts`` locked runs start here and ``locked_ends`` end here;
    ``prefix`` jokers go before new runs at positions ``number - 1`` down to 1 (in
    essential mode before new runs of real tiles only). Every tile and joker must be
    used. With ``meld`` the prefix value counts too, so a move worth more points is
    kept even when its state is weaker. Returns an empty tuple when no way exists.
    """
    moves: list[RunMove] = []
    for fates in _fate_choices(state, reals, jokers, locked_starts):
        codes = tuple(
            _next_code(code, fate, essential) for code, fate in zip(state, fates, strict=True)
        )
        continued = [code for code in codes if code]
        new_runs = reals - fates.count(Fate.REAL)
        fresh_locked = locked_starts - fates.count(Fate.LOCKED)
        for new_prefixes, locked_prefixes in _prefix_splits(
            prefix, new_runs, 0 if essential else fresh_locked, number - 1
        ):
            if essential:
                locked_prefixes = (0,) * fresh_locked
            started = [min(COMPLETE, 1 + jokers_before) for jokers_before in new_prefixes]
            after = tuple(sorted([*continued, *started, *[COMPLETE] * locked_ends]))
            value = sum(_prefix_value(n, number) for n in (*new_prefixes, *locked_prefixes))
            moves.append(RunMove(after, fates, codes, new_prefixes, locked_prefixes, value))
    return _undominated(moves, meld=meld)


def _next_code(code: int, fate: str, essential: bool) -> int:
    if fate == Fate.REAL:
        return min(COMPLETE, code + 1) if code != GAP else COMPLETE
    if fate == Fate.JOKER:
        if essential and code in (COMPLETE, GAP):
            return GAP
        return min(COMPLETE, code + 1)
    return 0


def _prefix_value(jokers_before: int, number: int) -> int:
    return sum(number - i for i in range(1, jokers_before + 1))


def _fate_choices(
    state: RunState, reals: int, jokers: int, locked_starts: int
) -> Iterator[tuple[str, ...]]:
    """Fates for the open runs, up to swapping runs of equal code.

    Runs of equal code sit together in a state (it is sorted); each block's fates are
    a multiset, listed once (:func:`_block_fates`). The choices come in the order a
    product of every run's fates would first meet them, each sorted within its blocks.
    """
    blocks: list[tuple[tuple[tuple[str, ...], int, int, int], ...]] = []
    start = 0
    while start < len(state):
        end = start
        while end < len(state) and state[end] == state[start]:
            end += 1
        blocks.append(_block_fates(state[start] == COMPLETE, end - start))
        start = end
    # the most jokers the blocks from each one on can take, to stop a branch that cannot
    # use them all
    most = [0] * (len(blocks) + 1)
    for index in range(len(blocks) - 1, -1, -1):
        most[index] = most[index + 1] + max(block[2] for block in blocks[index])
    return _picked(blocks, most, 0, (), reals, jokers, locked_starts)


def _picked(
    blocks: list[tuple[tuple[tuple[str, ...], int, int, int], ...]],
    most: list[int],
    index: int,
    fates: tuple[str, ...],
    reals: int,
    jokers: int,
    locked: int,
) -> Iterator[tuple[str, ...]]:
    """The fates of blocks ``index`` on after ``fates``, with ``reals``, ``locked`` at most
    and ``jokers`` exactly left to spend, in the order of their product."""
    if index == len(blocks):
        if jokers == 0:
            yield fates
        return
    if jokers > most[index]:
        return
    for block_fates, block_real, block_joker, block_locked in blocks[index]:
        if block_real <= reals and block_joker <= jokers and block_locked <= locked:
            yield from _picked(
                blocks,
                most,
                index + 1,
                fates + block_fates,
                reals - block_real,
                jokers - block_joker,
                locked - block_locked,
            )


@lru_cache(maxsize=64)
def _block_fates(complete: bool, runs: int) -> tuple[tuple[tuple[str, ...], int, int, int], ...]:
    """The fates of ``runs`` open runs of one code, up to their order: each sorted, with its
    count of real tiles, jokers and locked runs; in the order a product of the runs'
    fates (real, joker, locked, then end for a complete run) first meets them."""
    choices = (
        (Fate.REAL, Fate.JOKER, Fate.LOCKED, Fate.END)
        if complete
        else (Fate.REAL, Fate.JOKER, Fate.LOCKED)
    )
    return tuple(
        (
            tuple(sorted(fates)),
            fates.count(Fate.REAL),
            fates.count(Fate.JOKER),
            fates.count(Fate.LOCKED),
        )
        for fates in combinations_with_replacement(choices, runs)
    )


def _prefix_splits(
    prefix: int, new_runs: int, fresh_locked: int, room: int
) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Ways to lay ``prefix`` jokers before new runs, at most ``room`` before each."""
    for to_new in range(prefix + 1):
        for new in _partitions(to_new, new_runs, room):
            for locked in _partitions(prefix - to_new, fresh_locked, room):
                yield new, locked


def _partitions(total: int, bins: int, cap: int) -> Iterator[tuple[int, ...]]:
    """Non-increasing tuples of ``bins`` numbers in ``0..cap`` summing to ``total``."""
    if bins == 0:
        if total == 0:
            yield ()
        return
    for first in range(min(total, cap), -1, -1):
        if first * bins < total:
            break
        for rest in _partitions(total - first, bins - 1, first):
            yield (first, *rest)


def _undominated(moves: list[RunMove], *, meld: bool) -> tuple[RunMove, ...]:
    kept: list[RunMove] = []
    for index, move in enumerate(moves):
        if not any(
            _beats(other, move, meld=meld)
            and (not _beats(move, other, meld=meld) or other_index < index)
            for other_index, other in enumerate(moves)
            if other_index != index
        ):
            kept.append(move)
    return tuple(kept)


def _beats(strong: RunMove, weak: RunMove, *, meld: bool) -> bool:
    if meld and strong.prefix_value < weak.prefix_value:
        return False
    return dominates(strong.state, weak.state)
