"""The `doctor install` line a check's finding suggests, runnable as written.

`doctor install` needs an explicit target and refuses the doctor's own environment (README: install), so a bare
`doctor install --dry-run` exits 2. The line names the interpreter the check examined when that is another
environment than the doctor's; otherwise a new venv (`--venv verl-venv`: a dry run creates nothing).
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from doctor.checks.facts import val

NEW_VENV = "verl-venv"


def _own_environment(exe: str) -> bool:
    """The interpreter's environment is the directory above its bin/ (as `doctor install` decides)."""
    env = os.path.dirname(os.path.dirname(os.path.abspath(exe)))
    return os.path.realpath(env) == os.path.realpath(sys.prefix)


def install_dry_run(snapshot: Any, profile: Any = None) -> str:
    """`doctor install [--profile NAME] --dry-run --python EXE` for the examined interpreter, or `--venv verl-venv`."""
    exe = val(getattr(snapshot, "python", None), "executable")
    target = (f"--python {shlex.quote(exe)}" if isinstance(exe, str) and os.path.isabs(exe) and not _own_environment(exe)
              else f"--venv {NEW_VENV}")
    chosen = f" --profile {shlex.quote(profile.name)}" if profile is not None else ""
    return f"doctor install{chosen} --dry-run {target}"
