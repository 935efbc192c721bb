"""A value worked out from some bytes, kept in the cache directory with the bytes it was worked out from (marshal).

The parsed document of a packaged TOML file (`doctor.tomlfile`) and the validated signature database
(`doctor.explain.db`) are both the same result of the same bytes on every run, and both are kept this way: the file
holds the key (a format, this Python's version, the bytes the value comes from) and the value, and is used only
when the key it holds is the one asked for (so a file named by a CRC of the bytes is safe from collisions, and an
edited input is a miss). A missing, damaged or cut-short file, or one of another format or Python, is a miss. Each
write is atomic (`doctor.atomic`): runs writing the same file at once each write a whole one, and the last rename
wins; a reader sees one whole file or none. A value marshal cannot hold is not kept, and a directory that cannot be
written (a read-only home) is passed over: the caller works the value out again next time. A hit marks the file used
(`doctor.cacheprune.touch`, at most once an hour), so the cache's pruning keeps what is read and drops what is not.
"""

from __future__ import annotations

import os
from typing import Any


def read(path: str, key: tuple[Any, ...]) -> Any | None:
    """The value kept at `path` for exactly this key, else None."""
    import marshal

    try:
        with open(path, "rb") as fh:
            kept = marshal.loads(fh.read())
            mark = os.fstat(fh.fileno()).st_mtime_ns
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if isinstance(kept, tuple) and len(kept) == len(key) + 1 and kept[:-1] == key:
        from doctor.cacheprune import touch

        touch(path, mark)
        return kept[-1]
    return None


def write(path: str, key: tuple[Any, ...], value: Any) -> None:
    import marshal

    from doctor.atomic import atomic_binary

    try:
        blob = marshal.dumps((*key, value))
    except ValueError:  # e.g. a TOML date: no marshal type
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with atomic_binary(path) as fh:
            fh.write(blob)
    except OSError:
        pass
