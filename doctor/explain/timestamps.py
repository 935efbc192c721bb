"""Timestamps in the log formats this stack writes, turned into a sortable key (seconds since the epoch).

Ordering error events across nodes needs a time for each one. Formats seen in the corpus:

* ISO-like `2025-06-16 15:11:06,443`, `2025-06-16T15:11:06.443Z` (Python logging, Ray, verl)
* CANN / torch_npu `2024-05-17-01:30:26` and `2024-11-28-11:59:30.645.648` (`[ERROR] ... (PID:...)`, `EZ9999: [PID: ...]`)
* vLLM `ERROR 06-16 02:47:10 [file.py:870]` and glog `[W616 15:12:01.123456 ...]`, `I0616 15:11:06.443` (no year)
* `05/22 09:09:35 - mmengine` (no year)

A format without a year takes the year of the last full date seen in the same file (or `default_year`).
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


def parse(text: bytes, default_year: int) -> float | None:
    """The last timestamp in `text` (one line, or a window of lines), as epoch seconds; None if there is none."""
    best: tuple[int, float] | None = None
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
                best = (m.start(), t)
    return best[1] if best else None


def format_epoch(t: float | None) -> str | None:
    """`YYYY-MM-DD hh:mm:ss.mmm` (UTC, the way the key was built) or None."""
    if t is None:
        return None
    whole = int(t)
    y, mo, d, hh, mm, ss = time.gmtime(whole)[:6]
    return f"{y:04d}-{mo:02d}-{d:02d} {hh:02d}:{mm:02d}:{ss:02d}.{min(999, int((t - whole) * 1000)):03d}"
