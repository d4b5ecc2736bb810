"""The match state machine stays pure, and its public names stay put."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import service.game

GAME = Path(service.game.__file__).parent


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
    return modules


def test_the_game_package_imports_only_the_standard_library_and_the_rules() -> None:
    for path in sorted(GAME.glob("*.py")):
        for module in imported_modules(path):
            top = module.split(".")[0]
            allowed = top in sys.stdlib_module_names or module.startswith(
                ("service.rules", "service.game")
            )
            assert allowed, f"{path.name} imports {module}"


def test_the_public_names_of_the_game_package_are_pinned() -> None:
    assert sorted(service.game.__all__) == sorted(
        [
            "Autoplay",
            "BadTimeGift",
            "MAX_GIFT_SECONDS",
            "RedealRefused",
            "RuleNotInForce",
            "give_time",
            "redeal",
            "time_left",
            "advance",
            "advance_clock",
            "FORMAT",
            "HAND_SIZE",
            "BadSetup",
            "CanPlay",
            "DeadlinePassed",
            "Ending",
            "Event",
            "EventType",
            "GameError",
            "GameResult",
            "InvalidMatch",
            "MAX_REF_LENGTH",
            "MAX_TURN_SECONDS",
            "Match",
            "MatchCanceled",
            "NobodyToRematch",
            "MatchDecodeError",
            "NotYourTurn",
            "PassRefused",
            "Player",
            "PlayerSpec",
            "PoolEmpty",
            "PoolNotEmpty",
            "SeatIsBot",
            "SeatReissued",
            "Setup",
            "Status",
            "Table",
            "Transition",
            "UnknownSeat",
            "WrongPhase",
            "cancel",
            "draft_changes_table",
            "draw",
            "event_from_dict",
            "event_to_dict",
            "from_dict",
            "from_setup",
            "leave",
            "match_winner",
            "new_match",
            "next_game",
            "owner_view",
            "pass_turn",
            "play",
            "private_view",
            "public_view",
            "record_rematch",
            "reissue_tokens",
            "rematch",
            "rematch_players",
            "require_human",
            "rules_from_dict",
            "rules_to_dict",
            "save_draft",
            "settle",
            "stalemate_if_nobody_can_play",
            "summary",
            "to_dict",
        ]
    )
    for name in service.game.__all__:
        assert hasattr(service.game, name)


def test_every_error_has_a_stable_kind() -> None:
    kinds = {
        getattr(service.game, name).kind
        for name in service.game.__all__
        if isinstance(getattr(service.game, name), type)
        and issubclass(getattr(service.game, name), Exception)
    }
    assert kinds == {
        "game-error",
        "invalid-match",
        "bad-setup",
        "unknown-seat",
        "not-your-turn",
        "wrong-phase",
        "deadline-passed",
        "pool-empty",
        "pool-not-empty",
        "pass-refused",
        "corrupt-state",
        "match-canceled",
        "nobody-to-rematch",
        "seat-is-bot",
        "seat-reissued",
        "redeal-refused",
        "rule-not-in-force",
        "bad-time-gift",
    }


def test_event_types_keep_their_stable_values() -> None:
    from service.game import EventType

    assert [event_type.value for event_type in EventType] == [
        "match_created",
        "first_player_draw",
        "game_started",
        "played",
        "drew",
        "draft_updated",
        "turn_timed_out",
        "passed",
        "game_over",
        "match_finished",
        "player_left",
        "match_canceled",
        "rematch_created",
        "tokens_reissued",
        "clock_advanced",
        "flag_fell",
        "time_given",
        "redealt",
    ]
