"""Failure-log diagnosis: match a log, line by line, against the signature database.

The knowledge lives in `profiles/signatures.toml` (data, not code); this module only loads and validates
it and streams a log through it. Logs can be gigabytes (Ray prints every worker's output), so nothing here
keeps more than a capped line, a few context lines per matched signature and one flag per context rule.

Matching rules, in the order they apply:

1. Per line, every signature whose regex matches is a candidate; the highest `specificity` wins the line
   (file order breaks ties). A generic `cannot open shared object file` therefore loses to `libatb.so`.
2. A signature with `context` rules counts only if each rule matched some line of the same log. When the
   line winner's context never shows up, the line falls back to the best signature without context.
3. A signature listed in another reported signature's `supersedes` is dropped (a symptom explained by
   its root cause), and `fallback` signatures are dropped when anything else was reported.
4. One finding per signature, ordered by first occurrence; evidence is the first matching line.

Public API for other commands (smoke): `explain_lines(lines)`, `explain_file(path)`, `load_signatures()`.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import IO, Any

from doctor.errors import InputError
from doctor.report import COMPONENTS, Finding, Fix, Severity
from doctor.tomlfile import read_toml

SCHEMA = "doctor.signatures/1"
DEFAULT_DB = Path(__file__).resolve().parent.parent / "profiles" / "signatures.toml"

MAX_LINE = 64 * 1024  # bytes read per line; the rest of an over-long line is skipped
SHOWN_CHARS = 300  # characters of a line kept as evidence
DEFAULT_CONTEXT = 2  # lines kept before and after the first match of each signature
MAX_LINE_NUMBERS = 5  # line numbers listed per finding

NO_MATCH_ID = "no-known-signature"

_ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_REQUIRED = ("id", "severity", "components", "specificity", "regex", "title", "fix", "source", "example")
_KNOWN = frozenset(
    _REQUIRED
    + ("detail", "commands", "context", "supersedes", "fallback", "example_kind", "example_from", "example_context")
)
_EXAMPLE_KINDS = ("report", "source-message")


@dataclass(frozen=True)
class Signature:
    """One known failure: how to recognise it in a log and what to tell the user."""

    id: str
    severity: Severity
    components: tuple[str, ...]
    specificity: int
    patterns: tuple[re.Pattern[str], ...]
    title: str
    detail: str
    fix: str
    commands: tuple[str, ...]
    source: str
    example: str
    example_kind: str = "report"
    example_from: str | None = None
    example_context: tuple[str, ...] = ()
    context: tuple[re.Pattern[str], ...] = ()
    supersedes: tuple[str, ...] = ()
    fallback: bool = False
    order: int = 0  # position in the file: breaks specificity ties

    def matches(self, line: str) -> bool:
        return any(p.search(line) for p in self.patterns)


@dataclass(frozen=True)
class SignatureDB:
    path: str
    signatures: tuple[Signature, ...]

    def __len__(self) -> int:
        return len(self.signatures)

    def get(self, sig_id: str) -> Signature:
        return self._by_id[sig_id]

    @cached_property
    def _by_id(self) -> dict[str, Signature]:
        return {s.id: s for s in self.signatures}

    @cached_property
    def match_table(self) -> tuple[tuple[str | None, re.Pattern[str], Signature], ...]:
        """Every regex with its pre-filter literal, most specific signatures first (computed once)."""
        entries = [(_literal_for(p), p, s) for s in self.signatures for p in s.patterns]
        entries.sort(key=lambda e: (-e[2].specificity, e[2].order))
        return tuple(entries)

    @cached_property
    def context_rules(self) -> dict[str, tuple[tuple[str | None, re.Pattern[str]], ...]]:
        return {s.id: tuple((_literal_for(p), p) for p in s.context) for s in self.signatures if s.context}


# ---------------------------------------------------------------------------------------------- loading


def load_signatures(path: str | Path | None = None) -> SignatureDB:
    """Load and validate a signature database (default: the one shipped in profiles/).

    Any defect — unreadable file, bad TOML, unknown field or component, a regex that does not compile, an
    example its own signature does not match — is an InputError naming the file and the signature id.
    """
    if path is None:
        return _load_default()
    return _load(Path(path))


@lru_cache(maxsize=1)
def _load_default() -> SignatureDB:
    return _load(DEFAULT_DB)


def _load(path: Path) -> SignatureDB:
    src = str(path)
    data = read_toml(src, "signature database")
    if data.get("schema") != SCHEMA:
        raise InputError(f"expected schema = {SCHEMA!r}, got {data.get('schema')!r}", source=src)
    entries = data.get("signature")
    if not isinstance(entries, list) or not entries:
        raise InputError("no [[signature]] entries", source=src)

    sigs: list[Signature] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        sig = _parse_signature(entry, i, src)
        if sig.id in seen:
            raise InputError("duplicate signature id", source=src, path=f"signature {sig.id}")
        seen.add(sig.id)
        sigs.append(sig)
    for sig in sigs:
        for other in sig.supersedes:
            if other not in seen or other == sig.id:
                raise InputError(f"supersedes unknown signature {other!r}", source=src, path=f"signature {sig.id}")
    db = SignatureDB(src, tuple(sigs))
    for sig in sigs:
        _check_example(db, sig)
    return db


def _parse_signature(entry: Any, index: int, src: str) -> Signature:
    if not isinstance(entry, dict):
        raise InputError("a [[signature]] entry must be a table", source=src, path=f"signature #{index + 1}")
    sid = entry.get("id")
    where = f"signature {sid}" if isinstance(sid, str) and sid else f"signature #{index + 1}"

    def fail(msg: str) -> InputError:
        return InputError(msg, source=src, path=where)

    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise fail(f"missing field(s): {', '.join(missing)}")
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        raise fail(f"unknown field(s): {', '.join(unknown)}")
    if not isinstance(sid, str) or not _ID_RE.match(sid):
        raise fail("id must be kebab-case (a-z, 0-9, single hyphens)")
    try:
        severity = Severity(entry["severity"])
    except ValueError:
        raise fail(f"severity must be error, warning or info, not {entry['severity']!r}") from None
    components = entry["components"]
    if not isinstance(components, list) or not components or not all(isinstance(c, str) for c in components):
        raise fail("components must be a non-empty list of strings")
    bad = [c for c in components if c not in COMPONENTS]
    if bad:
        raise fail(f"unknown component(s) {bad}; allowed: {', '.join(sorted(COMPONENTS))}")
    spec = entry["specificity"]
    if not isinstance(spec, int) or isinstance(spec, bool) or not 0 <= spec <= 100:
        raise fail("specificity must be an integer 0-100")
    for key in ("title", "fix", "source", "example"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise fail(f"{key} must be a non-empty string")
    if not re.match(r"^https?://", entry["source"]):
        raise fail("source must be a URL (upstream doc, code or issue)")
    kind = entry.get("example_kind", "report")
    if kind not in _EXAMPLE_KINDS:
        raise fail(f"example_kind must be one of {_EXAMPLE_KINDS}")
    fallback = entry.get("fallback", False)
    if not isinstance(fallback, bool):
        raise fail("fallback must be true or false")
    return Signature(
        id=sid,
        severity=severity,
        components=tuple(components),
        specificity=spec,
        patterns=_patterns(entry["regex"], "regex", fail, allow_empty=False),
        title=entry["title"].strip(),
        detail=_opt_str(entry, "detail", fail),
        fix=entry["fix"].strip(),
        commands=_str_list(entry.get("commands", []), "commands", fail),
        source=entry["source"],
        example=entry["example"],
        example_kind=kind,
        example_from=_opt_str(entry, "example_from", fail) or None,
        example_context=_str_list(entry.get("example_context", []), "example_context", fail),
        context=_patterns(entry.get("context", []), "context", fail, allow_empty=True),
        supersedes=_str_list(entry.get("supersedes", []), "supersedes", fail),
        fallback=fallback,
        order=index,
    )


def _opt_str(entry: dict[str, Any], key: str, fail: Any) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str):
        raise fail(f"{key} must be a string")
    return value.strip()


def _str_list(value: Any, key: str, fail: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"{key} must be a list of strings")
    return tuple(value)


def _patterns(value: Any, key: str, fail: Any, *, allow_empty: bool) -> tuple[re.Pattern[str], ...]:
    items = _str_list(value, key, fail)
    if not items and not allow_empty:
        raise fail(f"{key} needs at least one regular expression")
    out = []
    for pattern in items:
        if not pattern:
            raise fail(f"{key}: empty regular expression")
        try:
            out.append(re.compile(pattern))
        except re.error as e:
            raise fail(f"{key} {pattern!r} does not compile: {e}") from None
    return tuple(out)


def _check_example(db: SignatureDB, sig: Signature) -> None:
    """A signature whose own example is not explained by it is a database bug: refuse the file."""
    found = [f.id for f in explain_lines([*sig.example_context, sig.example], db=db, context_lines=0)]
    if sig.id not in found:
        raise InputError(
            f"its example is not explained by it (got {found or 'nothing'}): {sig.example!r}",
            source=db.path,
            path=f"signature {sig.id}",
        )


# ---------------------------------------------------------------------------------------------- matching


def _required_literal(pattern: str) -> str | None:
    """The longest run of plain characters every match of `pattern` must contain, or None.

    Used only as a fast pre-filter (`literal in line` is far cheaper than a regex search). Conservative:
    any construct it does not understand ends the run, and a top-level `|` means "no literal".
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
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
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
        elif c == "+":
            flush()
        elif c in ".^$":
            flush()
        elif depth == 0:
            run.append(c)
        i += 1
    flush()
    return best if len(best) >= 3 else None


def _literal_for(pattern: re.Pattern[str]) -> str | None:
    if pattern.flags & re.IGNORECASE or "(?" in pattern.pattern:
        return None  # flags or look-arounds: no safe literal
    return _required_literal(pattern.pattern)


@dataclass
class _Hit:
    line: int
    text: str
    before: list[str]
    after: list[str] = field(default_factory=list)
    count: int = 1
    lines: list[int] = field(default_factory=list)


class LogScanner:
    """Feed lines one at a time; `findings()` gives the diagnosis. Memory is bounded by the number of
    signatures, not by the log: one capped evidence line plus a few context lines per signature."""

    def __init__(self, db: SignatureDB | None = None, *, context_lines: int = DEFAULT_CONTEXT) -> None:
        self.db = db if db is not None else load_signatures()
        self.context_lines = max(0, context_lines)
        self.lines_read = 0
        self._entries = self.db.match_table
        self._context_todo: dict[str, list[tuple[str | None, re.Pattern[str]]]] = {
            k: list(v) for k, v in self.db.context_rules.items()
        }
        self._hits: dict[str, _Hit] = {}
        # line wins of a signature with context rules, with the best context-free runner-up per line
        self._runner_up: dict[str, dict[str, _Hit]] = {}
        self._before: deque[str] = deque(maxlen=self.context_lines)
        self._open: list[_Hit] = []  # hits still collecting "after" context

    # -- feeding

    def feed(self, line: str) -> None:
        self.lines_read += 1
        lineno = self.lines_read
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE]
        line = line.rstrip("\r\n")
        if "\x1b" in line:
            line = _ANSI_RE.sub("", line)
        shown = _shorten(line)
        if self._open:
            for hit in self._open:
                hit.after.append(shown)
            self._open = [h for h in self._open if len(h.after) < self.context_lines]

        for sig_id, rules in list(self._context_todo.items()):
            left = [(lit, p) for lit, p in rules if not ((lit is None or lit in line) and p.search(line))]
            if left:
                self._context_todo[sig_id] = left
            else:
                del self._context_todo[sig_id]

        # tqdm-style progress output puts many "lines" on one physical line with \r
        segments = line.split("\r") if "\r" in line else (line,)
        for seg in segments:
            winner, runner_up = self._match(seg)
            if winner is not None:
                self._record(self._hits, winner, lineno, shown)
                if winner.context and runner_up is not None:
                    self._record(self._runner_up.setdefault(winner.id, {}), runner_up, lineno, shown)
                break
        if self.context_lines:
            self._before.append(shown)

    def _match(self, line: str) -> tuple[Signature | None, Signature | None]:
        """The most specific matching signature and, if it has context rules, the best one without."""
        winner: Signature | None = None
        for lit, pattern, sig in self._entries:
            if winner is not None and sig.id == winner.id:
                continue
            if lit is not None and lit not in line:
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

    def _record(self, table: dict[str, _Hit], sig: Signature, lineno: int, shown: str) -> None:
        hit = table.get(sig.id)
        if hit is None:
            hit = _Hit(line=lineno, text=shown, before=list(self._before), lines=[lineno])
            table[sig.id] = hit
            if self.context_lines:
                self._open.append(hit)
        else:
            hit.count += 1
            if len(hit.lines) < MAX_LINE_NUMBERS:
                hit.lines.append(lineno)

    # -- result

    def findings(self, *, log: str | None = None) -> list[Finding]:
        hits = dict(self._hits)
        for sig_id in list(hits):
            sig = self.db.get(sig_id)
            if sig.context and sig_id in self._context_todo:  # some context rule never matched
                del hits[sig_id]
                for other_id, hit in self._runner_up.get(sig_id, {}).items():
                    cur = hits.get(other_id)
                    if cur is None or hit.line < cur.line:
                        if cur is not None:
                            hit.count += cur.count
                        hits[other_id] = hit
                    else:
                        cur.count += hit.count
        superseded = {s for sig_id in hits for s in self.db.get(sig_id).supersedes}
        kept = {k: v for k, v in hits.items() if k not in superseded}
        if any(not self.db.get(k).fallback for k in kept):
            kept = {k: v for k, v in kept.items() if not self.db.get(k).fallback}
        out = [self._finding(self.db.get(k), h, log) for k, h in sorted(kept.items(), key=lambda kv: kv[1].line)]
        if not out:
            out.append(
                Finding(
                    id=NO_MATCH_ID,
                    severity=Severity.INFO,
                    components=("system",),
                    title="No known failure signature in the log",
                    detail=(
                        f"{self.lines_read} line(s) read; none matched the {len(self.db)} signatures in "
                        f"{self.db.path}. If the run failed, the cause is new to the doctor: the first "
                        "'Error' or 'Traceback' line is the place to start."
                    ),
                    evidence={"lines_read": self.lines_read, **({"log": log} if log else {})},
                    check="explain",
                )
            )
        return out

    def _finding(self, sig: Signature, hit: _Hit, log: str | None) -> Finding:
        evidence: dict[str, Any] = {"line": hit.line, "text": hit.text, "occurrences": hit.count}
        if hit.count > 1:
            evidence["lines"] = list(hit.lines)
        if hit.before or hit.after:
            evidence["context"] = {"before": list(hit.before), "after": list(hit.after)}
        if log:
            evidence["log"] = log
        return Finding(
            id=sig.id,
            severity=sig.severity,
            components=sig.components,
            title=sig.title,
            detail=sig.detail,
            evidence=evidence,
            fix=Fix(sig.fix, sig.commands),
            source=sig.source,
            check="explain",
        )


def _shorten(line: str) -> str:
    text = line.strip()
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


# ---------------------------------------------------------------------------------------------- streaming


def iter_log_lines(stream: IO[bytes], *, max_len: int = MAX_LINE) -> Iterator[str]:
    """Yield decoded lines from a binary stream, reading at most `max_len` bytes per line: the rest of
    an over-long line is read and dropped in bounded chunks, so memory never depends on the input."""
    while True:
        chunk = stream.readline(max_len)
        if not chunk:
            return
        if len(chunk) >= max_len and not chunk.endswith(b"\n"):
            while True:
                rest = stream.readline(max_len)
                if not rest or rest.endswith(b"\n"):
                    break
        yield chunk.decode("utf-8", "replace")


def explain_lines(
    lines: Iterable[str], *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT
) -> list[Finding]:
    """Diagnose log lines (any iterable of str, consumed lazily). Never raises on log content."""
    if isinstance(lines, str):  # a whole text, not an iterable of lines
        lines = [lines]
    scanner = LogScanner(db, context_lines=context_lines)
    for item in lines:
        parts = item.splitlines() if ("\n" in item or "\r" in item) else [item]
        for part in parts or [""]:
            scanner.feed(part)
    return scanner.findings()


def scan_stream(
    stream: IO[bytes], *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT, log: str | None = None
) -> tuple[list[Finding], int]:
    """Diagnose a binary stream; returns the findings and the number of lines read."""
    scanner = LogScanner(db, context_lines=context_lines)
    for line in iter_log_lines(stream):
        scanner.feed(line)
    return scanner.findings(log=log), scanner.lines_read


def explain_file(
    path: str | Path, *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT
) -> list[Finding]:
    """Diagnose a log file ("-" reads stdin), streaming it. An unreadable file is an InputError."""
    return explain_path(path, db=db, context_lines=context_lines)[0]


def explain_path(
    path: str | Path, *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT
) -> tuple[list[Finding], int]:
    """Like `explain_file`, also returning the number of lines read (for the report)."""
    name = str(path)
    if name == "-":
        return scan_stream(sys.stdin.buffer, db=db, context_lines=context_lines, log="-")
    try:
        fh = open(name, "rb")  # closed below; a `with` block would also catch read errors as open errors
    except OSError as e:
        raise InputError(f"cannot read log: {e.strerror or e}", source=name) from e
    try:
        return scan_stream(fh, db=db, context_lines=context_lines, log=name)
    except OSError as e:  # e.g. EISDIR on read, an I/O error mid-file
        raise InputError(f"cannot read log: {e.strerror or e}", source=name) from e
    finally:
        fh.close()
