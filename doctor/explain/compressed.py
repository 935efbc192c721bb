"""Compressed logs, read as the text they hold.

A job's log reaches the person explaining it compressed as often as not: logrotate's `train.log.1.gz`, a CI
artifact or a cluster's log archive packed with xz or bzip2. Read as bytes such a file is "binary data", and
`doctor explain train.log.1.gz` said there was nothing to explain; `zgrep` reads it, so does the doctor. The
compression is told by the file's magic number, not its name (a `.log` that holds gzip, a `.gz` that does not).
Only the Python standard library's codecs, imported when a compressed log is met (an uncompressed one, the common
case, pays nothing); zstd has one from Python 3.14 on (`compression.zstd`), and before it the error names `zstdcat`.
"""

from __future__ import annotations

import io
from typing import IO

# The first bytes of each format: RFC 1952 2.3.1's ID1 ID2 CM (CM 8 = deflate); the xz file format's header magic
# (2.1.1.1); bzip2's "BZh", a block size digit 1-9 and the first block's magic 0x314159265359 ("1AY&SY"); RFC 8878
# 3.1.1's zstd frame magic 0xFD2FB528, little-endian.
_GZIP = b"\x1f\x8b\x08"
_XZ = b"\xfd7zXZ\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"
HEAD_BYTES = 10  # enough to tell every format below


def compression_of(head: bytes) -> str | None:
    """"gzip", "xz", "bzip2" or "zstd" when `head` (a file's first HEAD_BYTES) starts a stream of that format, else
    None."""
    if head.startswith(_GZIP):
        return "gzip"
    if head.startswith(_XZ):
        return "xz"
    if head.startswith(_ZSTD):
        return "zstd"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[3:4] != b"0" and head[4:10] == b"1AY&SY":
        return "bzip2"
    return None


# what decompresses each to stdout, for the message when the stream is corrupt or cut short
DECOMPRESS_TO_STDOUT = {"gzip": "zcat", "xz": "xzcat", "bzip2": "bzcat", "zstd": "zstdcat"}


def open_decompressed(raw: IO[bytes], kind: str) -> io.BufferedIOBase:
    """A binary stream of the text `raw` holds compressed as `kind` (read lazily: memory does not grow with it).
    ImportError: this Python has no codec for it (zstd before 3.14)."""
    if kind == "zstd":
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python >= 3.14

        return zstd.ZstdFile(raw, mode="rb")  # type: ignore[no-any-return,unused-ignore]
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(raw, mode="rb")
    import bz2

    return bz2.BZ2File(raw, mode="rb")


def has_codec(kind: str) -> bool:
    """Whether this Python can read `kind`: gzip, xz and bzip2 always; zstd from 3.14 (a directory's walk leaves a
    `.zst` unread, and says so, rather than fail the whole directory on it)."""
    if kind != "zstd":
        return True
    import importlib.util

    try:
        return importlib.util.find_spec("compression.zstd") is not None
    except ImportError:  # no `compression` package at all (before 3.14)
        return False


def read_errors() -> tuple[type[Exception], ...]:
    """What reading a corrupt or cut-short stream raises: gzip.BadGzipFile and bz2's "Invalid data stream" are
    OSErrors, a stream cut short is EOFError, xz's own is LZMAError, zstd's ZstdError."""
    import lzma

    try:
        from compression.zstd import ZstdError  # type: ignore[import-not-found,unused-ignore]  # Python >= 3.14
    except ImportError:
        return (OSError, EOFError, lzma.LZMAError)
    return (OSError, EOFError, lzma.LZMAError, ZstdError)
