"""A regular expression compiled on its first use.

The shipped database holds about a thousand regexes; compiling all of them took most of a short run (1.4 s of
2.3 s on a 10-line log). The scanner only runs a regex on a line that holds its fixed phrase (the pre-filter's
literal), so on most logs most regexes are never run: each is compiled the first time a line reaches it.
A database given by the user (`--signatures`) is still compiled when it is loaded, so that a broken regex is
an input error at once, not a surprise in the middle of a log.
"""

from __future__ import annotations

import re
from typing import Any


class LazyRegex:
    """Quacks like the `re.Pattern[str]` it stands for (`pattern`, `flags`, `search`, `groupindex`)."""

    __slots__ = ("_rx", "pattern")

    def __init__(self, pattern: str, compiled: re.Pattern[str] | None = None) -> None:
        self.pattern = pattern
        self._rx = compiled

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.pattern)
        return self._rx

    @property
    def flags(self) -> int:
        # Patterns are compiled without flags, and inline flags are refused by the loader (anchors.runs_for).
        return self._rx.flags if self._rx is not None else 0

    @property
    def groupindex(self) -> Any:
        return self.compiled.groupindex

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyRegex) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __repr__(self) -> str:
        return f"LazyRegex({self.pattern!r})"
