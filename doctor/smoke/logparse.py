"""Parse verl's console metrics lines: `(TaskRunner pid=N) step:K - key:value - key:value …`.

Format (docs/verl-mindspeed.md "Log lines", `verl/utils/logger/aggregate_logger.py::concat_dict_to_str`): "step:{step}" then one
"{key}:{value}" per numeric metric, joined by " - ". Since verl 0.5.0 values are `pprint.pformat(v)`, so numpy
scalars print as `np.float64(0.1)` / `np.int64(5)` under numpy >= 2 and plain under numpy < 2; ≤ 0.4.x used
"%.3f". Keys contain `/` and `@` but no `:`, so each item splits on its last `:`. Ray prefixes actor output
with `(TaskRunner pid=N)` (optionally `, ip=…`) and may colour that prefix with ANSI escapes.

Streaming: `LogScanner.feed(line)` keeps only the parsed steps and a bounded tail, so a multi-GB log is fine.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_PREFIX = re.compile(r"^\s*\((?P<actor>[A-Za-z_][\w.]*)\s+pid=(?P<pid>\d+)(?:,\s*ip=[^)]*)?\)\s*")
_STEP = re.compile(r"^step:(?P<step>\d+)(?P<rest>(?: - .*)?)$")
_NP_WRAP = re.compile(r"^np\.(?:float|int|uint|bool_?)\w*\((?P<v>.*)\)$")
_TOTAL = re.compile(r"Total training steps:\s*(?P<n>\d+)")

Value = float | int | bool


@dataclass(frozen=True)
class StepLine:
    step: int
    metrics: dict[str, Value]
    actor: str | None = None
    pid: int | None = None


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def strip_prefix(line: str) -> str:
    """The line without ANSI colour and without Ray's `(Actor pid=N)` prefix."""
    text = strip_ansi(line).strip()
    m = _PREFIX.match(text)
    return text[m.end():] if m else text


def parse_value(text: str) -> Value | None:
    """`0.5`, `np.float64(0.5)`, `np.int64(3)`, `nan`, `inf`, `True`, `np.True_` → a number; else None."""
    t = text.strip()
    m = _NP_WRAP.match(t)
    if m:
        t = m.group("v").strip()
    if t in ("True", "np.True_"):
        return True
    if t in ("False", "np.False_"):
        return False
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)  # accepts nan, inf, -inf, 1e-05
    except ValueError:
        return None


def parse_step_line(line: str) -> StepLine | None:
    """The metrics of one console line, or None if it is not a `step:N - …` line."""
    text = strip_ansi(line).rstrip("\r\n")
    actor = pid = None
    m = _PREFIX.match(text)
    if m:
        actor, pid = m.group("actor"), int(m.group("pid"))
        text = text[m.end():]
    text = text.strip()
    sm = _STEP.match(text)
    if not sm:
        return None
    metrics: dict[str, Value] = {}
    rest = sm.group("rest")
    if rest:
        for item in rest[3:].split(" - "):
            key, sep, raw = item.rpartition(":")
            if not sep or not key.strip():
                continue
            value = parse_value(raw)
            if value is not None:
                metrics[key.strip()] = value
    return StepLine(step=int(sm.group("step")), metrics=metrics, actor=actor, pid=pid)


def is_finite(value: Value | None) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class LogScanner:
    """Feed lines one at a time; holds the steps seen, `Total training steps: N`, and the last lines."""

    tail_lines: int = 200
    steps: dict[int, dict[str, Value]] = field(default_factory=dict)
    total_training_steps: int | None = None
    lines: int = 0
    tail: deque[str] = field(default_factory=deque)

    def feed(self, line: str) -> StepLine | None:
        self.lines += 1
        self.tail.append(line.rstrip("\r\n"))
        while len(self.tail) > self.tail_lines:
            self.tail.popleft()
        parsed = parse_step_line(line)
        if parsed is not None:
            # verl logs each step once; if a step repeats (a resumed run), later values win but keys merge.
            self.steps.setdefault(parsed.step, {}).update(parsed.metrics)
            return parsed
        if self.total_training_steps is None and "Total training steps" in line:
            m = _TOTAL.search(strip_ansi(line))
            if m:
                self.total_training_steps = int(m.group("n"))
        return None

    def feed_all(self, lines: Iterable[str]) -> LogScanner:
        for line in lines:
            self.feed(line)
        return self


def scan_file(path: str) -> LogScanner:
    """Stream a log file (bad bytes replaced) through a scanner."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return LogScanner().feed_all(fh)
