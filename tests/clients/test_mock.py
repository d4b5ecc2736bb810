"""SPEC section 7: a mock built from openapi.yaml (Stoplight Prism, as integrators run it before
they have the service) answers the way the service does: every status of every operation,
asked for with ``Prefer: code=<status>``, comes back valid against the contract, with no
violation Prism reports itself (its ``sl-violations`` header), so the examples it serves
(headers, bodies, problems) keep the contract's own patterns and limits."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.gunicorn_process import http_request
from tests.support.tools import npm_bin

CONTRACT = Path(__file__).resolve().parents[2] / "openapi.yaml"
PATH_VALUES = {
    "id": "k3Jf9sQ2xV7pLm0a",
    "seat": "1",
    "webhook_id": "wh_3f2a9c0d1e4b5a69",
    "delivery_id": "msg_0_1796144758062_0_3f2a9c0d1e4b5a69",
    "game_number": "1",
}
SEAT_TOKEN = "k3Jf9sQ2xV7pLm0a.Q2hhbmdlIG1lOiBhIHNlYXQgdG9rZW4"
API_KEY = "mobile-key-0123456789abcdefghij"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def prism() -> Iterator[int]:
    """``prism mock`` serving openapi.yaml (static answers: the examples) on a free port."""
    port = free_port()
    process = subprocess.Popen(
        [str(npm_bin() / "prism"), "mock", "-h", "127.0.0.1", "-p", str(port), str(CONTRACT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "prism did not start in 120 s"
            time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cases() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(method, path, status, operation) of every status of every operation."""
    contract = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    found = []
    for path, item in contract["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "delete"):
                continue
            for status in operation["responses"]:
                found.append((method.upper(), path, status, operation))
    return found


def request_of(path: str, operation: dict[str, Any]) -> tuple[str, dict[str, str], Any]:
    """The target, headers and body of a valid request to ``operation``: its path filled, its
    required query parameters' examples, its credentials, its request body's example."""
    target = path.format(**PATH_VALUES)
    required = [
        f"{parameter['name']}={parameter['example']}"
        for parameter in operation.get("parameters", [])
        if parameter.get("in") == "query" and parameter.get("required")
    ]
    if required:  # each from its example
        target += "?" + "&".join(required)
    headers: dict[str, str] = {}
    schemes = {name for option in operation.get("security", []) for name in option}
    if "seatToken" in schemes:
        headers["Authorization"] = f"Bearer {SEAT_TOKEN}"
    if "apiKey" in schemes:
        headers["X-API-Key"] = API_KEY
    body = None
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if content is not None:
        named = [example["value"] for example in content.get("examples", {}).values()]
        body = content.get("example", named[0] if named else {})
    return target, headers, body


def test_every_answer_of_the_mock_keeps_the_contract(prism: int) -> None:
    broken = []
    for method, path, status, operation in cases():
        target, headers, body = request_of(path, operation)
        headers["Prefer"] = f"code={status}"
        if path == "/openapi.yaml" and status == "200":
            headers["Accept"] = "text/yaml"  # Prism writes text, not its application/yaml twin
        try:
            reply = http_request(prism, method, target, body, headers=headers, timeout=30)
        except AssertionError as error:  # a ContractError, or a problem's language
            broken.append(f"{method} {path} {status}: {error}")
            continue
        if str(reply.status) != status:
            broken.append(f"{method} {path}: asked for {status}, got {reply.status} {reply.body}")
        elif "sl-violations" in reply.headers:
            broken.append(f"{method} {path} {status}: {reply.headers['sl-violations']}")
    assert not broken, "\n".join(broken)
