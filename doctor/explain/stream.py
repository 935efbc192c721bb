"""Diagnose one log: a file, stdin, a binary stream or lines already in memory.

Public API for other commands (smoke): `explain_lines(lines)`, `explain_file(path)`, `explain_path(path)`,
`scan_stream(stream)`.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from doctor.errors import InputError
from doctor.explain import compressed, parts
from doctor.explain.db import SignatureDB, read_signatures
from doctor.explain.findings import build_findings
from doctor.explain.scanner import BLOCK, DEFAULT_CONTEXT, MAX_LINE, LogScanner, ScanResult
from doctor.report import Finding


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


def scan(stream: IO[bytes] | io.BufferedIOBase, *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT) -> ScanResult:
    """Stream a binary file object through the scanner in blocks."""
    scanner = LogScanner(db, context_lines=context_lines)
    read = getattr(stream, "read1", None) or stream.read
    while True:
        chunk = read(BLOCK)
        if not chunk:
            break
        scanner.feed_bytes(chunk)
    scanner.close()
    return scanner.result()


def explain_lines(
    lines: Iterable[str], *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT,
    attribution: bool = True,
) -> list[Finding]:
    """Diagnose log lines (any iterable of str, consumed lazily). Never raises on log content. `attribution=False`:
    signatures only."""
    db = db if db is not None else read_signatures()
    if isinstance(lines, str):  # a whole text, not an iterable of lines
        lines = [lines]
    scanner = LogScanner(db, context_lines=context_lines)
    buf: list[bytes] = []
    size = 0
    for item in lines:
        raw = item.encode("utf-8", "replace")
        buf.append(raw if raw.endswith(b"\n") else raw + b"\n")
        size += len(raw) + 1
        if size >= BLOCK:
            scanner.feed_bytes(b"".join(buf))
            buf, size = [], 0
    if buf:
        scanner.feed_bytes(b"".join(buf))
    scanner.close()
    return build_findings(db, scanner.result(), attribution=attribution)


def scan_stream(
    stream: IO[bytes], *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT, log: str | None = None
) -> tuple[list[Finding], int]:
    """Diagnose a binary stream; returns the findings and the number of lines read."""
    db = db if db is not None else read_signatures()
    res = scan(stream, db=db, context_lines=context_lines)
    return build_findings(db, res, log=log), res.lines_read


def explain_file(
    path: str | Path, *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT
) -> list[Finding]:
    """Diagnose a log file ("-" reads stdin), streaming it. An unreadable file is an InputError."""
    return explain_path(path, db=db, context_lines=context_lines)[0]


def explain_path(
    path: str | Path, *, db: SignatureDB | None = None, context_lines: int = DEFAULT_CONTEXT, jobs: int | None = 1,
    snapshot: object = None,
) -> tuple[list[Finding], int]:
    """Like `explain_file`, also returning the number of lines read (for the report). `jobs`: processes that
    may read parts of one big file at once (None: one per CPU). `snapshot`: the run's snapshot, whose packages'
    top-level names and editable trees attribute frames the packaged table cannot."""
    db = db if db is not None else read_signatures()
    res = scan_path(path, db=db, context_lines=context_lines, jobs=jobs)
    return build_findings(db, res, log=str(path), snapshot=snapshot), res.lines_read


def scan_path(path: str | Path, *, db: SignatureDB, context_lines: int = DEFAULT_CONTEXT,
              jobs: int | None = 1) -> ScanResult:
    """Scan a log file, or stdin for "-"; a gzip, xz or bzip2 one as the text it holds (doctor.explain.compressed)."""
    name = str(path)
    if name == "-":
        return _scan_stream(sys.stdin.buffer, name, db, context_lines)
    try:
        fh = open(name, "rb")  # closed below; a `with` block would also catch read errors as open errors
    except OSError as e:
        raise InputError(f"cannot read log: {e.strerror or e}", source=name) from e
    try:
        if compressed.compression_of(_head(fh)) is None:
            st = os.fstat(fh.fileno())
            size = st.st_size if stat.S_ISREG(st.st_mode) else 0
            if (count := parts.part_count(size, jobs)) > 1:
                return parts.scan_parts(name, size, db=db, context_lines=context_lines, parts=count)
        return _scan_stream(fh, name, db, context_lines)
    except OSError as e:  # e.g. EISDIR on read, an I/O error mid-file
        raise InputError(f"cannot read log: {e.strerror or e}", source=name) from e
    finally:
        fh.close()


def _head(fh: IO[bytes]) -> bytes:
    """The first bytes of a stream without consuming them (a pipe on stdin too), where the stream can peek."""
    peek = getattr(fh, "peek", None)
    return peek(compressed.HEAD_BYTES)[:compressed.HEAD_BYTES] if peek is not None else b""


def _scan_stream(fh: IO[bytes], name: str, db: SignatureDB, context_lines: int) -> ScanResult:
    kind = compressed.compression_of(_head(fh))
    if kind is None:
        return scan(fh, db=db, context_lines=context_lines)
    tool = f"`{compressed.DECOMPRESS_TO_STDOUT[kind]} {'' if name == '-' else name + ' '}| doctor explain -`"
    try:
        text = compressed.open_decompressed(fh, kind)
    except ImportError:
        raise InputError(f"cannot read log: {kind}-compressed, and this Python has no {kind} codec; {tool} reads it",
                         source=name) from None
    try:
        with text:
            return scan(text, db=db, context_lines=context_lines)
    except compressed.read_errors() as e:
        # corrupt, or cut short (a copy of a log still being compressed): what decompresses is worth reading
        raise InputError(f"cannot read log: {kind}-compressed, and {e}; {tool} reads the part that decompresses",
                         source=name) from e
