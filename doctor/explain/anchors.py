"""Fixed phrases of a regex: the text every match must contain, which the pre-filter searches for.

Every signature regex must contain a fixed phrase of 3+ characters (its literal). A line that lacks all of a
pattern's phrases cannot match it, so the scanner only runs regexes on lines the pre-filter
(`doctor.explain.prefilter`) picks out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Protocol

MIN_LITERAL = 3


class RegexLike(Protocol):
    """A compiled pattern or a `doctor.explain.lazyre.LazyRegex`: only its source and flags are read here."""

    @property
    def pattern(self) -> str: ...

    @property
    def flags(self) -> int: ...


def required_runs(pattern: str) -> list[str]:
    """Every run of 3+ plain characters that every match of `pattern` must contain, in pattern order."""
    return list(_required_runs(pattern))


# Patterns whose runs were worked out by an earlier run of this same code (remember): taken as they are.
_REMEMBERED: dict[str, tuple[str, ...]] = {}


def remember(known: Iterable[tuple[str, tuple[str, ...]]]) -> None:
    """Take these (pattern, runs) pairs as already worked out: the signature database kept in the cache directory
    carries its patterns' runs (doctor.explain.db, keyed by this module's source), ~10 ms of parsing per run."""
    _REMEMBERED.update(known)


@lru_cache(maxsize=8192)  # the loader, the match table and the pre-filter all ask for the same patterns
def _required_runs(pattern: str) -> tuple[str, ...]:
    """Conservative: any construct it does not understand ends the run, and a top-level `|` means "no literal".
    """
    if (known := _REMEMBERED.get(pattern)) is not None:
        return known
    runs: list[str] = []
    run: list[str] = []
    depth = 0
    i = 0
    n = len(pattern)

    def flush() -> None:
        if len(run) >= MIN_LITERAL:
            runs.append("".join(run))
        run.clear()

    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if depth == 0 and not nxt.isalnum():
                run.append(nxt)
            else:
                flush()
            i += 2
            continue
        if c == "[":
            flush()
            i = _skip_class(pattern, i)
            continue
        if c == "(":
            depth += 1
            flush()
        elif c == ")":
            depth = max(0, depth - 1)
            flush()
        elif c == "|":
            if depth == 0:
                return ()
            flush()
        elif c in "*?{":
            if run:  # the previous character is optional or repeated: not required as written
                run.pop()
            flush()
            if c == "{":
                j = pattern.find("}", i)
                i = n if j < 0 else j + 1
                continue
        elif c in "+.^$":
            flush()
        elif depth == 0:
            run.append(c)
        i += 1
    flush()
    return tuple(runs)


def split_alternatives(pattern: str) -> list[str]:
    """`a|b(c|d)` -> ["a", "b(c|d)"]: the top-level alternatives of a regex (escapes and classes respected)."""
    if "|" not in pattern:  # most patterns: nothing to split, and the loop below costs ~40 us a pattern
        return [pattern]
    parts, depth, i, cut = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _skip_class(pattern, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == "|" and depth == 0:
            parts.append(pattern[cut:i])
            cut = i + 1
        i += 1
    parts.append(pattern[cut:])
    return parts


def _skip_class(pattern: str, i: int) -> int:
    """Index just past the character class starting at pattern[i] == '['."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    while j < n and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


# `(?` not followed by `:` (non-capturing group) or `P<` (named group): inline flags or look-arounds.
_UNSAFE_GROUP = re.compile(r"\(\?(?!:|P<)")


def literal_for(pattern: RegexLike) -> str | None:
    """The longest fixed phrase every match of the compiled pattern contains (None: no safe one)."""
    runs = runs_for(pattern)
    return max(runs, key=len) if runs else None


def runs_for(pattern: RegexLike) -> tuple[str, ...]:
    """Every fixed phrase every match of the compiled pattern contains (empty: no safe one)."""
    return _runs(pattern.pattern, pattern.flags)


@lru_cache(maxsize=8192)  # the loader, the match table and the pre-filter ask for each pattern's phrases in turn
def _runs(source: str, flags: int) -> tuple[str, ...]:
    if flags & re.IGNORECASE or _UNSAFE_GROUP.search(source):
        return ()  # flags or look-arounds: no safe literal
    return _required_runs(source)
