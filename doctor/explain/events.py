"""Error events: what a log's error lines say, read the way an engineer reads them.

A signature matches one line; an engineer reads a *traceback* (its frames and its exception, and the exceptions
chained to it), a *compiler, linker or loader error* (the file, library or symbol it names), an *error code*
(CANN / ACL / HCCL: the code and the module part of it), a *pip error* (the packages it names) and a *signal or
OOM kill*. `EventReader` turns the candidate lines of a log (the lines the pre-filter picked, in order, each with
its number) into such events, so that attribution (`doctor.explain.attribution`) can ask which package ships the
frame, file, library, module or code each event names.

Streaming and bounded: the reader holds at most one open traceback (MAX_FRAMES frames: the first and the last
ones) and MAX_EVENTS events (the first ones: the root cause of a failure comes first in its log; later events are
counted, not kept). Pure logic: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from doctor.explain.class_phrases import (
    BUDGET_PHRASES,
    DCMI_PHRASES,
    HCCL_PHRASES,
    OS_PHRASES,
    PIP_PHRASES,
    PYSPY_PHRASES,
    PYSPY_THREAD,
    UNIT_PHRASES,
    WAIT_PHRASES,
    WATCHDOG,
)
from doctor.explain.classes import LINE_PHRASES, line_class
from doctor.explain.lexicon import FAILURE_PHRASES, NOTICE_RECORD, states_failure
from doctor.explain.loglines import PHRASES as LOG_PHRASES
from doctor.explain.loglines import LogLineReader
from doctor.explain.processes import ELASTIC_TAG, process_of
from doctor.explain.pywarnings import MAX_MESSAGE_LINES, announces_more, message_span
from doctor.report import Severity

MAX_EVENTS = 64  # events kept per log (the first ones)
MAX_WARNINGS = 8  # Python warnings kept per log (the first ones), apart from MAX_EVENTS: noise never crowds out errors
MAX_FAILURE_LINES = 8  # plain lines that state a failure (kind "failure"), kept apart from MAX_EVENTS as well
_APART = {"warning": MAX_WARNINGS, "failure": MAX_FAILURE_LINES}
MAX_FRAMES = 40  # frames kept per traceback: the first HEAD_FRAMES and the last ones
HEAD_FRAMES = 8
MAX_TEXT = 300  # characters of a line kept
TRACEBACK_GAP = 60  # candidate lines after the last frame before an open traceback without its exception is closed
PLACED_AFTER = 4  # lines below a frame its traceback's exception line can be: the frame's source, carets, a wrap
MAX_CONTINUATION = 8  # lines of an exception message after its first one (Python prints str(exc) whole)
# CPython's report of an exception it could not raise (Python/errors.c PyErr_WriteUnraisable: a `__del__`, a weakref
# callback, a thread's atexit): `Exception ignored in: <function X.__del__ at 0x...>`, its traceback below
_IGNORED = re.compile(r"^\s*Exception ignored (?:in|on)\b")
_SAID_TWICE = 12  # characters of an exception's message a printed heading must repeat to be the same failure

# The phrases a line must hold to be one of these events: added to the pre-filter's phrases (doctor.explain.scanner),
# so the reader only sees candidate lines, never the whole log.
EVENT_PHRASES: tuple[tuple[str, ...], ...] = (
    ("Traceback",), ("TraceBack",), ('File "',), ("most recent call",), ("Exit",), ("Error",), ("Exception",), ("error:",), ("Interrupt",),
    ("StopIteration",), ('.py", line ',), ("above exception",), ("undefined symbol",), ("undefined reference",), ("not found (required by",), ("' not found",),
    ("() got an unexpected keyword",), ("() missing ",), ("() takes ",),
    ("cannot open shared object",), ("error while loading shared",), ("cannot find -l",),
    ("No such file or directory",), ("file not found",), ("error code",), ("No matching distribution",),
    ("Could not find a version",), ("ResolutionImpossible",), ("but you have",), ("Cannot install",),
    ("depends on",), ("Segmentation fault",),
    ("core dumped",), ("Killed",), ("SIGKILL",), ("SIGSEGV",), ("SIGABRT",), ("SIGBUS",), ("Out of memory",),
    ("oom-kill",), ("oom_kill",), ("OOM",), ("ERR",), ("Cell In[",), ("File /",), ("File ~",), ("No module named",), ("has no attribute",), ("cannot import name",),
    *LINE_PHRASES, *LOG_PHRASES, *OS_PHRASES, *PIP_PHRASES, *DCMI_PHRASES, *HCCL_PHRASES, *UNIT_PHRASES, *BUDGET_PHRASES,
    *PYSPY_PHRASES, *WAIT_PHRASES,
)
# The phrases of the kinds kept apart (Python warnings, plain failure lines): frequent in healthy logs, so the
# scanner drops them from its pre-filter once their budgets are full or they have only cost it lines.
APART_PHRASES: tuple[tuple[str, ...], ...] = (("Warning:",), *FAILURE_PHRASES)

# A prefix some launchers put before every line: Ray `(Actor pid=1, ip=...)`, torchrun `[rank3]:`, `[1,0]<stderr>:`.
# Also the prefixes of the tools a log passes through: a markdown quote (`> `), a container runtime's
# `2025-01-01T10:00:00.1Z stderr F `, docker compose's `trainer-1  | `, srun --label's `0: `, torchrun's
# `[default0]:`, Ray's own processes `(raylet) `, the line numbers of a log quoted through `cat -n` / `nl`
# (`  1145<TAB>`); and a logger's date with an error level (never a warning or info
# level: what a line is logged as says whether it is an error); loguru's error prefix and a bare `date | `.
# torch elastic's other prefixes (doctor.explain.processes: `[trainer0]:` of a custom --role, `[3]:` of a
# `${rank}` template) are read only where torch writes them: right before the line, which goes on with no space
# or with a frame's indentation; `[1]:` alone is a ChildFailedError summary's, `[worker0]: text` someone's words.
# TorchX's `ddp/0 ` (role/replica) is read only before such a torch elastic prefix.
_ELASTIC = ELASTIC_TAG
_PREFIX = re.compile(r"^(?:\s*(?:\x1b\[[0-9;]*m)*(?:\([^()]*pid=\d+[^()]*\)|\[rank\d+\]:|\[\d+,\d+\]<std\w+>:|"
                     r">+(?= |$)|\d{1,7}\t(?=\S)|\d{4}-\d\d-\d\dT[\d:.]+Z? (?:stdout|stderr) [FP](?= )|(?!(?:INFO|DEBUG|WARNING|WARN|TRACE|SUCCESS|NOTICE|ERROR|CRITICAL)\b)[\w.-]+ +\|(?= )|\d{1,4}:(?= )|"
                     r"\[default\d+\]:|\((?:raylet|gcs_server|autoscaler|monitor|dashboard\w*|log_monitor)[^()]*\)|"
                     rf"{_ELASTIC}(?=\S|[ \t][ \t])|[A-Za-z_][\w-]*/\d+(?=(?:\x1b\[[0-9;]*m)* {_ELASTIC})|"
                     r"\d{4}-\d\d-\d\d[ T][\d:,.]+(?: -)?(?: [\w.]+ -)? (?:ERROR|CRITICAL|FATAL)(?: -|:)?(?= )|"
                     # loguru's `date | ERROR    | module:function:line - ` and a bare `date | `
                     r"\d{4}-\d\d-\d\d[ T][\d:,.]+ \| (?:(?:ERROR|CRITICAL) +\| [\w.:<>-]+ -|(?=\S)))"
                     r"(?:\x1b\[[0-9;]*m)*)+\s?")
# The logger's own prefix before a logged traceback line: vLLM `ERROR 06-16 15:15:39 [core.py:845] ` (older:
# `ERROR 06-16 15:15:39 core.py:845] `), Python logging `[2025-06-16 15:11:06,443] [ERROR] [file.py:12:fn] `.
_LOGGER = re.compile(r"^(?:ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:\[[^\]]*\]|[\w.-]+:\d+\]) ?"
                     r"|^\[\d{4}-\d\d-\d\d[ T][\d:,.]+\] \[(?:ERROR|CRITICAL)\] (?:\[[^\]]*\] )?")
_TRACEBACK = re.compile(r"^\s*Trace[Bb]ack \(most recent call last\):?\s*$")
# An error level in the prefix a line's logger put before it. (The process a line's prefix names, Ray's `(Worker
# pid=9) `, vLLM's `(EngineCore_DP0 pid=14400) `, torchrun's `[rank3]:`: doctor.explain.processes.)
_ERROR_LEVEL = re.compile(r"\b(?:ERROR|CRITICAL|FATAL)\b")
# A notice by which a process says it is stopping: after an exception logged at error level, not a sign it went on.
_STOPPING = re.compile(r"(?i)\b(?:shut(?:ting)?[ _-]?down|exit(?:ing|ed)?|terminat\w*|abort\w*|stopp(?:ing|ed)|killed|"
                       r"kill(?:ing)?|clean(?:ing)?[ _-]?up|finaliz\w*|tear(?:ing)?[ _-]?down|fatal|giving up)\b")
# Lines a traceback's header may stand below the logged exception it re-raises: multiprocessing's `Process NAME:`.
LOGGED_ABOVE = 2
# Frames that are not a failure's traceback: logging's stack_info ("Stack (most recent call last):") and the other
# threads of a faulthandler dump ("Thread 0x... (most recent call first):"); faulthandler's "Current thread 0x...
# (most recent call first):" is the failing thread, innermost frame first.
_NOT_A_TRACEBACK = re.compile(r"^\s*(?:Stack \(most recent call last\)|Thread 0x[0-9a-f]+ \(most recent call first\))")
# IPython's frame heading (IPython 9 core/tbtools.py _tokens_filename, core/ultratb.py): `File ~/job/x.py:12, in
# main(cfg)` (the path with the home directory as `~`), or `Cell In[3], line 5` for a notebook cell (core/compilerop.py
# format_code_name); `, in func(args)` is left out for a module's top level. Its frames come outermost first.
_IPY_FRAME = re.compile(r"^\s*(?:File (?P<path>[~/.]\S*?|[\w.-]+\.py):(?P<line>\d+)|Cell (?P<cell>In\[\d*\]), line "
                        r"(?P<cline>\d+))(?:, in (?P<func>[\w.<>]+))?")
# py-spy's frame line (src/dump.rs): indented, `func (file:line)`, or `func (file)` for a frame without a line
# (a native one); `--locals` adds deeper-indented lines below a frame. Read only below a py-spy thread header.
_PYSPY_FRAME = re.compile(r"^(?P<indent>\s+)(?P<func>\S.*?) \((?P<path>[^()\s]+?)(?::(?P<line>\d+))?\)\s*$")
STACK_LINES = 64  # lines read below a py-spy thread header (its frames, and any locals printed with them)
_CURRENT_THREAD = re.compile(r"^\s*Current thread 0x[0-9a-f]+ \(most recent call first\)")
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:,? in (?P<func>\S+))?')
# A frame line whose start was cut off (a log pasted from the middle of a line, a terminal that wrapped a long path):
# the rest of CPython's `  File "{path}", line {n}, in {name}` (Lib/traceback.py StackSummary.format_frame_summary)
# with `File "` and the path's head gone, `TransformerEngine/.../module/base.py", line 637, in set_extra_state`. The
# unopened quote right after `.py` and before `, line N` is what no other line has.
_CUT_FRAME = re.compile(r'^\s*(?P<path>[^\s"]+\.py)", line (?P<line>\d+)(?:, in (?P<func>\S+))?\s*$')
# The same anywhere on a line: behind a prefix the reader does not know yet (`_unprefixed` learns it).
_TRACEBACK_ANY = re.compile(r"Trace[Bb]ack \(most recent call last\):?\s*$")
_FRAME_ANY = re.compile(r'(?<=\s)File "[^"]+", line \d+|(?<=[^\w\s"])File "[^"]+", line \d+')
_CHAIN = re.compile(r"During handling of the above exception|The above exception was the direct cause")
# `pkg.mod.SomeError: message` or a bare `AssertionError` at the start of a line (after a launcher prefix).
_EXCEPTION = re.compile(
    r"^\s*(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|StopIteration|Failure|Fault"
    r"|Warning|Timeout|Conflict|NotFound)|(?:builtins\.)?Exception|StopIteration|KeyboardInterrupt)(?:\s*:\s*(?P<msg>.*)|\s*$)")
_NOT_EXCEPTION = re.compile(r"^\s*(?:\[|INFO|WARNING|DEBUG)")
# The same inside a line (`call aclnnX failed: RuntimeError: ...`, `... raise ValueError(...) ValueError: ...`): a
# dotted or CamelCase `...Error:` / `...Exception:` followed by its message; not on info / warning lines.
_EXCEPTION_INSIDE = re.compile(r"(?<![\w.])(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): (?P<msg>\S.*)")
# Python's warnings module prints `{file}:{line}: {category}: {message}` (warnings.formatwarning).
# A message that starts on the next line leaves `Category: ` with a trailing space, which pastes and editors strip:
# the header may end at the colon.
_PY_WARNING = re.compile(r"(?P<path>(?:/|[A-Za-z]:\\|\.{1,2}/|[\w.-]+/)[^:\s]*\.py):(?P<line>\d+): "
                         r"(?P<cat>[A-Z]\w*Warning):(?: |$)(?P<msg>.*)")


def is_python_warning(text: str) -> bool:
    """A line Python's warnings module printed (`path.py:N: UserWarning: msg`): the program warned and went on."""
    return "Warning:" in text and _PY_WARNING.search(text) is not None


_INFO_LINE = re.compile(r"^\W*(?:\([^)]*\)\s*)?(?:INFO|WARNING|WARN|DEBUG)\b|\bWarning: |UserWarning")
_LIB_MISSING = re.compile(r"(?P<lib>[\w.+/-]*lib[\w.+-]*?\.so[\w.]*): cannot open shared object file"
                          r"|error while loading shared libraries: (?P<lib2>[\w.+-]+)")
# glibc's ld.so (elf/dl-lookup.c): "undefined symbol: NAME" and, for a versioned reference, ", version NODE"
_SYMBOL = re.compile(r"(?:(?P<path>[\w./+-]+\.so[\w.]*): )?undefined symbol:? (?P<sym>[\w@.$]+)"
                     r"(?:, version (?P<ver>[\w.+-]+))?")
# glibc's ld.so (elf/dl-version.c): "version `NODE' not found (required by OBJECT)", after the library that lacks it
# (the quotes are lost in some pastes; "(required by ...)" may wrap onto the next line)
_VERSION_NODE = re.compile(r"(?:(?P<lib>[\w./+-]*\.so[\w.]*): )?version [`'‘\"]?(?P<node>[A-Za-z][\w+-]*_\d[\w.]*|"
                           r"[\w+-]+\.so[\w.]*)['’\"]? not found\b")
_LINK = re.compile(r"undefined reference to [`'](?P<sym>[^'`]+)'|cannot find -l(?P<lib>[\w+.-]+)"
                   r"|unable to find library -l(?P<lib2>[\w+.-]+)")
_HEADER = re.compile(r"fatal error: '?(?P<header>[\w./+-]+\.(?:h|hpp|hh|hxx|inc)|[\w./+-]+)'?(?::| file not found)"
                     r"(?: No such file or directory| file not found)?")
_COMPILE = re.compile(r"(?P<file>[\w./+-]+\.(?:h|hpp|hh|c|cc|cpp|cxx|cu))(?::\d+){1,2}: (?:fatal )?error: (?P<msg>.*)")
# CANN error codes E<module><class>xxxx (EZ9999, EI0002, EE1001, EL0004, EJ0003, E80000, EB0000, ...), the torch_npu
# ERRxxyyy codes and the numeric ACL / aclnn return codes.
_CANN_CODE = re.compile(r"(?<![\w])(?P<code>E[A-Z0-9][0-9]{4})(?![\w])")
_NPU_ERR = re.compile(r"\b(?P<code>ERR\d{5})\b")
_ACL_CODE = re.compile(r"error code(?: is|:|=)\s*(?P<code>\d{6})\b|ret(?:Code|urn code)?[=: ]+(?P<code2>\d{6})\b")
_PIP = re.compile(r"No matching distribution found for (?P<pkg>\S+)"
                  r"|Could not find a version that satisfies the requirement (?P<pkg2>\S+)"
                  r"|(?P<pkg3>[\w.-]+) [\w.+]+ requires (?P<pkg4>[\w.-]+)[^,]*, but you have"
                  r"|Cannot install (?P<pkg5>[\w.-]+)[^ ,]*(?:, [\w.-]+[^ ,]*)* and (?P<pkg6>[\w.-]+)"
                  r"|(?P<pkg7>[\w.-]+) \d[\w.+!-]* depends on (?P<pkg8>[\w.-]+)"
                  r"|(?P<resolve>ResolutionImpossible)")
_SIGNAL = re.compile(r"Segmentation fault|core dumped|\bKilled\b|\bSIG(?:KILL|SEGV|ABRT|BUS|ILL)\b|Out of memory: Kill"
                     r"|oom[-_ ]kill|OOM kill")
_MODULE_MISSING = re.compile(r"No module named '?(?P<mod>[\w.]+)'?")
# CPython 3.11 ceval.c import_from: "cannot import name %R from %R (%S)", or "... from partially initialized module %R
# (most likely due to a circular import) (%S)" while the module is still being imported
_IMPORT_NAME = re.compile(r"cannot import name '(?P<name>[\w.]+)' from (?P<partial>partially initialized module )?"
                          r"'(?P<mod>[\w.]+)'(?: \(most likely due to a circular import\))?(?: \((?P<path>[^)]+)\))?")
_NO_ATTR = re.compile(r"module '(?P<mod>[\w.]+)' has no attribute '(?P<name>\w+)'"
                      r"|'(?P<cls>\w+)' object has no attribute '(?P<name2>\w+)'"
                      r"|type object '(?P<cls2>\w+)' has no attribute '(?P<name3>\w+)'")
# Python's own TypeError message for a call that does not fit, quoted without its type (`Foo.__init__() missing 2
# required keyword-only arguments: ...`, in backticks or after a rich traceback's box): only Python prints it.
_BARE_CALL_ERROR = re.compile(r"^[\s`'\"│]*(?P<msg>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*\(\) (?:got an unexpected keyword "
                              r"argument|missing \d+ required (?:positional|keyword-only) arguments?|takes (?:from )?\d+ "
                              r"(?:to \d+ )?positional arguments? but|got multiple values for argument)\b.*)")
_KWARG = re.compile(r"(?P<func>[\w.]+)\(\) (?:got an unexpected keyword argument|missing \d+ required (?:positional|"
                    r"keyword-only) arguments?:|takes (?:from )?\d+ (?:to \d+ )?positional arguments? but)"
                    r"|[Uu]nexpected keyword argument '(?P<kw>\w+)'")


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    func: str


# the outermost frame of a traceback that reached the program's top: the script's or `python -c`'s module code, or
# runpy's for `python -m` (a `try` logging its exception with exc_info shows frames from the catching function down)
_TOP_FRAMES = frozenset({"<module>", "_run_module_as_main", "_run_code"})


def _reached_top(frames: list[Frame]) -> bool:
    """The traceback runs from the program's top level: the exception went uncaught, whatever the line above its
    header says (an INFO record the process printed just before it died)."""
    return bool(frames) and frames[0].func in _TOP_FRAMES


@dataclass
class Event:
    """One error event. `kind`: python | loader | build | code | pip | signal | warning (a Python warning) |
    failure (a plain line stating a failure: doctor.explain.lexicon) | text (an error line of a class:
    doctor.explain.classes) | log (a logged error / warning line: doctor.explain.loglines). `line`: the line number of the line
    that states the error (a traceback's exception line); `facts`: what it names (module, library, symbol,
    header, file, code, packages, exception type)."""

    kind: str
    line: int
    text: str
    frames: list[Frame] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    chained_from: int | None = None  # index (in the reader's events) of the exception this one was raised while handling
    frames_dropped: int = 0
    time: float | None = None
    signature: str | None = None  # the signature that matched the event's line, if one did
    process: str | None = None  # the process its line's launcher prefix names (doctor.explain.processes)
    repeated: int = 0  # the copies of its line Ray's log deduplication folded into it

    @property
    def exc_type(self) -> str | None:
        return self.facts.get("exception")

    @property
    def printed_warning(self) -> bool:
        """A Python warning category's line (`UserWarning: ...`) with no traceback above it: printed by
        `warnings.warn` through a logger or a formatter without `file:line:`, not raised (a warning turned into an
        error by `-W error` comes with its traceback). Like warnings.formatwarning's own form, not a failure."""
        return bool(self.kind == "python" and self.exc_type and self.exc_type.endswith("Warning") and not self.frames)

    def shifted(self, lines: int) -> Event:
        return replace(self, line=self.line + lines, frames=list(self.frames), facts=dict(self.facts))


def merge_events(parts: list[tuple[list[Event], int, int]]) -> tuple[list[Event], int]:
    """The events of consecutive parts of one log (each: its events, the lines before it, its dropped count), as
    one log's: line numbers shifted, chain links re-indexed, at most MAX_EVENTS kept."""
    out: list[Event] = []
    dropped = 0
    apart = dict.fromkeys(_APART, 0)
    for events, base, part_dropped in parts:
        offset = len(out)
        for ev in events:
            if ev.kind in _APART:
                if apart[ev.kind] >= _APART[ev.kind]:
                    continue
                apart[ev.kind] += 1
            elif len(out) - sum(apart.values()) >= MAX_EVENTS:
                dropped += 1
                continue
            moved = ev.shifted(base)
            if moved.chained_from is not None:
                moved.chained_from += offset
            out.append(moved)
        dropped += part_dropped
    return out, dropped


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def is_notice(text: str) -> bool:
    """A line logged at info / debug / warning level (after any launcher prefix): a notice, not a failure."""
    bare = strip_prefix(text)
    return bool(_INFO_LINE.search(bare) or NOTICE_RECORD.search(bare))


def strip_prefix(text: str) -> str:
    return _LOGGER.sub("", _PREFIX.sub("", text, count=1), count=1)


# The exception line that ends a traceback, read by its place (right below the last frame's code) rather than by a
# phrase: `packaging.version.InvalidVersion: Invalid version: 'x'`, `zipfile.BadZipFile: File is not a zip file`.
# A dotted name, or a CamelCase one of two or more words with a message, so another process's plain line that
# happens to follow a frame (`Done`, `Note: ...`) is not taken for one.
# The standard library's few lower-case classes (`re.error`, `struct.error`, `socket.timeout`, `socket.gaierror`,
# `zlib.error`: https://docs.python.org/3/library/re.html#re.error) read likewise.
_PLACED_EXCEPTION = re.compile(r"^(?:(?P<type>(?:[A-Za-z_]\w*\.)+(?:[A-Z]\w*|(?:gai|h)?error|timeout))"
                               r"(?::\s+(?P<msg>\S.*?))?"
                               r"|(?P<camel>[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+):\s+(?P<said>\S.*?))\s*$")


def line_process(raw: str) -> str | None:
    """The process a line's launcher prefix names (`(WorkerDict pid=12)`, `[rank3]:`: doctor.explain.processes), if
    any."""
    return process_of(raw[: len(raw) - len(strip_prefix(raw).lstrip())])


class EventReader:
    """Feed candidate lines in order with `feed(lineno, text)`; `close()`; then `events` (at most MAX_EVENTS) and
    `dropped` (events not kept)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.dropped = 0
        self._frames: list[Frame] | None = None  # the open traceback's frames
        self._frames_signature: str | None = None  # a signature that matched one of its frame lines
        self._innermost_first = False  # the open frames are a faulthandler dump's (innermost first)
        self._shape: re.Pattern[str] | None = None  # the prefix this log puts before each line (`_unprefixed`)
        self._ignore_frames = False  # frames of a logged stack or another thread: not a failure
        self._frames_dropped = 0
        self._tb_line = 0
        self._last_frame_line = 0
        self._chain_pending = False
        self._last_python: int | None = None  # index of the last python event (for chaining)
        self._apart = dict.fromkeys(_APART, 0)  # warnings / failure lines kept (not counted in MAX_EVENTS)
        self._logs = LogLineReader()  # logged error / warning lines (doctor.explain.loglines)
        self._watchdog = False  # a faulthandler timeout dump began: its threads' stacks are read (doctor.explain.hangs)
        self._dumped = False  # the open frames are one thread's stack of such a dump
        self._fatal = False  # faulthandler's "Fatal Python error: ..." came: the stacks after it are a crash's
        self._on_request = False  # the open frames are a "Current thread" dump with no fatal error before it
        self.stack_pending = False  # a py-spy thread header was just fed: the scanner passes its lines to read_stack
        self._read_to = 0  # the line of the last exception line read by its place (feed_exception): lines up to it are read
        # the last logged exception line (an error-level logger prefix, `ERROR 12-06 16:47:38 [core.py:866] ValueError:
        # ...`): its event's index, its last line (a wrapped message's continuation included) and its process tag
        self._logged: tuple[int, int, str | None] | None = None
        self._below_logged: int | None = None  # the open traceback starts right below that line: the event's index
        # the last logged error record (kind `log`: `ERROR ... [core.py:866] EngineCore failed to start.`), the same
        # three, and the record whose exception's traceback is open right below it (`logger.exception(msg)`)
        self._record: tuple[int, int, str | None] | None = None
        # the last error line a program printed with no logger level (`print(f"Failed to load: {e}")` before
        # `traceback.print_exc()`): the same three, read as the heading of a traceback right below it
        self._printed: tuple[int, int, str | None] | None = None
        self._headed_by: int | None = None
        # the open traceback's header line, and what the line right above it says of the exception: "" (nothing),
        # or the level of the notice it stands below (`WARNING ...` / `INFO ...`: logger.warning(msg, exc_info=True)),
        # or "ignored" (CPython's `Exception ignored in: ...`): an exception the process went on after
        self.opened_at = 0
        self._handled = ""
        self._exception_tag: str | None = None  # the process tag of the error record marked "exception" above
        # the open traceback is one process's: a log interleaving several processes' lines (Ray actors, torchrun
        # ranks) keeps each one's open traceback apart, parked while another process's lines come
        self._who: str | None = None  # the process whose traceback state is the current one
        self._parked: dict[str | None, tuple[object, ...]] = {}
        self._fresh = self._state()  # a process's state before its first line

    # -- feeding

    def feed(self, lineno: int, raw: str, time: float | None = None) -> Event | None:
        """Read one candidate line; returns the event it completed, if any."""
        if lineno <= self._read_to:
            return None  # a frame's source line, already passed by the exception line read below it
        self._switch(line_process(raw))
        text = self._unprefixed(strip_prefix(raw.rstrip("\r\n")))
        if self._frames is not None and lineno - self._last_frame_line > TRACEBACK_GAP:
            self._close_frames()  # a traceback whose exception line never came (or was filtered out)
        if _TRACEBACK.match(text):
            self._close_frames()
            self._ignore_frames = self._innermost_first = self._on_request = False
            self._frames, self._frames_dropped, self._tb_line = [], 0, lineno
            self._last_frame_line, self.opened_at, self._handled = lineno, lineno, ""
            self._below_logged = self._logged_above(lineno, raw)
            self._headed_by = self._below(self._record, lineno, raw, 1)
            if self._headed_by is None and (printed := self._below(self._printed, lineno, raw, 1)) is not None:
                self._headed_by = printed
                self.events[printed].facts["printed"] = "1"
            return None
        if _CHAIN.search(text):
            self._chain_pending = True
            return None
        m = _FRAME.match(text) or _IPY_FRAME.match(text) or _CUT_FRAME.match(text)
        if m is None:
            self._ignore_frames = False
        if PYSPY_THREAD.match(text):
            self._close_frames()
            self.stack_pending = True  # its frame lines hold no phrase: the scanner hands them over (read_stack)
            return None
        if text.startswith("Fatal Python error"):
            self._fatal = True  # faulthandler on a fatal signal: the "Current thread" stack below is the crash's
        if WATCHDOG.match(text):
            self._close_frames()
            self._watchdog = True  # faulthandler's timeout dump: every thread's stack follows (innermost first)
            return None
        if _NOT_A_TRACEBACK.match(text) and not (self._watchdog and text.lstrip().startswith("Thread 0x")):
            self._close_frames()
            self._ignore_frames = True
            return None
        if _CURRENT_THREAD.match(text) or _NOT_A_TRACEBACK.match(text):
            self._close_frames()
            self._frames, self._frames_dropped, self._tb_line = [], 0, lineno
            self._last_frame_line, self._innermost_first = lineno, True
            self._dumped = self._watchdog
            # without a fatal error, faulthandler dumped on request (faulthandler.register(SIGUSR1, ...),
            # dump_traceback()): what the thread waits for is read as a hang (_close_frames)
            self._on_request, self._fatal = not self._fatal, False
            return None
        if m is not None and self._ignore_frames:
            return None
        if m is not None:
            if self._frames is None:  # frames quoted without their header
                self._frames, self._frames_dropped, self._tb_line = [], 0, lineno
            if m.re is _IPY_FRAME and m.group("cell"):  # a notebook cell: the job's own code, named by IPython
                self._add_frame(Frame(f"<ipython {m.group('cell')}>", int(m.group("cline")), m.group("func") or ""))
            else:
                self._add_frame(Frame(m.group("path"), int(m.group("line")), m.group("func") or ""))
            self._last_frame_line = lineno
            return None
        if self.in_traceback and text[:1].isspace() and lineno - self._last_frame_line < PLACED_AFTER:
            return None  # the frame's own source line (or its carets): code, not a line the run printed
        ev = self._python(lineno, text) or self._other(lineno, text)
        if ev is None and (facts := self._logs.read(_PREFIX.sub("", raw.rstrip("\r\n"), count=1))):
            ev = Event("log", lineno, _short(text), facts=facts)
        if ev is None:
            return None
        ev.time = time
        self._keep(ev)
        if self.events and self.events[-1] is ev:
            head = raw[: len(raw) - len(strip_prefix(raw).lstrip())]
            placed = (len(self.events) - 1, lineno, process_of(head))
            if ev.kind == "python" and ev.exc_type and _ERROR_LEVEL.search(head):
                self._logged = placed
            elif ev.kind == "log" or ev.kind in ("failure", "text") and _ERROR_LEVEL.search(head):
                self._record = placed  # a logged error record
            elif ev.kind not in ("python", "warning") and not text[:1].isspace():
                self._printed = placed  # a line the program printed, no logger level (a heading, if one follows)
        return ev

    def note_above(self, raw: str) -> None:
        """The line right above the traceback header just fed (`opened_at`): a notice (a record logged at warning,
        info or debug level with its traceback: `logger.warning(msg, exc_info=True)`) or CPython's `Exception ignored
        in: <obj>` (PyErr_WriteUnraisable: an exception in a `__del__` or a callback, reported and dropped) says the
        exception ending that traceback was handled: the process went on. A record at error level
        (`logger.exception(msg)`) may say so too, if what follows shows it (`_went_on`)."""
        text = self.bare(raw)
        level = LogLineReader.level_of(_PREFIX.sub("", raw.rstrip("\r\n"), count=1))
        if _IGNORED.match(text):
            self._handled = "ignored"
        elif level == "warning":
            self._handled = "warning"
        elif is_notice(raw):
            self._handled = "info"
        elif level == "error" or _ERROR_LEVEL.search(raw[: len(raw) - len(strip_prefix(raw).lstrip())]):
            # `logger.exception(msg)`: an error record with its traceback, which the process may have caught and gone
            # on after, or died on: only what follows its exception line says which (note_after), in its own process
            self._handled = "exception"
            self._exception_tag = line_process(raw)

    def continued(self, ev: Event, lines: int) -> None:
        """The scanner read `lines` more lines of `ev`'s message (doctor.explain.events.continue_message)."""
        if self._logged is not None and self.events[self._logged[0]] is ev:
            self._logged = (self._logged[0], self._logged[1] + lines, self._logged[2])
        if self._record is not None and self.events[self._record[0]] is ev:
            self._record = (self._record[0], self._record[1] + lines, self._record[2])
        if self._printed is not None and self.events[self._printed[0]] is ev:
            self._printed = (self._printed[0], self._printed[1] + lines, self._printed[2])

    @staticmethod
    def _below(placed: tuple[int, int, str | None] | None, lineno: int, raw: str, gap: int) -> int | None:
        """The index of the event `placed` (index, last line, process tag) when line `lineno` (`raw`) is at most
        `gap` lines below it and of the same process."""
        if placed is None:
            return None
        index, end, tag = placed
        own = line_process(raw)
        return index if lineno - end <= gap and own == tag else None

    def _logged_above(self, lineno: int, raw: str) -> int | None:
        """A traceback whose header stands right below a logged exception line of the same process (at most
        multiprocessing's `Process NAME:` and the message's wrapped lines between): the process re-raising what its
        logger just printed, as vLLM's engine core does (`logger.exception("EngineCore failed to start.")`, then
        `raise e`). Its event's index."""
        named = self._logged is not None and self._logged[2] is not None
        # a named process's own lines may hold its message wrapped by a terminal, which no rule joins (a digit ends
        # a line as it ends a message); unnamed lines only multiprocessing's header
        index = self._below(self._logged, lineno, raw, LOGGED_ABOVE + (MAX_CONTINUATION if named else 0))
        return index if index is not None and self._last_python == index else None

    @property
    def in_traceback(self) -> bool:
        """A failure's traceback is open (not a logged stack, nor a thread dump read innermost first)."""
        return self._frames is not None and not self._ignore_frames and not self._innermost_first

    def bare(self, raw: str) -> str:
        """`raw` as `feed` reads it: without the launcher's, logger's and this log's own line prefix."""
        return self._unprefixed(strip_prefix(raw.rstrip("\r\n")))

    def feed_exception(self, lineno: int, raw: str, time: float | None = None) -> Event | None:
        """The line right below an open traceback's last frame, which no phrase made a candidate: its exception line
        when it reads as one (`_PLACED_EXCEPTION`), an exception whose name does not end in Error or Exception."""
        self._switch(line_process(raw))
        if not self.in_traceback:
            return None
        ev = self._placed(lineno, self.bare(raw))
        if ev is None:
            return None
        self._read_to = lineno
        ev.time = time
        return self._keep(ev)

    def _placed(self, lineno: int, text: str) -> Event | None:
        m = _PLACED_EXCEPTION.match(text)
        if m is None:
            return None
        return self._python_event(lineno, text, m.group("type") or m.group("camel"),
                                  (m.group("msg") or m.group("said") or "").strip())

    def read_stack(self, lineno: int, lines: list[str]) -> Event | None:
        """The frame lines below the py-spy thread header fed at `lineno` (innermost first): kept as a dumped stack
        when it stands in a wait doctor.explain.hangs names (a collective, ray.get); any other thread of the dump
        (an idle pool, a reader thread) is no failure and costs no event."""
        self.stack_pending = False
        frames: list[Frame] = []
        indent: str | None = None
        for raw in lines:
            text = strip_prefix(raw.rstrip("\r\n"))
            m = _PYSPY_FRAME.match(text)
            if indent is not None and text.startswith(indent + " "):
                continue  # a local's line (`--locals`) below a frame
            if m is None or indent is not None and m.group("indent") != indent:
                break
            indent = m.group("indent")
            frames.append(Frame(m.group("path"), int(m.group("line") or 0), m.group("func")))
        frames.reverse()  # outermost first, as a traceback's
        from doctor.explain.hangs import PY_SPY, stack_hang

        if not frames or stack_hang(frames, PY_SPY) is None:
            return None
        last = frames[-1]
        ev = Event("python", lineno, _short(f"{last.func} ({last.path}:{last.line})"), frames=frames[-MAX_FRAMES:],
                   facts={"exception": "", "exception_path": "", "message": "", "unfinished": "1",
                          "stack_dump": "1", "dump": "py-spy"})
        return self._keep(ev)

    def _unprefixed(self, text: str) -> str:
        """The line without the prefix its log puts before every line (a container runtime's timestamp and
        stream, docker compose's `name  | `, srun's `0: `, a quote's `> `, a logger's date and level): learned from
        the first traceback header or frame that does not start the line — their words are unmistakable — as the
        shape of what precedes them (digits free), then stripped from every line that starts with that shape."""
        if self._shape is not None and (m := self._shape.match(text)):
            return text[m.end():]
        m = _TRACEBACK_ANY.search(text) or _FRAME_ANY.search(text)
        if m is None or m.start() == 0 or not text[: m.start()].strip():
            return text
        prefix = text[: m.start()]
        self._shape = re.compile(re.sub(r"(?:\\d)+|\d+", r"\\d+", re.escape(prefix)))
        return text[m.start():]

    def close(self) -> None:
        self._close_frames()
        for who in list(self._parked):
            self._switch(who)
            self._close_frames()

    # The state of one process's open traceback (doctor.explain.processes names the process a line's prefix names).
    _PER_PROCESS = ("_frames", "_frames_signature", "_innermost_first", "_ignore_frames", "_frames_dropped", "_tb_line",
                    "_last_frame_line", "_chain_pending", "_last_python", "_below_logged", "_headed_by", "opened_at",
                    "_handled", "_exception_tag", "_dumped", "_on_request")

    def _switch(self, who: str | None) -> None:
        """Make `who`'s open traceback the current one: the current process's is parked until its next line (a
        process that has none starts with none). Only a prefix that names a process switches: a line without one
        may be any process's (a paste that dropped the prefix, a launcher that tags some lines only), so it reads
        on in the current state, and a state begun on such lines becomes the first named process's."""
        if who is None or who == self._who:
            return
        if self._who is None and who not in self._parked:
            self._who = who
            return
        self._parked[self._who] = self._state()
        for name, value in zip(self._PER_PROCESS, self._parked.pop(who, self._fresh), strict=True):
            setattr(self, name, value)
        self._who = who

    def _state(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._PER_PROCESS)

    def note_signature(self, sig_id: str) -> None:
        """A signature matched the line just fed, which made no event: if it was a frame of the open traceback, the
        traceback's event carries it should its exception line never come (the signature then explains it)."""
        if self._frames:
            self._frames_signature = sig_id

    def _close_frames(self) -> None:
        """An open traceback whose exception line never came (a log cut short, a paste that stops at the last
        frame, a faulthandler dump): its frames are still an event — the innermost one is where it failed."""
        frames, self._frames = self._frames, None
        sig, self._frames_signature = self._frames_signature, None
        below, self._below_logged = self._below_logged, None
        self._headed_by = None
        if not frames:
            return
        if below is not None and not self._innermost_first and not self._on_request:
            # the traceback of the exception logged right above it, cut off before its exception line: the same
            # failure, whose exception line the log does show; its frames are that exception's when it has none
            logged = self.events[below]
            if not logged.frames:
                logged.frames, logged.frames_dropped = frames, self._frames_dropped
                logged.facts["frames_cut"] = "1"
            self._chain_pending = False
            return
        if self._innermost_first:
            frames.reverse()
            self._innermost_first = False
        last = frames[-1]
        ev = Event("python", self._last_frame_line, _short(f'File "{last.path}", line {last.line}, in {last.func}'),
                   frames=frames, frames_dropped=self._frames_dropped,
                   facts={"exception": "", "exception_path": "", "message": "", "unfinished": "1"})
        on_request, self._on_request = self._on_request, False
        if on_request and not self._dumped:
            from doctor.explain.hangs import stack_hang

            self._dumped = stack_hang(frames) is not None  # a stack dumped on request, standing in a wait
        if self._dumped:
            ev.facts["stack_dump"] = "1"  # a thread's stack dumped while the job hung: no failure by itself
            self._dumped = False
        ev.signature = sig
        self._chain_pending = False
        self._keep(ev)

    @property
    def apart_full(self) -> bool:
        """Whether every kind kept apart has its budget full (their phrases are no longer needed)."""
        return all(self._apart[k] >= n for k, n in _APART.items())

    # -- parts

    def _add_frame(self, frame: Frame) -> None:
        assert self._frames is not None
        if len(self._frames) >= MAX_FRAMES:
            del self._frames[HEAD_FRAMES]  # keep the first frames (the entry point) and the last (where it failed)
            self._frames_dropped += 1
        self._frames.append(frame)

    def _python(self, lineno: int, text: str) -> Event | None:
        m = _EXCEPTION.match(text)
        if m is None and self.in_traceback and lineno - self._last_frame_line <= PLACED_AFTER \
                and (placed := self._placed(lineno, text)) is not None:
            return placed  # right below the last frame: the exception line, by its place
        if m is None or _NOT_EXCEPTION.match(text):
            m = None if _INFO_LINE.search(text) or self._frames is not None else _EXCEPTION_INSIDE.search(text)
            if m is None:
                bare = _BARE_CALL_ERROR.match(text) if not _INFO_LINE.search(text) else None
                if bare is None:
                    return None
                return self._python_event(lineno, text, "TypeError", bare.group("msg").rstrip("`'\" "))
        return self._python_event(lineno, text, m.group("type"), (m.group("msg") or "").strip())

    def _python_event(self, lineno: int, text: str, etype: str, msg: str) -> Event:
        facts = {"exception": etype.rsplit(".", 1)[-1], "exception_path": etype, "message": _short(msg)}
        _python_facts(msg, facts)
        ev = Event("python", lineno, _short(text), facts=facts)
        if self._frames is not None:
            ev.frames, ev.frames_dropped = self._frames, self._frames_dropped
            # how many lines above the exception line its traceback opened: the frames' code lines lie between
            facts["traceback_above"] = str(lineno - self._tb_line)
            self._frames, self._frames_signature, self._innermost_first = None, None, False
            self._on_request, self._below_logged = False, None
            if self._handled and (self._handled == "exception" or not _reached_top(ev.frames)):
                # a traceback that ran from the program's top went uncaught, whatever notice stood above it (the
                # job's last words), except below an error record: `logging.exception(msg)` at module level logs
                # one too, and whether the process went on after it is for note_after (`_went_on`) to say
                facts["handled"] = self._handled
            self._handled = ""
            if self._headed_by is not None:
                # `logger.exception(msg)`: the record says what failed, the exception ending the traceback below it
                # why; the record is read as its heading (how many lines below it the exception is)
                heading = self.events[self._headed_by]
                heading.facts["heads_below"] = str(lineno - heading.line)
                if facts.get("handled") == "exception":
                    heading.facts["handled"] = "exception"  # handled or not with it (note_after)
                self._headed_by = None
                said = facts["message"].strip()
                if heading.facts.get("printed") and len(said) >= _SAID_TWICE and said in heading.text:
                    # `print(f"...: {e}")` then `traceback.print_exc()`: the printed line says the exception below
                    # again; one failure, told by its exception line
                    heading.facts["repeats_below"] = "1"
        if self._chain_pending and self._last_python is not None:
            ev.chained_from = self._last_python
            self._handled_chain(ev)
        self._chain_pending = False
        return ev

    def note_after(self, ev: Event, after: list[str]) -> None:
        """The lines right below `ev`'s exception line: a traceback marked handled is so only when the process shows
        it went on — its next line is a record logged at warning, info or debug level, CPython's `Exception ignored
        in:`, or the next part of its chain (whose own last part decides); an `Exception ignored in:` report always
        went on. Else (the log ends there, an error follows, the message goes on) the record
        above it was the job's last before it died (`INFO … starting` above an uncaught traceback): no mark. Below
        an exception logged at error level, `_went_on` decides."""
        how = ev.facts.get("handled")
        if how in (None, "ignored"):
            return  # CPython reports an unraisable exception and always goes on
        nxt = next((line for line in after if line.strip()), "")
        text = self.bare(nxt)
        if _CHAIN.search(text):
            return  # the chain's last part decides
        if how == "exception" and self._went_on(after):
            return
        if how != "exception" and (_IGNORED.match(text) or is_notice(nxt)
                                   or LogLineReader.level_of(_PREFIX.sub("", nxt.rstrip("\r\n"), count=1)) == "warning"):
            return
        ev.facts.pop("handled", None)
        self._unmark_heading(ev)
        at = ev.chained_from
        while at is not None and at < len(self.events):
            self.events[at].facts.pop("handled", None)
            self._unmark_heading(self.events[at])
            at = self.events[at].chained_from

    def _went_on(self, after: list[str]) -> bool:
        """Below an exception `logger.exception(msg)` logged at error level: the process went on when its own next
        line (lines of other processes skipped) is a notice (an info / debug / warning record) and a second line of
        its own follows, none of them saying it stops (`_STOPPING`). An error record is as often a job's last words
        before it exits (`logger.exception("training failed")`, then `sys.exit(1)`, a re-raise, or a shutdown
        sequence), so it asks more than a warning record does: the same process doing more than one thing after it
        (one notice and then the end of the log is a last notice — `saving the final state` — as often as work)."""
        own = [line for line in after if line.strip() and line_process(line) == self._exception_tag]
        said = own[:2] + [line for line in own[2:] if is_notice(line)]  # not a later traceback's code lines
        return len(own) >= 2 and is_notice(own[0]) and not any(_STOPPING.search(line) for line in said)

    def _unmark_heading(self, ev: Event) -> None:
        """The error record heading `ev`'s traceback (`logger.exception(msg)`) loses `ev`'s handled mark with it."""
        for rec in self.events:
            if rec.facts.get("heads_below") and rec.line + int(rec.facts["heads_below"]) == ev.line:
                rec.facts.pop("handled", None)

    def _handled_chain(self, ev: Event) -> None:
        """A chain (`During handling of the above exception, ...`) is handled or not as a whole: only its first
        traceback has the logged record above it, only its last one shows whether it reached the program's top."""
        chain, at = [], ev.chained_from
        while at is not None and at < len(self.events):
            chain.append(self.events[at])
            at = self.events[at].chained_from
        how = chain[-1].facts.get("handled") if chain else None
        if how and (how == "exception" or not _reached_top(ev.frames)):
            ev.facts["handled"] = how
        elif how:
            for part in chain:
                part.facts.pop("handled", None)

    def _other(self, lineno: int, text: str) -> Event | None:
        if m := _PY_WARNING.search(text):
            said = {"path": m.group("path"), "category": m.group("cat"), "message": _short(m.group("msg"))}
            return Event("warning", lineno, _short(text), facts=said)
        if any(p in text for p in _WAIT_WORDS):
            from doctor.explain.hangs import named_wait

            if named_wait(text) is not None:  # a wait its program names, warned about: the job hangs on it
                return Event("text", lineno, _short(text))
        if _INFO_LINE.search(text) or NOTICE_RECORD.search(text):
            if "PATH" in text or "memory" in text:
                from doctor.explain.memory_budget import budget_class
                from doctor.explain.osclasses import os_class

                if (cls := os_class(text)) is not None and cls.severity is Severity.WARNING or budget_class(text):
                    # a notice of a failure class of its own (a program not on PATH; a memory budget that is negative)
                    return Event("text", lineno, _short(text))
            return None  # an optional module, a retried connection, a code logged as a warning: not an error
        facts: dict[str, str] = {}
        kind = None
        if m := _LIB_MISSING.search(text):
            kind, facts["library"] = "loader", m.group("lib") or m.group("lib2")
        elif m := _SYMBOL.search(text):
            kind, facts["symbol"] = "loader", m.group("sym")
            if m.group("path"):
                facts["library"] = m.group("path")
            if m.group("ver"):
                facts["symbol_version"] = m.group("ver")
        elif m := _VERSION_NODE.search(text):
            kind, facts["version_node"] = "loader", m.group("node")
            if m.group("lib"):
                facts["version_lib"] = m.group("lib")
        elif m := _LINK.search(text):
            kind = "build"
            if m.group("sym"):
                facts["symbol"] = m.group("sym")
            else:
                facts["library"] = "lib" + (m.group("lib") or m.group("lib2"))
        elif "fatal error:" in text and (m := _HEADER.search(text)):
            kind, facts["header"] = "build", m.group("header")
        elif m := _COMPILE.search(text):
            kind, facts["file"], facts["message"] = "build", m.group("file"), _short(m.group("msg"))
        elif m := _PIP.search(text):
            kind = "pip"
            pkgs = [m.group(g) for g in ("pkg", "pkg2", "pkg3", "pkg4", "pkg5", "pkg6", "pkg7", "pkg8") if m.group(g)]
            facts["packages"] = " ".join(pkgs) if pkgs else "(resolver)"
        elif m := _SIGNAL.search(text):
            kind, facts["signal"] = "signal", m.group(0)
        elif m := _MODULE_MISSING.search(text):
            kind, facts["module"] = "python", m.group("mod")
            facts["exception"] = "ModuleNotFoundError"
        code = _codes(text)
        if code:
            facts.update(code)
            kind = kind or "code"
        if kind is None and (line_class(text) is not None or _own_class(text)):
            kind = "text"  # an error line whose own words name its class (attribution reads which one)
        if kind is None and self._apart["failure"] < MAX_FAILURE_LINES and states_failure(text) \
                and not LogLineReader.recognises(text):  # a logged record is read with its level (loglines)
            kind = "failure"  # a plain line that states a failure (the last resort: doctor.explain.lexicon)
        if kind is None:
            return None
        return Event(kind, lineno, _short(text), facts=facts)

    def _keep(self, ev: Event) -> Event:
        if ev.kind in _APART:
            if self._apart[ev.kind] < _APART[ev.kind]:
                self._apart[ev.kind] += 1
                self.events.append(ev)
            return ev
        if len(self.events) - sum(self._apart.values()) >= MAX_EVENTS:
            self.dropped += 1
            return ev
        if ev.kind == "python":
            self._last_python = len(self.events)
        self.events.append(ev)
        return ev


# A line that starts something else, not the next line of an exception's message: a traceback, a frame, another
# exception, a logger's record (a level word or a date first), a launcher's prefix.
_NOT_CONTINUATION = re.compile(r"^\s*(?:Traceback|File \"|During handling|The above exception|\[|\(\w+ pid=|"
                               r"(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL)\b|\d{4}-\d\d-\d\d|[EWIF]\d{4} )")


def wants_code(ev: Event) -> bool:
    """A TypeError of a call: the source line printed above it says what was called (Python before 3.10 names only
    the function, `__init__()`; a class defined by several packages is told apart by the module it is reached
    through, `tensor_parallel.VocabParallelEmbedding(`)."""
    return ev.kind == "python" and ev.facts.get("exception") == "TypeError" and "call" in ev.facts


# A source line as a traceback prints it: indented code (plain), or behind a rich traceback's box and line number
# (`│ ❱ 235 │   │   x = Foo(`); never a frame, an exception or a caret marker line.
_RICH_GUTTER = re.compile(r"^(?:[\s│┃|❱>]+|\d+(?=\s*[│┃|]))+")
_CARETS = re.compile(r"^[\s^~]+$")


def note_code(ev: Event, lines_before: list[str]) -> None:
    """The nearest source line among the few printed before the exception line becomes facts['code']."""
    for raw in reversed(lines_before):
        text = strip_prefix(raw.rstrip("\r\n"))
        if not text.strip() or _CARETS.match(text):
            continue
        if _FRAME.match(text) or _TRACEBACK.match(text) or _EXCEPTION.match(text):
            return
        code = _RICH_GUTTER.sub("", text).strip()
        if "(" in code and re.match(r"[A-Za-z_]", code):
            ev.facts["code"] = _short(code)
        return


# The end of a message that stops where the sentence does (a full stop, a closing quote or bracket, a number):
# a message without one may go on on the next line (a log pasted into an issue wraps it at 80 columns).
_ENDED = re.compile(r"""[.!?)\]}'"`>\d]\s*$""")


def wants_continuation(ev: Event) -> bool:
    """An exception whose message announces more lines (it ends with ':'): Python prints str(exc) whole, and a
    message such as Ray's "Version mismatch: The cluster was started with:" says what it means below; one that stops
    mid-sentence may have been wrapped by a paste. A logged record may go on too: its message wrapped onto indented
    lines (a log pasted into an issue, a terminal's width)."""
    if ev.kind == "log":
        return True
    msg = ev.facts.get("message", "")
    if ev.kind == "warning":
        return announces_more(msg)  # its message starts on the next line, or its ':' announces it there
    if ev.kind == "python" and not msg and ev.text.rstrip().endswith(":"):
        return True  # `Type:` with nothing after it: CPython writes `Type: value`, so the value is on the next lines
    return ev.kind == "python" and bool(msg) and (msg.endswith(":") or not _ENDED.search(msg) or _ends_in_digit(msg))


def _ends_in_digit(msg: str) -> bool:
    """A message whose last character is a digit: it may have ended (`error code is 4`) or been cut inside a number
    by a terminal's width (`current_node_resource={'memory': 215` / `1287372800.0, ...`)."""
    return msg.rstrip()[-1:].isdigit()


def _unclosed(msg: str) -> bool:
    """More brackets opened than closed: the message was cut before its end (a dict or list it prints)."""
    return sum(msg.count(c) for c in "([{") > sum(msg.count(c) for c in ")]}")


def continue_message(ev: Event, lines: list[str], *, prefixed: bool = False) -> list[str]:
    """Add the lines that follow an exception line (or a logged record, its indented lines only) to its message, up
    to the first blank line or the first line that starts something else (a frame, a traceback, a logged record), at
    most MAX_CONTINUATION; the facts an exception's message names are read again from the whole of it. Returns the
    lines it added. `prefixed`: the exception line carries a launcher's or logger's prefix (doctor.explain.events
    strip_prefix), which every line its process prints carries too."""
    more: list[str] = []
    if ev.kind == "warning":
        return _continue_warning(ev, lines)
    # an exception whose message stops mid-sentence (no ':') goes on only on unindented lines: a paste's wrap; an
    # indented line below it is a block of its own (a table, the next record's detail)
    msg = ev.facts.get("message", "")
    wrapped = ev.kind == "python" and bool(msg) and not msg.endswith(":")
    # a message ending in a digit reads as ended (`error code is 4`); it goes on only where the next lines are a
    # terminal's wrap of it: lines without the prefix its own line carries (a process's next line would carry it),
    # or, unprefixed, a message cut inside an open bracket
    in_number = wrapped and _ENDED.search(msg) is not None and _ends_in_digit(msg)
    if in_number and not (prefixed or _unclosed(msg)):
        return more
    for raw in lines[:MAX_CONTINUATION]:
        text = strip_prefix(raw.rstrip("\r\n"))
        if in_number and text != raw.rstrip("\r\n"):
            break  # the process's (or another's) own next line: the message ended with its number
        if not text.strip() or _NOT_CONTINUATION.match(text) or _EXCEPTION.match(text) and not text[:1].isspace():
            break
        if ev.kind == "log" and not text[:1].isspace():
            break  # a logged record goes on only on indented lines: an unindented one is the next record's
        if wrapped and text[:1].isspace():
            break
        more.append(text.strip())
    if not more:
        return more
    msg = " ".join([ev.facts.get("message", ""), *more]).strip()
    ev.facts["message"] = _short(msg)
    if ev.kind == "python":
        _python_facts(msg, ev.facts)
    return more


def _continue_warning(ev: Event, lines: list[str]) -> list[str]:
    """A Python warning's message below its first line (doctor.explain.pywarnings), read from the lines its own
    process printed next, up to the first another process printed."""
    own: list[str] = []
    for raw in lines[:MAX_MESSAGE_LINES]:
        if raw.strip() and line_process(raw) != ev.process:
            break
        own.append(strip_prefix(raw.rstrip("\r\n")))
    more = [text.strip() for text in own[: message_span(ev.facts.get("message", ""), own)] if text.strip()]
    if more:
        ev.facts["message"] = _short(" ".join([ev.facts.get("message", ""), *more]).strip())
    return more


def _python_facts(msg: str, facts: dict[str, str]) -> None:
    """What a Python exception's message names: a missing module, an import of a name, an attribute, a call."""
    if m := _MODULE_MISSING.search(msg):
        facts["module"] = m.group("mod")
    elif m := _IMPORT_NAME.search(msg):
        facts["module"], facts["name"] = m.group("mod"), m.group("name")
        if m.group("path"):
            facts["path"] = m.group("path")
        if m.group("partial"):
            facts["circular"] = "1"
    elif m := _NO_ATTR.search(msg):
        if m.group("mod"):
            facts["module"], facts["name"] = m.group("mod"), m.group("name")
        else:
            facts["class"] = m.group("cls") or m.group("cls2")
            facts["name"] = m.group("name2") or m.group("name3")
    elif m := _KWARG.search(msg):
        facts["call"] = m.group("func") or ""
        if m.group("kw"):
            facts["keyword"] = m.group("kw")
    if m := _LIB_MISSING.search(msg):
        facts["library"] = m.group("lib") or m.group("lib2")
    elif m := _SYMBOL.search(msg):
        facts["symbol"] = m.group("sym")
        if m.group("path"):
            facts["library"] = m.group("path")
        if m.group("ver"):
            facts["symbol_version"] = m.group("ver")
    elif m := _VERSION_NODE.search(msg):
        facts["version_node"] = m.group("node")
        if m.group("lib"):
            facts["version_lib"] = m.group("lib")
    facts.update(_codes(msg))


def _own_class(text: str) -> bool:
    """The line is one of the failure classes read beside the signatures: the operating system's, an NPU unit's, a
    memory budget, pip's / CMake's (their modules are imported on the first line that needs them)."""
    if not any(p in text for p in _OWN_PHRASES):
        return False  # none of their phrases: their modules stay unloaded
    from doctor.explain.memory_budget import budget_class
    from doctor.explain.npu_units import unit_class
    from doctor.explain.osclasses import os_class
    from doctor.explain.pipclasses import pip_class

    return any(f(text) is not None for f in (os_class, unit_class, budget_class, pip_class))


_WAIT_WORDS = tuple(p[0] for p in WAIT_PHRASES)
_OWN_PHRASES = tuple(p[0] for p in (*OS_PHRASES, *PIP_PHRASES, *UNIT_PHRASES, *BUDGET_PHRASES))


def _codes(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if "cmi" in text or "CMI" in text or "npu-smi" in text:
        from doctor.explain.dcmi import dcmi_code

        if (dcmi := dcmi_code(text)) is not None:
            out["dcmi_code"] = dcmi
    if "HCCL function error" in text:
        from doctor.explain.hccl_codes import creates_communicator, hccl_code

        if (hccl := hccl_code(text)) is not None:
            out["hccl_code"] = hccl
            if creates_communicator(text):
                out["hccl_setup"] = "1"
    if m := _CANN_CODE.search(text):
        out["code"] = m.group("code")
    if m := _ACL_CODE.search(text):
        out["acl_code"] = m.group("code") or m.group("code2")
    if m := _NPU_ERR.search(text):
        out["npu_err"] = m.group("code")
    return out
