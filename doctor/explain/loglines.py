"""Logged error and warning lines as events: the level the logger printed and the message after its prefix.

A line a logger wrote at ERROR / CRITICAL or WARNING level, that none of the other event readers recognises (no
exception, library, code, ...), is an event of kind "log" (`facts`: level error | warning, message, logger: the
file:line the logger printed). Attribution cannot read such a line (no frame, path or module); its text can be
looked up among the messages the packages' sources write (`doctor.explain.messages`). The prefixes read are the
ones the stack's loggers print: vLLM / vllm-ascend (`WARNING 06-16 15:10:58 [file.py:44] msg`), Python logging's
default (`ERROR:name:msg`), `[date] [ERROR] [file:line:fn] msg`, `... - name - ERROR - msg`, `[ERROR] msg`, and Ray's Python processes
(`date\tERROR file.py:n -- msg`, the tab as spaces when pasted).

Bounded: at most MAX_LOG_EVENTS such events per log (warnings at most MAX_WARNINGS): a log holds many more
warnings than failures, and the events of the failure must keep their place. Pure logic.
"""

from __future__ import annotations

import re

MAX_LOG_EVENTS = 16
MAX_WARNINGS = 8
# The phrases a logged warning line holds (the pre-filter already keeps every line with "ERR").
PHRASES: tuple[tuple[str, ...], ...] = (("WARNING",),)
_LEVEL = (r"(?P<level>ERROR|CRITICAL|FATAL|WARNING|WARN)")
_LOGGED = re.compile(
    r"^\s*" + _LEVEL + r" \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:\[(?P<file>[^\]]*)\]|(?P<file2>[\w.-]+:\d+)\]) ?"
    r"(?P<msg>.*)"
    r"|^\s*" + _LEVEL.replace("level", "level2") + r":[\w.-]*:(?P<msg2>.*)"
    r"|^\s*\[[\d\-/ T:,.]+\]\s*\[" + _LEVEL.replace("level", "level3") + r"\]\s*(?:\[(?P<file3>[^\]]*)\]\s*)?(?P<msg3>.*)"
    r"|\s-\s[\w.-]+\s-\s" + _LEVEL.replace("level", "level4") + r"\s-\s(?P<msg4>.*)"
    r"|^\s*\[" + _LEVEL.replace("level", "level5") + r"\]\s+(?P<msg5>[A-Za-z].*)"
    # Ray's Python processes: `2026-12-03 13:33:32,327\tERROR worker.py:421 -- msg` (a log pasted into an issue or a
    # terminal has the tab as spaces)
    r"|^\d{4}-\d\d-\d\d [\d:,.]+[\t ]+" + _LEVEL.replace("level", "level6") + r" (?P<file6>[\w.-]+:\d+) -- (?P<msg6>.*)"
    # Python logging after its date: `2025-01-01 10:00:00,123 WARNING msg`, `... - name - WARNING - msg` (above)
    r"|^\[?\d{4}-\d\d-\d\d[ T][\d:,.]+\]?\s+\[?" + _LEVEL.replace("level", "level7") + r"\]?:?\s+(?P<msg7>\S.*)"
    # glog and Ray's C++ processes: `W1203 10:11:12.123456  77 file.cc:12] msg`,
    # `[2026-12-03 13:30:20,613 W 6716 6720] (raylet) file.cc:12: msg`
    r"|^(?P<glog>[WEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ (?P<file8>[\w./-]+:\d+)\] (?P<msg8>.*)"
    r"|^\[\d{4}-\d\d-\d\d [\d:,.]+ (?P<spd>[WEC]) \d+ \d+\] (?:\([\w-]+\) )?(?P<file9>[\w./-]+:\d+): (?P<msg9>.*)")
# glog's / spdlog's level letters
_LETTERS = {"W": "WARNING", "E": "ERROR", "F": "FATAL", "C": "CRITICAL"}
_LEVELS = {"ERROR": "error", "CRITICAL": "error", "FATAL": "error", "WARNING": "warning", "WARN": "warning"}


class LogLineReader:
    """`read(text)` -> the facts of a logged error / warning line (`text` without a launcher prefix), within the
    bounds; the event reader (doctor.explain.events) makes the event."""

    def __init__(self) -> None:
        self.kept = 0
        self.warnings = 0

    @staticmethod
    def recognises(text: str) -> bool:
        """The line is a logged error / warning record this reader reads (whatever its budget)."""
        return bool(_LOGGED.search(text))

    @staticmethod
    def level_of(text: str) -> str | None:
        """The level ("error" | "warning") of a logged record this reader reads, whatever its budget; None for
        another line."""
        m = _LOGGED.search(text)
        if m is None:
            return None
        word = next((g for g in (m.group("level"), m.group("level2"), m.group("level3"), m.group("level4"),
                                 m.group("level5"), m.group("level6"), m.group("level7")) if g), None)
        return _LEVELS[word or _LETTERS[m.group("glog") or m.group("spd")]]

    def read(self, text: str) -> dict[str, str] | None:
        if self.kept >= MAX_LOG_EVENTS:
            return None
        m = _LOGGED.search(text)
        level = self.level_of(text)
        if m is None or level is None:
            return None
        msg = next((g for g in (m.group("msg"), m.group("msg2"), m.group("msg3"), m.group("msg4"), m.group("msg5"),
                                m.group("msg6"), m.group("msg7"), m.group("msg8"), m.group("msg9")) if g is not None),
                   "").strip()
        if not msg:
            return None
        if level == "warning":
            if self.warnings >= MAX_WARNINGS:
                return None
            self.warnings += 1
        self.kept += 1
        facts = {"level": level, "message": msg[:300]}
        where = (m.group("file") or m.group("file2") or m.group("file3") or m.group("file6") or m.group("file8")
                 or m.group("file9"))
        if where:
            facts["logger"] = where
        return facts
