"""Every gate of the API holds against a careful attacker (issue 30): bodies that are not JSON,
nested past any need, text with control characters, integers past their bounds, paths with
empty segments, long-polls with a foreign token, 401s that name their scheme.

Each test here failed on the code before its gate was closed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.api.fields import TEXT_PATTERN
from tests.api.matchclient import Seat, create, setup

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
MOBILE = "mobile-key-0123456789abcdefghij"


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": f"mobile={MOBILE}"}


def problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    assert response.content_type == "application/problem+json"
    body: dict[str, Any] = response.get_json()
    assert body["status"] == status
    return body


def two_seats(client: Any) -> list[Seat]:
    return create(client, "Ann", "Bo")[1]


def mover(client: Any) -> Seat:
    """The seat to move in a new match of two."""
    seats = two_seats(client)
    return seats[seats[0].view().get_json()["current_seat"]]


# --- 415: a body that is not JSON ------------------------------------------------------------

CREATE = {"players": [{"name": "Ann"}, {"name": "Bo"}]}


def json_endpoints(client: Any) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """(method, path, a valid body, headers) of every operation that reads a JSON body."""
    ann = two_seats(client)[0]
    key = {"X-API-Key": MOBILE}
    return [
        ("POST", "/v1/matches", CREATE, {}),
        ("POST", "/v1/meld-check", {"sets": [["R1", "R2", "R3"]]}, {}),
        ("POST", ann.url("play"), {"table": [["R1", "R2", "R3"]]}, ann.auth),
        ("PUT", ann.url("draft"), {"table": []}, ann.auth),
        ("POST", ann.url("clock"), {"advance": 5}, {}),
        ("POST", ann.url("leave"), {}, ann.auth),
        ("POST", "/v1/webhooks", {"url": "http://127.0.0.1:9/hook"}, key),
        ("POST", "/v1/webhooks/wh_0123456789abcdef/test", {"type": "game.ended"}, key),
    ]


@pytest.mark.parametrize(
    ("content_type", "encode"),
    [
        ("text/plain", lambda text: text.encode()),
        ("application/x-www-form-urlencoded", lambda text: text.encode()),
        ("application/json", lambda text: text.encode("utf-16")),
        ("application/json; charset=utf-16", lambda text: text.encode("utf-16")),
        ("application/json; charset=latin-1", lambda text: text.encode("latin-1")),
    ],
)
def test_a_body_that_is_not_json_is_a_415_on_every_json_endpoint(
    client: Any, content_type: str, encode: Any
) -> None:
    for method, path, body, headers in json_endpoints(client):
        response = client.open(
            path,
            method=method,
            data=encode(json.dumps(body)),
            headers={**headers, "Content-Type": content_type},
        )
        refused = problem(response, 415)
        assert refused["type"].endswith(":unsupported-media-type"), (path, refused)


def test_json_is_json_whatever_its_media_type_is_called(client: Any) -> None:
    for content_type in (
        "application/json",
        "application/json; charset=UTF-8",
        "application/merge-patch+json",
        "APPLICATION/JSON",
    ):
        response = client.post(
            "/v1/meld-check",
            data=json.dumps({"sets": [["R1", "R2", "R3"]]}),
            headers={"Content-Type": content_type},
        )
        assert response.status_code == 200, content_type


# --- nesting: refused before anything recursive sees it -----------------------------------


def nested(depth: int) -> str:
    return "[" * depth + '"R1"' + "]" * depth


@pytest.mark.parametrize("depth", [17, 100, 950, 1020])
def test_a_tile_nested_deep_is_a_400_on_the_meld_check_draft_and_play(
    client: Any, depth: int
) -> None:
    ann = two_seats(client)[0]
    for method, path, body, headers in [
        ("POST", "/v1/meld-check", '{"sets": [%s]}', {}),
        ("PUT", ann.url("draft"), '{"table": [%s]}', ann.auth),
        ("POST", ann.url("play"), '{"table": [%s]}', ann.auth),
    ]:
        response = client.open(
            path,
            method=method,
            data=body % nested(depth),
            headers={**headers, "Content-Type": "application/json"},
        )
        refused = problem(response, 400)
        assert refused["type"].endswith(":invalid-json"), refused
        assert len(response.get_data()) < 1000


def test_deep_nesting_is_refused_in_every_part_of_a_body(client: Any) -> None:
    deep: Any = "x"
    for _ in range(40):
        deep = {"a": deep}
    for path, body in [
        ("/v1/matches", {**CREATE, "rules": deep}),
        ("/v1/matches", {"players": [{"name": "Ann", "x": deep}, {"name": "Bo"}]}),
        ("/v1/meld-check", {"sets": [], "rules": deep}),
    ]:
        problem(client.post(path, json=body), 400)


def test_the_nesting_a_setup_needs_is_welcome(client: Any) -> None:
    created, _ = setup(client, ["R1 R2 R3", "B1 B2"], pool="K1 K2", table=["O1 O2 O3"])
    assert created["match"]["table"] == [["O1", "O2", "O3"]]


# --- text: control, bidirectional and invisible characters ---------------------------------

REFUSED_TEXT = [
    "Ann\x00",
    "Ann\r\nX-Admin: 1",
    "Ann\nBo",
    "\u202eennA",
    "Ann\u2066x\u2069",
    "Ann\u200b",
    "Ann\u2028",
    "Ann\x85",
    "\tAnn",
    "Ann\x7f",
    "Ann\ufeff",
    "Ann\n",
]
WELCOME_TEXT = [
    "Åsa",
    "Zoë",
    "李小龍",
    "محمد",
    "שרה",
    "Ἀθηνᾶ",
    "नमस्ते",
    "می‌خواهم",
    "👩‍💻 Dev",
    "O'Brien-Smith",
]


@pytest.mark.parametrize("name", REFUSED_TEXT)
def test_a_name_with_a_control_bidi_or_invisible_character_is_a_400(client: Any, name: str) -> None:
    body = {"players": [{"name": name}, {"name": "Bo"}]}
    refused = problem(client.post("/v1/matches", json=body), 400)
    assert refused["errors"][0]["field"] == "players.0.name"


@pytest.mark.parametrize("ref", REFUSED_TEXT)
def test_a_ref_with_a_control_bidi_or_invisible_character_is_a_400(client: Any, ref: str) -> None:
    body = {"players": [{"name": "Ann", "ref": ref}, {"name": "Bo"}]}
    refused = problem(client.post("/v1/matches", json=body, headers={"X-API-Key": MOBILE}), 400)
    assert refused["errors"][0]["field"] == "players.0.ref"
    listed = client.get("/v1/matches", query_string={"ref": ref}, headers={"X-API-Key": MOBILE})
    problem(listed, 400)


def test_names_and_refs_in_any_script_are_welcome(client: Any) -> None:
    for text in WELCOME_TEXT:
        body = {"players": [{"name": text, "ref": text}, {"name": "Bo"}]}
        created = client.post("/v1/matches", json=body, headers={"X-API-Key": MOBILE})
        assert created.status_code == 201, (text, created.get_json())
        assert created.get_json()["seats"][0]["name"] == text
        assert created.get_json()["seats"][0]["ref"] == text


def test_the_contract_states_the_rule_the_service_keeps() -> None:
    """openapi.yaml's pattern for names and refs is the service's own, and it refuses every
    control, line-separator and bidirectional character of the Basic Multilingual Plane."""
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    player = spec["components"]["schemas"]["PlayerRequest"]["properties"]
    assert player["name"]["pattern"] == player["ref"]["pattern"] == TEXT_PATTERN
    allowed = re.compile(TEXT_PATTERN)
    for code in range(0x10000):
        char = chr(code)
        if unicodedata.category(char) in ("Cc", "Zl", "Zp") or unicodedata.bidirectional(char) in (
            "LRE",
            "RLE",
            "LRO",
            "RLO",
            "PDF",
            "LRI",
            "RLI",
            "FSI",
            "PDI",
            "LRM",
            "RLM",
            "ALM",
        ):
            assert allowed.fullmatch(f"a{char}b") is None, hex(code)


# --- integers: bounded, and integers -----------------------------------------------------


def request_integers(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every integer schema a request can carry (bodies, query, path and header parameters),
    with where it is."""

    def deref(node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            target: Any = spec
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = target
        return node

    found: list[tuple[str, dict[str, Any]]] = []
    seen: set[int] = set()

    def walk(where: str, node: Any) -> None:
        node = deref(node)
        if not isinstance(node, dict) or id(node) in seen:
            return
        seen.add(id(node))
        kinds = node.get("type")
        if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
            found.append((where, node))
        for name, inner in node.get("properties", {}).items():
            walk(f"{where}.{name}", inner)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                walk(f"{where}[]", node[key])
        for key in ("oneOf", "anyOf", "allOf"):
            for inner in node.get(key, []):
                walk(where, inner)

    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            where = f"{method.upper()} {path}"
            for parameter in [*item.get("parameters", []), *operation.get("parameters", [])]:
                parameter = deref(parameter)
                walk(f"{where} {parameter['in']} {parameter['name']}", parameter["schema"])
            body = deref(operation.get("requestBody", {}))
            for media in body.get("content", {}).values():
                walk(f"{where} body", media["schema"])
    return found


def test_every_integer_a_request_carries_has_bounds_in_the_contract() -> None:
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    integers = request_integers(spec)
    assert any("target_score" in where for where, _ in integers)
    unbounded = [
        where
        for where, schema in integers
        if "enum" not in schema and ("maximum" not in schema or "minimum" not in schema)
    ]
    assert unbounded == []


@pytest.mark.parametrize(
    ("rules", "field"),
    [
        ('{"target_score": 1000000000000000000000000000000}', "target_score"),
        ('{"target_score": 1e30}', "target_score"),
        ('{"target_score": 10001}', "target_score"),
        ('{"turn_seconds": 1e300}', "turn_seconds"),
        ('{"rounds": 18446744073709551616}', "rounds"),
        ('{"initial_meld_points": -1e30}', "initial_meld_points"),
    ],
)
def test_an_integer_past_its_bound_is_a_400(client: Any, rules: str, field: str) -> None:
    body = '{"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": ' + rules + "}"
    response = client.post("/v1/matches", data=body, content_type="application/json")
    refused = problem(response, 400)
    assert refused["errors"][0]["field"] == f"rules.{field}"


def test_a_seed_past_64_bits_is_a_400(client: Any) -> None:
    for seed in ("9223372036854775808", "-9223372036854775809", "1e19"):
        body = '{"players": [{"name": "Ann"}, {"name": "Bo"}], "seed": ' + seed + "}"
        response = client.post("/v1/matches", data=body, content_type="application/json")
        assert problem(response, 400)["errors"][0]["field"] == "seed"


def test_an_integer_within_its_bound_comes_back_an_integer(client: Any) -> None:
    body = '{"players": [{"name": "Ann"}, {"name": "Bo"}], "rules": {"target_score": 1e4}}'
    created = client.post("/v1/matches", data=body, content_type="application/json")
    assert created.status_code == 201
    assert b'"target_score":10000' in created.get_data()
    match_id = created.get_json()["id"]
    assert b'"target_score":10000' in client.get(f"/v1/matches/{match_id}").get_data()


# --- a long-poll is refused before it waits ----------------------------------------------


def test_a_long_poll_with_a_wrong_or_foreign_token_or_for_no_match_is_refused_before_waiting(
    app: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[tuple[Any, ...]] = []
    monkeypatch.setattr(app.extensions["fanout"], "wait_after", lambda *a: waits.append(a))
    ann, _ = two_seats(client)
    other = two_seats(client)[0]
    version = ann.view().get_json()["version"]
    poll = f"{ann.url()}?wait_version={version}&timeout=30"
    wrong = {"Authorization": f"Bearer {ann.match_id}.not-the-secret"}
    assert problem(client.get(poll, headers=wrong), 401)
    assert problem(client.get(poll, headers=other.auth), 403)
    assert problem(client.get(poll, headers={"Authorization": "Bearer x"}), 401)
    assert problem(client.get(f"/v1/matches/nosuchmatch?wait_version={version}&timeout=30"), 404)
    assert waits == []
    assert client.get(poll, headers=ann.auth).status_code in (200, 304)
    assert len(waits) == 1  # the right token waits as before


# --- paths: "//" and empty segments --------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "//",
        "/v1//matches",
        "//v1/matches",
        "/v1/webhooks//deliveries",
        "/v1/webhooks/wh_1//deliveries",
        "/v1/matches//play",
        "/static//app.js",
    ],
)
def test_a_path_with_an_empty_segment_is_a_404_problem_never_a_redirect(
    client: Any, path: str
) -> None:
    for method in ("GET", "POST"):
        response = client.open(
            path, method=method, headers={"Host": "evil.example", "X-API-Key": MOBILE}
        )
        assert "Location" not in response.headers
        assert problem(response, 404)["type"].endswith(":not-found")


# --- a 401 names its scheme ---------------------------------------------------------------


def test_a_401_for_a_missing_or_unknown_key_names_the_key_scheme(client: Any) -> None:
    for headers in ({}, {"X-API-Key": "not-a-key-of-any-app-at-all-0123"}):
        refused = client.get("/v1/webhooks", headers=headers)
        problem(refused, 401)
        assert refused.headers["WWW-Authenticate"] == 'ApiKey header="X-API-Key"'


def test_a_401_for_a_missing_or_unknown_token_names_the_bearer_scheme(client: Any) -> None:
    ann = two_seats(client)[0]
    for headers in ({}, {"Authorization": "Bearer nope"}):
        refused = client.post(ann.url("draw"), headers=headers)
        problem(refused, 401)
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")


# --- Prefer: the limits the contract states ------------------------------------------------


@pytest.mark.parametrize(
    "prefer",
    ["return=minimal\t", "\treturn=minimal", "return=minimal, " + "x" * 300, "return=mínimal"],
)
def test_a_prefer_beyond_its_stated_limits_is_a_400_and_the_move_is_not_applied(
    client: Any, prefer: str
) -> None:
    ann = mover(client)
    version = ann.view().get_json()["version"]
    refused = problem(ann.draw(Prefer=prefer), 400)
    assert refused["type"].endswith(":bad-header")
    assert ann.view().get_json()["version"] == version


def test_a_prefer_within_its_limits_is_read_as_before(client: Any) -> None:
    ann = mover(client)
    assert ann.draw(Prefer='return="minimal"; x=y, respond-async').status_code == 204


# --- listing cursors: a tampered one is a 422, never a 503, never a page forever --------


def tampered(cursor: str, **changes: Any) -> str:
    import base64

    decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    decoded.update(changes)
    raw = json.dumps(decoded).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def owned_matches(client: Any, count: int) -> None:
    for _ in range(count):
        body = {"players": [{"name": "Ann", "ref": "u-ann"}, {"name": "Bo", "ref": "u-bo"}]}
        assert (
            client.post("/v1/matches", json=body, headers={"X-API-Key": MOBILE}).status_code == 201
        )


def listing(client: Any, **query: Any) -> Any:
    return client.get("/v1/matches", query_string=query, headers={"X-API-Key": MOBILE})


@pytest.mark.parametrize(
    "changes",
    [
        {"s": "nan"},
        {"s": "inf"},
        {"s": "-inf"},
        {"s": "1e400"},
        {"s": [1]},
        {"s": None},
        {"i": 7},
        {"i": None},
    ],
)
def test_a_tampered_cursor_of_the_newest_first_listing_is_a_422(client: Any, changes: Any) -> None:
    owned_matches(client, 3)
    cursor = listing(client, limit=1).get_json()["next_cursor"]
    refused = problem(listing(client, limit=1, cursor=tampered(cursor, **changes)), 422)
    assert refused["type"].endswith(":bad-cursor")


@pytest.mark.parametrize(
    "changes",
    [
        {"o": 2**63},
        {"o": 2**64},
        {"o": -1},
        {"o": -2},
        {"o": 0},
        {"o": 3},
        {"o": 1.5},
        {"o": True},
        {"o": "1"},
        {"w": "x" * 300},
        {"w": 5},
        {"w": "a:b"},
    ],
)
def test_a_tampered_cursor_of_a_players_listing_is_a_422(client: Any, changes: Any) -> None:
    owned_matches(client, 3)
    cursor = listing(client, limit=1, ref="u-ann").get_json()["next_cursor"]
    refused = problem(
        listing(client, limit=1, ref="u-ann", cursor=tampered(cursor, **changes)), 422
    )
    assert refused["type"].endswith(":bad-cursor")


def test_a_players_walk_ends_however_its_cursors_are_followed(client: Any) -> None:
    owned_matches(client, 3)
    seen, cursor = [], None
    for _ in range(10):
        page = listing(client, limit=1, ref="u-ann", **({"cursor": cursor} if cursor else {}))
        seen += [item["id"] for item in page.get_json()["matches"]]
        cursor = page.get_json()["next_cursor"]
        if cursor is None:
            break
    assert cursor is None and len(seen) == len(set(seen)) == 3


# --- RATE_LIMIT per app key too ------------------------------------------------------------


def test_one_app_key_is_limited_across_addresses(redis_url: str, redis_client: Any) -> None:
    from service.app import create_app
    from tests.support.contract import ContractClient

    other = "other-key-0123456789abcdefghij"
    app = create_app(
        {"redis_url": redis_url, "rate_limit": "3/minute", "api_keys": f"m={MOBILE},o={other}"}
    )
    app.test_client_class = ContractClient
    client = app.test_client()

    def listed(address: str, app_key: str = MOBILE) -> int:
        answer = client.get(
            "/v1/matches", headers={"X-API-Key": app_key}, environ_base={"REMOTE_ADDR": address}
        )
        return int(answer.status_code)

    assert [listed(f"10.0.2.{n}") for n in range(4)] == [200, 200, 200, 429]
    assert listed("10.0.2.9", other) == 200  # another app has its own allowance
    keys = " ".join(redis_client.keys("*"))
    assert MOBILE not in keys and other not in keys  # only digests are stored


def test_every_operation_that_takes_a_body_lists_its_415() -> None:
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    missing = [
        f"{method.upper()} {path}"
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict)
        and "requestBody" in operation
        and "application/json" in str(operation["requestBody"])
        and "415" not in operation["responses"]
    ]
    assert missing == []
