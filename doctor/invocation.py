"""Whether the `doctor …` lines a report prints run this doctor when typed as written.

Findings say `doctor check --python PY`, `$ doctor install --dry-run --venv verl-venv`: the command by its name, as
the README writes it. The README's own first line runs `.venv/bin/doctor check` without activating the venv, and
there a pasted `doctor install …` is "command not found" (or, worse, another doctor found first on PATH, of another
release). The lines keep the name, which is what runs on the cluster a snapshot came from; the text report adds one
note naming the path that runs this doctor, only when the doctor was started as its console script and the name
does not lead back to it (under `python -m doctor` the user knows how it was run; tests run it so).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable

# a `doctor <command>` a finding tells the user to run (prose or a command line)
_DOCTOR_LINE = re.compile(r"(?:^|[\s`'(\"])doctor (?:check|collect|install|smoke|launch|lint|explain|profiles|diff)\b")


def mentions_doctor(texts: Iterable[str]) -> bool:
    """Whether any of the texts tells the user to run a `doctor <command>`."""
    return any(_DOCTOR_LINE.search(t) for t in texts if t)


def name_note(argv0: str | None = None, which: Callable[[str], str | None] = shutil.which) -> str | None:
    """The note for a report whose lines say `doctor …`, or None when typing `doctor` runs this one (or the doctor
    was not started as its `doctor` console script)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if not argv0 or os.path.basename(argv0) != "doctor":
        return None
    script = os.path.abspath(argv0)
    found = which("doctor")
    if found is not None and os.path.realpath(found) == os.path.realpath(script):
        return None
    bin_dir = os.path.dirname(script)
    other = f"; the `doctor` on PATH is another one ({found})" if found else ""
    activate = f" (`source {bin_dir}/activate`)" if os.path.isfile(os.path.join(bin_dir, "activate")) else ""
    return (f"note: `doctor` in the lines above is {script}, which typing `doctor` does not run here{other}: type "
            f"that path, or put {bin_dir} first on PATH{activate}")
