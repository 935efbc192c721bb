"""Pruning of a cache directory that holds one whole-file entry per version of what it was worked out from.

Why: `signatures/` (~1 MB an entry) and `message_owners/` (~7 MB) get a new entry for every distinct version of the
bytes and code they are keyed by. A user who upgrades the doctor weekly, several checkouts (the message table's key
holds its path and mtime), or a home shared by nodes running different releases would pile them up for ever.

What is kept: the entry this run uses (kept by name, even when writing it failed) and the `KEEP - 1` others used
most recently. A hit touches its entry (`touch`), so an entry's mtime is its last use, not its writing: a shared
home where up to KEEP releases run side by side keeps each one's entry, and an entry no release uses any more goes
the next time a run writes one. Pruning runs only after a miss (a write), never on a hit: it costs a hit nothing.

What is never touched, so that nothing outside the doctor's own entries is deleted:
- a name that is not of the entry form the caller gives: the atomic writer's temp files (`.doctor-<pid>-<hex>`)
  may be mid-write in another process (deleting one would fail that write), and a file of another form is not ours
  (a newer doctor naming its entries otherwise keeps them);
- anything that is not a regular file (lstat): a symlink is neither followed nor removed;
- a directory that is itself a symlink: it is opened with O_NOFOLLOW and names are removed relative to that
  descriptor, so a directory swapped for a symlink meanwhile cannot send a deletion elsewhere.
Deleting an entry another process has open is safe on POSIX (its reader keeps the inode); a process about to open
it misses and works the value out again. A writer renaming a new file over a name being pruned at that instant
loses that entry: its next run works the value out again. Every error is swallowed: housekeeping never fails a
command (a read-only or full filesystem, a directory gone).
"""

from __future__ import annotations

import os
import re

KEEP = 3  # the entry in use and the two used most recently before it


def stale(entries: list[tuple[int, str]], keep: int) -> list[str]:
    """The names to delete among (mtime_ns, name) entries so that the `keep` used most recently remain (pure)."""
    return [name for _, name in sorted(entries, reverse=True)[max(keep, 0):]]


def touch(path: str) -> None:
    """Mark the entry at `path` as just used (its mtime), for `prune`; a read-only directory is passed over."""
    try:
        os.utime(path)
    except OSError:
        pass


def prune(path: str, entry: re.Pattern[str], keep: int = KEEP) -> None:
    """Delete the entries (names matching `entry`) beside `path` beyond the `keep - 1` used most recently; `path`'s
    own entry always stays."""
    try:
        _prune(path, entry, keep)
    except (OSError, NotImplementedError):  # no directory, a symlink, no dir_fd support: nothing is deleted
        pass


def _prune(path: str, entry: re.Pattern[str], keep: int) -> None:
    import stat

    directory, name = os.path.split(path)
    fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        found = []
        for other in os.listdir(fd):
            if other == name or not entry.fullmatch(other):
                continue
            try:
                st = os.stat(other, dir_fd=fd, follow_symlinks=False)
            except OSError:  # gone meanwhile
                continue
            if stat.S_ISREG(st.st_mode):
                found.append((st.st_mtime_ns, other))
        for other in stale(found, keep - 1):
            try:
                os.unlink(other, dir_fd=fd)
            except OSError:
                pass
    finally:
        os.close(fd)
