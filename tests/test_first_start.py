"""What `make run` says on a first start: whether test mode is on (first, before the install),
and what the long quiet step of a first install is."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from service.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def make(*args: str, **env: str) -> str:
    done = subprocess.run(
        ["make", "-s", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("value", ["1", "true", "YES", " on", "0", "false", "", "no"])
def test_make_run_says_whether_test_mode_is_on_as_the_service_reads_it(value: str) -> None:
    on = Settings.from_env({"REFEREE_TEST_MODE": value}).test_mode
    said = make("run-mode", REFEREE_TEST_MODE=value)
    assert ("TEST MODE IS ON" in said) is on and ("test mode is off" in said) is not on


def test_the_test_mode_notice_comes_before_the_install(tmp_path: Path) -> None:
    planned = make("-n", "run", f"VENV={tmp_path / 'venv'}", "PYTHON=python3")
    lines = planned.splitlines()
    notice = next(i for i, line in enumerate(lines) if "test-mode.sh notice" in line)
    install = next(i for i, line in enumerate(lines) if "pip-install.sh" in line)
    assert notice < install
    assert "compiles the solver" in planned and "30 s" in planned


def test_the_readme_is_a_front_door_and_every_page_it_names_exists() -> None:
    """At most 300 lines: what it is, a picture, the two commands, a first game, where to go
    next; the rest lives in docs/."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    named = set(re.findall(r"`((?:docs|deploy)/[\w./-]+\.md)`", text))
    named |= set(re.findall(r"\]\(((?:docs)/[\w./-]+)\)", text))
    assert {"docs/OPERATIONS.md", "docs/ARCHITECTURE.md", "docs/WEB.md"} <= named
    assert [path for path in sorted(named) if not (ROOT / path).exists()] == []
