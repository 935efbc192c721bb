"""What attribution found for one error event (`doctor.explain.attribution` and `doctor.explain.messages` build it,
`doctor.explain.findings` turns it into a finding): its own module so that neither builder imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from doctor.report import Severity


@dataclass(frozen=True)
class Attribution:
    id: str
    severity: Severity
    components: tuple[str, ...]
    title: str
    detail: str
    fix: str
    source: str
    read: str  # what was read to decide: a frame, a path, a library, a module, a code
    line: int = 0
    text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    time: float | None = None


def components(*names: str | None) -> tuple[str, ...]:
    """The components an attribution names, in order, each once (a None or '' left out)."""
    out: list[str] = []
    for n in names:
        if n and n not in out:
            out.append(n)
    return tuple(out)
