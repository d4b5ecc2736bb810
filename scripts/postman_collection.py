#!/usr/bin/env python3
"""Generate the Postman collection of the API from openapi.yaml:

    .venv/bin/python scripts/postman_collection.py [OUTPUT]

(OUTPUT defaults to artifacts/referee.postman_collection.json; ``make collection`` runs it.)

openapi-to-postmanv2 (npm, pinned in tests/tools; ``make tools`` installs it) turns every
operation into a request, one folder per tag. Then, so that the collection runs as it is
against a server in test mode (``REFEREE_TEST_MODE=1 make run``, then ``newman run`` it with
``--env-var baseUrl=http://127.0.0.1:8000``):

- its first folder is the README's walkthrough ("A first game with curl"), each step with
  the checks the README shows, keeping the match's id and Ann's token in collection variables;
- each request of the other folders uses those (``{{matchId}}``, ``{{bearerToken}}``), the
  app key ``{{apiKey}}`` and its operation's example body, leaves its optional headers off, and
  is checked for no server error; the two event streams are skipped (read them with an SSE
  client).

The output is the same for the same openapi.yaml (no random ids). It is generated, not kept in
the repository, so it always follows the contract; tests/clients/test_collection.py runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tests" / "tools"
DEFAULT_OUTPUT = ROOT / "artifacts" / "referee.postman_collection.json"
CONVERT = """
const Converter = require("openapi-to-postmanv2");
const data = require("fs").readFileSync(0, "utf8");
Converter.convert({type: "string", data}, {folderStrategy: "Tags", parametersResolution: "Example"},
  (error, result) => {
    if (error || !result.result) { console.error(error || result.reason); process.exit(1); }
    process.stdout.write(JSON.stringify(result.output[0].data));
  });
"""
PATH_VALUES = {
    "id": "{{matchId}}",
    "seat": "1",
    "webhook_id": "{{webhookId}}",
    "delivery_id": "{{deliveryId}}",
}
OPTIONAL_HEADERS = {"if-match", "if-none-match", "idempotency-key", "prefer", "last-event-id"}
STREAMS = {("GET", "/v1/matches/{id}/stream"), ("GET", "/v1/feed")}
NO_SERVER_ERROR = [
    'pm.test("no server error", function () {',
    "  pm.expect(pm.response.code).to.be.below(500);",
    "});",
]


def converted(contract_text: str) -> dict[str, Any]:
    """openapi-to-postmanv2's collection of ``contract_text``."""
    done = subprocess.run(
        ["node", "-e", CONVERT],
        input=contract_text,
        capture_output=True,
        text=True,
        cwd=TOOLS,
        check=True,
        timeout=300,
    )
    collection: dict[str, Any] = json.loads(done.stdout)
    return collection


def _events(test: list[str], prerequest: list[str] | None = None) -> list[dict[str, Any]]:
    events = [{"listen": "test", "script": {"type": "text/javascript", "exec": test}}]
    if prerequest:
        events.insert(
            0, {"listen": "prerequest", "script": {"type": "text/javascript", "exec": prerequest}}
        )
    return events


def _step(
    name: str,
    method: str,
    path: str,
    checks: list[str],
    *,
    body: Any = None,
    headers: dict[str, str] | None = None,
    token: bool = False,
) -> dict[str, Any]:
    """One walkthrough request with its checks (JavaScript lines run by Postman or newman)."""
    header = [{"key": "Content-Type", "value": "application/json"}] if body is not None else []
    header += [{"key": key, "value": value} for key, value in (headers or {}).items()]
    request: dict[str, Any] = {
        "method": method,
        "header": header,
        "url": {
            "raw": "{{baseUrl}}" + path,
            "host": ["{{baseUrl}}"],
            "path": [part for part in path.split("?")[0].split("/") if part],
        },
        "auth": (
            {"type": "bearer", "bearer": [{"key": "token", "value": "{{bearerToken}}"}]}
            if token
            else {"type": "noauth"}
        ),
    }
    if "?" in path:
        query = path.split("?", 1)[1]
        request["url"]["query"] = [
            {"key": key, "value": value}
            for key, value in (pair.split("=", 1) for pair in query.split("&"))
        ]
    if body is not None:
        request["body"] = {"mode": "raw", "raw": json.dumps(body, indent=2)}
    return {"name": name, "request": request, "event": _events(checks)}


def _status(code: int) -> str:
    return f'pm.test("status {code}", function () {{ pm.response.to.have.status({code}); }});'


def walkthrough() -> dict[str, Any]:
    """The README's walkthrough as a folder: the same requests, the same answers checked."""
    view = "/v1/matches/{{matchId}}"
    both = [["R10", "B10", "K10"], ["O3", "O4", "O5"]]
    steps = [
        _step(
            "The initial meld checker: no match needed",
            "POST",
            "/v1/meld-check",
            [
                _status(200),
                "const body = pm.response.json();",
                'pm.test("R11 J R13 is a run of 36", function () {',
                '  pm.expect(body.sets[0].jokers).to.eql(["R12"]);',
                "  pm.expect(body.points).to.eql(36);",
                "  pm.expect(body.meets_initial_meld).to.eql(true);",
                "});",
            ],
            body={"sets": [["R11", "J", "R13"]]},
        ),
        _step(
            "Create a match: Ann against a bot, from a known deal (test mode)",
            "POST",
            "/v1/matches",
            [
                _status(201),
                "const body = pm.response.json();",
                'pm.collectionVariables.set("matchId", body.id);',
                'pm.collectionVariables.set("bearerToken", body.seats[0].token);',
                'pm.test("two seats, Ann first", function () {',
                '  pm.expect(body.seats.map(s => s.name)).to.eql(["Ann", "Bot"]);',
                "  pm.expect(body.match.current_seat).to.eql(0);",
                "});",
            ],
            body={
                "players": [{"name": "Ann"}, {"name": "Bot", "bot": True}],
                "rules": {"turn_seconds": 60},
                "setup": {
                    "racks": [["R10", "B10", "K10", "O3", "O4"], ["K1", "K2", "K3", "O9", "O9"]],
                    "pool": ["B7", "O5", "R2", "K8"],
                    "first_seat": 0,
                },
            },
        ),
        _step(
            "Ann's view: the public view plus her rack; the ETag is the version",
            "GET",
            view,
            [
                _status(200),
                'pm.test("ETag 2", function () { pm.response.to.have.header("ETag", \'"2"\'); });',
                'pm.test("her rack", function () {',
                '  pm.expect(pm.response.json().rack).to.eql(["R10", "B10", "K10", "O3", "O4"]);',
                "});",
            ],
            token=True,
        ),
        _step(
            "A play that breaks the rules is refused with every reason",
            "POST",
            view + "/play",
            [
                _status(422),
                'pm.test("every reason, by code", function () {',
                "  const codes = pm.response.json().violations.map(v => v.code);",
                '  const expected = ["not_a_run_or_group", "initial_meld_below_threshold"];',
                "  pm.expect(codes).to.eql(expected);",
                "});",
            ],
            body={"table": [["R10", "B10", "O3"]]},
            token=True,
        ),
        _step(
            "A legal initial meld, guarded by its version and safe to retry",
            "POST",
            view + "/play",
            [
                _status(200),
                "const match = pm.response.json().match;",
                'pm.test("melded; the bot drew; Ann again", function () {',
                "  pm.expect(match.version).to.eql(4);",
                '  pm.expect(match.table).to.eql([["R10", "B10", "K10"]]);',
                '  pm.expect(match.rack).to.eql(["O3", "O4"]);',
                "  pm.expect(match.current_seat).to.eql(0);",
                "});",
            ],
            body={"table": [["R10", "B10", "K10"]]},
            headers={"If-Match": '"2"', "Idempotency-Key": "ann-turn-1"},
            token=True,
        ),
        _step(
            "Ann draws, which ends her turn; only she sees what she drew",
            "POST",
            view + "/draw",
            [
                _status(200),
                'pm.test("she drew O5", function () {',
                '  pm.expect(pm.response.json().drawn).to.eql(["O5"]);',
                "  pm.expect(pm.response.json().match.version).to.eql(6);",
                "});",
            ],
            token=True,
        ),
        _step(
            "Work in progress others can watch",
            "PUT",
            view + "/draft",
            [
                _status(200),
                'pm.test("the draft is shown", function () {',
                f"  pm.expect(pm.response.json().match.draft).to.eql({json.dumps(both)});",
                "  pm.expect(pm.response.json().match.version).to.eql(7);",
                "});",
            ],
            body={"table": both},
            token=True,
        ),
        _step(
            "The short answer: 204, the version in the ETag",
            "PUT",
            view + "/draft",
            [
                _status(204),
                'pm.test("ETag 8", function () { pm.response.to.have.header("ETag", \'"8"\'); });',
            ],
            body={"table": both},
            headers={"Prefer": "return=minimal"},
            token=True,
        ),
        _step(
            "The solver's hint",
            "GET",
            view + "/hint",
            [
                _status(200),
                'pm.test("O3 O4 O5 found", function () {',
                '  pm.expect(pm.response.json().status).to.eql("play_found");',
                '  pm.expect(pm.response.json().placed).to.eql(["O3", "O4", "O5"]);',
                "});",
            ],
            token=True,
        ),
        _step(
            "The public event log",
            "GET",
            view + "/events?after=2&limit=50",
            [
                _status(200),
                'pm.test("the meld, then the bot\'s draw", function () {',
                "  const events = pm.response.json().events;",
                '  pm.expect(events[0].type).to.eql("played");',
                '  pm.expect(events[0].data.added).to.eql(["R10", "B10", "K10"]);',
                '  pm.expect(events[1].type).to.eql("drew");',
                "});",
            ],
        ),
        _step(
            "Test mode: run the clock 61 s ahead; the changed draft is thrown away",
            "POST",
            view + "/clock",
            [
                _status(200),
                "const match = pm.response.json();",
                'pm.test("timed out, penalty drawn, the bot passed", function () {',
                "  pm.expect(match.version).to.eql(12);",
                "  pm.expect(match.draft).to.eql(null);",
                "  pm.expect(match.pool_count).to.eql(0);",
                "  pm.expect(match.players[0].rack_count).to.eql(4);",
                "});",
            ],
            body={"advance": 61},
        ),
    ]
    return {
        "name": "Walkthrough: a whole turn cycle",
        "description": "README.md, 'A first game with curl', step by step (test mode).",
        "item": steps,
    }


def _examples(contract: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """(METHOD, path template) -> the example body of its JSON request."""
    found = {}
    for path, item in contract["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict):
                continue  # the path's parameters
            content = (
                (operation.get("requestBody") or {}).get("content", {}).get("application/json", {})
            )
            named = [example["value"] for example in content.get("examples", {}).values()]
            if "example" in content or named:
                found[(method.upper(), path)] = content.get("example", named[0] if named else None)
    return found


def _template(request: dict[str, Any]) -> str:
    return "/" + "/".join(
        "{" + part[1:] + "}" if part.startswith(":") else part for part in request["url"]["path"]
    )


def _runnable(item: dict[str, Any], examples: dict[tuple[str, str], Any]) -> None:
    """A generated request made to run against the walkthrough's match (see the module)."""
    request = item["request"]
    key = (request["method"], _template(request))
    for variable in request["url"].get("variable", []):
        variable["value"] = PATH_VALUES.get(variable["key"], variable["value"])
    for header in request.get("header", []):
        if header["key"].lower() in OPTIONAL_HEADERS:
            header["disabled"] = True
    if key in examples:
        request["body"] = {"mode": "raw", "raw": json.dumps(examples[key], indent=2)}
    skip = ["pm.execution.skipRequest(); // an endless event stream: read it with SSE"]
    item["event"] = _events(NO_SERVER_ERROR, skip if key in STREAMS else None)
    item.pop("response", None)  # the examples stay in openapi.yaml


def _without_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_ids(v) for k, v in node.items() if k not in ("id", "_postman_id")}
    if isinstance(node, list):
        return [_without_ids(value) for value in node]
    return node


def collection(contract_text: str) -> dict[str, Any]:
    """The whole collection for ``contract_text`` (openapi.yaml's text)."""
    contract = yaml.safe_load(contract_text)
    generated = _without_ids(converted(contract_text))
    examples = _examples(contract)
    folders = [folder for folder in generated["item"] if folder.get("item")]
    for folder in folders:
        for item in folder["item"]:
            _runnable(item, examples)
    generated["item"] = [walkthrough(), *folders]
    generated["variable"] = [
        {"key": "baseUrl", "value": "http://127.0.0.1:8000"},
        {"key": "matchId", "value": ""},
        {"key": "bearerToken", "value": ""},
        {"key": "apiKey", "value": ""},
        {"key": "webhookId", "value": "wh_0123456789abcdef"},
        {"key": "deliveryId", "value": "msg_0_0_0_0123456789abcdef"},
    ]
    generated.pop("event", None)
    return dict(generated)


def main() -> None:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT
    text = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(collection(text), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
