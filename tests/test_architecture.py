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


@pytest.mark.parametrize("package", ["rules", "game", "record"])
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


def service_modules_outside(*kept: str) -> list[Path]:
    """Every module of ``service/`` except those under the folders ``kept``."""
    return [
        path
        for path in sorted((ROOT / "service").rglob("*.py"))
        if not any(path.is_relative_to(ROOT / "service" / folder) for folder in kept)
    ]


def imports_of(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
    return found


def test_nothing_outside_the_store_imports_redis() -> None:
    outside = service_modules_outside("store")
    names = {path.relative_to(ROOT).as_posix() for path in outside}
    assert {"service/referee/usecases.py", "service/sweeper.py", "service/bootstrap.py"} <= names
    assert "service/api/stream.py" in names and "service/api/errors.py" in names
    bad = [
        (path.relative_to(ROOT).as_posix(), module)
        for path in outside
        for module in imports_of(path)
        if module.split(".")[0] in {"redis", "limits"}
    ]
    assert bad == []


def test_the_sweeper_builds_no_flask_app() -> None:
    modules = imports_of(ROOT / "service" / "sweeper.py")
    assert not [m for m in modules if m.split(".")[0] == "flask" or m == "service.app"]


@pytest.mark.parametrize(
    "module",
    [
        *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "service/referee").glob("*.py")),
        "service/store/matches.py",
    ],
)
def test_the_service_layer_and_the_store_know_no_threads_or_web(module: str) -> None:
    banned = {"flask", "werkzeug", "service.api", "service.workers.threads", "service.app"}
    modules = imports_of(ROOT / module)
    assert not [m for m in modules if m in banned or m.split(".")[0] in banned]


def test_the_api_imports_nothing_of_the_store_nor_the_wiring() -> None:
    bad = [
        (path.relative_to(ROOT).as_posix(), module)
        for path in sorted((ROOT / "service" / "api").rglob("*.py"))
        for module in imports_of(path)
        if module.startswith(("service.store", "service.bootstrap"))
    ]
    assert bad == []
