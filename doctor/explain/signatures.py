"""Failure-log diagnosis, the names other commands import (smoke, tests).

The pieces live in their own modules: `db` (the signature database in `profiles/signatures.toml`), `anchors`
(the literal pre-filter), `scanner` (streaming one log in bounded memory), `findings` (ranking, no-match and
unreadable logs), `stream` (files, stdin, lines) and `multi` (a directory or several logs: the root-cause node).
"""

from __future__ import annotations

from doctor.explain.anchors import literal_for as _literal_for
from doctor.explain.db import DEFAULT_DB, SCHEMA, Signature, SignatureDB
from doctor.explain.findings import NO_MATCH_ID, UNREADABLE_ID
from doctor.explain.loading import load_signatures
from doctor.explain.scanner import DEFAULT_CONTEXT, MAX_LINE, SHOWN_CHARS, LogScanner
from doctor.explain.stream import explain_file, explain_lines, explain_path, iter_log_lines, scan_stream

__all__ = [
    "DEFAULT_CONTEXT", "DEFAULT_DB", "MAX_LINE", "NO_MATCH_ID", "SCHEMA", "SHOWN_CHARS", "UNREADABLE_ID",
    "LogScanner", "Signature", "SignatureDB", "_literal_for", "explain_file", "explain_lines", "explain_path",
    "iter_log_lines", "load_signatures", "scan_stream",
]
