"""One line a restore of a git clone reports, marked where it is made with whether it leaves something.

A restore (`clonestate.restore`, `gitsrc.put_back`) says what it did and what it left (someone's later work, a git
command that failed). `--rollback`, and a failed or interrupted install, turn the lines that *left* something into
the warning `install-clone-left` (`clones_left`, here so that both import it from below);
telling those apart by their wording broke silently whenever a line was reworded, so each line carries the mark
from the place that writes it, and the reader never parses the text.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from doctor.report import Finding, finding


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


def clones_left(left: list[dict[str, Any]], after: str) -> list[Finding]:
    """A warning when a restore left something in a clone (`left`: the records of its lines that say so, `records`);
    `after` names the restore ("the rollback of install ID", "the restore after the failed install"). Without it,
    `install-rolled-back`, or a failure's "the environment was restored", read as a clean undo while a clone stayed
    not as it was, named only in one line of the text."""
    if not left:
        return []
    made = [x["path"] for x in left if x["made"]]
    paths = list(dict.fromkeys(x["path"] for x in left))
    fix = (" ".join(f"`rm -rf {shlex.quote(p)}`" for p in made) + (" if nothing in it is yours (it changed after the run made it: "
                                                       "the line says how)." if len(made) == 1 else
                                                       " if nothing in them is yours (each changed after the run made "
                                                       "it: the lines say how).") if made else "")
    rest = [x["line"] for x in left if not x["made"]]
    if rest:
        fix += (" " if fix else "") + "Look at what the lines name and put it where you want it: " + "; ".join(rest)
    return [finding("install-clone-left", "warning", "system",
                    f"{after} left {len(paths)} clone(s) as they are, not as before it: {', '.join(paths)}",
                    detail="\n".join(x["line"] for x in left), evidence={"clones": paths, "lines": [x["line"] for x in left]},
                    fix=fix)]
