"""The README cannot lie: every shell block of it is run against a real gunicorn, as written.

The blocks (all but the two commands that start and test the service itself) are cut into steps
(the commands before each ``# ->`` answer), run in order in one bash session (so ``MID``, ``TOK``
and ``KEY`` carry over) in an empty folder, with ``localhost:8000`` pointed at the test's server
(in test mode, with the README's app key) and ``curl`` noting each status. Each answer shown is
then checked: its status, an ``ETag: "n"`` header, and every ``"field":value`` written out in
full, in the order shown (a string ending in ``...`` is a prefix; a value cut short by ``...`` is
not checked). The folder is empty afterwards: the README writes no files.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.gunicorn_process import GunicornProcess
from tests.support.redis_process import RedisProcess

ROOT = Path(__file__).resolve().parents[2]
STATUS = re.compile(r"<<status (\d{3})>>")
# The two commands: `make run` serves what the blocks after it call, `make test` runs this.
TWO_COMMANDS = ["make run", "make test"]


@dataclass
class Step:
    commands: str
    answer: str  # the text after `# ->`, continuation lines joined; empty when none is shown


def blocks() -> list[str]:
    """Every shell block of the README, in order."""
    text = (ROOT / "README.md").read_text()
    return re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)


def walkthrough() -> str:
    """The README's blocks but the two commands', in order, as one script."""
    runnable = []
    for block in blocks():
        commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
        if commands == TWO_COMMANDS:
            continue
        assert not any(c.startswith("make ") for c in commands), block
        runnable.append(block)
    return "".join(runnable)


@pytest.fixture(scope="module")
def readme_server(redis_server: RedisProcess) -> Iterator[GunicornProcess]:
    """The service as the README starts it: test mode, and the README's app key."""
    key = re.search(r"REFEREE_API_KEYS=(mobile=[\w-]+)", (ROOT / "README.md").read_text())
    assert key is not None, "the README says how to start the service with its app key"
    env = {"REDIS_URL": redis_server.url, "REFEREE_TEST_MODE": "1", "REFEREE_API_KEYS": key[1]}
    with GunicornProcess(env=env, workers=1, threads=8) as process:
        yield process


def steps(block: str) -> list[Step]:
    """The block cut after each shown answer."""
    found: list[Step] = []
    commands: list[str] = []
    answer: list[str] | None = None
    for line in block.splitlines():
        if line.startswith("# -> "):
            if answer is not None:
                found.append(Step("\n".join(commands), " ".join(answer)))
                commands = []
            answer = [line[len("# -> ") :]]
        elif answer is not None and re.match(r"#\s{2,}", line):
            answer.append(line[1:].strip())
        else:
            if answer is not None:
                found.append(Step("\n".join(commands), " ".join(answer)))
                commands, answer = [], None
            commands.append(line)
    found.append(Step("\n".join(commands), " ".join(answer or [])))
    return found


def expected_fields(answer: str) -> list[str]:
    """Each ``"field":value`` of ``answer`` written out in full, as compact JSON."""
    decoder = json.JSONDecoder()
    fields = []
    for match in re.finditer(r'"(\w+)":', answer):
        try:
            value, _ = decoder.raw_decode(answer, match.end())
        except ValueError:
            continue  # cut short by "..."
        if isinstance(value, dict) or (isinstance(value, list) and _holds_objects(value)):
            continue  # their fields are checked one by one
        if isinstance(value, str) and value.endswith("..."):
            fields.append(f'"{match.group(1)}":{json.dumps(value[:-3].rstrip())[:-1]}')
        else:
            fields.append(f'"{match.group(1)}":{json.dumps(value, separators=(",", ":"))}')
    return fields


def _holds_objects(value: list[object]) -> bool:
    return any(
        isinstance(item, dict) or (isinstance(item, list) and _holds_objects(item))
        for item in value
    )


def run(block: list[Step], base: str, folder: Path) -> list[str]:
    """Run every step in one bash session; return each step's output."""
    marker = "<<step>>"
    script = [
        "set -e",
        # curl notes each answer's status after it, on stderr (so not into created.json); the
        # walkthrough's own commands are unchanged
        "curl() { command curl -w '%{stderr}\\n<<status %{http_code}>>\\n' \"$@\"; }",
    ]
    for step in block:
        script.append(step.commands.replace("localhost:8000", base))
        script.append(f"echo '{marker}'")
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    return done.stdout.split(marker + "\n")[: len(block)]


def test_the_walkthrough_has_answers_to_check() -> None:
    assert len(blocks()) >= 4  # the two commands, a first game, server to server, webhooks
    shown = [step for step in steps(walkthrough()) if step.answer]
    assert len(shown) >= 20
    assert all(re.match(r"\d{3}\b", step.answer) for step in shown)


def test_every_answer_the_readme_shows_is_what_the_service_answers(
    readme_server: GunicornProcess, tmp_path: Path
) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the README's walkthrough uses it")
    block = steps(walkthrough())
    outputs = run(block, readme_server.url.removeprefix("http://"), tmp_path)
    assert list(tmp_path.iterdir()) == [], "the README's commands leave no files behind"
    for step, output in zip(block, outputs, strict=True):
        statuses = STATUS.findall(output)
        assert all(int(s) < 400 for s in statuses) or step.answer[:1] == "4", (step, output)
        if not step.answer:
            continue
        assert statuses[-1] == step.answer[:3], (step.commands, output)
        etag = re.search(r'ETag: "\d+"', step.answer)
        if etag:
            assert etag.group(0).lower() in output.lower(), (step.answer, output)
        position = 0
        for field in expected_fields(step.answer):
            found = output.find(field, position)
            assert found >= 0, (
                f"{field} not in the answer (after what was already found):\n{output}"
            )
            position = found + len(field)
