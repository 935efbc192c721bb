"""The `doctor install` line a check's finding suggests, runnable as written.

`doctor install` needs an explicit target and refuses the doctor's own environment (README: install), so a bare
`doctor install --dry-run` exits 2. The line names the interpreter the check examined when that is another
environment than the doctor's; otherwise a new venv (`--venv verl-venv`: a dry run creates nothing).
"""

from __future__ import annotations

import shlex
from typing import Any

from doctor.installers.fixline import install_target


def install_dry_run(snapshot: Any, profile: Any = None) -> str:
    """`doctor install [--profile NAME] --dry-run --python EXE` for the examined interpreter, or `--venv verl-venv`."""
    chosen = f" --profile {shlex.quote(profile.name)}" if profile is not None else ""
    return f"doctor install{chosen} --dry-run {install_target(snapshot)}"
