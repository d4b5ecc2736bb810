"""Published rule sets (SPEC section 6): what each preset sets, and options given beside it.

:func:`rules_with` builds the :class:`Rules` of a match from the options a client gave:
the preset's options first (``official`` by default, which sets nothing), then every option
given beside it, which wins. ``rules.clock`` is one option: a clock given beside a preset
replaces the preset's clock whole, its own omitted fields taking the clock's defaults. With a
bank clock, ``turn_seconds`` is 0 (no cap) unless given.

The MSO preset: the Mind Sports Olympiad's two-player tournament rules (2025 clarifications):
exactly 2 players on the standard set, each dealt 1 joker and 13 random tiles, a redeal for
a rack dealt 3 doubles, a joker left on a rack costing 50, a player who never melded charged
100 (200 when their rack holds sets worth the initial meld), and a 10-minute bank with a
10-second Bronstein delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from service.rules.clock import Clock, ClockType, Delay
from service.rules.options import Preset, Rules
from service.rules.tiles import TileSet

__all__ = ["PRESET_OPTIONS", "PRESET_PLAYERS", "rules_with"]

MSO_CLOCK = Clock(ClockType.BANK, bank_seconds=600, delay_seconds=10, delay=Delay.BRONSTEIN)

PRESET_OPTIONS: Mapping[Preset, Mapping[str, Any]] = MappingProxyType(
    {
        Preset.OFFICIAL: MappingProxyType({}),
        Preset.MSO: MappingProxyType(
            {
                "tile_set": TileSet.STANDARD,
                "dealt_jokers": 1,
                "joker_penalty": 50,
                "never_melded_penalty": 100,
                "redeal_three_doubles": True,
                "clock": MSO_CLOCK,
            }
        ),
    }
)
"""The options each preset sets (beside the defaults of :class:`Rules`)."""

PRESET_PLAYERS: Mapping[Preset, int] = MappingProxyType({Preset.MSO: 2})
"""The number of players a preset is made for, where it names one."""


def rules_with(options: Mapping[str, Any]) -> Rules:
    """The rules of ``options`` (typed values by :class:`Rules` field name; ``preset`` a
    :class:`Preset`): the preset's options, overridden by those given. Raises ``TypeError``
    for an unknown option and ``ValueError`` for a bad value, as :class:`Rules` does."""
    preset = options.get("preset", Preset.OFFICIAL)
    values: dict[str, Any] = {**PRESET_OPTIONS[preset], **options, "preset": preset}
    clock = values.get("clock")
    if isinstance(clock, Clock) and clock.is_bank and "turn_seconds" not in options:
        values["turn_seconds"] = 0
    return Rules(**values)
