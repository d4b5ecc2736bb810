"""docs/CLIENTS.md, "For backends": its Python and Node signature checks, run as written against
a real delivery (accepted) and a tampered one (refused)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_webhooks import (  # noqa: F401 (fixtures)
    KEYS,
    dispatcher,
    dispatcher_settings,
    owned,
    register,
)
from tests.support.receiver import Received, receiver

pytestmark = pytest.mark.usefixtures("redis_url")
CLIENTS = Path(__file__).resolve().parents[2] / "docs" / "CLIENTS.md"


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"test_mode": True, "api_keys": KEYS}


def snippet(language: str) -> str:
    chapter = CLIENTS.read_text().split("## 6. For backends", 1)[1]
    [code] = re.findall(rf"```{language}\n(.*?)```", chapter, flags=re.S)
    return code


@pytest.fixture
def delivery(client, request) -> tuple[str, Received]:
    request.getfixturevalue("dispatcher")
    with receiver() as hook:
        made = register(client, hook.url, ["turn.started"])
        owned(client)
        [got] = hook.wait_for(1)
    return made["secret"], got


def tampered(got: Received) -> Received:
    return Received(got.at, got.path, got.headers, got.body.replace(b'"seat"', b'"Seat"'))


def test_the_python_check_in_the_docs(delivery) -> None:
    secret, got = delivery
    space: dict[str, Any] = {}
    exec(snippet("python"), space)
    assert space["verify"](secret, got.headers, got.body) is True
    assert space["verify"](secret, got.headers, tampered(got).body) is False
    assert (
        space["verify"]("whsec_" + base64.b64encode(b"x" * 32).decode(), got.headers, got.body)
        is False
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_the_node_check_in_the_docs(delivery, tmp_path) -> None:
    secret, got = delivery
    script = tmp_path / "verify.js"
    script.write_text(
        snippet("js")
        + """
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { secret, headers, body } = JSON.parse(input);
  console.log(JSON.stringify(verify(secret, headers, Buffer.from(body, "base64"))));
});
"""
    )

    def run(body: bytes) -> Any:
        given = {"secret": secret, "headers": got.headers, "body": base64.b64encode(body).decode()}
        done = subprocess.run(
            ["node", str(script)],
            input=json.dumps(given),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert run(got.body) is True
    assert run(tampered(got).body) is False
