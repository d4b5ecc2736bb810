"""The rules core: pure Python, standard library only.

Everything that decides what is legal or what it scores lives here: tiles and
their codes, sets and jokers, the initial meld, whole-turn checking and scoring.
Errors: :class:`InvalidTileCode` (a string that is not a tile code, a
``ValueError``) and :class:`IllegalTurn` (a play that breaks rules, carrying
its :class:`Violation` list).
"""

from service.rules.clock import Clock, ClockType, Delay, TurnEnd, clock_from_dict, clock_to_dict
from service.rules.meld import initial_meld_value, meets_initial_meld
from service.rules.options import (
    FAILED_TURN_PENALTIES,
    FirstPlayerJoker,
    FreedJoker,
    MatchWinner,
    Preset,
    Rules,
    StalemateEnd,
    StalemateScoring,
)
from service.rules.presets import PRESET_OPTIONS, PRESET_PLAYERS, rules_with
from service.rules.scoring import (
    Outcome,
    Reason,
    never_melded_charge,
    rack_total,
    score_abandoned,
    score_stalemate,
    score_went_out,
)
from service.rules.sets import (
    SetFault,
    SetInfo,
    SetKind,
    classify,
    is_valid_set,
    name_readings,
    set_points,
)
from service.rules.tiles import (
    COLOURS,
    JOKER,
    PLAIN_TILES,
    Colour,
    InvalidTileCode,
    Tile,
    TileSet,
    codes_of,
    full_set,
    parse_tiles,
)
from service.rules.turn import (
    IllegalTurn,
    TurnFault,
    Violation,
    check_conservation,
    check_turn,
    conserves,
    freed_joker_violations,
    set_key,
    tiles_of,
)

__all__ = [
    "COLOURS",
    "Clock",
    "ClockType",
    "Delay",
    "FreedJoker",
    "PRESET_OPTIONS",
    "PRESET_PLAYERS",
    "Preset",
    "TurnEnd",
    "clock_from_dict",
    "clock_to_dict",
    "freed_joker_violations",
    "never_melded_charge",
    "rules_with",
    "FAILED_TURN_PENALTIES",
    "JOKER",
    "PLAIN_TILES",
    "Colour",
    "FirstPlayerJoker",
    "IllegalTurn",
    "InvalidTileCode",
    "MatchWinner",
    "Outcome",
    "Reason",
    "Rules",
    "SetFault",
    "SetInfo",
    "SetKind",
    "StalemateEnd",
    "StalemateScoring",
    "Tile",
    "TileSet",
    "TurnFault",
    "Violation",
    "check_conservation",
    "check_turn",
    "classify",
    "codes_of",
    "conserves",
    "full_set",
    "initial_meld_value",
    "is_valid_set",
    "meets_initial_meld",
    "name_readings",
    "parse_tiles",
    "rack_total",
    "score_abandoned",
    "score_stalemate",
    "score_went_out",
    "set_key",
    "set_points",
    "tiles_of",
]
