"""Game records over HTTP: export (JSON and text), positions, verification, starting from a
record, and an app's archive (issue 34, docs/RECORD-FORMAT.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from service import record
from tests.api.matchclient import Seat, create
from tests.support.records import check_every_finished_game

MOBILE = "mobile-key-" + "m" * 20
PARTNER = "partner-key-" + "p" * 20


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": f"mobile={MOBILE},partner={PARTNER}"}


def finished(client: Any, *, seed: int = 7, key: str | None = None) -> tuple[dict, list[Seat]]:
    """A dealt game (seeded) between two humans and two bots, played to its end by letting
    the humans' turns run out (the test-mode clock): timeouts, bot plays, draws, passes."""
    headers = {"X-API-Key": key} if key else {}
    body = {
        "players": [
            {"name": "Ann", **({"ref": "u-ann"} if key else {})},
            {"name": "Bot", "bot": True},
            {"name": "Bo"},
            {"name": "Cy", "bot": True},
        ],
        "rules": {"turn_seconds": 60},
        "seed": seed,
    }
    response = client.post("/v1/matches", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    seats = [Seat(client, created["id"], s["seat"], s["token"]) for s in created["seats"]]
    advanced = client.post(f"/v1/matches/{created['id']}/clock", json={"advance": 500_000})
    assert advanced.status_code == 200, advanced.get_json()
    assert advanced.get_json()["status"] != "playing"
    return created, seats


def record_url(match_id: str, game: int = 1) -> str:
    return f"/v1/matches/{match_id}/games/{game}/record"


def test_a_finished_game_exports_a_record_that_verifies_with_its_scores(client) -> None:
    created, _ = finished(client)
    view = client.get(f"/v1/matches/{created['id']}").get_json()
    answer = client.get(record_url(created["id"]))
    assert answer.status_code == 200 and answer.mimetype == "application/json"
    exported = answer.get_json()
    assert exported["format"] == "rummikub-record/1"
    assert exported["result"]["scores"] == view["last_outcome"]["scores"]
    assert {turn["by"] for turn in exported["turns"]} >= {"bot", "referee"}
    assert "?" not in json.dumps(exported)  # the game is over: nothing is hidden
    verdict = client.post("/v1/records/verify", json=exported)
    assert verdict.status_code == 200
    assert verdict.get_json() == {"valid": True, "result": exported["result"]}


def test_the_text_form_is_served_by_accept_and_verifies_the_same(client) -> None:
    created, _ = finished(client)
    answer = client.get(record_url(created["id"]), headers={"Accept": "text/plain"})
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "text/plain; charset=utf-8"
    text = answer.get_data(as_text=True)
    assert text.splitlines()[0] == "rummikub-record/1"
    exported = client.get(record_url(created["id"])).get_json()
    assert record.to_json(record.from_text(text)) == exported
    verdict = client.post(
        "/v1/records/verify",
        data=text.encode(),
        headers={"Content-Type": "text/plain; charset=utf-8"},
    )
    assert verdict.get_json() == {"valid": True, "result": exported["result"]}


def test_the_suites_check_of_finished_games_finds_them(app, client, redis_url) -> None:
    finished(client, seed=1)
    finished(client, seed=2)
    assert check_every_finished_game(app, redis_url) == 2


def test_a_changed_turn_is_named_by_the_verifier(client) -> None:
    created, _ = finished(client)
    exported = client.get(record_url(created["id"])).get_json()
    index = next(i for i, turn in enumerate(exported["turns"]) if turn["action"] == "draw")
    exported["turns"][index]["seat"] = (exported["turns"][index]["seat"] + 1) % 4
    answer = client.post("/v1/records/verify", json=exported).get_json()
    assert (answer["valid"], answer["turn"], answer["part"]) == (False, index + 1, "turn")
    assert [v["code"] for v in answer["violations"]] == ["not_your_turn"]
    spanish = client.post("/v1/records/verify", json=exported, headers={"Accept-Language": "es"})
    assert spanish.headers["Content-Language"] == "es"
    said = spanish.get_json()["violations"][0]["message"]
    assert (
        said.startswith("era el turno del asiento") and said != answer["violations"][0]["message"]
    )


def test_during_the_game_only_the_public_part_and_the_seats_own_tiles_are_shown(client) -> None:
    created, seats = create(client, "Ann", "Bo", rules={"turn_seconds": 60}, seed=3)
    first = created["match"]["current_seat"]
    seats[first].draw()
    seats[1 - first].draw()
    public = client.get(record_url(created["id"])).get_json()
    assert public["result"] is None
    assert set(public["deal"]["pool"]) == {"?"}
    assert all(set(rack) == {"?"} for rack in public["deal"]["racks"])
    assert [turn["drawn"] for turn in public["turns"]] == [["?"], ["?"]]
    own = client.get(record_url(created["id"]), headers=seats[first].auth).get_json()
    assert "?" not in own["deal"]["racks"][first] and set(own["deal"]["racks"][1 - first]) == {"?"}
    assert own["turns"][0]["drawn"] != ["?"] and own["turns"][1]["drawn"] == ["?"]
    assert own["turns"][0]["drawn"][0] in seats[first].rack()
    refused = client.post("/v1/records/verify", json=own)
    assert refused.status_code == 400
    assert refused.get_json()["type"].endswith("record-incomplete")


def test_refs_are_shown_to_the_owning_app_only(client) -> None:
    created, _ = finished(client, key=MOBILE)
    url = record_url(created["id"])
    owner = client.get(url, headers={"X-API-Key": MOBILE}).get_json()
    assert owner["players"][0]["ref"] == "u-ann"
    for headers in ({}, {"X-API-Key": PARTNER}):
        assert "ref" not in client.get(url, headers=headers).get_json()["players"][0]


def test_a_game_that_does_not_exist_is_a_404(client) -> None:
    created, _ = finished(client)
    for url in (record_url(created["id"], 2), record_url("nope")):
        answer = client.get(url)
        assert answer.status_code == 404
    position = client.get(f"/v1/matches/{created['id']}/games/1/position?turn=4999")
    assert position.get_json()["type"].endswith("turn-not-found")


def test_the_position_after_each_turn_is_the_view_the_players_saw(client) -> None:
    created, seats = create(client, "Ann", "Bo", "Cy", rules={"turn_seconds": 0}, seed=5)
    match_id = created["id"]
    seen = []
    for _ in range(9):
        view = client.get(f"/v1/matches/{match_id}").get_json()
        seen.append(view)
        seat = seats[view["current_seat"]]
        hint = client.get(f"/v1/matches/{match_id}/hint", headers=seat.auth).get_json()
        if hint["table"] is not None:
            assert seat.play(*(" ".join(s) for s in hint["table"])).status_code == 200
        else:
            assert seat.draw().status_code == 200
    for turn, view in enumerate(seen):
        position = client.get(f"/v1/matches/{match_id}/games/1/position?turn={turn}").get_json()
        assert position["table"] == view["table"]
        assert position["pool_count"] == view["pool_count"]
        assert position["current_seat"] == view["current_seat"]
        keys = ("seat", "name", "rack_count", "melded", "score")
        assert [{k: p[k] for k in keys} for p in position["players"]] == [
            {k: p[k] for k in keys} for p in view["players"]
        ]
        assert all("rack" not in p for p in position["players"])  # the game is on


def test_a_finished_games_positions_show_every_rack(client) -> None:
    created, _ = finished(client)
    exported = client.get(record_url(created["id"])).get_json()
    url = f"/v1/matches/{created['id']}/games/1/position"
    dealt = client.get(f"{url}?turn=0").get_json()
    assert [sorted(p["rack"]) for p in dealt["players"]] == [
        sorted(rack) for rack in exported["deal"]["racks"]
    ]
    last = client.get(f"{url}?turn={len(exported['turns'])}").get_json()
    assert last["result"] == exported["result"] and last["current_seat"] is None
    assert client.get(f"{url}?turn=-1").status_code == 400


def test_the_verifier_takes_bodies_up_to_one_mebibyte_whatever_the_limit_elsewhere(
    client,
) -> None:
    created, _ = finished(client)
    exported = client.get(record_url(created["id"])).get_json()
    padded = json.dumps(exported).encode() + b" " * (200 * 1024)
    answer = client.post("/v1/records/verify", data=padded, content_type="application/json")
    assert answer.status_code == 200 and answer.get_json()["valid"]
    elsewhere = client.post("/v1/meld-check", data=b'{"sets": []}' + b" " * (200 * 1024),
                            content_type="application/json")  # fmt: skip
    assert elsewhere.status_code == 413
    huge = json.dumps(exported).encode() + b" " * (1024 * 1024)
    assert (
        client.post("/v1/records/verify", data=huge, content_type="application/json").status_code
        == 413
    )


@pytest.mark.parametrize(
    ("body", "content_type", "status", "kind"),
    [
        (b'{"format": "rummikub-record/2"}', "application/json", 400, "record-malformed"),
        (b"[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]", "application/json", 400, None),
        (b"not a record", "text/plain", 400, "record-malformed"),
        (b"\xff\xfe", "text/plain", 400, None),
        (b"<record/>", "application/xml", 415, None),
        (b"", "application/json", 400, None),
    ],
)
def test_a_body_that_is_no_record_is_refused_cleanly(
    client, body: bytes, content_type: str, status: int, kind: str | None
) -> None:
    answer = client.post("/v1/records/verify", data=body, content_type=content_type)
    assert answer.status_code == status
    if kind:
        assert answer.get_json()["type"].endswith(kind)


def test_a_match_can_start_from_any_turn_of_a_record(client) -> None:
    created, _ = finished(client)
    exported = client.get(record_url(created["id"])).get_json()
    humans = [p["seat"] for p in exported["players"] if not p["bot"]]
    half = len(exported["turns"]) // 2
    turn = next(
        n for n in range(half, len(exported["turns"])) if exported["turns"][n]["seat"] in humans
    )
    position = client.get(f"/v1/matches/{created['id']}/games/1/position?turn={turn}").get_json()
    answer = client.post("/v1/matches", json={"from_record": {"record": exported, "turn": turn}})
    assert answer.status_code == 201, answer.get_json()
    match = answer.get_json()["match"]
    assert match["table"] == position["table"] and match["pool_count"] == position["pool_count"]
    assert [p["rack_count"] for p in match["players"]] == [
        p["rack_count"] for p in position["players"]
    ]
    text = client.get(record_url(created["id"]), headers={"Accept": "text/plain"}).get_data(True)
    from_text = client.post("/v1/matches", json={"from_record": {"record": text, "turn": 0}})
    assert from_text.status_code == 201
    over = client.post(
        "/v1/matches", json={"from_record": {"record": exported, "turn": len(exported["turns"])}}
    )
    assert over.status_code == 400


@pytest.mark.parametrize("app_overrides", [{"test_mode": False}])
def test_starting_from_a_record_is_a_test_feature(client) -> None:
    body = {"from_record": {"record": {"format": "rummikub-record/1"}, "turn": 0}}
    answer = client.post("/v1/matches", json=body)
    assert answer.status_code == 400
    assert "from_record" in json.dumps(answer.get_json()["errors"])


def test_the_archive_holds_the_apps_finished_games_and_no_other_apps(client) -> None:
    mine = {finished(client, key=MOBILE, seed=seed)[0]["id"] for seed in (1, 2)}
    theirs = finished(client, key=PARTNER, seed=3)[0]["id"]
    finished(client, seed=4)  # anonymous
    lines = []
    url: str | None = "/v1/records?limit=1"
    pages = 0
    while url is not None:
        answer = client.get(url, headers={"X-API-Key": MOBILE})
        assert answer.status_code == 200 and answer.mimetype == "application/x-ndjson"
        lines += [json.loads(line) for line in answer.get_data(as_text=True).splitlines()]
        url = answer.headers.get("Link", "").partition(">")[0].lstrip("<") or None
        pages += 1
    assert pages == 2
    assert {line["match_id"] for line in lines} == mine and theirs not in mine
    assert all(line["players"][0]["ref"] == "u-ann" for line in lines)
    assert all(record.verify(record.from_json(line)).valid for line in lines)
    later = client.get("/v1/records?since=99999999999", headers={"X-API-Key": MOBILE})
    assert later.status_code == 200 and later.get_data() == b""
    assert client.get("/v1/records").status_code == 401


def test_each_game_of_a_match_has_its_own_record(client) -> None:
    created, seats = finished(client)
    match_id = created["id"]
    assert (
        client.post(f"/v1/matches/{match_id}/next-game", headers=seats[0].auth).status_code == 200
    )
    advanced = client.post(f"/v1/matches/{match_id}/clock", json={"advance": 500_000})
    assert advanced.get_json()["game_number"] == 2 and advanced.get_json()["status"] != "playing"
    first, second = (client.get(record_url(match_id, n)).get_json() for n in (1, 2))
    assert second["game_number"] == 2 and second["first_player_draw"] is None
    assert second["first_seat"] == (first["first_seat"] + 1) % 4
    assert second["deal"]["pool"] != first["deal"]["pool"]
    for each in (first, second):
        assert client.post("/v1/records/verify", json=each).get_json()["valid"]
    events = client.get(f"/v1/matches/{match_id}/events?limit=500").get_json()["events"]
    overs = [event["data"] for event in events if event["type"] == "game_over"]
    assert [over["deal"]["pool"] for over in overs] == [
        first["deal"]["pool"],
        second["deal"]["pool"],
    ]


@pytest.mark.parametrize(
    "app_overrides",
    [{"test_mode": False, "api_keys": f"mobile={MOBILE}", "sandbox_keys": f"sand={PARTNER}"}],
)
def test_a_sandbox_app_and_a_live_one_never_see_each_others_records(client) -> None:
    body = {"players": [{"name": "Ann"}, {"name": "Bo", "bot": True}], "rules": {"turn_seconds": 0}}
    live = client.post("/v1/matches", json=body, headers={"X-API-Key": MOBILE}).get_json()["id"]
    sandbox = client.post("/v1/matches", json=body, headers={"X-API-Key": PARTNER}).get_json()["id"]
    for match_id, other in ((live, PARTNER), (sandbox, MOBILE)):
        assert client.get(record_url(match_id), headers={"X-API-Key": other}).status_code == 404
        position = f"/v1/matches/{match_id}/games/1/position?turn=0"
        assert client.get(position, headers={"X-API-Key": other}).status_code == 404
        assert client.get(record_url(match_id)).status_code == 200  # no key: as the view
