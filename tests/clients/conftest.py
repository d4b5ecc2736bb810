"""A real gunicorn in test mode on the session's Redis, for clients that speak HTTP; and the
clients the generators nobody here wrote make of openapi.yaml, generated once a session."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.gunicorn_process import GunicornProcess
from tests.support.redis_process import RedisProcess
from tests.support.tools import java_tool

CONTRACT = Path(__file__).resolve().parents[2] / "openapi.yaml"


@pytest.fixture(scope="module")
def web(redis_server: RedisProcess) -> Iterator[GunicornProcess]:
    """The service as a client meets it: gunicorn, test mode on (for ``setup``)."""
    env = {"REDIS_URL": redis_server.url, "REFEREE_TEST_MODE": "1"}
    with GunicornProcess(env=env, workers=1, threads=8) as process:
        yield process


@dataclass(frozen=True)
class Generated:
    """What the generators made of openapi.yaml: each one's output folder and its log."""

    folder: Path
    logs: dict[str, str]

    def output(self, generator: str) -> Path:
        return self.folder / generator


OPENAPI_GENERATOR_TARGETS = ("python", "go", "typescript-fetch", "kotlin")


@pytest.fixture(scope="session")
def generated_clients(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    """openapi-generator's four targets (one JVM, its ``batch`` command) and
    datamodel-code-generator, run once for the whole session on openapi.yaml."""
    folder = tmp_path_factory.mktemp("generators")
    configs = []
    for target in OPENAPI_GENERATOR_TARGETS:
        config = folder / f"{target}.yaml"
        config.write_text(
            f"generatorName: {target}\ninputSpec: {CONTRACT}\noutputDir: {folder / target}\n"
        )
        configs.append(str(config))
    logs = {}
    batch = subprocess.run(
        [str(java_tool("openapi-generator-cli")), "batch", "--fail-fast", *configs],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    logs["openapi-generator"] = batch.stdout + batch.stderr
    assert batch.returncode == 0, logs["openapi-generator"][-5000:]
    models = subprocess.run(
        [
            str(Path(sys.executable).parent / "datamodel-codegen"),
            "--input",
            str(CONTRACT),
            "--input-file-type",
            "openapi",
            "--output-model-type",
            "pydantic_v2.BaseModel",
            # What `datamodel-codegen --recommend-options` advises for this contract: the one-value
            # enums of the event types as Literals, and inline objects named by their path.
            "--enum-field-as-literal",
            "all",
            "--naming-strategy",
            "full-path",
            "--formatters",
            "builtin",
            "--target-python-version",
            "3.11",
            "--output",
            str(folder / "datamodel" / "referee_models.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    logs["datamodel-code-generator"] = models.stdout + models.stderr
    assert models.returncode == 0, logs["datamodel-code-generator"][-5000:]
    return Generated(folder, logs)
