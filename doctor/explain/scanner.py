"""Streaming scan of one log: bytes in, hits out, in bounded memory.

The log is read in blocks. The pre-filter (`doctor.explain.prefilter`) finds, at C speed, the lines that
contain a fixed phrase of some signature; only those lines are decoded, freed of terminal colour codes and
matched against the signature regexes (so a fixed phrase with a colour code inside it is not seen). Memory holds one block, one capped partial line and, per signature, the first matching line with a
few context lines. Per line:

1. every signature whose regex matches is a candidate; the highest `specificity` wins the line (file order
   breaks ties);
2. a signature with `context` rules counts only if each rule matched some line of the same log; when the line
   winner's context never shows up, the line falls back to the best signature without context.

Until the first error-looking line is seen, the pre-filter also looks for generic error markers, so that a log
whose errors match no signature can still name its first error line.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from doctor.explain import aho, anchors, prefilter, timestamps
from doctor.explain.db import Signature, SignatureDB, read_signatures
from doctor.explain.events import (
    APART_PHRASES,
    EVENT_PHRASES,
    MAX_CONTINUATION,
    PLACED_AFTER,
    STACK_LINES,
    Event,
    EventReader,
    continue_message,
    is_python_warning,
    line_process,
    note_code,
    strip_prefix,
    wants_code,
    wants_continuation,
)
from doctor.explain.lexicon import COMMENT_LINE, NOTICE_RECORD, ZERO_COUNT, ZERO_COUNT_HINT
from doctor.explain.processes import repeated, unrepeated
from doctor.explain.pywarnings import MAX_MESSAGE_LINES, message_span

BLOCK = 112 * 1024  # bytes read at a time (below the allocator's mmap threshold: buffers are reused, not faulted in)
MAX_LINE = 64 * 1024  # bytes kept of one line; the rest of an over-long line is skipped
SHOWN_CHARS = 300  # characters of a line kept as evidence
DEFAULT_CONTEXT = 2  # lines kept before and after the first match of each signature
CODE_LINES = 3  # lines read above a call's TypeError for the source line it failed on (events.note_code)
WENT_ON_LINES = 6  # lines read below a handled-looking exception for a sign that the process went on (events.note_after)
HEAD_LINES = 4  # the log's first lines kept (at least): a log this short is a quoted message
MAX_LINE_NUMBERS = 5  # line numbers listed per finding
TIME_WINDOW = 16 * 1024  # bytes looked back for the timestamp of a line that has none
PROBE_BYTES = 64 * 1024  # bytes inspected to tell text from binary
REPLAN_AFTER = 200  # unmatched candidate lines after the first error line before the pre-filter drops the markers
WARNING_BYTES = 4 * 1024  # bytes looked back for a Python warning whose message a line may belong to
# a Python warning's message after `<file>.py:<line>: <Category>: ` (doctor.explain.events is_python_warning)
_WARNING_MESSAGE = re.compile(r"\.py:\d+: [A-Z]\w*Warning: ?(.*)$")

_ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")
# Generic error markers, each with a fixed phrase (pre-filter anchors), for "the first error line".
# A traceback header is not itself the error: the exception line after it is.
FIRST_ERROR_PATTERNS = (
    r"[A-Za-z]Error\b",
    r"[A-Za-z]Exception\b",
    r"\bERROR\b",
    r"\bFAILED\b",
    r"\bFatal\b",
    r"error: ",
    r"core dumped",
    r"Segmentation fault",
    r"Killed",
    r"StopIteration",
    r"KeyboardInterrupt",
)
_FIRST_ERROR = tuple(re.compile(p) for p in FIRST_ERROR_PATTERNS)
_FIRST_ERROR_RUNS = tuple(runs for p in _FIRST_ERROR if (runs := anchors.runs_for(p)))
# Lines logged at info/warning level are not "the first error", whatever words they contain; nor is a comment of
# a shell / Python script or config echoed into the log (`# To reduce memory fragmentation and avoid out of memory`
# in vllm-ascend's serve scripts): it says what a setting is for, not what went wrong.
# Ray's wrapper of a task's or actor's exception (`ray.exceptions.RayTaskError(ValueError): ray::f() (pid=…)`): it
# names the call, not the failure; Ray prints the task's own traceback below it, the cause's exception line first
# (python/ray/exceptions.py RayTaskError.__str__). Up to WRAPPED_LINES lines below it are read for that line.
_RAY_WRAPPER = re.compile(r"\bRay(?:Task|Actor)?Error\((?P<type>[\w.]+)\)")
WRAPPED_LINES = 400
# What stands between the wrapper and the inner exception line: frames and their code (indented), blank lines,
# the chain sentences, a nested `ray::f() (pid=…)` heading and a `Traceback (most recent call last):` line.
_WRAPPED_SKIP = re.compile(r"^(?:\s|$)|^(?:Traceback \(most recent call last\)|During handling of the above exception"
                           r"|The above exception was the direct cause|ray::)")
_WRAPPED_FRAME = re.compile(r'^\s+File "')
# The inner exception's line, unindented: `pkg.mod.Name: message` or a bare `Name` (zipfile.BadZipFile, a CamelCase
# class whose name says neither Error nor Exception).
_WRAPPED_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s|:?$)")
_NOT_AN_ERROR = re.compile(r"^\W*(?:\([^)]*\)\s*)?(?:INFO|WARNING|WARN|DEBUG)\b|^\W*[IW]\d{3,4} |\bWarning: |UserWarning|"
                           + COMMENT_LINE.pattern)


@dataclass
class Hit:
    line: int
    text: str
    before: list[str]
    after: list[str] = field(default_factory=list)
    count: int = 1
    lines: list[int] = field(default_factory=list)
    time: float | None = None
    warned: int = 0  # occurrences on a line Python's warnings module printed (doctor.explain.findings.handled_hits)
    # the later listed occurrences (lines[1:]) as hits of their own: where the first was handled and a later one not,
    # the finding shows the later one (doctor.explain.findings.shown_hit)
    others: list[Hit] = field(default_factory=list)
    # the processes whose prefix the occurrences carry (`rank3`, `WorkerDict pid=12`: doctor.explain.processes), and
    # how many more copies Ray's log deduplication folded into them (`[repeated 7x across cluster]`)
    processes: set[str] = field(default_factory=set)
    repeated: int = 0


@dataclass
class ScanResult:
    """What one log gave: per-signature hits and the facts the findings are built from."""

    lines_read: int
    bytes_read: int
    hits: dict[str, Hit]
    runner_up: dict[str, dict[str, Hit]]
    unmet_context: set[str]
    first_error: Hit | None
    binary: bool
    has_text: bool  # some line holds more than whitespace
    # For merging the parts of one log read by several processes (doctor.explain.parts):
    unmet_rules: dict[str, set[int]] = field(default_factory=dict)  # per signature, its context rules never met
    head: list[str] = field(default_factory=list)  # the first lines (`context`, at least HEAD_LINES)
    tail: list[str] = field(default_factory=list)  # the last `context` lines
    events: list[Event] = field(default_factory=list)  # the log's error events, first ones (doctor.explain.events)
    events_dropped: int = 0


def _decode(raw: bytes) -> str:
    """A line as its process printed it: without colour codes and without Ray's dedup suffix
    (doctor.explain.processes)."""
    return unrepeated((_ANSI.sub(b"", raw) if b"\x1b" in raw else raw).decode("utf-8", "replace"))


def _note_process(hit: Hit, region: bytes, start: int, end: int, text: str) -> None:
    """The process an occurrence's prefix names, and the copies Ray folded into it, added to its hit."""
    if (who := line_process(text)) is not None:
        hit.processes.add(who)
    hit.repeated += repeated(region[start:end])


def _shorten(line: str) -> str:
    text = line.strip()
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _is_error_line(text: str) -> bool:
    """A line that states an error; a counter at zero (Ray's state dump: `num chunks received failed / plasma
    error: 0`) states none."""
    if _NOT_AN_ERROR.search(text) or NOTICE_RECORD.search(text):
        return False
    counted = ZERO_COUNT.sub("", text) if ZERO_COUNT_HINT.search(text) else text
    return any(p.search(counted) for p in _FIRST_ERROR)


class LogScanner:
    """Feed bytes with `feed_bytes`, then `close()`; `result()` gives the hits. Memory is bounded by the number
    of signatures and the block size, not by the log."""

    def __init__(self, db: SignatureDB | None = None, *, context_lines: int = DEFAULT_CONTEXT,
                 default_year: int = 2025, year_stated: bool = False) -> None:
        self.db = db if db is not None else read_signatures()
        self.context_lines = max(0, context_lines)
        self.lines_read = 0
        self.bytes_read = 0
        self._year = default_year
        self._year_stated = year_stated  # a full date of the log gave `_year` (else it is printed without one)
        self._index = self.db.match_index
        self._context_todo = {k: list(v) for k, v in self.db.context_rules.items()}
        self._hits: dict[str, Hit] = {}
        self._runner_up: dict[str, dict[str, Hit]] = {}
        self._first_error: Hit | None = None
        self._tail: deque[str] = deque(maxlen=self.context_lines)  # last lines of the previous region
        self._tail_bytes = b""  # end of the previous region, for timestamps
        self._open: list[tuple[Hit, int]] = []  # hits still collecting "after" context: (hit, lines wanted)
        self._carry = b""
        self._dropping = False  # inside the unread rest of an over-long line
        self._rx: prefilter.Prefilter | aho.AhoPrefilter | None = None
        self._context_met = False  # a context rule was met: its phrases may leave the pre-filter
        self._context_waste = 0  # candidate lines that gave nothing since then
        self.candidate_lines = 0  # lines the pre-filter picked out (the work beyond reading the log)
        self._sample: prefilter.Sample | None = None
        self._sampled = False
        self._probe = bytearray()
        self._binary = False
        self._has_text = False
        self._head: list[str] = []
        self._generic = True  # the pre-filter still looks for the generic error markers
        self._apart = True  # ... and for Python warnings and plain failure lines (doctor.explain.events)
        self._apart_wasted = 0
        self._wasted = 0  # candidate lines no signature matched since the first error line
        self._events = EventReader()
        self._cr = False  # the last block ended with a \r (its \n, if any, starts the next block)

    # -- feeding

    def prime(self, before: bytes) -> None:
        """Start as if `before` (complete lines) had just been read: it gives the first lines their context and
        their timestamp, but is not scanned or counted (for a part of a log read by another process)."""
        if before:
            self._remember_tail(before)

    def feed_bytes(self, chunk: bytes) -> None:
        if not chunk or self._binary:
            return
        self.bytes_read += len(chunk)
        if len(self._probe) < PROBE_BYTES:
            self._probe += chunk[: PROBE_BYTES - len(self._probe)]
            if len(self._probe) >= PROBE_BYTES and _looks_binary(bytes(self._probe)):
                self._binary = True
                return
        if self._cr or b"\r" in chunk:
            chunk = self._line_breaks(chunk)
            if not chunk:
                return
        if self._dropping:
            nl = chunk.find(b"\n")
            if nl < 0:
                return
            self._dropping = False
            self._scan_region(self._carry + b"\n")
            self._carry = b""
            chunk = chunk[nl + 1 :]
        data = self._carry + chunk if self._carry else chunk
        last = data.rfind(b"\n")
        if last < 0:
            self._keep_partial(data)
            return
        self._keep_partial(data[last + 1 :])
        self._scan_region(data[: last + 1])

    def _line_breaks(self, chunk: bytes) -> bytes:
        """A lone `\r` is a line break (a progress bar redraws its line with it, and the error printed after it
        is a line of its own); `\r\n` is one break. A `\r` at the end of a block waits for the next one."""
        if self._cr:
            chunk = b"\r" + chunk
        self._cr = chunk.endswith(b"\r")
        if self._cr:
            chunk = chunk[:-1]
        return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

    def close(self) -> None:
        if not self._binary and self._probe and _looks_binary(bytes(self._probe)):
            self._binary = True
        if self._binary:
            return
        if self._cr:
            self._cr = False
            self.feed_bytes(b"\n")
            self.bytes_read -= 1
        if self._carry or self._dropping:
            carry, self._carry, self._dropping = self._carry, b"", False
            self._scan_region(carry + b"\n")
        self._events.close()

    def _keep_partial(self, rest: bytes) -> None:
        if len(rest) > MAX_LINE:
            self._carry, self._dropping = rest[:MAX_LINE], True
        else:
            self._carry = rest

    # -- one region of complete lines

    def _prefilter(self, region: bytes) -> prefilter.Prefilter | aho.AhoPrefilter | None:
        if not self._sampled:
            self._sample, self._sampled = prefilter.sample_of(region), True
        # the signatures' phrases, and those of the context rules not yet met (a met context's word, `raylet` in a
        # Ray log, would otherwise keep selecting lines that no pattern needs)
        options = (*self.db.pattern_options, *self.db.context_options(self._context_todo), *EVENT_PHRASES)
        if self._apart:
            options = (*options, *APART_PHRASES)
        if self._generic:
            options = (*options, *_FIRST_ERROR_RUNS)
        return prefilter.build_prefilter(options, self._sample, large=self.bytes_read >= aho.LARGE_LOG)

    def _scan_region(self, region: bytes) -> None:
        if not self._has_text:
            self._has_text = not region.isspace()
        if self._rx is None or (isinstance(self._rx, aho.AhoPrefilter) and not self._rx.large
                                and self.bytes_read >= aho.LARGE_LOG):
            self._rx = self._prefilter(region)  # a long log's automaton is the DFA (doctor.explain.aho.LARGE_LOG)
        if len(self._head) < max(self.context_lines, HEAD_LINES):
            self._head.extend(self._first_lines(region, max(self.context_lines, HEAD_LINES) - len(self._head)))
        if self._open:
            self._fill_open(region)
        base, counted_to, seen = self.lines_read, 0, 0
        for start, end in self._rx.candidates(region) if self._rx is not None else ():
            seen += region.count(b"\n", counted_to, start)
            counted_to = start
            self._candidate(region, start, end, base + seen + 1)
        self.lines_read = base + region.count(b"\n")
        self._remember_tail(region)

    def _candidate(self, region: bytes, start: int, end: int, lineno: int) -> None:
        self.candidate_lines += 1
        text = _decode(region[start : min(end, start + MAX_LINE)]).rstrip("\r")
        for sig_id, rules in list(self._context_todo.items()):
            left = [rule for rule in rules
                    if not any((lit is None or lit in text) and p.search(text) for lit, p in rule)]
            if len(left) == len(rules):
                continue
            self._context_met = True
            if left:
                self._context_todo[sig_id] = left
            else:
                del self._context_todo[sig_id]
        winner, runner_up = self._match(text)
        if winner is None and (bare := strip_prefix(text)) != text:
            winner, runner_up = self._match(bare)  # behind a prefix a signature anchored at the line start misses
        matched = winner is not None
        if winner is not None:
            self._record_match(winner, runner_up, region, start, end, lineno, text)
        kept = len(self._events.events)
        event = self._events.feed(lineno, text)
        if self._events.opened_at == lineno and (above := self._lines_preceding(region, start, 1)
                                                 or list(self._tail)[-1:]):
            self._events.note_above(above[0])  # a traceback's header: the line above may say it was handled
        if event is not None and len(self._events.events) > kept:
            event.signature = winner.id if winner is not None else None
            event.time = self._time_of(region, start, end)
            event.process, event.repeated = line_process(text), repeated(region[start:end])
            self._events.note_after(event, self._lines_after(region, end, WENT_ON_LINES))
            if event.kind != "warning" and self._continues_warning(region, start, end, text):
                event.facts["handled"] = "warned"  # a Python warning's message, on a line below its first
            if wants_continuation(event):
                more = continue_message(event, self._lines_after(
                    region, end, MAX_MESSAGE_LINES if event.kind == "warning" else MAX_CONTINUATION),
                                        prefixed=strip_prefix(text) != text)
                self._events.continued(event, len(more))
                if more and event.kind != "warning" and (winner is None or winner.fallback or winner.yields):
                    self._match_wrapped(event, f"{text.rstrip()} {' '.join(more)}", region, start, end, lineno)
            if wants_code(event):
                note_code(event, self._lines_preceding(region, start, CODE_LINES))
        elif event is None and winner is not None:
            self._events.note_signature(winner.id)
        if event is None and self._events.in_traceback and 'File "' in text:
            self._placed_exception(region, end, lineno)
        if self._events.stack_pending:  # a py-spy thread header: its frame lines hold no phrase, so read them here
            self._events.read_stack(lineno, self._lines_after(region, end, STACK_LINES))
        if self._apart and (self._events.apart_full or (
                not matched and len(self._events.events) == kept and self._count_apart_waste())):
            self._apart = False
            self._rx = self._prefilter(b"")
        if self._context_met and not matched and len(self._events.events) == kept:
            # A met context's phrases (`raylet` in a Ray log) only select lines now; re-planning costs about as much
            # as REPLAN_AFTER wasted lines, so it is done once they add up (never on a short log).
            self._context_waste += 1
            if self._context_waste >= REPLAN_AFTER:
                self._context_met, self._context_waste = False, 0
                self._rx = self._prefilter(b"")
        if self._first_error is None:
            if _is_error_line(text):
                inner = self._wrapped(region, end, lineno) if _RAY_WRAPPER.search(text) else None
                self._first_error = self._new_hit(region, *inner) if inner else \
                    self._new_hit(region, start, end, lineno, text)
        elif self._generic and not matched:
            # The generic markers are no longer needed; re-planning the pre-filter without them costs about
            # as much as this many wasted lines, so it is only done once they add up.
            self._wasted += 1
            if self._wasted >= REPLAN_AFTER:
                self._generic = False
                self._rx = self._prefilter(b"")

    def _count_apart_waste(self) -> bool:
        """A candidate line that gave nothing: after REPLAN_AFTER of them the warning / failure phrases go."""
        self._apart_wasted += 1
        return self._apart_wasted >= REPLAN_AFTER

    def _match(self, line: str) -> tuple[Signature | None, Signature | None]:
        """The most specific matching signature and, if it has context rules, the best one without. A class
        signature (fallback or yields) never matches a line logged at info / warning level: there the words it
        looks for are a notice (an optional module missing, a retried connection), not the failure."""
        winner: Signature | None = None
        notice: bool | None = None
        for lit, pattern, sig in self._index.rows_for(line):
            if winner is not None and sig.id == winner.id:
                continue
            if lit is not None and lit not in line:
                continue
            if sig.fallback or sig.yields:
                if notice is None:
                    notice = bool(_NOT_AN_ERROR.search(line) or NOTICE_RECORD.search(line))
                if notice:
                    continue
            if not pattern.search(line):
                continue
            if winner is None:
                winner = sig
                if not sig.context:
                    return winner, None
            elif not sig.context:
                return winner, sig
        return winner, None

    def _match_wrapped(self, event: Event, joined: str, region: bytes, start: int, end: int, lineno: int) -> None:
        """An exception message that went on on the next lines (a paste wrapped it): a specific signature whose
        phrase the wrap split is matched on the whole message, at the exception's line."""
        winner, runner_up = self._match(joined)
        if winner is None or winner.fallback or winner.yields:
            return
        self._record_match(winner, runner_up, region, start, end, lineno, joined)
        event.signature = winner.id

    def _record_match(self, winner: Signature, runner_up: Signature | None, region: bytes, start: int, end: int,
                      lineno: int, text: str) -> None:
        """The line's winner, and its best signature without context (used if the winner's context never comes)."""
        self._record(self._hits, winner, region, start, end, lineno, text)
        if winner.context and runner_up is not None:
            self._record(self._runner_up.setdefault(winner.id, {}), runner_up, region, start, end, lineno, text)

    def _record(self, table: dict[str, Hit], sig: Signature, region: bytes, start: int, end: int, lineno: int,
                text: str) -> None:
        hit = table.get(sig.id)
        if hit is None:
            hit = table[sig.id] = self._new_hit(region, start, end, lineno, text)
        else:
            hit.count += 1
            if len(hit.lines) < MAX_LINE_NUMBERS:
                hit.lines.append(lineno)
                hit.others.append(self._new_hit(region, start, end, lineno, text))
            _note_process(hit, region, start, end, text)
        if is_python_warning(text) or self._continues_warning(region, start, end, text):
            hit.warned += 1

    def _continues_warning(self, region: bytes, start: int, end: int, text: str) -> bool:
        """A line of a Python warning's message below its first line: the nearest warning above it, with only its
        process's lines between, announces its message below (doctor.explain.pywarnings), and the message runs down
        to this line. warnings.formatwarning writes a message as it is, its line breaks included (vLLM's
        `warnings.warn(f"Failed to read commit hash:\\n{e}", RuntimeWarning)` prints `No module named
        'vllm._version'` on a line of its own; torch's old-GPU warning prints three indented lines): what it says is
        the warning's, not a failure of its own."""
        if not strip_prefix(text).strip() or b"Warning:" not in region[max(0, start - WARNING_BYTES) : start]:
            return False
        above = self._lines_preceding(region, start, MAX_MESSAGE_LINES)
        process = line_process(text)
        for n in range(len(above) - 1, -1, -1):
            if above[n].strip() and line_process(above[n]) != process:
                return False
            if is_python_warning(above[n]):
                m = _WARNING_MESSAGE.search(strip_prefix(above[n]))
                below = [strip_prefix(line) for line in [*above[n + 1 :], text,
                                                         *self._lines_after(region, end, MAX_MESSAGE_LINES)]]
                return m is not None and len(above) - n - 1 < message_span(m.group(1), below)
        return False

    def _new_hit(self, region: bytes, start: int, end: int, lineno: int, text: str) -> Hit:
        hit = Hit(line=lineno, text=_shorten(text), before=self._lines_before(region, start), lines=[lineno],
                  time=self._time_of(region, start, end))
        _note_process(hit, region, start, end, text)
        if self.context_lines:
            after: list[str] = []
            pos = end + 1
            while len(after) < self.context_lines and pos < len(region):
                nxt = region.find(b"\n", pos)
                after.append(_shorten(_decode(region[pos : min(nxt, pos + MAX_LINE)])))
                pos = nxt + 1
            hit.after = after
            if len(after) < self.context_lines:
                self._open.append((hit, self.context_lines - len(after)))
        return hit

    @staticmethod
    def _wrapped(region: bytes, end: int, lineno: int) -> tuple[int, int, int, str] | None:
        """The exception line of the traceback below Ray's wrapper line ending at `end` (start, end, line number,
        text), the innermost cause's when Ray prints a chain or wraps another task's wrapper; None when the
        traceback is not in this block or a line that is no part of it comes first."""
        pos, framed = end + 1, False
        for n in range(1, WRAPPED_LINES + 1):
            if pos >= len(region):
                return None
            nxt = region.find(b"\n", pos)
            nxt = len(region) if nxt < 0 else nxt
            text = _decode(region[pos : min(nxt, pos + MAX_LINE)]).rstrip("\r")
            bare = strip_prefix(text)
            if _WRAPPED_FRAME.match(bare):
                framed = True
            elif _RAY_WRAPPER.search(bare):
                framed = False  # a task's wrapper inside another's: its own traceback follows
            elif not _WRAPPED_SKIP.match(bare):
                return (pos, nxt, lineno + n, text) if framed and _WRAPPED_EXCEPTION.match(bare) else None
            pos = nxt + 1
        return None

    def _placed_exception(self, region: bytes, end: int, lineno: int) -> None:
        """Below a frame, past its indented code (and 3.11's carets), the line that ends the traceback: fed to the
        reader as its exception line when no phrase made it a candidate (an exception named neither ...Error nor
        ...Exception: packaging's InvalidVersion, zipfile's BadZipFile). The source lines it passes, candidates or
        not, are the frame's code: the reader skips them when they come."""
        pos = end + 1
        for n in range(1, PLACED_AFTER + 1):
            if pos >= len(region):
                return
            nxt = region.find(b"\n", pos)
            nxt = len(region) if nxt < 0 else nxt
            line = _decode(region[pos : min(nxt, pos + MAX_LINE)]).rstrip("\r")
            bare = self._events.bare(line)
            if not bare.strip():
                return
            if not bare[:1].isspace():
                if self._rx is not None and self._rx.candidates(region[pos:nxt] + b"\n"):
                    return  # a candidate: the scanner feeds it in its turn, and the reader reads it by its place
                event = self._events.feed_exception(lineno + n, line, self._time_of(region, pos, nxt))
                if event is not None:
                    self.candidate_lines += 1
                    event.process, event.repeated = line_process(line), repeated(region[pos:nxt])
                    if self._first_error is None:  # an exception line is an error line, whatever it is called
                        self._first_error = self._new_hit(region, pos, nxt, lineno + n, line)
                    if wants_continuation(event):
                        continue_message(event, self._lines_after(region, nxt, MAX_CONTINUATION))
                return
            pos = nxt + 1

    @staticmethod
    def _lines_after(region: bytes, end: int, need: int) -> list[str]:
        """The next `need` lines of the region after the line ending at `end` (fewer at the region's end)."""
        out: list[str] = []
        pos = end + 1
        while len(out) < need and pos < len(region):
            nxt = region.find(b"\n", pos)
            nxt = len(region) if nxt < 0 else nxt
            out.append(_decode(region[pos : min(nxt, pos + MAX_LINE)]))
            pos = nxt + 1
        return out

    @staticmethod
    def _lines_preceding(region: bytes, start: int, need: int) -> list[str]:
        """The `need` lines of the region before the line starting at `start`, in order (fewer at its start)."""
        out: list[str] = []
        end = start - 1
        while len(out) < need and end > 0:
            begin = region.rfind(b"\n", 0, end) + 1
            out.append(_decode(region[begin : min(end, begin + MAX_LINE)]))
            end = begin - 1
        out.reverse()
        return out

    def _lines_before(self, region: bytes, start: int) -> list[str]:
        if not self.context_lines:
            return []
        out = [_shorten(line) for line in self._lines_preceding(region, start, self.context_lines)]
        missing = self.context_lines - len(out)
        return [*list(self._tail)[-missing:], *out] if missing and self._tail else out

    def _time_of(self, region: bytes, start: int, end: int) -> float | None:
        window = region[max(0, start - TIME_WINDOW) : min(end, start + MAX_LINE)]
        if start < TIME_WINDOW and self._tail_bytes:
            window = self._tail_bytes + window
        year = timestamps.full_year(window)
        if year:
            self._year, self._year_stated = year, True
        own = timestamps.parse(region[start : min(end, start + MAX_LINE)], self._year, year_stated=self._year_stated)
        if own is not None:
            return timestamps.own(own)
        return timestamps.parse(window, self._year, year_stated=self._year_stated)

    @staticmethod
    def _first_lines(region: bytes, need: int) -> list[str]:
        pos, lines = 0, list[str]()
        while len(lines) < need and pos < len(region):
            nxt = region.find(b"\n", pos)
            lines.append(_shorten(_decode(region[pos : min(nxt, pos + MAX_LINE)])))
            pos = nxt + 1
        return lines

    def _fill_open(self, region: bytes) -> None:
        still = []
        lines = self._first_lines(region, max(n for _, n in self._open))
        for hit, n in self._open:
            hit.after.extend(lines[:n])
            if len(lines) < n:
                still.append((hit, n - len(lines)))
        self._open = still

    def _remember_tail(self, region: bytes) -> None:
        self._tail_bytes = region[-TIME_WINDOW:]
        if not self.context_lines:
            return
        end, lines = len(region) - 1, list[str]()
        while len(lines) < self.context_lines and end > 0:
            begin = region.rfind(b"\n", 0, end) + 1
            lines.append(_shorten(_decode(region[begin : min(end, begin + MAX_LINE)])))
            end = begin - 1
        for line in reversed(lines):
            self._tail.append(line)

    # -- result

    def result(self) -> ScanResult:
        return ScanResult(
            lines_read=self.lines_read,
            bytes_read=self.bytes_read,
            hits=self._hits,
            runner_up=self._runner_up,
            unmet_context={k for k in self._context_todo},
            first_error=self._first_error,
            binary=self._binary,
            has_text=self._has_text,
            unmet_rules={k: {self.db.context_rules[k].index(rule) for rule in rules}
                         for k, rules in self._context_todo.items()},
            head=list(self._head),
            tail=list(self._tail),
            events=list(self._events.events),
            events_dropped=self._events.dropped,
        )


def _looks_binary(sample: bytes) -> bool:
    """NUL bytes, or mostly bytes that are neither printable ASCII, whitespace nor UTF-8, mean binary."""
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    text = sample.decode("utf-8", "replace")
    bad = text.count("\ufffd") + sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\x1b\x0c")
    return bad > 0.3 * len(text)
