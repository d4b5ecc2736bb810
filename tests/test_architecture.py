"""The rules core and the game are pure: no Flask, Redis or marshmallow, inwards imports only."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"flask", "redis", "marshmallow", "werkzeug", "gunicorn", "yaml"}


def imported_modules(package: str) -> list[tuple[Path, str]]:
    found = []
    for path in sorted((ROOT / "service" / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found += [(path, alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append((path, node.module))
    return found


@pytest.mark.parametrize("package", ["rules", "game"])
def test_the_core_imports_no_framework_or_storage(package: str) -> None:
    if not (ROOT / "service" / package).exists():
        pytest.skip(f"service/{package} does not exist yet")
    bad = [(p.name, m) for p, m in imported_modules(package) if m.split(".")[0] in FORBIDDEN]
    assert bad == []


def test_the_rules_core_imports_nothing_from_outer_layers() -> None:
    outward = [
        (p.name, m)
        for p, m in imported_modules("rules")
        if m.startswith("service.") and not m.startswith("service.rules")
    ]
    assert outward == []
