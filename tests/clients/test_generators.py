"""SPEC section 7: the contract reads cleanly in the generators integrators use, none written
here. openapi-generator (python, go, typescript-fetch, kotlin) and datamodel-code-generator run
once a session (``generated_clients``, tests/clients/conftest.py): no crash, no warning beyond
the generator's own notices, every operation kept in every target, the TypeScript compiling
under ``tsc --strict`` and the Python models reading a real answer. openapi-python-client and
openapi-typescript have their own tests beside this one."""

from __future__ import annotations

import compileall
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from tests.clients.conftest import CONTRACT, OPENAPI_GENERATOR_TARGETS, Generated
from tests.support.gunicorn_process import GunicornProcess
from tests.support.tools import GO_VALIDATOR, go_tool, npm_bin

# openapi-generator's notices that say nothing about this contract.
KNOWN_NOTICES = (
    "OpenAPI 3.1 support is still in beta",
    "(reserved word) cannot be used as method name",  # `pass` becomes `call_pass` in Python
)


def operation_ids() -> list[str]:
    contract = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    return [
        operation["operationId"]
        for item in contract["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    ]


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# How each target writes an operation's method, and in which files (tests and docs aside).
METHODS = {
    "python": (".py", lambda o: f"def {snake(o)}(" if o != "pass" else "def call_pass("),
    "go": (".go", lambda o: f") {o[0].upper()}{o[1:]}("),
    "typescript-fetch": (".ts", lambda o: f"async {o}("),
    "kotlin": (".kt", lambda o: f"fun {o}("),
}


def sources(folder: Path, suffix: str) -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in folder.rglob(f"*{suffix}")
        if not {"test", "docs"} & {part.lower() for part in path.relative_to(folder).parts}
    )


@pytest.mark.parametrize("target", OPENAPI_GENERATOR_TARGETS)
def test_openapi_generator_keeps_every_operation(generated_clients: Generated, target: str) -> None:
    suffix, method = METHODS[target]
    code = sources(generated_clients.output(target), suffix)
    missing = [o for o in operation_ids() if method(o) not in code]
    assert not missing, f"{target} lost {missing}"


def test_openapi_generator_warns_of_nothing_in_the_contract(generated_clients: Generated) -> None:
    log = generated_clients.logs["openapi-generator"]
    assert "Batch generation finished 4 generators successfully" in log, log[-3000:]
    warnings = [
        line
        for line in log.splitlines()
        if re.search(r"\b(WARN|ERROR)\b", line)
        and not any(notice in line for notice in KNOWN_NOTICES)
    ]
    assert not warnings, "\n".join(warnings)


def test_the_webhook_operations_and_the_notification_keep_apart(
    generated_clients: Generated,
) -> None:
    """The `webhooks:` entry has a tag of its own: its file no longer overwrites the REST
    operations' (openapi-generator writes one API file per tag)."""
    apis = generated_clients.output("typescript-fetch") / "apis"
    webhooks = (apis / "WebhooksApi.ts").read_text(encoding="utf-8")
    for operation in ("registerWebhook", "listDeliveries", "redeliver", "appFeed", "pingWebhook"):
        assert f"async {operation}(" in webhooks
    assert "onTurnStarted" not in webhooks


def test_the_typescript_fetch_client_compiles_under_tsc_strict(
    generated_clients: Generated,
) -> None:
    folder = generated_clients.output("typescript-fetch")
    compiled = subprocess.run(
        [
            str(npm_bin() / "tsc"),
            "--strict",
            "--noEmit",
            "--target",
            "es2020",
            "--lib",
            "es2020,dom",
            "--moduleResolution",
            "node",
            "index.ts",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stdout[-5000:] + compiled.stderr[-2000:]


def test_the_go_client_builds_and_vets(generated_clients: Generated, tmp_path: Path) -> None:
    """``go build`` and ``go vet`` on openapi-generator's Go client, as generated (its own
    tests aside: they need testify from the network). Two names once clashed there: the
    webhook type `match.finished` and the event `match_finished` (both MATCH_FINISHED), and
    the schema `NewWebhook` against the constructor of `Webhook`."""
    go = go_tool()
    folder = tmp_path / "client"
    shutil.copytree(generated_clients.output("go"), folder, ignore=shutil.ignore_patterns("test"))
    vendored = folder / "vendor" / "gopkg.in" / "validator.v2"
    shutil.copytree(GO_VALIDATOR, vendored)
    (folder / "vendor" / "modules.txt").write_text(
        "# gopkg.in/validator.v2 v2.0.1\n## explicit\ngopkg.in/validator.v2\n"
    )
    env = {
        **os.environ,
        "GOFLAGS": "-mod=vendor",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOPATH": str(tmp_path / "gopath"),
        "GOCACHE": str(tmp_path / "gocache"),
    }
    for step in ("build", "vet"):
        ran = subprocess.run(
            [str(go), step, "./..."],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert ran.returncode == 0, f"go {step}:\n{ran.stdout[-3000:]}{ran.stderr[-5000:]}"


def test_the_python_client_is_valid_python(generated_clients: Generated) -> None:
    folder = generated_clients.output("python") / "openapi_client"
    assert compileall.compile_dir(str(folder), quiet=1, force=True, legacy=True)


def test_datamodel_code_generator_models_read_a_real_match(
    generated_clients: Generated, web: GunicornProcess
) -> None:
    assert "warning" not in generated_clients.logs["datamodel-code-generator"].lower()
    folder = generated_clients.output("datamodel")
    sys.path.insert(0, str(folder))
    try:
        models = importlib.import_module("referee_models")
    finally:
        sys.path.remove(str(folder))
    body = {"players": [{"name": "Ann"}, {"name": "Bot", "bot": True}], "rules": {"hints": False}}
    created = httpx.post(f"{web.url}/v1/matches", json=body, timeout=30).json()
    parsed = models.CreatedMatch.model_validate(created)
    assert parsed.match.rules.hints is False
    events = httpx.get(f"{web.url}/v1/matches/{created['id']}/events", timeout=30).json()
    page = models.EventPage.model_validate(events)
    assert [type(e.root).__name__ for e in page.events][:2] == [
        "MatchCreatedEvent",
        "FirstPlayerDrawEvent",
    ]
