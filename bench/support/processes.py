"""What the benchmarks read of their servers' processes from ``/proc``: a process's children
(gunicorn's workers) and the processor time processes have used."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["children", "cpu_seconds"]


def children(parent: int) -> list[int]:
    """The process ids of ``parent``'s children (gunicorn's workers); none once it is gone."""
    try:
        text = Path(f"/proc/{parent}/task/{parent}/children").read_text()
    except OSError:
        return []
    return [int(pid) for pid in text.split()]


def cpu_seconds(pids: list[int]) -> float:
    """The processor time (user and system) the processes ``pids`` have used so far; one that
    is gone counts for nothing, so the figure may say less, never more."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")
