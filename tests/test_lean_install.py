"""`make run` installs only what serving needs (`pip install -e .`), `make test` the test tools
on top; whatever `service/` imports must come with the first."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _runtime_closure() -> set[str]:
    """The distributions `pip install .` brings: the project's plain requirements, recursively
    (a dependency's extras only where a requirement asks for them)."""
    found: set[str] = set()
    visited: set[tuple[str, frozenset[str]]] = set()
    wanted = [("rummikub-referee", frozenset[str]())]
    while wanted:
        name, extras = wanted.pop()
        key = (_canonical(name), extras)
        if key in visited:
            continue
        visited.add(key)
        found.add(key[0])
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker and not any(marker.evaluate({"extra": e}) for e in (extras or {""})):
                continue
            wanted.append((requirement.name, frozenset(requirement.extras)))
    return found


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _third_party_imports() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "service").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    # _typeshed exists only for type checkers (imported under TYPE_CHECKING), never at run time.
    ignored = {"service", "_typeshed"}
    return {n for n in names if n not in sys.stdlib_module_names and n not in ignored}


def test_everything_the_service_imports_comes_with_its_runtime_dependencies() -> None:
    runtime = _runtime_closure()
    providers = metadata.packages_distributions()
    missing = {
        module: providers.get(module)
        for module in _third_party_imports()
        if not {_canonical(d) for d in providers.get(module, [])} & runtime
    }
    assert missing == {}, f"imported by service/ but only installed by an extra: {missing}"
    # And the test tools are not among them.
    assert not {"pytest", "mypy", "schemathesis", "playwright"} & runtime


def _dry_run(target: str, venv: Path) -> str:
    result = subprocess.run(
        ["make", "-n", target, f"VENV={venv}", "PYTHON=python3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def test_make_run_installs_the_service_alone_and_make_test_adds_the_test_tools(
    tmp_path: Path,
) -> None:
    fresh = tmp_path / "venv"  # a .venv that does not exist yet: every step is due
    run = _dry_run("run", fresh)
    assert re.search(r"pip-install\.sh \S+ -e \.$", run, re.MULTILINE), run
    assert "[test]" not in run
    assert "==> installing the service and its runtime dependencies" in run
    test = _dry_run("test", fresh)
    assert "-e '.[test]'" in test
