"""Where uv runs on this host: the one place the doctor looks for it. `doctor install` runs it (find_uv's full
path), the fix lines of a check of this host name it (diagnose looks it up once, before the checks run, and the checks
read it from their options: checks are pure), and an extra's install line uses it in a venv without pip."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class UvHere:
    """`own`: the uv beside the doctor's interpreter (pip-installed into the doctor's venv), its full path;
    `on_path`: the uv the PATH searched finds, its full path. None where there is none."""

    own: str | None
    on_path: str | None

    def to_run(self) -> str | None:
        """The uv the doctor itself runs: its own first (the version it was installed with), then PATH's."""
        return self.own or self.on_path

    def for_user(self) -> str | None:
        """The uv a user of this host types, shell-quoted: `uv` when PATH has it, else the doctor's own by its full
        path, else None."""
        if self.on_path:
            return "uv"
        return shlex.quote(self.own) if self.own else None


def uv_here(path: str | None = None) -> UvHere:
    """uv on this host; `path`: the PATH to search (None: this process's)."""
    own = os.path.join(os.path.dirname(sys.executable), "uv")
    return UvHere(own=own if os.path.isfile(own) and os.access(own, os.X_OK) else None,
                  on_path=shutil.which("uv", path=path))
