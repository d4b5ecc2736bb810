"""Named scenarios: documented game situations an integration test reaches in one call.

``POST /v1/matches`` with ``"scenario": "<name>"`` (test mode, or a sandbox app's key) creates
the match a :class:`Scenario` describes: its players (or the request's, as many), its rules and
its deal, and, for a scenario that needs one, a draft of the seat to move. ``GET
/v1/scenarios`` lists :data:`SCENARIOS` with their descriptions. Each scenario's point is
played by ``tests/api/test_scenarios.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from service.game.errors import InvalidMatch
from service.game.state import PlayerSpec, Setup, Table
from service.rules import Rules, TileSet, parse_tiles

__all__ = ["SCENARIOS", "Scenario", "WrongPlayerCount"]

NAMES = ("Ann", "Bo", "Cy", "Di", "Ed", "Flo")


class WrongPlayerCount(InvalidMatch):
    """422: the request names a different number of players than the scenario seats."""

    kind = "scenario-players"


@dataclass(frozen=True)
class Scenario:
    """A situation: ``players`` seats dealt ``setup`` (or shuffled with ``seed``) under
    ``rules``; ``draft``, a draft the seat to move has shared when the match is handed out."""

    name: str
    description: str
    players: int
    rules: Rules
    setup: Setup | None = None
    seed: int | None = None
    draft: Table | None = None

    def seated(self, given: Sequence[PlayerSpec] | None) -> tuple[PlayerSpec, ...]:
        """The players: ``given`` (as many as the scenario seats), else Ann, Bo... as humans;
        raise :class:`WrongPlayerCount`."""
        if given is None:
            return tuple(PlayerSpec(name) for name in NAMES[: self.players])
        if len(given) != self.players:
            raise WrongPlayerCount(
                f"scenario {self.name} seats {self.players} players, not {len(given)}"
            )
        return tuple(given)

    def public(self) -> dict[str, object]:
        """What ``GET /v1/scenarios`` shows of it."""
        return {
            "name": self.name,
            "description": self.description,
            "players": self.players,
            "tile_set": self.rules.tile_set.value,
            "turn_seconds": self.rules.turn_seconds,
        }


def _setup(
    *racks: str,
    pool: str = "",
    table: Sequence[str] = (),
    melded: Sequence[bool] | None = None,
) -> Setup:
    return Setup.parse(
        [rack.split() for rack in racks],
        pool.split(),
        [tiles.split() for tiles in table],
        melded,
        0,
    )


UNTIMED = Rules(turn_seconds=0)

SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario
    for scenario in (
        Scenario(
            "joker_ready",
            "Ann (seat 0, melded) holds R6, K9 and O9; the table holds R5 J R7. Playing "
            "R5 R6 R7 and K9 O9 J frees the joker into a new group.",
            2,
            UNTIMED,
            _setup(
                "R6 K9 O9 B2 B3",
                "K1 K2 O11 B12 R13",
                pool="O4 B9 K8 R1 O13 K4",
                table=["R5 J R7"],
                melded=[True, True],
            ),
        ),
        Scenario(
            "initial_meld_ready",
            "Ann (seat 0) has not melded; her rack holds R10 R11 R12 (33 points) and K10 B10 "
            "O10 (30). Either set alone is an initial meld; R10 R11 alone (21) is refused.",
            2,
            UNTIMED,
            _setup(
                "R10 R11 R12 K10 B10 O10 K3",
                "K1 K2 O11 B12 R13 O5",
                pool="O4 B9 K8 R1 O13 K4",
            ),
        ),
        Scenario(
            "empty_pool_must_play",
            "The pool is empty and Ann (seat 0, melded) can add O5 to O2 O3 O4: a pass is "
            "refused (a legal play exists), the play is accepted.",
            2,
            UNTIMED,
            _setup(
                "O5 K13",
                "R1 B7",
                table=["O2 O3 O4", "K10 K11 K12"],
                melded=[True, True],
            ),
        ),
        Scenario(
            "stalemate",
            "The pool is empty and nobody can play: Ann passes, Bo passes, and the game ends "
            "in a stalemate won by the lowest rack (Ann's R1 K5, 6 points).",
            2,
            UNTIMED,
            _setup(
                "R1 K5",
                "B9 O13",
                table=["K10 K11 K12"],
                melded=[True, True],
            ),
        ),
        Scenario(
            "timeout_with_draft",
            "Ann (seat 0, melded) has shared a draft that adds R9 to R6 R7 R8, and her 60 s "
            "turn runs: when it times out (advance the match clock 60 s) the draft is thrown "
            "away and she draws the failed-turn penalty (3 tiles).",
            2,
            Rules(turn_seconds=60),
            _setup(
                "R9 K2 O7",
                "K1 B4 O11",
                pool="O4 B9 K8 R1 O13 K4",
                table=["R6 R7 R8"],
                melded=[True, True],
            ),
            draft=(parse_tiles(["R6", "R7", "R8", "R9"]),),
        ),
        Scenario(
            "one_play_from_end",
            "Ann (seat 0) holds only R10 R11 R12: playing it empties her rack, ends the game "
            "(game_over, Ann won) and scores Bo's rack against him.",
            2,
            UNTIMED,
            _setup(
                "R10 R11 R12",
                "K1 K2 O11 B12",
                pool="O4 B9 K8 R1 O13 K4",
            ),
        ),
        Scenario(
            "six_player_xp",
            "Six players (Ann to Flo) at an XP table (160 tiles), dealt 14 tiles each from a "
            "fixed shuffle (seed 6), 60 s turns.",
            6,
            replace(Rules(), tile_set=TileSet.XP),
            seed=6,
        ),
    )
}
