"""Cache entries of a given size and age, and a writer that is gone, for the tests of the cache policy."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

MB = 1 << 20


def cache_entry(directory: Path, name: str, age_s: float, size: int = 4) -> Path:
    """A file last used `age_s` seconds ago, `size` bytes long (sparse: nothing is written)."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(size)
    age(path, age_s)
    return path


def age(path: Path, age_s: float) -> Path:
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid
