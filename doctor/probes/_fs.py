"""Read a machine's files through a root prefix, the way a chroot would see them.

Every file probe takes `root` (default "/") so tests can point it at a fake machine. Paths in the snapshot
are *machine* paths ("/usr/local/Ascend/..."), never the prefixed host path. Symlinks are followed inside
the root: an absolute target such as `ascend-toolkit/latest -> /usr/local/Ascend/cann` (real CANN 9.x
images) resolves under the prefix, not on the host. Loops, ENOTDIR (a file where a directory is
expected), undecodable bytes and oversized files become recorded errors, never exceptions.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from dataclasses import dataclass, field

MAX_READ = 256 * 1024  # version/info files are tiny; a huge one is corrupt, read only its head
_MAX_HOPS = 40  # same limit as the kernel's MAXSYMLINKS


class FsError(Exception):
    """A path could not be read for a reason worth telling the user (loop, ENOTDIR, permission...)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def _reason(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "symlink loop"
    if e.errno == errno.ENOTDIR:
        return "a path component is a file, not a directory"
    if e.errno == errno.EISDIR:
        return "is a directory, not a file"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return e.strerror or str(e)


@dataclass
class RootFS:
    """A machine's files seen through a root prefix; remembers what it read for `collect --bundle`."""

    root: str = "/"
    # machine path -> raw bytes of every file read (for the bug-report bundle)
    files_read: dict[str, bytes] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.root = os.path.abspath(self.root or "/")

    def host(self, path: str) -> str:
        """Machine path -> host path (no symlink resolution)."""
        rel = os.path.normpath("/" + path).lstrip("/")
        return os.path.join(self.root, rel) if rel else self.root

    def resolve(self, path: str) -> str:
        """Machine path with every symlink resolved inside the root. Raises FsError on a loop.

        A missing component ends resolution: the rest is appended as is (the caller then sees ENOENT)."""
        pending = [p for p in ("/" + path).split("/") if p][::-1]
        out: list[str] = []
        hops = 0
        while pending:
            part = pending.pop()
            if part == ".":
                continue
            if part == "..":
                if out:
                    out.pop()
                continue
            cand = "/" + "/".join([*out, part])
            try:
                st = os.lstat(self.host(cand))
            except OSError:
                out.append(part)
                out.extend(reversed(pending))
                break
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > _MAX_HOPS:
                    raise FsError(path, "symlink loop")
                try:
                    target = os.readlink(self.host(cand))
                except OSError as e:
                    raise FsError(cand, _reason(e)) from None
                if target.startswith("/"):
                    out = []
                pending.extend(reversed([p for p in target.split("/") if p]))
                continue
            out.append(part)
        return "/" + "/".join(out)

    def _lstat_resolved(self, path: str) -> os.stat_result | None:
        try:
            return os.stat(self.host(self.resolve(path)))
        except (OSError, FsError):
            return None

    def exists(self, path: str) -> bool:
        return self._lstat_resolved(path) is not None

    def stat(self, path: str) -> os.stat_result | None:
        """os.stat of the machine path (symlinks resolved inside the root), None when it cannot be had."""
        return self._lstat_resolved(path)

    def is_dir(self, path: str) -> bool:
        st = self._lstat_resolved(path)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def is_file(self, path: str) -> bool:
        st = self._lstat_resolved(path)
        return st is not None and stat.S_ISREG(st.st_mode)

    def is_link(self, path: str) -> bool:
        try:
            return os.path.islink(self.host(path))
        except OSError:
            return False

    def listdir(self, path: str) -> list[str]:
        """Sorted entries; [] when missing; FsError for a loop / ENOTDIR / permission problem."""
        real = self.resolve(path)
        try:
            return sorted(os.listdir(self.host(real)))
        except FileNotFoundError:
            return []
        except OSError as e:
            raise FsError(path, _reason(e)) from None

    def read_bytes(self, path: str, limit: int = MAX_READ) -> bytes | None:
        """File content (first `limit` bytes); None when it does not exist; FsError otherwise."""
        real = self.resolve(path)
        try:
            with open(self.host(real), "rb") as fh:
                data = fh.read(limit)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise FsError(path, _reason(e)) from None
        with self._lock:
            self.files_read[path] = data
        return data

    def read_text(self, path: str, limit: int = MAX_READ) -> str | None:
        """Like read_bytes, decoded as UTF-8 with undecodable bytes replaced (a GBK comment in a
        version file must not hide the `Version=` line next to it)."""
        data = self.read_bytes(path, limit)
        return None if data is None else data.decode("utf-8", errors="replace")
