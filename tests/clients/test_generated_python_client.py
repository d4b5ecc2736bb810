"""A Python client generated from openapi.yaml by openapi-python-client (a generator nobody
here wrote) builds without a warning and plays a whole game against a bot on its own, with
typed answers, headers and events; so the contract cannot drift from what such a client can do.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from tests.support.gunicorn_process import GunicornProcess

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "referee_client"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The package openapi-python-client generates from openapi.yaml, imported."""
    folder = tmp_path_factory.mktemp("generated")
    result = subprocess.run(
        [
            str(BIN / "openapi-python-client"),
            "generate",
            "--path",
            str(ROOT / "openapi.yaml"),
            "--meta",
            "none",
            "--config",
            str(Path(__file__).with_name("openapi-python-client.yaml")),
            "--output-path",
            str(folder / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        # Its post-generation hook runs ruff from PATH: the one this venv pins.
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    assert "error" not in output.lower(), output
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


class Api:
    """The generated modules by name: ``api.play.sync_detailed(...)``, ``api.m.TableBody``."""

    def __init__(self) -> None:
        self.m = importlib.import_module(f"{PACKAGE}.models")
        self.types = importlib.import_module(f"{PACKAGE}.types")
        self.client_module = importlib.import_module(f"{PACKAGE}.client")

    def __getattr__(self, name: str) -> Any:
        for tag in ("matches", "meld", "operations"):
            try:
                return importlib.import_module(f"{PACKAGE}.api.{tag}.{name}")
            except ModuleNotFoundError:
                continue
        raise AttributeError(name)


def test_the_generated_client_plays_a_whole_game_against_a_bot(
    generated: ModuleType, web: GunicornProcess
) -> None:
    api = Api()
    m = api.m
    anonymous = api.client_module.Client(base_url=web.url, raise_on_unexpected_status=True)

    # Create: only the rule it sets travels; every other rule is the server's default.
    body = m.CreateMatch(
        players=[m.PlayerRequest(name="Ann"), m.PlayerRequest(name="Bot", bot=True)],
        rules=m.RuleOptions(turn_seconds=0),
        setup=m.Setup(
            racks=[["R10", "B10", "K10", "O3", "O4"], ["K1", "K2", "K3", "O9", "O9"]],
            pool=["B7", "O5", "R2", "K8"],
            first_seat=0,
        ),
    )
    assert body.to_dict()["rules"] == {"turn_seconds": 0}
    created = api.create_match.sync_detailed(client=anonymous, body=body)
    assert created.status_code == 201
    assert created.headers["location"].endswith(created.parsed.id)
    assert isinstance(created.parsed, m.CreatedMatch)
    match_id, (ann_seat, bot_seat) = created.parsed.id, created.parsed.seats
    assert (ann_seat.name, bot_seat.bot) == ("Ann", True)
    rules = created.parsed.match.rules
    assert (rules.turn_seconds, rules.initial_meld_points, rules.tile_set.value) == (
        0,
        30,
        "standard",
    )
    ann = api.client_module.AuthenticatedClient(
        base_url=web.url, token=ann_seat.token, raise_on_unexpected_status=True
    )

    # View, with the ETag; the same version again is a 304.
    viewed = api.get_match.sync_detailed(match_id, client=ann)
    view = viewed.parsed
    assert isinstance(view, m.MatchView)
    assert viewed.headers["etag"] == f'"{view.version}"'
    assert view.rack == ["R10", "B10", "K10", "O3", "O4"]
    assert view.status.value == "playing" and view.current_seat == 0
    unchanged = api.get_match.sync_detailed(
        match_id, client=ann, if_none_match=viewed.headers["etag"]
    )
    assert unchanged.status_code == 304

    # A refused play: typed violations, each with its stable code.
    refused = api.play.sync_detailed(
        match_id, client=ann, body=m.TableBody(table=[["R10", "B10", "O3"]])
    )
    assert refused.status_code == 422
    assert isinstance(refused.parsed, m.Problem)
    codes = [violation.code for violation in refused.parsed.violations]
    assert codes == ["not_a_run_or_group", "initial_meld_below_threshold"], codes
    assert all(isinstance(v, m.Violation) and v.message for v in refused.parsed.violations)
    below = refused.parsed.violations[1]
    assert (below.params.points, below.params.threshold, below.params.invalid_sets) == (0, 30, True)
    spanish = api.play.sync_detailed(
        match_id,
        client=ann.with_headers({"Accept-Language": "es"}),
        body=m.TableBody(table=[["R10", "B10", "O3"]]),
    )
    assert spanish.headers["content-language"] == "es"
    assert spanish.parsed.violations[1].message.startswith("tu bajada inicial vale 0 puntos")

    # A draft, then the initial meld guarded by the version and an idempotency key; the bot
    # cannot meld 30 with K1 K2 K3, so it draws at once and the turn comes back to Ann.
    drafted = api.put_draft.sync_detailed(
        match_id, client=ann, body=m.TableBody(table=[["R10", "B10", "K10"]])
    )
    assert drafted.status_code == 200 and drafted.parsed.match.draft == [["R10", "B10", "K10"]]
    # The same draft with the short answer (Prefer: return=minimal): 204, the version only.
    short = api.put_draft.sync_detailed(
        match_id,
        client=ann,
        body=m.TableBody(table=[["R10", "B10", "K10"]]),
        if_match=drafted.headers["etag"],
        prefer="return=minimal",
    )
    assert (short.status_code, short.parsed) == (204, None)
    assert short.headers["preference-applied"] == "return=minimal"
    assert int(short.headers["etag"].strip('"')) == drafted.parsed.match.version + 1
    etag = short.headers["etag"]
    meld = m.TableBody(table=[["R10", "B10", "K10"]])
    played = api.play.sync_detailed(
        match_id, client=ann, body=meld, if_match=etag, idempotency_key="ann-turn-1"
    )
    assert played.status_code == 200 and "idempotent-replayed" not in played.headers
    replayed = api.play.sync_detailed(
        match_id, client=ann, body=meld, if_match=etag, idempotency_key="ann-turn-1"
    )
    assert replayed.headers["idempotent-replayed"] == "true"
    assert replayed.parsed.match.version == played.parsed.match.version
    assert played.parsed.match.current_seat == 0
    assert played.parsed.match.rack == ["O3", "O4"]

    # Draw: only Ann sees what she drew (the bot drew B7 before her).
    drew = api.draw.sync_detailed(match_id, client=ann)
    assert drew.status_code == 200 and drew.parsed.drawn == ["O5"]

    # The bot drew again; the hint finds O3 O4 O5 and Ann plays it: she is out.
    hint = api.get_hint.sync(match_id, client=ann)
    assert isinstance(hint, m.Hint)
    assert (hint.status.value, hint.placed) == ("play_found", ["O3", "O4", "O5"])
    out = api.play.sync(match_id, client=ann, body=m.TableBody(table=hint.table))
    assert isinstance(out, m.MoveResult)
    assert out.match.status.value == "game_over"
    outcome = out.match.last_outcome
    assert (outcome.winner, outcome.reason.value) == (0, "went_out")

    # Events: typed by their type, with typed data.
    page = api.list_events.sync(match_id, client=anonymous, limit=500)
    assert isinstance(page, m.EventPage)
    kinds = [type(event).__name__ for event in page.events]
    assert kinds == [
        "MatchCreatedEvent",
        "GameStartedEvent",
        "DraftUpdatedEvent",
        "DraftUpdatedEvent",  # the same draft again, with the short answer
        "PlayedEvent",
        "DrewEvent",
        "DrewEvent",
        "DrewEvent",
        "PlayedEvent",
        "GameOverEvent",
    ], kinds
    meld_event, last = page.events[4], page.events[-1]
    assert meld_event.data.added == ["R10", "B10", "K10"] and meld_event.data.next_seat == 1
    assert last.data.scores == list(outcome.scores)
    assert [event.version for event in page.events] == list(range(1, out.match.version + 1))

    # The same events over Server-Sent Events, read with httpx-sse on the client's own httpx
    # client and parsed by the generated models.
    streamed = []
    url = f"/v1/matches/{match_id}/stream"
    with connect_sse(anonymous.get_httpx_client(), "GET", url) as source:
        for message in source.iter_sse():
            if not message.data:  # the opening `retry:`
                continue
            (event,) = m.EventPage.from_dict({"events": [json.loads(message.data)]}).events
            streamed.append(event)
            if event.version == out.match.version:
                break
    assert [e.to_dict() for e in streamed] == [e.to_dict() for e in page.events]

    # The next game: dealt, and Ann's turn or the bot's by the rotation.
    following = api.next_game.sync_detailed(match_id, client=ann)
    assert following.status_code == 200
    assert following.parsed.match.game_number == 2
    assert len(following.parsed.match.rack) >= 14


def test_the_generated_stream_call_returns_a_finished_match_as_text_it_can_parse(
    generated: ModuleType, web: GunicornProcess
) -> None:
    api = Api()
    m = api.m
    anonymous = api.client_module.Client(base_url=web.url)
    body = m.CreateMatch(
        players=[m.PlayerRequest(name="Ann"), m.PlayerRequest(name="Bo")],
        rules=m.RuleOptions(turn_seconds=0, target_score=1),
        setup=m.Setup(racks=[["R10", "R11", "R12", "R13"], ["K1"]], first_seat=0),
    )
    created = api.create_match.sync(client=anonymous, body=body)
    ann = api.client_module.AuthenticatedClient(base_url=web.url, token=created.seats[0].token)
    table = m.TableBody(table=[["R10", "R11", "R12", "R13"]])
    finished = api.play.sync(created.id, client=ann, body=table)
    assert finished.match.status.value == "finished"

    text = api.stream_events.sync(created.id, client=anonymous)
    assert isinstance(text, str)
    events = [
        m.EventPage.from_dict({"events": [json.loads(line[len("data: ") :])]}).events[0]
        for line in text.splitlines()
        if line.startswith("data: ")
    ]
    assert type(events[-1]).__name__ == "MatchFinishedEvent"
    assert events[-1].data.winner == 0

    with pytest.raises(httpx.ReadTimeout):  # a live match's stream does not end: use SSE
        playing = api.create_match.sync(
            client=anonymous, body=m.CreateMatch(players=[m.PlayerRequest(name="A")] * 2)
        )
        api.stream_events.sync(
            playing.id,
            client=api.client_module.Client(
                base_url=web.url, timeout=httpx.Timeout(1.0, connect=30.0)
            ),
        )


def test_the_generated_client_reads_the_contract_and_checks_melds(
    generated: ModuleType, web: GunicornProcess
) -> None:
    api = Api()
    anonymous = api.client_module.Client(base_url=web.url)
    assert api.get_openapi.sync(client=anonymous).startswith("openapi: 3.1")
    result = api.meld_check.sync(
        client=anonymous, body=api.m.MeldCheckRequest(sets=[["R11", "J", "R13"], ["R1", "K2"]])
    )
    valid, invalid = result.sets
    assert (valid.kind.value, valid.points, valid.jokers) == ("run", 36, ["R12"])
    assert (invalid.valid, invalid.kind) == (False, None)
