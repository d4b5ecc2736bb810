"""Request schemas for matches; instantiated once per module."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from service.api.fields import (
    MAX_SET_TILES,
    MAX_TABLE_SETS,
    Flag,
    Table,
    TileCode,
    WholeNumber,
    plain_text,
)
from service.config import Settings
from service.game import MAX_GIFT_SECONDS, MAX_REF_LENGTH, MAX_TURN_SECONDS, PlayerSpec, Setup
from service.game.scenarios import SCENARIOS
from service.record import MAX_TURNS as MAX_RECORD_TURNS
from service.rules import (
    FAILED_TURN_PENALTIES,
    PLAIN_TILES,
    PRESET_PLAYERS,
    Clock,
    ClockType,
    Delay,
    FirstPlayerJoker,
    FreedJoker,
    InvalidTileCode,
    MatchWinner,
    Preset,
    Rules,
    StalemateEnd,
    StalemateScoring,
    Tile,
    TileSet,
    rules_with,
)
from service.rules.clock import MAX_BANK_SECONDS, MAX_CLOCK_STEP_SECONDS

__all__ = [
    "TEST_FIELDS",
    "create_match_schema",
    "give_time_schema",
    "plain_table_body",
    "table_body_schema",
    "test_mode_create_match_schema",
]


TEST_FIELDS = ("seed", "setup", "scenario", "from_record")
"""The fields of a new match only a caller that may use the test features may send."""

MAX_TARGET_SCORE = 10_000
"""The highest ``target_score``: a match to 10,000 points is longer than any table plays."""


def _choice(enum_type: Any) -> fields.String:
    return fields.String(validate=validate.OneOf([member.value for member in enum_type]))


class ClockSchema(Schema):
    type = _choice(ClockType)
    bank_seconds = WholeNumber(validate=validate.Range(min=1, max=MAX_BANK_SECONDS))
    increment_seconds = WholeNumber(validate=validate.Range(min=0, max=MAX_CLOCK_STEP_SECONDS))
    delay_seconds = WholeNumber(validate=validate.Range(min=0, max=MAX_CLOCK_STEP_SECONDS))
    delay = _choice(Delay)

    @post_load
    def make(self, data: dict[str, Any], **kwargs: Any) -> Clock:
        # bank fields without a type make a bank; beside "type": "turn" they are ignored
        inferred = ClockType.BANK.value if set(data) - {"type"} else ClockType.TURN.value
        kind = ClockType(data.pop("type", inferred))
        if kind is ClockType.TURN:
            return Clock()
        delay = Delay(data.pop("delay", Delay.BRONSTEIN.value))
        return Clock(kind, delay=delay, **data)


class RulesSchema(Schema):
    preset = _choice(Preset)
    clock = fields.Nested(ClockSchema)
    freed_joker = _choice(FreedJoker)
    dealt_jokers = WholeNumber(validate=validate.Range(min=0, max=2))
    joker_penalty = WholeNumber(validate=validate.Range(min=0, max=100))
    never_melded_penalty = WholeNumber(validate=validate.Range(min=0, max=1000))
    redeal_three_doubles = Flag()
    tile_set = _choice(TileSet)
    turn_seconds = WholeNumber(validate=validate.Range(min=0, max=MAX_TURN_SECONDS))
    initial_meld_points = WholeNumber(validate=validate.Range(min=0, max=1000))
    joker_worth_zero_in_meld = Flag()
    joker_locked_sets = Flag()
    hints = Flag()
    rounds = WholeNumber(validate=validate.Range(min=1, max=20))
    target_score = WholeNumber(
        allow_none=True, validate=validate.Range(min=1, max=MAX_TARGET_SCORE)
    )
    match_winner = _choice(MatchWinner)
    stalemate_scoring = _choice(StalemateScoring)
    stalemate_end = _choice(StalemateEnd)
    first_player_joker = _choice(FirstPlayerJoker)
    redeal_duplicates = Flag()
    failed_turn_penalty = WholeNumber(validate=validate.OneOf(FAILED_TURN_PENALTIES))

    @post_load
    def make(self, data: dict[str, Any], **kwargs: Any) -> Rules:
        enums = {
            "preset": Preset,
            "freed_joker": FreedJoker,
            "tile_set": TileSet,
            "match_winner": MatchWinner,
            "stalemate_scoring": StalemateScoring,
            "stalemate_end": StalemateEnd,
            "first_player_joker": FirstPlayerJoker,
        }
        values: dict[str, Any] = {k: enums[k](v) if k in enums else v for k, v in data.items()}
        return rules_with(values)


class PlayerSchema(Schema):
    name = fields.String(required=True, validate=[validate.Length(min=1, max=40), plain_text])
    bot = Flag(load_default=False)
    ref = fields.String(validate=[validate.Length(min=1, max=MAX_REF_LENGTH), plain_text])

    @post_load
    def make(self, data: dict[str, Any], **kwargs: Any) -> PlayerSpec:
        return PlayerSpec(data["name"].strip() or data["name"], data["bot"], data.get("ref"))


class SetupSchema(Schema):
    racks = fields.List(
        fields.List(TileCode(), validate=validate.Length(max=160)),
        required=True,
        validate=validate.Length(min=2, max=6),
    )
    pool = fields.List(TileCode(), load_default=list, validate=validate.Length(max=160))
    table = Table(load_default=list)
    melded = fields.List(Flag(), load_default=None, validate=validate.Length(max=6))
    first_seat = WholeNumber(load_default=0, validate=validate.Range(min=0, max=5))

    @post_load
    def make(self, data: dict[str, Any], **kwargs: Any) -> Setup:
        return Setup(
            tuple(tuple(rack) for rack in data["racks"]),
            tuple(data["pool"]),
            tuple(tuple(tiles) for tiles in data["table"]),
            None if data["melded"] is None else tuple(data["melded"]),
            data["first_seat"],
        )


class FromRecordSchema(Schema):
    """A record (its JSON form, or its text form as a string) and the turn to start after
    (0: as dealt); the record is read by the view (``service.record``)."""

    record = fields.Raw(required=True)
    turn = WholeNumber(required=True, validate=validate.Range(min=0, max=MAX_RECORD_TURNS))


class CreateMatchSchema(Schema):
    """A new match; ``seed``, ``setup`` and ``scenario`` are refused unless the caller may use
    the test features (test mode, or a sandbox app's key: ``apps.may_use_test_features``)."""

    test_mode = False
    players = fields.List(fields.Nested(PlayerSchema), validate=validate.Length(min=2, max=6))
    rules = fields.Nested(RulesSchema, load_default=Rules)
    seed = WholeNumber(validate=validate.Range(min=-(2**63), max=2**63 - 1))
    setup = fields.Nested(SetupSchema)
    scenario = fields.String(validate=validate.OneOf(list(SCENARIOS)))
    from_record = fields.Nested(FromRecordSchema)

    @validates_schema
    def players_the_preset_is_for(self, data: dict[str, Any], **kwargs: Any) -> None:
        rules, players = data.get("rules"), data.get("players")
        if not isinstance(rules, Rules) or players is None:
            return
        wanted = PRESET_PLAYERS.get(rules.preset)
        if wanted is not None and len(players) != wanted:
            raise ValidationError(
                f"the {rules.preset.value} preset is for exactly {wanted} players, "
                f"not {len(players)}",
                "players",
            )

    @validates_schema(pass_original=True)
    def test_mode_only(self, data: dict[str, Any], original: Any, **kwargs: Any) -> None:
        if not self.test_mode:
            for name in TEST_FIELDS:
                if name in data:
                    raise ValidationError(
                        f"only accepted in test mode ({Settings.variable('test_mode')}=1) or "
                        f"with a sandbox app's key ({Settings.variable('sandbox_keys')})",
                        name,
                    )
        if "from_record" in data:
            for name in ("players", "rules", "seed", "setup", "scenario"):
                if isinstance(original, dict) and name in original:
                    raise ValidationError("a record sets its own players, rules and deal", name)
            return
        if "scenario" not in data:
            if "players" not in data:
                raise ValidationError("Missing data for required field.", "players")
            return
        for name in ("rules", "seed", "setup"):
            if isinstance(original, dict) and name in original:
                raise ValidationError("a scenario sets its own rules and deal", name)


class GiveTimeSchema(Schema):
    seconds = WholeNumber(required=True, validate=validate.Range(min=1, max=MAX_GIFT_SECONDS))


class TableBodySchema(Schema):
    table = Table(required=True)


def plain_table_body(data: Any) -> dict[str, Any] | None:
    """``table_body_schema.load(data)`` for a well-formed body (``{"table": [[codes]]}`` within
    the limits), without marshmallow's machinery: a move's body is loaded on every move.
    ``None`` for anything else, which the schema then loads or refuses, naming the fault."""
    if type(data) is not dict or len(data) != 1:
        return None
    table = data.get("table")
    if type(table) is not list or len(table) > MAX_TABLE_SETS:
        return None
    sets = []
    for codes in table:
        if type(codes) is not list or len(codes) > MAX_SET_TILES:
            return None
        try:  # the plain codes looked up at once (a JSON value that is not a string is no key)
            sets.append([PLAIN_TILES[code] for code in codes])
            continue
        except (KeyError, TypeError):  # a named joker, or not a tile code
            pass
        tiles = []
        for code in codes:
            if type(code) is not str:
                return None
            try:
                tiles.append(Tile.parse(code))
            except InvalidTileCode:
                return None
        sets.append(tiles)
    return {"table": sets}


class TestModeCreateMatchSchema(CreateMatchSchema):
    """A new match with the test features: ``seed``, ``setup`` and ``scenario`` accepted."""

    test_mode = True


create_match_schema = CreateMatchSchema()
test_mode_create_match_schema = TestModeCreateMatchSchema()
table_body_schema = TableBodySchema()
give_time_schema = GiveTimeSchema()
