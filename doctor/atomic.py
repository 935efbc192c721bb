"""Atomic file writes: a temp file in the destination's directory, fsync, rename.

A failed or interrupted write (full disk, RLIMIT_FSIZE, Ctrl-C) leaves neither a partial destination nor the
temp file. SIGXFSZ is ignored while writing: past RLIMIT_FSIZE the kernel would otherwise kill the process
mid-write (leaving the temp file behind) instead of failing the write with EFBIG.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import IO


@contextlib.contextmanager
def atomic_binary(path: str, mode: int | None = None) -> Iterator[IO[bytes]]:
    """Yield a binary file; on a clean exit it becomes `path` (with `mode`, by default what a plain open()
    would give under the umask: mkstemp's 0600 would make snapshots and env files unreadable to others),
    on any error it vanishes."""
    import signal
    import tempfile  # ~60 ms of imports (random, shutil...) that a run writing nothing should not pay
    import threading

    d = os.path.dirname(os.path.abspath(path)) or "."
    restore = None
    if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
        restore = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".doctor-", dir=d)
        try:
            with os.fdopen(fd, "wb") as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    finally:
        if restore is not None:
            signal.signal(signal.SIGXFSZ, restore)


def write_text_atomic(path: str, text: str, mode: int | None = None) -> None:
    with atomic_binary(path, mode) as fh:
        fh.write(text.encode("utf-8"))
