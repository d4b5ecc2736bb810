"""Matches over HTTP: SPEC section 1's turn rules and section 2's contract, against real Redis."""

from __future__ import annotations

import threading
import time

import pytest

from service import fanout as fanout_module
from tests.api.matchclient import Seat, create, full_box, setup, stored_tiles
from tests.support.sockets import SAFETY, wait_for

pytestmark = pytest.mark.usefixtures("redis_url")


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


# Creating and dealing.


def test_a_new_match_deals_14_tiles_to_each_seat_and_keeps_the_rest_in_the_pool(
    client, redis_client
) -> None:
    created, seats = create(client, "Ann", "Bo", "Cy")
    match = created["match"]
    assert [p["rack_count"] for p in match["players"]] == [14, 14, 14]
    assert match["pool_count"] == 106 - 42
    assert match["status"] == "playing" and match["game_number"] == 1
    assert all(len(seat.rack()) == 14 for seat in seats)
    assert stored_tiles(redis_client, created["id"]) == full_box()


def test_creating_answers_201_with_a_location_an_etag_and_one_token_per_seat(client) -> None:
    response = client.post("/v1/matches", json={"players": [{"name": "Ann"}, {"name": "Bo"}]})
    body = response.get_json()
    assert response.status_code == 201
    assert response.headers["Location"] == f"/v1/matches/{body['id']}"
    assert response.headers["ETag"] == f'"{body["match"]["version"]}"'
    assert len({seat["token"] for seat in body["seats"]}) == 2


def test_the_first_player_draw_is_recorded_and_decides_who_starts(client) -> None:
    created, _ = create(client, "Ann", "Bo", "Cy", "Di")
    events = client.get(f"/v1/matches/{created['id']}/events").get_json()["events"]
    draw = next(e for e in events if e["type"] == "first_player_draw")
    last_round = draw["data"]["rounds"][-1]
    numbers = {d["seat"]: int(d["tiles"][-1][1:]) for d in last_round}
    best = max(numbers.values())
    assert [seat for seat, n in numbers.items() if n == best] == [draw["data"]["first_seat"]]
    assert created["match"]["current_seat"] == draw["data"]["first_seat"]


def test_five_or_six_players_need_the_xp_set(client) -> None:
    players = [{"name": f"P{i}"} for i in range(5)]
    refused = client.post("/v1/matches", json={"players": players})
    assert refused.status_code == 422
    created, _ = create(client, *[f"P{i}" for i in range(6)], rules={"tile_set": "xp"})
    assert created["match"]["pool_count"] == 160 - 6 * 14


@pytest.mark.parametrize(
    "body",
    [
        {"players": [{"name": "Solo"}]},
        {"players": [{"name": f"P{i}"} for i in range(7)]},
        {"players": [{"name": ""}, {"name": "Bo"}]},
        {"players": [{"name": "A"}, {"name": "B"}], "rules": {"turn_seconds": -1}},
        {"players": [{"name": "A"}, {"name": "B"}], "rules": {"tile_set": "huge"}},
        {"players": [{"name": "A"}, {"name": "B"}], "rules": {"no_such_option": 1}},
        {"players": [{"name": "A"}, {"name": "B"}], "rules": {"failed_turn_penalty": 2}},
        {"players": [{"name": "A"}, {"name": "B"}], "rules": {"failed_turn_penalty": 0}},
        {"players": [{"name": "A"}, {"name": "B"}], "rules": {"failed_turn_penalty": "1"}},
        {"players": [{"name": "A"}, {"name": "B"}], "rules": {"failed_turn_penalty": None}},
        {"players": "Ann and Bo"},
        {},
    ],
)
def test_a_bad_match_request_is_a_400_problem(client, body: dict) -> None:
    response = client.post("/v1/matches", json=body)
    assert response.status_code == 400
    assert response.content_type == "application/problem+json"


def test_a_name_that_is_not_unicode_text_is_a_400(client) -> None:
    # Python's json reads the escape of a lone surrogate; it is no character a client can show.
    body = '{"players": [{"name": "Ann\\ud800"}, {"name": "Bo"}]}'
    response = client.post("/v1/matches", data=body, content_type="application/json")
    assert response.status_code == 400
    assert "Unicode" in response.get_data(as_text=True)


def test_names_in_any_script_come_back_as_sent_in_views_and_events(client) -> None:
    names = ["Åsa Ström", "玩家一", "Dealer 🀄"]
    created, seats = create(client, *names)
    assert [seat["name"] for seat in created["seats"]] == names
    assert [player["name"] for player in seats[1].view().get_json()["players"]] == names
    events = client.get(f"/v1/matches/{created['id']}/events").get_json()["events"]
    assert names[2] in client.get(f"/v1/matches/{created['id']}/events").get_data(as_text=True)
    assert events[0]["type"] == "match_created"


def test_the_same_seed_deals_the_same_racks(client) -> None:
    racks = []
    for _ in range(2):
        _, seats = create(client, "Ann", "Bo", seed=7)
        racks.append([seat.rack() for seat in seats])
    assert racks[0] == racks[1]


def test_a_setup_with_more_copies_than_the_box_holds_is_refused(client) -> None:
    body = {"players": [{"name": "A"}, {"name": "B"}], "setup": {"racks": [["R1", "R1"], ["R1"]]}}
    response = client.post("/v1/matches", json=body)
    assert response.status_code == 422
    assert "R1" in response.get_json()["detail"]


@pytest.mark.parametrize("app_overrides", [{"test_mode": False}])
def test_seed_and_setup_are_refused_outside_test_mode(client) -> None:
    for extra in ({"seed": 1}, {"setup": {"racks": [["R1"], ["R2"]]}}):
        body = {"players": [{"name": "A"}, {"name": "B"}], **extra}
        response = client.post("/v1/matches", json=body)
        assert response.status_code == 400
        assert "test mode" in response.get_json()["detail"]


# Views.


def test_the_public_view_has_no_rack_and_a_token_adds_only_that_seats_rack(client) -> None:
    created, seats = setup(client, ["R1 R2 R3", "K7 K8 K9"], pool="O1 O2")
    public = client.get(f"/v1/matches/{created['id']}").get_json()
    assert "rack" not in public
    mine = seats[1].view().get_json()
    assert (mine["seat"], mine["rack"]) == (1, ["K7", "K8", "K9"])


def test_an_unchanged_match_answers_304_to_its_etag(client) -> None:
    _, seats = setup(client, ["R1 R2 R3", "K7 K8 K9"], pool="O1 O2")
    etag = seats[0].view().headers["ETag"]
    assert seats[0].view(**{"If-None-Match": etag}).status_code == 304
    seats[0].draw()
    assert seats[0].view(**{"If-None-Match": etag}).status_code == 200


def test_every_view_has_the_deadline_and_the_server_clock(client) -> None:
    _, seats = setup(client, ["R1 R2 R3", "K7 K8 K9"], pool="O1", rules={"turn_seconds": 60})
    view = seats[0].view().get_json()
    assert view["turn_deadline"] == pytest.approx(view["turn_started"] + 60)
    assert view["turn_started"] <= view["server_time"] < view["turn_deadline"]
    _, seats = setup(client, ["R1 R2 R3", "K7 K8 K9"], pool="O1", rules={"turn_seconds": 0})
    assert seats[0].view().get_json()["turn_deadline"] is None


# Turns.


def test_an_initial_meld_of_30_from_the_rack_is_played_and_the_turn_passes_on(client) -> None:
    _, (ann, _bo) = setup(client, ["R10 B10 K10 O1", "K7 K8 K9"], pool="O2 O3")
    response = ann.play("R10 B10 K10")
    assert response.status_code == 200
    view = response.get_json()["match"]
    assert view["table"] == [["R10", "B10", "K10"]]
    assert view["rack"] == ["O1"]
    assert view["players"][0]["melded"] is True
    assert view["current_seat"] == 1


def test_a_refused_play_lists_every_reason_and_changes_nothing(client) -> None:
    _, (ann, _) = setup(client, ["R9 B9 K9 R12 R13 J", "K7 K8 K9"], pool="O2 O3")
    before = ann.view().get_json()
    response = ann.play("R9 B9 K9", "R12 R13 J")
    problem = response.get_json()
    assert response.status_code == 422
    assert problem["type"].endswith(":illegal-play")
    codes = [v["code"] for v in problem["violations"]]
    assert codes == ["joker_out_of_range", "initial_meld_below_threshold"]
    assert problem["violations"][0]["message"].startswith("set 2 (R12 R13 J): a joker cannot")
    after = ann.view().get_json()
    assert {**after, "server_time": None} == {**before, "server_time": None}


def test_after_the_initial_meld_a_player_may_rearrange_the_table(client) -> None:
    _, (ann, _) = setup(
        client, ["B8 O1", "K7 K8 K9"], pool="O2", table=["B6 B7 B8 B9 B10"], melded=[True, True]
    )
    response = ann.play("B6 B7 B8", "B8 B9 B10")
    assert response.status_code == 200
    assert response.get_json()["match"]["table"] == [["B6", "B7", "B8"], ["B8", "B9", "B10"]]


def test_before_the_initial_meld_the_table_cannot_be_touched(client) -> None:
    _, (ann, _) = setup(client, ["B11 B12 B13 O1", "K7"], pool="O2", table=["B8 B9 B10"])
    response = ann.play("B8 B9 B10 B11 B12 B13")
    assert response.status_code == 422
    assert [v["code"] for v in response.get_json()["violations"]] == [
        "table_changed_before_initial_meld"
    ]


def test_a_freed_joker_must_stay_on_the_table(client) -> None:
    _, (ann, _) = setup(client, ["B5 O1", "K7"], pool="O2", table=["B3 B4 J"], melded=[True, False])
    response = ann.play("B3 B4 B5")
    assert [v["code"] for v in response.get_json()["violations"]] == ["joker_left_table"]


def test_playing_out_of_turn_is_a_409(client) -> None:
    _, (_, bo) = setup(client, ["R1", "K7 K8 K9"], pool="O2")
    for response in (bo.play("K7 K8 K9"), bo.draw(), bo.draft("K7 K8 K9")):
        assert response.status_code == 409
        assert response.get_json()["type"].endswith(":not-your-turn")


def test_drawing_takes_the_next_pool_tile_and_ends_the_turn(client) -> None:
    _, (ann, bo) = setup(client, ["R1", "K7"], pool="O4 B9")
    response = ann.draw()
    assert response.get_json()["drawn"] == ["O4"]
    assert "O4" in response.get_json()["match"]["rack"]
    assert response.get_json()["match"]["current_seat"] == 1
    # The drawn tile cannot be played this turn: the turn is over.
    assert ann.play("O4 O5 O6").status_code == 409
    assert bo.draw().get_json()["drawn"] == ["B9"]


def test_passing_is_refused_while_the_pool_holds_tiles(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4")
    response = ann.pass_()
    assert response.status_code == 409
    assert response.get_json()["type"].endswith(":pool-not-empty")


def test_drawing_from_an_empty_pool_is_refused(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"])
    assert ann.draw().status_code == 409


def test_when_the_solver_proves_nobody_can_play_the_game_ends_at_once(client) -> None:
    created, _ = setup(client, ["R1 R5", "K7 K9"])
    match = created["match"]
    assert match["status"] in ("game_over", "finished")
    outcome = match["last_outcome"]
    assert (outcome["reason"], outcome["ending"], outcome["winner"]) == (
        "stalemate",
        "nobody_can_play",
        0,
    )
    assert outcome["scores"] == [10, -10]


def test_a_pass_is_refused_while_a_legal_play_exists(client) -> None:
    _, (ann, _) = setup(client, ["R10 R11 R12 B1", "K1 K5"])
    response = ann.pass_()
    assert response.status_code == 422
    assert response.get_json()["type"].endswith(":pass-refused")


def test_a_player_who_cannot_play_passes_and_play_goes_on(client) -> None:
    _, (ann, bo) = setup(client, ["R1 R5", "K10 K11 K12 B2"])
    view = ann.pass_().get_json()["match"]
    assert (view["status"], view["current_seat"]) == ("playing", 1)
    assert bo.play("K10 K11 K12").status_code == 200


def test_by_option_the_game_ends_the_moment_the_player_to_move_cannot_play(client) -> None:
    created, _ = setup(
        client, ["R1 R5", "K10 K11 K12 B2"], rules={"stalemate_end": "first_cannot_play"}
    )
    outcome = created["match"]["last_outcome"]
    assert (outcome["ending"], outcome["winner"], sum(outcome["scores"])) == (
        "first_cannot_play",
        0,
        0,
    )


def test_going_out_ends_the_game_and_scores_the_others_racks(client) -> None:
    _, (ann, _bo) = setup(
        client, ["R10 R11 R12", "K7 J"], pool="O2", names=("Ann", "Bo"), rules={"rounds": 1}
    )
    final = ann.play("R10 R11 R12").get_json()["match"]
    assert final["last_outcome"]["reason"] == "went_out"
    assert final["last_outcome"]["scores"] == [37, -37]
    assert [p["score"] for p in final["players"]] == [37, -37]
    assert final["status"] == "game_over"  # 2 players, 1 round: 2 games


def test_next_game_deals_again_and_the_first_seat_moves_on(client, redis_client) -> None:
    created, (ann, bo) = setup(client, ["R10 R11 R12", "K7 J"], pool="O2")
    ann.play("R10 R11 R12")
    assert ann.draw().status_code == 409  # the game is over
    response = bo.next_game()
    view = response.get_json()["match"]
    assert (view["status"], view["game_number"], view["current_seat"]) == ("playing", 2, 1)
    assert [p["rack_count"] for p in view["players"]] == [14, 14]
    assert stored_tiles(redis_client, created["id"]) == full_box()
    assert bo.next_game().status_code == 409


def test_the_match_ends_after_its_games_with_a_winner(client) -> None:
    _, (ann, bo) = setup(client, ["R10 R11 R12", "K7 J"], pool="O2", rules={"target_score": 30})
    final = ann.play("R10 R11 R12").get_json()["match"]
    assert (final["status"], final["winner"]) == ("finished", 0)
    assert bo.next_game().status_code == 409


def test_a_draft_is_visible_to_everyone_and_checked_for_conservation_only(client) -> None:
    created, (ann, _) = setup(client, ["R10 B10 O1", "K7"], pool="O2")
    assert ann.draft("R10 B10").status_code == 200
    public = client.get(f"/v1/matches/{created['id']}").get_json()
    assert public["draft"] == [["R10", "B10"]]
    response = ann.draft("R10 B10 K10")
    assert response.status_code == 422
    assert [v["code"] for v in response.get_json()["violations"]] == ["tiles_not_on_rack"]


def test_prefer_return_minimal_answers_a_move_with_204_and_its_version_only(client) -> None:
    _, (ann, bo) = setup(client, ["R10 B10 O1", "K7"], pool="O2 O3")
    version = ann.view().get_json()["version"]
    drafted = ann.draft("R10 B10", Prefer="return=minimal", **{"If-Match": f'"{version}"'})
    assert drafted.status_code == 204 and drafted.get_data() == b""
    assert "Content-Type" not in drafted.headers  # nothing to type
    assert drafted.headers["Preference-Applied"] == "return=minimal"
    assert drafted.headers["ETag"] == f'"{version + 1}"'
    assert bo.view().get_json()["draft"] == [["R10", "B10"]]  # applied as any draft
    # the ETag is the version to send next; a draw's tile is in the rack afterwards
    drew = ann.draw(Prefer='return="minimal"', **{"If-Match": drafted.headers["ETag"]})
    assert drew.status_code == 204 and drew.headers["ETag"] == f'"{version + 2}"'
    assert "O2" in ann.rack() and bo.view().get_json()["version"] == version + 2
    # a refusal is the same problem either way
    refused = bo.draft("K7 K8", Prefer="return=minimal")
    assert refused.status_code == 422 and refused.headers["Content-Type"].startswith(
        "application/problem+json"
    )


def test_a_moves_answer_is_written_as_jsonify_writes_it_with_its_headers_once(client) -> None:
    from flask import jsonify

    _, (ann, _) = setup(client, ["R10 B10 O1", "K7"], pool="O2")
    drafted = ann.draft("R10 B10")
    body = drafted.get_json()
    with client.application.test_request_context():
        expected = jsonify(body)
    assert drafted.get_data() == expected.get_data()  # orjson's JSON, a final newline
    assert drafted.headers["Content-Type"] == expected.headers["Content-Type"]
    assert drafted.headers.getlist("ETag") == [f'"{body["match"]["version"]}"']
    minimal = ann.draft("R10", Prefer="return=minimal")
    assert minimal.headers.getlist("ETag") == [f'"{body["match"]["version"] + 1}"']
    assert minimal.headers.getlist("Preference-Applied") == ["return=minimal"]
    key = {"Idempotency-Key": "once"}
    ann.draft("B10", **key)
    again = ann.draft("B10", **key)
    assert again.headers.getlist("Idempotent-Replayed") == ["true"]
    assert len(again.headers.getlist("ETag")) == 1


@pytest.mark.parametrize(
    ("prefer", "minimal"),
    [
        ("RETURN=MINIMAL", True),
        ("respond-async, return=minimal; foo=bar", True),
        ("return=representation", False),
        ("handling=lenient", False),
        ("return", False),
        ("", False),
    ],
)
def test_only_a_return_minimal_preference_shortens_the_answer(client, prefer, minimal) -> None:
    _, (ann, _) = setup(client, ["R10 B10 O1", "K7"], pool="O2")
    answer = ann.draft("R10", Prefer=prefer)
    assert answer.status_code == (204 if minimal else 200)
    assert ("Preference-Applied" in answer.headers) is minimal
    if not minimal:
        assert answer.get_json()["match"]["draft"] == [["R10"]]


def test_a_replay_answers_in_the_form_the_retry_asks_for(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4 O5")
    key = {"Idempotency-Key": "draw-short"}
    first = ann.draw(Prefer="return=minimal", **key)
    again = ann.draw(Prefer="return=minimal", **key)
    full = ann.draw(**key)  # the same request without the preference: the kept view
    assert first.status_code == again.status_code == 204
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["ETag"] == first.headers["ETag"] == full.headers["ETag"]
    assert full.status_code == 200 and full.headers["Idempotent-Replayed"] == "true"
    assert full.get_json()["drawn"] == ["O4"] and "O4" in full.get_json()["match"]["rack"]
    assert ann.rack().count("O4") == 1 and "O5" not in ann.rack()  # drawn once


# Concurrency guards and retries.


def test_a_stale_if_match_is_a_412_and_changes_nothing(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4 O5")
    version = ann.view().get_json()["version"]
    response = ann.draw(**{"If-Match": f'"{version - 1}"'})
    assert response.status_code == 412
    assert response.headers["ETag"] == f'"{version}"'
    assert ann.view().get_json()["version"] == version
    assert ann.draw(**{"If-Match": f'"{version}"'}).status_code == 200


def test_an_idempotency_key_repeats_the_first_answer_instead_of_acting_twice(client) -> None:
    _, (ann, bo) = setup(client, ["R1", "K7"], pool="O4 O5")
    first = ann.draw(**{"Idempotency-Key": "draw-1"})
    again = ann.draw(**{"Idempotency-Key": "draw-1"})
    assert again.status_code == first.status_code == 200
    assert again.get_json() == first.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert bo.view().get_json()["pool_count"] == 1


def test_an_idempotency_key_reused_for_another_request_is_a_422(client) -> None:
    _, (ann, _) = setup(client, ["R10 B10 K10 O1", "K7"], pool="O4 O5")
    ann.draft("R10 B10", **{"Idempotency-Key": "k"})
    response = ann.draft("R10 B10 K10", **{"Idempotency-Key": "k"})
    assert response.status_code == 422
    assert response.get_json()["type"].endswith(":idempotency-key-reused")


# Every error status.


def test_a_move_without_a_token_is_a_401(client) -> None:
    created, _ = setup(client, ["R1", "K7"], pool="O4")
    response = client.post(f"/v1/matches/{created['id']}/draw")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_an_unknown_token_is_a_401(client) -> None:
    created, (ann, _) = setup(client, ["R1", "K7"], pool="O4")
    ann.token = created["id"] + ".forged"
    assert ann.draw().status_code == 401
    assert ann.view().status_code == 401


def test_a_token_for_another_match_is_a_403(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4")
    other, _ = setup(client, ["R2", "K8"], pool="O5")
    ann.match_id = other["id"]
    assert ann.draw().status_code == 403


def test_an_unknown_match_is_a_404(client) -> None:
    assert client.get("/v1/matches/no-such-match").status_code == 404
    assert client.get("/v1/matches/no-such-match/events").status_code == 404


@pytest.mark.parametrize(
    "body", ['{"table": [["R1", "R2", "X3"]]}', '{"table": "R1 R2 R3"}', "{", '{"tables": []}']
)
def test_a_malformed_play_is_a_400(client, body: str) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4")
    response = client.post(
        ann.url("play"), data=body, content_type="application/json", headers=ann.auth
    )
    assert response.status_code == 400


def test_a_bad_if_match_header_is_a_400(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4")
    assert ann.draw(**{"If-Match": "yesterday"}).status_code == 400


# The event log.


def test_the_event_log_pages_in_order_and_replays_the_table(client) -> None:
    created, (ann, bo) = setup(client, ["R10 B10 K10 O1", "K11 B11 R11 O2"], pool="O4 O5 O6")
    assert ann.play("R10 B10 K10").status_code == 200
    assert bo.play("R10 B10 K10", "K11 B11 R11").status_code == 200
    assert ann.draw().status_code == 200
    url = f"/v1/matches/{created['id']}/events"
    events, after = [], 0
    while page := client.get(f"{url}?after={after}&limit=2").get_json()["events"]:
        events += page
        after = page[-1]["version"]
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    played = [e for e in events if e["type"] == "played"]
    final_table = bo.view().get_json()["table"]
    assert played[-1]["data"]["table"] == final_table
    drew = [e for e in events if e["type"] == "drew"]
    assert drew[-1]["data"] == {"count": 1, "next_seat": 1, "turn_deadline": None}


def long_poll(client, seat: Seat, version: int, timeout: float) -> tuple[threading.Thread, list]:
    """``GET`` the match with ``?wait_version=`` on a thread: the thread, and its answers."""
    answers: list = []
    url = f"{seat.url()}?wait_version={version}&timeout={timeout}"
    thread = threading.Thread(
        target=lambda: answers.append(client.get(url, headers=seat.auth)), daemon=True
    )
    thread.start()
    return thread, answers


def test_a_long_poll_answers_as_soon_as_the_match_moves_on(app, client) -> None:
    _, (ann, bo) = setup(client, ["R1", "K7"], pool="O4 O5")
    version = ann.view().get_json()["version"]
    waiting, answers = long_poll(client, bo, version, timeout=30)
    fanout = app.extensions["fanout"]
    wait_for(lambda: fanout.readers() == 1, "the long-poll never followed the match")
    ann.draw()
    waiting.join(SAFETY)
    # the move's version: answered by the move (waiting out its 30 s it would show the old)
    assert answers and answers[0].get_json()["version"] > version


def test_a_long_poll_with_nothing_new_answers_after_its_timeout(client) -> None:
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4 O5")
    version = ann.view().get_json()["version"]
    response = client.get(f"{ann.url()}?wait_version={version}&timeout=0.5", headers=ann.auth)
    assert response.get_json()["version"] == version


@pytest.mark.parametrize("app_overrides", [{"test_mode": True, "long_poll_max_seconds": 0.2}])
def test_a_long_poll_never_waits_past_the_configured_longest_wait(app, client, monkeypatch) -> None:
    fanout = app.extensions["fanout"]
    asked: list[float] = []
    wait_after = fanout.wait_after

    def recorded(match_id: str, version: int, timeout: float) -> None:
        asked.append(timeout)
        wait_after(match_id, version, timeout)

    monkeypatch.setattr(fanout, "wait_after", recorded)
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4 O5")
    version = ann.view().get_json()["version"]
    response = client.get(f"{ann.url()}?wait_version={version}&timeout=20", headers=ann.auth)
    assert response.status_code == 200
    assert asked == [0.2]  # the longest wait, not the 20 s asked (waited as the test above)


class StoppedClock:
    """``time`` for the fan-out whose ``monotonic()`` stands still: a wait never times out."""

    sleep = staticmethod(time.sleep)

    @staticmethod
    def monotonic() -> float:
        return 0.0


def test_a_long_poll_answers_at_once_when_the_worker_is_told_to_stop(
    client, stop_soon, monkeypatch
) -> None:
    monkeypatch.setattr(fanout_module, "time", StoppedClock)  # only the stop can end the wait
    _, (ann, _) = setup(client, ["R1", "K7"], pool="O4 O5")
    version = ann.view().get_json()["version"]
    waiting, answers = long_poll(client, ann, version, timeout=20)
    stop_soon()
    waiting.join(SAFETY)
    assert answers, "the long-poll still waits though the worker was told to stop"
    assert answers[0].status_code == 200
    assert answers[0].get_json()["version"] == version  # answered as it is
