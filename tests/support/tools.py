"""The npm tools the suite runs against openapi.yaml (linters, a mock, generators, a diff tool,
a collection runner), pinned in ``tests/tools/package.json`` and its lock file.

:func:`npm_bin` installs them with ``npm ci`` into ``tests/tools/node_modules`` (git ignores
it) when they are missing or the lock file changed, once, and answers the folder of their
executables. ``make test`` installs them first (``make tools``). Without npm the tests that need
them are skipped, saying so, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["GO_VALIDATOR", "TOOLS", "go_tool", "java_tool", "npm_bin"]

TOOLS = Path(__file__).resolve().parents[1] / "tools"
_STAMP = TOOLS / "node_modules" / ".installed-lock"


def _missing(what: str) -> None:
    message = f"{what} is not installed: `make tools` needs it"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def npm_bin() -> Path:
    """``tests/tools/node_modules/.bin``, installed from the lock file when it is not yet."""
    npm = shutil.which("npm")
    if npm is None:
        _missing("npm")
    lock = hashlib.sha256((TOOLS / "package-lock.json").read_bytes()).hexdigest()
    if not _STAMP.exists() or _STAMP.read_text() != lock:
        subprocess.run(
            [str(npm), "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=TOOLS,
            check=True,
            capture_output=True,
            timeout=900,
        )
        _STAMP.write_text(lock)
    return TOOLS / "node_modules" / ".bin"


def java_tool(name: str) -> Path:
    """The executable ``name`` of this virtual environment (a package of the test extra) that
    runs on Java (openapi-generator-cli ships its jar); skipped or failed without Java."""
    if shutil.which("java") is None:
        _missing("java (17 or newer)")
    return Path(sys.executable).parent / name


GO_VALIDATOR = Path("/usr/share/gocode/src/gopkg.in/validator.v2")
"""Debian's source of gopkg.in/validator.v2 (golang-gopkg-validator.v2-dev), the one module
openapi-generator's Go client needs: vendored, it builds with no module proxy."""


def go_tool() -> Path:
    """The ``go`` command, with Debian's copy of the module the generated Go client needs;
    skipped or failed (under ``CI=true``) without them, as ``make tools`` installs them."""
    go = shutil.which("go")
    if go is None or not GO_VALIDATOR.is_dir():
        _missing("go and gopkg.in/validator.v2 (golang-go, golang-gopkg-validator.v2-dev)")
    return Path(str(go))
