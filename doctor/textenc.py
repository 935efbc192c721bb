"""Output on a terminal or file whose encoding is not UTF-8.

Python writes stdout and stderr in the locale's encoding. On a host whose locale is zh_CN.GBK (Chinese clusters
keep it for tools that print GBK), a latin-1 one, or under PYTHONIOENCODING=ascii, the report's marks (`✗`, `✓`)
cannot be encoded: the first write raised UnicodeEncodeError and the doctor ended with "internal error … this is a
bug in the doctor", exit 2, having printed nothing of the report. Here the marks get ASCII stand-ins the encoding
can write, anything else it cannot becomes `?` (never an exception), and JSON is written with `\\u` escapes, which
lose nothing.
"""

from __future__ import annotations

import codecs
import functools
import sys
from typing import Any

# What the reports print beyond ASCII, and the ASCII that stands for each where the encoding has no such character
# (GBK has `…`, `—`, `×` and `→`, not `✗` or `✓`: only what the encoding lacks is replaced).
STAND_INS = {"✗": "x", "✓": "+", "…": "...", "—": "-", "–": "-", "→": "->", "×": "x", "•": "*", "µ": "u", "≥": ">=",
             "≤": "<=", "‘": "'", "’": "'", "“": '"', "”": '"', "│": "|", "┃": "|", "❱": ">"}
# a character outside the Basic Multilingual Plane: only the Unicode encodings (and GB18030) write it
_PROBE = "\U0001f600"


@functools.lru_cache(maxsize=8)
def _codec(encoding: str) -> str | None:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return None


def _encoding(stream: Any) -> str | None:
    enc = getattr(stream, "encoding", None)
    return _codec(enc) if isinstance(enc, str) else None


@functools.lru_cache(maxsize=8)
def _writes_everything(codec: str) -> bool:
    try:
        (_PROBE + "".join(STAND_INS)).encode(codec)
    except UnicodeEncodeError:
        return False
    return True


def writes_everything(stream: Any) -> bool:
    """Whether `stream` can write any character (UTF-8 and the other Unicode encodings; a stream with no encoding,
    such as a StringIO, takes str as it is)."""
    codec = _encoding(stream)
    return codec is None or _writes_everything(codec)


@functools.lru_cache(maxsize=8)
def _table(codec: str) -> dict[int, str]:
    table = {}
    for ch, ascii_text in STAND_INS.items():
        try:
            ch.encode(codec)
        except UnicodeEncodeError:
            table[ord(ch)] = ascii_text
    return table


def stand_ins(stream: Any) -> dict[int, str]:
    """The str.translate table that replaces the marks `stream`'s encoding cannot write; empty when it writes all."""
    codec = _encoding(stream)
    return {} if codec is None or _writes_everything(codec) else _table(codec)


def fit_streams() -> None:
    """Make stdout and stderr write `?` for a character their encoding lacks instead of raising (a log line quoted in
    evidence can hold any character; click's own help and usage errors are written here too)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        # strict, or the C locale's surrogateescape (which round-trips undecodable bytes and raises for the rest)
        if reconfigure is not None and not writes_everything(stream) and \
                getattr(stream, "errors", None) in ("strict", "surrogateescape"):
            reconfigure(errors="replace")
