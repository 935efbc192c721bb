"""Atomic file writes: a temp file in the destination's directory, fsync, rename.

A failed or interrupted write (full disk, RLIMIT_FSIZE, Ctrl-C) leaves neither a partial destination nor the
temp file. SIGXFSZ is ignored while writing: past RLIMIT_FSIZE the kernel would otherwise kill the process
mid-write (leaving the temp file behind) instead of failing the write with EFBIG.

Only regular files are replaced. A destination that is a device, a FIFO or a socket (`-o /dev/null`,
`-o /dev/stdout`, a named pipe) is written in place: renaming over it would turn /dev/null into a regular
file for the whole machine (the doctor often runs as root). A symlink is written through, so the link stays.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import IO

# The temp file's name holds its writer's pid: only that process ever renames it (or deletes it), so a temp file
# whose writer is gone and that nobody has written to for a while is a killed write's leftover (doctor.cacheprune).
TEMP = re.compile(r"\.doctor-(?P<pid>[0-9]+)-[0-9a-f]{12}")


def temp_name() -> str:
    """A fresh name of the TEMP form for this process, to be created exclusively (O_EXCL, mkdir) in a directory."""
    return f".doctor-{os.getpid()}-{os.urandom(6).hex()}"


def _special(path: str) -> bool:
    """True when `path` exists and is not a regular file (after following symlinks)."""
    import stat

    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # missing (or unreachable): a new regular file will be created
        return False


def _create_temp(directory: str) -> tuple[int, str]:
    """A new, exclusive 0600 file next to the destination, like tempfile.mkstemp (whose import brings
    random, shutil, bz2 and lzma along: ~25 ms of every `collect -o`)."""
    for _ in range(100):
        name = os.path.join(directory, temp_name())
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


@contextlib.contextmanager
def atomic_binary(path: str, mode: int | None = None) -> Iterator[IO[bytes]]:
    """Yield a binary file; on a clean exit it becomes `path` (with `mode`, by default what a plain open()
    would give under the umask: mkstemp's 0600 would make snapshots and env files unreadable to others),
    on any error it vanishes."""
    import signal
    import threading

    if _special(path):
        with open(path, "wb") as fh:
            yield fh
        return
    target = os.path.realpath(path)
    d = os.path.dirname(target) or "."
    restore = None
    if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
        restore = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        try:
            fd, tmp = _create_temp(d)
        except PermissionError as e:  # a file the user may write, in a directory it may not create files in
            raise PermissionError(e.errno, f"{e.strerror}: cannot create a file in {d} (the new content is written "
                                  "beside the destination, then renamed over it)", target) from e
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
            os.replace(tmp, target)
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
