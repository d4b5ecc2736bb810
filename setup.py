"""Builds the solver's hot modules with mypyc when it can (README, "The solver, compiled").

`pip install .`, `pip install -e .` (what `make install` runs) and the Docker image compile
service/rules/solver/{search,options,packing,runs,groups}.py into C extensions; Python imports an
extension before the source of the same name, and the sources stay plain Python that runs
the same, slower, uncompiled. Everything else is in pyproject.toml.

The install goes on in pure Python, with a warning, when REFEREE_PURE_PYTHON=1, when no C
compiler (or no Python.h) is at hand, or when mypyc fails; it never half-compiles.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
# Compiled together into one extension group (calls between them stay native).
COMPILED = [
    "service/rules/solver/search.py",
    "service/rules/solver/options.py",
    "service/rules/solver/packing.py",
    "service/rules/solver/runs.py",
    "service/rules/solver/groups.py",
]
# The group's shared library: service/rules/solver/_compiled__mypyc.*.so
GROUP = "service.rules.solver._compiled"
# pip runs this file for the metadata too (egg_info, dist_info): only these build extensions
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def _pure(reason: str) -> list[Extension]:
    warnings.warn(f"rummikub-referee: the solver stays pure Python ({reason})", stacklevel=2)
    return []


def _compiler_works() -> str | None:
    """None when a C compiler builds against this Python's headers, else why not.

    The compiler is the one the build will use: ``$CC``, else the one this Python was built
    with (``sysconfig``), as setuptools picks it.
    """
    command = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder, "probe.c")
        source.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
        include = sysconfig.get_paths()["include"]
        probe = [*command, "-I", include, "-c", str(source), "-o", str(Path(folder, "probe.o"))]
        try:
            built = subprocess.run(probe, capture_output=True, text=True, check=False)
        except OSError as error:
            return f"no working C compiler: {error}"
        if built.returncode != 0:
            return f"no working C compiler: {' '.join(command)}: {built.stderr.strip()[:300]}"
    return None


def compiled_extensions() -> list[Extension]:
    """The mypyc extensions, or none (pure Python) with a warning saying why."""
    if not BUILDS & set(sys.argv[1:]):
        return []
    if os.environ.get("REFEREE_PURE_PYTHON", "") not in ("", "0"):
        return _pure("REFEREE_PURE_PYTHON is set")
    if not all((ROOT / path).is_file() for path in COMPILED):
        return _pure("its sources are not here")  # the Dockerfile's dependencies-only step
    problem = _compiler_works()
    if problem:
        return _pure(problem)
    try:
        from mypyc.build import mypycify
    except ImportError as error:
        return _pure(f"mypyc is missing: {error}")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        return mypycify(
            # pyproject.toml's [tool.mypy] serves `mypy --strict service`; here mypy checks
            # only these modules and what they import, for this interpreter
            ["--strict", "--no-warn-unused-configs", "--python-version", version, *COMPILED],
            group_name=GROUP,
        )
    except (Exception, SystemExit) as error:  # mypyc reports a type error by SystemExit
        return _pure(f"mypyc failed: {error!r}")


if __name__ == "__main__":  # as setuptools runs it; tests import _compiler_works
    setup(ext_modules=compiled_extensions())
