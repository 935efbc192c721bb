"""The pre-filter on a compiled multi-string automaton (ahocorasick_rs, the Rust `aho-corasick` crate).

One pass of an Aho-Corasick automaton over a block finds every occurrence of every fixed phrase at once, in C/Rust
time per byte and with no per-line Python work: about 2 ns a byte for the ~400 phrases of the shipped
signatures, a third of what the `re` plan of `doctor.explain.prefilter` costs on the same log. Each pattern
is represented by the longest of its fixed phrases (a line without it cannot match the pattern); for a long
log's DFA a phrase that holds another kept phrase is dropped (a line holding it holds the shorter one too).

The library ships wheels for CPython 3.10+ on Linux x86_64 and aarch64 (the Ascend hosts); when it cannot be
imported, `doctor.explain.prefilter` falls back to its pure-`re` plan, which finds the same lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Generic, TypeVar

try:
    import ahocorasick_rs
except ImportError:  # pragma: no cover - exercised by forcing the fallback in tests
    ahocorasick_rs = None  # type: ignore[assignment]

AVAILABLE = ahocorasick_rs is not None
_E = TypeVar("_E", bound=tuple[Any, ...])


# Bytes of log from which the scan is worth a DFA. A DFA over the pruned phrases (phrases_of) finds them fastest: on
# text dense in error words about 2 ns a byte less than the contiguous NFA, on training-log noise about the same.
# But pruning (~6 ms) and the DFA (~13 ms) cost ~19 ms against the NFA's ~2 ms over every longest phrase: most of a
# short log's scan, and earned back only after ~8 MB even of dense text. So a log is scanned with the NFA, built
# once, and one that grows past this gets the DFA in its stead (the scanner's `_scan_region`).
LARGE_LOG = 8 << 20


class AhoPrefilter:
    """`candidates(region)`: the (start, end) offsets of the lines holding some phrase, in order, each once
    (end: the offset of the line's newline, or -1 when the region ends without one). `large`: a DFA over the
    pruned phrases, else a contiguous NFA over all of them (the same lines either way: see LARGE_LOG)."""

    def __init__(self, phrases: tuple[bytes, ...], large: bool = False) -> None:
        assert ahocorasick_rs is not None
        self.phrases, self.large = phrases, large
        kind = ahocorasick_rs.Implementation.DFA if large else ahocorasick_rs.Implementation.ContiguousNFA
        self._ac = ahocorasick_rs.BytesAhoCorasick(list(phrases), implementation=kind)

    def candidates(self, region: bytes) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        line_end = -1  # the newline ending the last candidate line
        for _, start, _end in self._ac.find_matches_as_indexes(region):
            if start <= line_end:
                continue  # another phrase in a line already taken
            line_start = region.rfind(b"\n", 0, start) + 1
            line_end = region.find(b"\n", start)
            out.append((line_start, line_end))
            if line_end < 0:
                break
        return out


def longest_phrases(options: Iterable[tuple[str, ...]]) -> list[bytes]:
    """One phrase per pattern (its longest: the rarest in a log), shortest first."""
    return sorted({max(runs, key=len).encode("utf-8") for runs in options if runs}, key=lambda p: (len(p), p))


def phrases_of(options: Iterable[tuple[str, ...]]) -> tuple[bytes, ...]:
    """One phrase per pattern (its longest), without phrases that hold another kept one (a line holding one holds
    the shorter one too, so the same lines are found; a DFA over half as many phrases builds in half the time)."""
    longest = longest_phrases(options)
    if ahocorasick_rs is not None and longest:
        # Which phrases hold another: one overlapping automaton search per phrase (the pairwise `in` test below
        # took 0.09 s for the ~900 phrases, a third of a short run). A phrase holding none is minimal and kept;
        # one holding another holds a minimal one too, so the result is the same as the greedy loop's.
        ac = ahocorasick_rs.BytesAhoCorasick(longest)
        return tuple(sorted(p for p in longest
                            if all(longest[i] == p for i, _, _ in ac.find_matches_as_indexes(p, overlapping=True))))
    kept: list[bytes] = []
    for phrase in longest:
        if not any(k in phrase for k in kept):
            kept.append(phrase)
    return tuple(sorted(kept))


@lru_cache(maxsize=8)
def build(options: tuple[tuple[str, ...], ...], large: bool = False) -> AhoPrefilter | None:
    """The compiled pre-filter for patterns given by their fixed phrases (shared by every log); None when there
    is no phrase at all. `large`: for a log past LARGE_LOG (the pruned phrases in a DFA); else every longest phrase
    in an NFA, one automaton built."""
    phrases = phrases_of(options) if large else tuple(longest_phrases(options))
    return AhoPrefilter(phrases, large) if phrases else None


class LiteralIndex(Generic[_E]):
    """Which entries of a match table (`(literal, pattern, ...)` rows, most specific first) a line can match:
    those whose literal it holds, in table order.

    A candidate line used to be tested against every row's literal in turn (`lit in line`, ~1,100 rows: ~0.2 ms
    a line in Python, most of a long log's matching time, and growing with the database). One overlapping pass
    of an automaton over the row literals finds the same rows at once. A row without a literal is always
    returned; without the compiled library every row is, and the caller's own `lit in line` test decides as
    before."""

    def __init__(self, table: Sequence[_E]) -> None:
        self.table = tuple(table)
        literals = sorted({row[0] for row in self.table if row[0]})
        slot = {lit: i for i, lit in enumerate(literals)}
        rows: list[list[int]] = [[] for _ in literals]
        for i, row in enumerate(self.table):
            if row[0]:
                rows[slot[row[0]]].append(i)
        self._rows = tuple(tuple(r) for r in rows)
        self._always = tuple(i for i, row in enumerate(self.table) if not row[0])
        self._ac = ahocorasick_rs.AhoCorasick(literals) if ahocorasick_rs is not None and literals else None

    def rows_for(self, line: str) -> Sequence[_E]:
        if self._ac is None:
            return self.table
        found = {i for i, _, _ in self._ac.find_matches_as_indexes(line, overlapping=True)}
        if not found and not self._always:
            return ()
        picked = [*self._always]
        for i in found:
            picked.extend(self._rows[i])
        picked.sort()
        return [self.table[i] for i in picked]
