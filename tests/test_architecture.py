"""Every layer rule of the house (docs/ARCHITECTURE.md), walked over the imports of service/.

Imports point inwards: ``api -> referee -> game -> rules`` and ``referee -> store -> game``.
The rules core and the game (and the record format built on them) are pure: no Flask, Redis or
marshmallow. Only the store knows Redis. The API maps the service layer's errors and never
reaches the store or the wiring. No module imports itself back through others, and none is
over 600 lines but the solver's search.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVICE = ROOT / "service"
FORBIDDEN = {"flask", "redis", "marshmallow", "werkzeug", "gunicorn", "yaml"}
MAX_LINES = 600
LONGER_ALLOWED = {"service/rules/solver/search.py"}  # the solver's search: one hot loop


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of service/, by its dotted name."""
    return {module_name(path): path for path in sorted(SERVICE.rglob("*.py"))}


@cache
def imports_of(path: Path) -> tuple[str, ...]:
    """The modules ``path`` imports (absolute imports: the house uses no relative ones); for
    ``from package import name`` the submodule when ``name`` is one, else the package."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.append(submodule if submodule in modules() else node.module)
    return tuple(dict.fromkeys(found))


def imports_under(folder: str) -> list[tuple[str, str]]:
    """(path, imported module) for every module under ``service/<folder>``."""
    return [
        (path.relative_to(ROOT).as_posix(), module)
        for path in sorted((SERVICE / folder).rglob("*.py"))
        for module in imports_of(path)
    ]


def within(module: str, *prefixes: str) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


# -- the pure core -----------------------------------------------------------------------------


@pytest.mark.parametrize("package", ["rules", "game", "record"])
def test_the_core_imports_no_framework_or_storage(package: str) -> None:
    bad = [(p, m) for p, m in imports_under(package) if m.split(".")[0] in FORBIDDEN]
    assert bad == []


@pytest.mark.parametrize(
    ("package", "inward"),
    [
        ("rules", ("service.rules",)),
        ("game", ("service.rules", "service.game")),
        ("record", ("service.rules", "service.game", "service.record")),
    ],
)
def test_the_core_imports_nothing_from_outer_layers(package: str, inward: tuple[str, ...]) -> None:
    """The rules know nothing of the game, the game nothing of the referee, the store, the
    API; the record format only the game and the rules."""
    outward = [
        (p, m) for p, m in imports_under(package) if within(m, "service") and not within(m, *inward)
    ]
    assert outward == []


# -- the store ---------------------------------------------------------------------------------


def test_nothing_outside_the_store_imports_redis() -> None:
    bad = [
        (path.relative_to(ROOT).as_posix(), module)
        for name, path in modules().items()
        if not within(name, "service.store")
        for module in imports_of(path)
        if module.split(".")[0] in {"redis", "limits"}
    ]
    assert bad == []


def test_the_store_imports_no_referee_api_or_fanout() -> None:
    """The store is the innermost adapter: what calls it never comes back into it."""
    outer = ("service.referee", "service.api", "service.fanout", "service.app")
    bad = [(p, m) for p, m in imports_under("store") if within(m, *outer)]
    assert bad == []


# -- the service layer and the entry points ------------------------------------------------------


@pytest.mark.parametrize("package", ["referee", "store", "webhooks"])
def test_the_service_layer_and_the_store_know_no_threads_or_web(package: str) -> None:
    banned = ("flask", "werkzeug", "service.api", "service.workers.threads", "service.app")
    assert [(p, m) for p, m in imports_under(package) if within(m, *banned)] == []


def test_the_api_imports_nothing_of_the_store_nor_the_wiring() -> None:
    """Entry points import services: the API maps the service layer's errors, and the
    store's types stay behind the referee and the fan-out."""
    bad = [
        (p, m) for p, m in imports_under("api") if within(m, "service.store", "service.bootstrap")
    ]
    assert bad == []


@pytest.mark.parametrize("module", ["service/sweeper.py", "service/dispatcher.py"])
def test_the_background_processes_build_no_flask_app(module: str) -> None:
    imported = imports_of(ROOT / module)
    assert [
        m for m in imported if within(m, "flask", "werkzeug", "service.app", "service.api")
    ] == []


def test_the_gunicorn_hooks_import_only_the_standard_library_before_gevent() -> None:
    """The master loads them before gevent patches anything (service/workers/__init__.py);
    a hook imports the rest inside, in the worker."""
    loaded_by_the_master = ["__init__.py", "gunicorn.py", "rows.py", "slots.py", "shared_states.py"]
    bad = [
        (name, module)
        for name in loaded_by_the_master
        for node in ast.parse((SERVICE / "workers" / name).read_text()).body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for module in (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        )
        if module is not None
        and module.split(".")[0] not in sys.stdlib_module_names
        and not within(module, "service.workers")
        and module != "__future__"
    ]
    assert bad == []


# -- the whole -----------------------------------------------------------------------------------


def test_no_module_imports_itself_back() -> None:
    """No import cycle among the modules of service/ (a package counts as its __init__)."""
    graph = {
        name: {module for module in imports_of(path) if module in modules() and module != name}
        for name, path in modules().items()
    }
    cycles = [component for component in strongly_connected(graph) if len(component) > 1]
    assert cycles == []


def test_no_module_is_over_600_lines_but_the_solvers_search() -> None:
    long = {
        path.relative_to(ROOT).as_posix(): lines
        for path in modules().values()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert set(long) <= LONGER_ALLOWED, long


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]
