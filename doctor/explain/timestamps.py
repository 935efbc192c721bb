"""Timestamps in the log formats this stack writes, turned into a sortable key (seconds since the epoch).

Ordering error events across nodes needs a time for each one. Formats seen in the corpus:

* ISO-like `2025-06-16 15:11:06,443`, `2025-06-16T15:11:06.443Z` (Python logging, Ray, verl)
* CANN / torch_npu `2024-05-17-01:30:26` and `2024-11-28-11:59:30.645.648` (`[ERROR] ... (PID:...)`, `EZ9999: [PID: ...]`)
* vLLM `ERROR 06-16 02:47:10 [file.py:870]` and glog `[W616 15:12:01.123456 ...]`, `I0616 15:11:06.443` (no year)
* `05/22 09:09:35 - mmengine` (no year)

A format without a year takes the year of the last full date seen in the same file (or `default_year`). When no
full date stated it, the key is a `YearAssumed`: the same number (the order of events does not change), printed
without the year, since the log does not say which year it was.
"""

from __future__ import annotations

import calendar
import re
import time

_FULL = re.compile(
    rb"(?<!\d)(20\d\d)[-/](\d\d)[-/](\d\d)[ T-](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"
)
_VLLM = re.compile(rb"\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\b")
_GLOG = re.compile(rb"(?<![\w.])[IWEF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\b")
_SLASH = re.compile(rb"(?<![\d/])(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)\b")


class YearAssumed(float):
    """A sort key whose year the log does not state (`default_year` stood in for it)."""

    __slots__ = ()


class Own(float):
    """A sort key read from the line itself, not from an earlier one. The scanner knows which; the text a finding
    shows may not hold the stamp any more (vLLM's `(EngineCore pid=…) ERROR 01-13 07:50:04 [core.py:710]` prefix
    is cut from it)."""

    __slots__ = ()


class _OwnYearAssumed(Own, YearAssumed):
    __slots__ = ()


def own(t: float | None) -> float | None:
    """`t` marked as the line's own stamp (its YearAssumed kept)."""
    if t is None:
        return None
    return _OwnYearAssumed(t) if isinstance(t, YearAssumed) else Own(t)


def _epoch(year: int, month: int, day: int, hh: int, mm: int, ss: int, frac: bytes | None) -> float | None:
    if not (1 <= month <= 12 and 1 <= day <= 31 and hh < 24 and mm < 60 and ss < 61):
        return None
    try:
        base = calendar.timegm((year, month, day, hh, mm, ss, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    return base + (float(b"0." + frac) if frac else 0.0)


def full_year(text: bytes) -> int | None:
    """The year of the last full date in `text`, if any."""
    last = None
    for m in _FULL.finditer(text):
        last = m
    return int(last.group(1)) if last else None


def parse(text: bytes, default_year: int, *, year_stated: bool = True) -> float | None:
    """The last timestamp in `text` (one line, or a window of lines), as epoch seconds; None if there is none.
    A stamp without a year gets `default_year`; unless `year_stated` (a full date of the log gave it), the
    result is a `YearAssumed`."""
    best: tuple[int, float] | None = None
    guess = float if year_stated else YearAssumed
    for m in _FULL.finditer(text):
        y, mo, d, hh, mi, ss = (int(g) for g in m.groups()[:6])
        t = _epoch(y, mo, d, hh, mi, ss, m.group(7))
        if t is not None and (best is None or m.start() >= best[0]):
            best = (m.start(), t)
    for rx, has_frac in ((_VLLM, False), (_GLOG, True), (_SLASH, False)):
        for m in rx.finditer(text):
            g = m.groups()
            t = _epoch(default_year, int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), g[5] if has_frac else None)
            if t is not None and (best is None or m.start() > best[0]):
                best = (m.start(), guess(t))
    return best[1] if best else None


def format_epoch(t: float | None) -> str | None:
    """`YYYY-MM-DD hh:mm:ss.mmm` (UTC, the way the key was built), `MM-DD hh:mm:ss.mmm` when the log does not
    state the year (a `YearAssumed`), or None."""
    if t is None:
        return None
    whole = int(t)
    y, mo, d, hh, mm, ss = time.gmtime(whole)[:6]
    day = f"{mo:02d}-{d:02d}" if isinstance(t, YearAssumed) else f"{y:04d}-{mo:02d}-{d:02d}"
    return f"{day} {hh:02d}:{mm:02d}:{ss:02d}.{min(999, int((t - whole) * 1000)):03d}"
