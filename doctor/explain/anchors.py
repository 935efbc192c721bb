"""The literal pre-filter: one compiled byte regex that finds, at C speed, every line that *could* match.

Every signature regex must contain a fixed phrase (its literal). A line that lacks all literals cannot match
any signature, so the scanner only decodes and regex-matches lines the pre-filter hits. Python's `re` has no
multi-string search, but its search loop skips over positions whose byte is not a possible *first* byte
very quickly. So each literal is entered starting at its rarest byte and the part before that byte is checked
with a look-behind: for the literal `cannot open shared object file` the alternative is
`ject file(?<=cannot open shared object file)`, and the search only stops where a `j` occurs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache

MIN_LITERAL = 3
SAMPLE_BYTES = 256 * 1024  # bytes of the log used to rank byte frequencies
MIN_SAMPLE = 64 * 1024  # below this the static byte order is used (and the compiled pre-filter is shared)

# Bytes from rarest to most common in typical training logs; used before a sample is seen and to break ties.
_STATIC_ORDER = (
    b"\x1b`~^|\\;!?$#@&*%'\"<>{}QJZXVKYWUHGBjqzxkvMFLOPDCNTIRSAEwygbf9876543"
    b"mpuhldc()[]=+_-,.:/201ntioase r\t\n"
)
_STATIC_RANK = {b: i for i, b in enumerate(_STATIC_ORDER)}


def required_literal(pattern: str) -> str | None:
    """The longest run of plain characters every match of `pattern` must contain, or None.

    Conservative: any construct it does not understand ends the run, and a top-level `|` means "no literal".
    """
    best = ""
    run: list[str] = []
    depth = 0
    i = 0
    n = len(pattern)

    def flush() -> None:
        nonlocal best
        if len(run) > len(best):
            best = "".join(run)
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
                return None
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
    return best if len(best) >= MIN_LITERAL else None


def split_alternatives(pattern: str) -> list[str]:
    """`a|b(c|d)` -> ["a", "b(c|d)"]: the top-level alternatives of a regex (escapes and classes respected)."""
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


def literal_for(pattern: re.Pattern[str]) -> str | None:
    if pattern.flags & re.IGNORECASE or _UNSAFE_GROUP.search(pattern.pattern):
        return None  # flags or look-arounds: no safe literal
    return required_literal(pattern.pattern)


def minimal_literals(literals: Iterable[str]) -> list[str]:
    """Drop every literal that contains another one: a line holding it also holds the shorter one."""
    unique = sorted(set(literals), key=len)
    kept: list[str] = []
    for lit in unique:
        if not any(k in lit for k in kept):
            kept.append(lit)
    return kept


def byte_frequencies(sample: bytes) -> Counter[int]:
    """Byte counts of the log's first region; empty for a sample too small to say more than the static order."""
    if len(sample) < MIN_SAMPLE:
        return Counter()
    return Counter(sample[:SAMPLE_BYTES])


def build_prefilter(literals: Iterable[str], freq: Mapping[int, int] | None = None) -> re.Pattern[bytes] | None:
    """One byte regex matching wherever any literal occurs; None when there is no literal at all.

    Compiled patterns are cached: the same literals under the same byte ranking give the same regex, so short
    inputs (which all use the static ranking) share one compiled pre-filter."""
    freq = freq or {}
    ranking = tuple(sorted(freq.items()))
    return _build_cached(tuple(literals), ranking)


@lru_cache(maxsize=16)
def _build_cached(literals: tuple[str, ...], ranking: tuple[tuple[int, int], ...]) -> re.Pattern[bytes] | None:
    freq = dict(ranking)
    groups: dict[int, list[bytes]] = {}
    for lit in minimal_literals(literals):
        raw = lit.encode("utf-8")
        i = min(range(len(raw)), key=lambda k: (freq.get(raw[k], 0), _STATIC_RANK.get(raw[k], 255), -k))
        tail = re.escape(raw[i + 1 :])
        alt = tail + (b"(?<=" + re.escape(raw) + b")" if i else b"")
        groups.setdefault(raw[i], []).append(alt)
    if not groups:
        return None
    parts = []
    for first, alts in sorted(groups.items()):
        head = re.escape(bytes([first]))
        parts.append(head + (b"(?:" + b"|".join(sorted(alts, key=len, reverse=True)) + b")" if alts != [b""] else b""))
    return re.compile(b"|".join(parts))
