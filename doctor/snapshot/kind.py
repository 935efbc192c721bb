"""Whether a text is a file `doctor collect` wrote, told from its start without importing the snapshot model.

`doctor explain` asks it of every log named on its command line (a snapshot named as a LOG is the wrong flag, not
input to read); importing doctor.snapshot.loader for it brought in doctor.snapshot.model, ~25 ms of every run and
more than all the rest of the question."""

from __future__ import annotations

import re

_DOCTOR_DOCUMENT = re.compile(r'"schema"\s*:\s*"doctor\.(snapshot|cluster)/')


def doctor_document_kind(text: str) -> str | None:
    """"snapshot" or "cluster" when `text` is a file `doctor collect` wrote (its `schema` in the first 4 KB of a JSON
    object), else None: given where a report's text or a log belongs, it is the wrong flag, not input to read."""
    if not text.lstrip().startswith("{"):
        return None
    m = _DOCTOR_DOCUMENT.search(text[:4096])
    return m.group(1) if m else None
