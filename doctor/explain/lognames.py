"""Which file names in a walked directory are logs: the live one, its rotated copies and their compressed forms.

A log directory is rarely just `*.log`. logrotate leaves `train.log.1`, `train.log.2.gz` (or, with `dateext`,
`train.log-20261207.gz`); Python's RotatingFileHandler -- which Ray's own components (dashboard.log, monitor.log,
log_monitor.log) write through, with RAY_ROTATION_BACKUP_COUNT copies -- leaves `monitor.log.1`, `monitor.log.2`;
TimedRotatingFileHandler `app.log.2026-12-07`; an archive packs `worker-1.out.xz`. The failure a user asks about is
as often in the rotated or compressed copy as in the live file, so `doctor explain DIR` reads them all (the reader
tells the compression by magic, doctor.explain.compressed). Names only here, no I/O: the walk is in
doctor.explain.multi.
"""

from __future__ import annotations

import re

LOG_SUFFIXES = (".log", ".out", ".err", ".txt")
# logrotate's compressext for gzip/xz/bzip2/zstd, and the same tools' default extensions
COMPRESSED_SUFFIXES = (".gz", ".xz", ".bz2", ".zst")
# a rotated copy's tail: `.N` (logrotate, RotatingFileHandler), `-YYYYMMDD[HH]` (logrotate dateext's default
# dateformat, `-%Y%m%d`, with an hour when rotated hourly), `.YYYY-MM-DD[_HH[-MM[-SS]]]` (TimedRotatingFileHandler)
_ROTATED = re.compile(r"(?:\.\d{1,4}|-\d{8}(?:\d{2})?|\.\d{4}-\d{2}-\d{2}(?:_\d{2}(?:-\d{2}){0,2})?)$")


def split_log_name(name: str) -> tuple[str, str, str] | None:
    """(base, rotation, compression) of a log's file name -- `train.log.2.gz` -> ("train.log", ".2", ".gz") --
    or None when the name is no log's (`notes.md`, `logs.tar.gz`, `model.1`)."""
    rest, packed = name, ""
    for ext in COMPRESSED_SUFFIXES:
        if rest.endswith(ext) and len(rest) > len(ext):
            rest, packed = rest[: -len(ext)], ext
            break
    rotated = ""
    if not rest.endswith(LOG_SUFFIXES) and (m := _ROTATED.search(rest)):
        rest, rotated = rest[: m.start()], m.group(0)
    if not rest.endswith(LOG_SUFFIXES) or rest.startswith(".") or rest in LOG_SUFFIXES:
        return None
    return rest, rotated, packed


def is_log_name(name: str) -> bool:
    return split_log_name(name) is not None


def log_stem(name: str) -> str:
    """The name a log's node or process goes by: `rank3.log.1.gz` and `rank3.log` are both `rank3`."""
    parts = split_log_name(name)
    base = parts[0] if parts else name
    return base.rsplit(".", 1)[0] if "." in base[1:] else base


def described() -> str:
    """What the walk takes, for messages: `*.log, *.out, *.err, *.txt, rotated (.1, -20261207) and compressed (.gz,
    .xz, .bz2, .zst)`."""
    return (f"*{', *'.join(LOG_SUFFIXES)}, rotated (.1, -20261207) and compressed "
            f"({', '.join(COMPRESSED_SUFFIXES)})")
