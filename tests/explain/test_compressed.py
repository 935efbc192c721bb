"""Which compression a log's first bytes say, from what the standard library's own compressors write."""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest

from doctor.explain.compressed import HEAD_BYTES, compression_of


@pytest.mark.parametrize(("data", "kind"), [
    (gzip.compress(b"line\n", mtime=0), "gzip"),
    (lzma.compress(b"line\n"), "xz"),
    (bz2.compress(b"line\n"), "bzip2"),
    (bytes.fromhex("28b52ffd2400290000") + b"line\n", "zstd"),  # a zstd frame header (RFC 8878 3.1.1)
    (b"BZh9 is how a text line may start\n", None),
    (b"INFO starting\n", None),
    (b"", None),
], ids=["gzip", "xz", "bzip2", "zstd", "bzh9-text", "text", "empty"])
def test_compression_of(data, kind):
    assert compression_of(data[:HEAD_BYTES]) == kind
