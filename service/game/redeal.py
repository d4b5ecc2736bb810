"""The MSO redeal: a rack dealt 3 doubles may ask, before the first move, for a new deal.

Under ``rules.redeal_three_doubles`` a seat whose rack holds 3 or more doubles (pairs of
identical numbered tiles) while no turn of the game has ended yet may have the racks and the
pool shuffled together and dealt anew, as the game's deal was made (``rules.dealt_jokers``
included); the new deal is the one the game's record keeps. The first player, the turn in
progress and the clocks stay as they were; a draft is dropped (its tiles may have gone).
"""

from __future__ import annotations

import random
from dataclasses import replace

from service.game.deal import deal_tiles, doubles
from service.game.errors import RedealRefused, RuleNotInForce, WrongPhase
from service.game.state import Dealt, EventType, Match, Transition, record, sorted_rack
from service.game.turns import require_playing, require_seat
from service.rules import codes_of

__all__ = ["DOUBLES_FOR_REDEAL", "redeal"]

DOUBLES_FOR_REDEAL = 3


def redeal(match: Match, seat: int, *, rng: random.Random, now: float) -> Transition:
    """Deal the racks anew at ``seat``'s request; emits ``redealt``.

    Raises :class:`RuleNotInForce` when the rules have no redeal, :class:`WrongPhase` once a
    turn of the game has ended (or no game is being played), :class:`RedealRefused` when
    ``seat``'s rack holds fewer than 3 doubles.
    """
    require_seat(match, seat)
    if not match.rules.redeal_three_doubles:
        raise RuleNotInForce("this match's rules have no redeal (the MSO preset has one)")
    require_playing(match)
    if match.turns_played:
        raise WrongPhase("a redeal can be asked for only before the first move of the game")
    held = doubles(match.players[seat].rack)
    if len(held) < DOUBLES_FOR_REDEAL:
        listed = f": {' '.join(codes_of(held))}" if held else ""
        raise RedealRefused(
            f"a redeal needs {DOUBLES_FOR_REDEAL} doubles in your rack; it holds "
            f"{len(held)}{listed}"
        )
    tiles = [tile for player in match.players for tile in player.rack] + list(match.pool)
    dealt = deal_tiles(tiles, len(match.players), rules=match.rules, rng=rng)
    players = tuple(
        replace(player, rack=sorted_rack(rack))
        for player, rack in zip(match.players, dealt.racks, strict=True)
    )
    deals = match.deals
    if deals and deals[-1] is not None:
        kept = Dealt(dealt.racks, dealt.pool, deals[-1].table, deals[-1].melded)
        deals = (*deals[:-1], kept)
    return record(
        replace(match, players=players, pool=dealt.pool, draft=None, deals=deals),
        EventType.REDEALT,
        at=now,
        seat=seat,
        game_number=match.game_number,
        doubles=codes_of(held),
        dealt=[len(rack) for rack in dealt.racks],
        pool_count=len(dealt.pool),
    )
