"""One line a restore of a git clone reports, marked where it is made with whether it leaves something.

A restore (`clonestate.restore`, `gitsrc.put_back`) says what it did and what it left (someone's later work, a git
command that failed). `--rollback` turns the lines that *left* something into the warning `install-clone-left`;
telling those apart by their wording broke silently whenever a line was reworded, so each line carries the mark
from the place that writes it, and the reader never parses the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Line:
    """`text` starts with the clone's `path`. `left`: something in the clone is not as it was before the run and
    the restore did not undo it. `made`: the clone is one the run made, left because it changed since, which
    `rm -rf` removes once its owner has looked."""

    path: str
    text: str
    left: bool = False
    made: bool = False

    def __str__(self) -> str:
        return self.text

    def record(self) -> dict[str, Any]:
        """{path, line, made}: what `install-clone-left` names (evidence and fix)."""
        return {"path": self.path, "line": self.text, "made": self.made}


def did(path: str, what: str) -> Line:
    """A line saying what the restore did (or that nothing was there to do)."""
    return Line(path, f"{path}: {what}")


def left(path: str, what: str, *, made: bool = False) -> Line:
    """A line saying what the restore left in the clone `path` (see Line)."""
    return Line(path, f"{path}: {what}", left=True, made=made)


def records(lines: list[Line]) -> list[dict[str, Any]]:
    """The records of the lines that left something."""
    return [ln.record() for ln in lines if ln.left]
