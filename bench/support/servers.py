"""The servers the benchmarks start: gunicorn as deploy/gunicorn.conf.py runs it (test mode),
the webhook dispatcher, and how to stop either."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

__all__ = [
    "gunicorn_setting",
    "start_dispatcher",
    "start_gunicorn",
    "stop",
    "worker_class",
    "workers",
]

ROOT = Path(__file__).resolve().parents[2]


def gunicorn_setting(name: str) -> int:
    """A setting as deploy/gunicorn.conf.py works it out from this environment."""
    value: int = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))[name]
    return value


def workers() -> int:
    return gunicorn_setting("workers")


def worker_class() -> str:
    value: str = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))["worker_class"]
    return value


def start_gunicorn(port: int, redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "REDIS_URL": redis_url,
        "REFEREE_TEST_MODE": "1",
        "LOG_LEVEL": "warning",
        "WEB_CONCURRENCY": str(workers()),
        "RATE_LIMIT": "",
    }
    # deploy/gunicorn.conf.py leaves gunicorn's own access log off (the app writes its own).
    command = [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
               "service.app:create_app()"]  # fmt: skip
    with log.open("wb") as output:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, 15)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()


def start_dispatcher(redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "REDIS_URL": redis_url, "REFEREE_TEST_MODE": "1", "LOG_LEVEL": "warning"}
    with log.open("wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "service.dispatcher"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
