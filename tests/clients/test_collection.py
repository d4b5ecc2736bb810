"""SPEC section 7, "A collection people can run": the Postman collection generated from
openapi.yaml (scripts/postman_collection.py, ``make collection``) runs green with newman
against a real server in test mode:
the README's walkthrough first, every check of it passing, then every operation of the
contract, none answering a server error."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.gunicorn_process import GunicornProcess
from tests.support.redis_process import RedisProcess
from tests.support.tools import npm_bin

ROOT = Path(__file__).resolve().parents[2]
APP_KEY = "postman-app-key-0123456789abcdef"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "postman_collection", ROOT / "scripts" / "postman_collection.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server(redis_server: RedisProcess) -> Iterator[GunicornProcess]:
    """The service as `REFEREE_TEST_MODE=1 make run` serves it, with an app's key."""
    env = {
        "REDIS_URL": redis_server.url,
        "REFEREE_TEST_MODE": "1",
        "REFEREE_API_KEYS": f"postman={APP_KEY}",
    }
    with GunicornProcess(env=env, workers=1, threads=8) as process:
        yield process


@pytest.fixture(scope="module")
def generated() -> dict[str, Any]:
    npm_bin()  # openapi-to-postmanv2 and newman
    collection: dict[str, Any] = generator().collection(
        (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    )
    return collection


def test_the_script_writes_the_same_collection_every_time(
    generated: dict[str, Any], tmp_path: Path
) -> None:
    output = tmp_path / "collection.json"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "postman_collection.py"), str(output)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    written = json.loads(output.read_text(encoding="utf-8"))
    assert written == generated  # no random ids: the same contract, the same collection
    assert written["info"]["schema"].endswith("/v2.1.0/collection.json")


def test_the_collection_starts_with_the_walkthrough_and_holds_every_operation(
    generated: dict[str, Any],
) -> None:
    first, *folders = generated["item"]
    assert first["name"].startswith("Walkthrough")
    requests = [item["request"] for folder in folders for item in folder["item"]]
    contract_operations = generator().yaml.safe_load((ROOT / "openapi.yaml").read_text())["paths"]
    count = sum(
        1
        for item in contract_operations.values()
        for method in item
        if method in ("get", "post", "put", "delete")
    )
    assert len(requests) == count


def test_newman_runs_the_collection_green_against_a_real_server(
    generated: dict[str, Any], server: GunicornProcess, tmp_path: Path
) -> None:
    collection = tmp_path / "collection.json"
    collection.write_text(json.dumps(generated), encoding="utf-8")
    report = tmp_path / "report.json"
    ran = subprocess.run(
        [
            str(npm_bin() / "newman"),
            "run",
            str(collection),
            "--env-var",
            f"baseUrl={server.url}",
            "--env-var",
            f"apiKey={APP_KEY}",
            "--timeout-request",
            "30000",
            "--reporters",
            "cli,json",
            "--reporter-json-export",
            str(report),
            "--color",
            "off",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-2000:]
    run = json.loads(report.read_text(encoding="utf-8"))["run"]
    assert run["stats"]["assertions"]["failed"] == 0
    assert run["failures"] == []
    walked = [
        e
        for e in run["executions"]
        if e["item"]["name"] in {i["name"] for i in generated["item"][0]["item"]}
    ]
    assert len(walked) == len(generated["item"][0]["item"])
    assert all(a.get("error") is None for e in walked for a in e.get("assertions", []))
    assert all(len(e.get("assertions", [])) >= 2 for e in walked)  # its status and its answer
