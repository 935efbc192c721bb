"""Keeping every directory of the doctor's cache bounded: one policy, by size and last use, for all of them.

Why: each directory gets a new entry for every distinct input it is keyed by, and nothing else ever deletes one:
`signatures/` (~1 MB) and `message_owners/` (~7 MB) per version of the doctor and of the file read, `toml/` per
version of each knowledge file (~4.5 MB a release), `compose/` per script, override set and doctor version (~100 KB
each; 35 MB after one day of linting here), `verl/` per release (~1 MB), `smoke/` per workload. A killed write leaves
its temp file besides (`doctor.atomic`).

The policy (README, "The cache directory"): in each directory the entries are kept most recently used first while
they add up to at most BUDGET bytes (32 MB: four of the largest entry, the ~7 MB message table); the first one that
does not fit and every older one go. The entry the run uses and the KEEP - 1 used most recently before it always
stay, whatever their size (up to KEEP releases sharing a home each keep theirs). No age limit: a `verl/` release
unused for months may have cost a download an offline machine cannot repeat, and an age does not bound what a busy
day writes; the bytes are what is bounded. A hit marks its entry used (`touch`: its mtime, at most once an hour, so a
`check` reading ~20 cached files writes nothing on most runs), so an entry's mtime is its last use. Pruning runs
only after a miss (a write), in the writing run: a hit costs nothing more, and a directory grows only by writes.

A killed write's temp file (`doctor.atomic.TEMP`, `.doctor-<pid>-<hex>`, a file or an unpacking's directory) goes
when its writer is not alive here and nothing was written to it for TEMP_AGE (an hour, by its mtime). The name is the
reason: only the process named in it renames its temp file, so while that process lives it is left alone however old
it is (a writer stopped with Ctrl-Z); a pid not alive here is a killed writer or one in another pid namespace sharing
the home (a container, another node), and every writer of the cache writes its temp file in one go and renames it
within seconds (only a chmod follows the last write), so one not written to for an hour is a leftover.

Two processes pruning and writing at once lose nothing either just wrote: an entry is deleted by first renaming it
to a temp name of this process and checking that what was renamed is what the scan saw (inode and mtime); a writer
that put a new file at that name since, or a hit that marked it, gets it back (a hard link, so nothing newer at the
name is replaced). A reader that finds the name empty meanwhile works the value out again.

What is never touched, so that nothing outside the doctor's own entries is deleted:
- a name that is neither of the entry form the caller gives nor a temp name (a newer doctor naming its entries
  otherwise keeps them), nor a directory where the caller's entries are files;
- a symlink: it is neither followed nor removed;
- a directory that is itself a symlink: every directory is opened with O_NOFOLLOW and names are removed relative to
  that descriptor, so a directory swapped for a symlink meanwhile cannot send a deletion elsewhere.
Shard directories (`toml/0c/`) are left even when empty: a writer may have just made one to write into. Every error
is swallowed: housekeeping never fails a command (a read-only or full filesystem, a directory gone).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable

BUDGET = 32 << 20  # bytes of entries a cache directory keeps
KEEP = 3  # the entry in use and the two used most recently before it stay whatever their size
TOUCH_EVERY_NS = 3600 * 10**9  # a hit re-marks its entry when the mark is older than this
TEMP_AGE_NS = 3600 * 10**9  # a dead writer's temp file unchanged for this long is a leftover
SHARD = re.compile(r"[0-9a-f]{2}")  # toml/ and compose/ file their entries under the key's first two hex digits
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def stale(entries: list[tuple[int, int, str]], keep: int = KEEP, budget: int = BUDGET) -> list[str]:
    """The names to delete among (last use in ns, bytes, name) entries: most recently used first, the first `keep`
    always kept, then while the total fits `budget`; from the first that does not fit on, all go (pure)."""
    total = 0
    for i, (_, size, _) in enumerate(ordered := sorted(entries, reverse=True)):
        total += size
        if i >= keep and total > budget:
            return [name for _, _, name in ordered[i:]]
    return []


def leftovers(temps: list[tuple[int, int, str]], now_ns: int, alive: Callable[[int], bool]) -> list[str]:
    """The names to delete among (last change in ns, writer pid, name) temp files: unchanged for TEMP_AGE_NS and
    their writer not alive (pure, but for `alive`)."""
    return [name for changed, pid, name in temps if now_ns - changed > TEMP_AGE_NS and not alive(pid)]


def touch(path: str, mark_ns: int | None = None) -> None:
    """Mark the entry at `path` (a file or a directory) as just used, for `prune`, unless its mark (`mark_ns`, else
    its mtime) is less than TOUCH_EVERY_NS old; a read-only directory is passed over."""
    try:
        if mark_ns is None:
            mark_ns = os.stat(path).st_mtime_ns
        if time.time_ns() - mark_ns > TOUCH_EVERY_NS:
            os.utime(path)
    except OSError:
        pass


def prune(root: str, entry: re.Pattern[str], in_use: str | None = None, *, shards: bool = False,
          directories: bool = False, keep: int = KEEP, budget: int = BUDGET) -> None:
    """Hold the cache directory `root` to the policy: its entries are the names matching `entry` (in the shard
    directories under it with `shards`; directories instead of regular files with `directories`); `in_use` (a
    path) is the entry this run uses and stays. Killed writes' temp files there go too."""
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:  # no directory, or a symlink: nothing is deleted
        return
    inner: list[int] = []
    try:
        found: list[tuple[int, int, str]] = []
        where: dict[str, tuple[int, os.stat_result, bool]] = {}  # name -> (its directory's fd, its stat, directory?)
        temps: list[tuple[int, int, str]] = []
        use = os.path.relpath(in_use, root) if in_use else None
        _scan(fd, "", entry, directories, found, where, temps)
        if shards:
            for name in _listdir(fd):
                if SHARD.fullmatch(name):
                    try:
                        sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    except OSError:  # not a directory, a symlink, gone
                        continue
                    inner.append(sub)
                    _scan(sub, name + "/", entry, False, found, where, temps)
        now = time.time_ns()
        for name in stale([(now + 1 if n == use else m, size, n) for m, size, n in found], keep, budget):
            if name != use:
                _remove(name, *where[name])
        for name in leftovers(temps, now, _alive):
            sub, _, is_dir = where[name]
            _delete(sub, os.path.basename(name), is_dir)
    except (OSError, NotImplementedError):  # no dir_fd support, a directory gone: what is left stays
        pass
    finally:
        for sub in (*inner, fd):
            os.close(sub)


def _listdir(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except OSError:
        return []


def _scan(fd: int, prefix: str, entry: re.Pattern[str], directories: bool, found: list[tuple[int, int, str]],
          where: dict[str, tuple[int, os.stat_result, bool]], temps: list[tuple[int, int, str]]) -> None:
    """Add the entries and temp files in the directory open at `fd` (named `prefix` under the root)."""
    from doctor.atomic import TEMP

    for name in _listdir(fd):
        temp = TEMP.fullmatch(name)
        if not temp and not entry.fullmatch(name):
            continue
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:  # gone meanwhile
            continue
        is_dir = stat.S_ISDIR(st.st_mode)
        if not (is_dir or stat.S_ISREG(st.st_mode)):
            continue
        where[prefix + name] = (fd, st, is_dir)
        if temp:
            temps.append((st.st_mtime_ns, int(temp.group("pid")), prefix + name))
        elif is_dir == directories:
            found.append((st.st_mtime_ns, _tree_bytes(fd, name) if is_dir else st.st_size, prefix + name))


def _tree_bytes(fd: int, name: str) -> int:
    total = 0
    for _, _, files, dfd in os.fwalk(name, dir_fd=fd):
        for f in files:
            try:
                total += os.stat(f, dir_fd=dfd, follow_symlinks=False).st_size
            except OSError:
                pass
    return total


def _alive(pid: int) -> bool:
    """Whether process `pid` exists here (this one included); kill(pid, 0) sends nothing."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, ValueError):  # no process has such a pid
        return False
    except OSError:  # EPERM: another user's live process
        return True
    return True


def _remove(name: str, fd: int, seen: os.stat_result, is_dir: bool) -> None:
    """Delete the entry `name` (its base name in the directory open at `fd`) if it is still what the scan saw."""
    from doctor.atomic import temp_name

    base, gone = os.path.basename(name), temp_name()
    try:
        os.rename(base, gone, src_dir_fd=fd, dst_dir_fd=fd)
        now = os.stat(gone, dir_fd=fd, follow_symlinks=False)
    except OSError:  # gone meanwhile
        return
    if (now.st_ino, now.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):  # written or used since the scan: it stays
        try:
            if is_dir:
                os.rename(gone, base, src_dir_fd=fd, dst_dir_fd=fd)  # fails onto a new non-empty directory
                return
            os.link(gone, base, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
        except FileExistsError:  # a newer entry is there already: ours goes
            pass
        except OSError:
            if not is_dir:  # no hard links here: a file of the same name holds the same key's value
                try:
                    os.rename(gone, base, src_dir_fd=fd, dst_dir_fd=fd)
                    return
                except OSError:
                    pass
    _delete(fd, gone, is_dir)


def _delete(fd: int, name: str, is_dir: bool) -> None:
    """Remove a file, or a directory tree without following a symlink in it, relative to `fd`."""
    try:
        if not is_dir:
            os.unlink(name, dir_fd=fd)
            return
        for _, dirs, files, dfd in os.fwalk(name, topdown=False, dir_fd=fd):
            for f in files:
                os.unlink(f, dir_fd=dfd)
            for d in dirs:
                try:
                    os.rmdir(d, dir_fd=dfd)
                except NotADirectoryError:  # a symlink to a directory: the link goes, not what it points at
                    os.unlink(d, dir_fd=dfd)
        os.rmdir(name, dir_fd=fd)
    except OSError:
        pass
