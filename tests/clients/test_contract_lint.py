"""SPEC section 7: Redocly's and Spectral's recommended rule sets find no error in openapi.yaml
(the linters integrators run on a contract before trusting it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.tools import TOOLS, npm_bin

CONTRACT = Path(__file__).resolve().parents[2] / "openapi.yaml"


def test_redocly_recommended_rules_find_no_error() -> None:
    linted = subprocess.run(
        [
            str(npm_bin() / "redocly"),
            "lint",
            str(CONTRACT),
            "--extends",
            "recommended",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(linted.stdout)
    errors = [p for p in report["problems"] if p["severity"] == "error"]
    assert not errors, json.dumps(errors, indent=1)[:5000]
    assert linted.returncode == 0, linted.stderr[-3000:]


def test_spectral_recommended_rules_find_no_error() -> None:
    linted = subprocess.run(
        [
            str(npm_bin() / "spectral"),
            "lint",
            str(CONTRACT),
            "--ruleset",
            str(TOOLS / "spectral.yaml"),
            "--format",
            "json",
            "--fail-severity",
            "error",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    problems = json.loads(linted.stdout or "[]")
    errors = [p for p in problems if p["severity"] == 0]  # 0 error, 1 warning, 2 info, 3 hint
    assert not errors, json.dumps(errors, indent=1)[:5000]
    assert linted.returncode == 0, linted.stderr[-3000:]
