"""POST /v1/meld-check: the initial meld checker the seed asks for."""

import io
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from tests.support.contract import validate


def check(client, sets, **rules):
    body = {"sets": sets, **({"rules": rules} if rules else {})}
    response = client.post("/v1/meld-check", json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_r11_joker_r13_is_worth_36_and_makes_an_initial_meld(client) -> None:
    answer = check(client, [["R11", "J", "R13"]])
    assert answer["points"] == 36
    assert answer["meets_initial_meld"] is True
    assert answer["sets"] == [
        {
            "tiles": ["R11", "J", "R13"],
            "valid": True,
            "kind": "run",
            "points": 36,
            "jokers": ["R12"],
            "reason": None,
            "code": None,
        }
    ]


def test_an_invalid_set_is_named_with_a_reason_and_counts_nothing(client) -> None:
    answer = check(client, [["R12", "R13", "J"], ["K10", "B10", "O10"]])
    bad, good = answer["sets"]
    assert (bad["valid"], bad["kind"], bad["points"], bad["code"]) == (
        False,
        None,
        0,
        "joker_out_of_range",
    )
    assert "cannot stand for 14" in bad["reason"]
    assert good["kind"] == "group"
    assert answer["points"] == 30
    assert answer["meets_initial_meld"] is False


def test_a_group_of_three_with_a_joker_names_both_missing_colours(client) -> None:
    assert check(client, [["R5", "B5", "J"]])["sets"][0]["jokers"] == ["K5|O5"]


def test_sets_below_the_threshold_do_not_meet_the_initial_meld(client) -> None:
    answer = check(client, [["R9", "B9", "K9"]])
    assert (answer["points"], answer["threshold"], answer["meets_initial_meld"]) == (27, 30, False)


def test_the_threshold_and_the_joker_house_rule_are_options(client) -> None:
    assert check(client, [["R9", "B9", "K9"]], initial_meld_points=25)["meets_initial_meld"]
    answer = check(client, [["R11", "J", "R13"]], joker_worth_zero_in_meld=True)
    assert (answer["points"], answer["meets_initial_meld"]) == (24, False)


def test_no_sets_meet_nothing(client) -> None:
    assert check(client, []) == {
        "sets": [],
        "points": 0,
        "threshold": 30,
        "meets_initial_meld": False,
    }


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ('{"sets": [["R11", "J", "R14"]]}', "invalid-body"),
        ('{"sets": [["r11"]]}', "invalid-body"),
        ('{"sets": [[11]]}', "invalid-body"),
        ('{"sets": "R1 R2 R3"}', "invalid-body"),
        ('{"sets": [["R1"]], "extra": 1}', "invalid-body"),
        ("{}", "invalid-body"),
        ("[]", "invalid-body"),
        ("null", "invalid-body"),
        ('{"sets": [["R1", "R2"', "invalid-json"),
        ("not json", "invalid-json"),
        ('{"sets": [["R1","R2","R3"]], "rules": {"initial_meld_points": -1}}', "invalid-body"),
        ("[" * 20000 + "]" * 20000, "invalid-json"),
    ],
)
def test_bad_input_is_a_400_problem_naming_what_is_wrong(client, body: str, kind: str) -> None:
    response = client.post("/v1/meld-check", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.content_type == "application/problem+json"
    problem = response.get_json()
    assert problem["type"] == f"urn:rummikub-referee:problem:{kind}"
    assert problem["status"] == 400
    assert problem["detail"]


def test_a_bad_tile_code_is_named_in_the_detail(client) -> None:
    response = client.post("/v1/meld-check", json={"sets": [["R11", "J", "R14"]]})
    assert "'R14' is not a tile code" in response.get_json()["detail"]


def test_a_body_over_the_limit_is_a_413_problem(client) -> None:
    body = '{"sets": [' + ",".join(['["R1","R2","R3"]'] * 5000) + "]}"
    response = client.post("/v1/meld-check", data=body, content_type="application/json")
    assert response.status_code == 413
    assert response.content_type == "application/problem+json"


@pytest.mark.parametrize("sets", [1, 5000], ids=["within", "over"])
def test_a_chunked_body_is_read_as_one_with_a_length_and_over_the_limit_is_a_413(
    client, sets: int
) -> None:
    # As a server that decodes chunks gives it (gunicorn): no Content-Length, the stream ends
    # with the body. Before, werkzeug read it up to the limit and stopped: a 400, "not JSON".
    body = ('{"sets": [' + ",".join(['["R1","R2","R3"]'] * sets) + "]}").encode()

    def chunked(environ: dict[str, Any], start_response: Any) -> Any:
        environ.pop("CONTENT_LENGTH", None)
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
        environ["wsgi.input_terminated"] = True
        return client.application(environ, start_response)

    response = Client(chunked, TestResponse).post(
        "/v1/meld-check", input_stream=io.BytesIO(body), content_type="application/json"
    )
    validate(response)  # as the contract client does for the answers it sees
    if sets == 1:
        assert response.status_code == 200, response.get_data(as_text=True)
        assert (
            response.get_json()
            == client.post("/v1/meld-check", data=body, content_type="application/json").get_json()
        )
    else:
        assert response.status_code == 413
        assert response.content_type == "application/problem+json"
