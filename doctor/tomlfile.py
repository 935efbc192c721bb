"""Read a TOML file into a dict, or refuse it with the file and the reason (exit 2 via InputError).

Profiles, the signature database and waiver files all go through here, so a broken file reads the same
everywhere. tomllib is imported on first use: most `doctor` runs that never read a TOML file skip it.

Parsing is a good part of what reading the shipped knowledge costs (tomllib is pure Python; the 15 stack profiles
are read on every `doctor check`), so the parsed document of a packaged knowledge file is kept in the cache directory, with the
file's bytes and the Python version (marshal, `doctor.keptfile`), and read from there when the same bytes come again
(a CRC of them names the cache file; the bytes kept in it decide). What the callers do with the document — validation
above all — runs every time (the signature database keeps its validated form the same way: `doctor.explain.db`); a
file that does not parse is never cached, and a cache that cannot be read or written is passed over.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from doctor import keptfile
from doctor.errors import InputError


def load_toml(raw: bytes, source: str) -> dict[str, Any]:
    """Parse `raw` (the file's bytes) as UTF-8 TOML; `source` names the file in the error."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", source=source) from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"not valid TOML: {e}", source=source) from None


def read_toml(path: str | os.PathLike[str], what: str = "") -> dict[str, Any]:
    """Read and parse the file at `path`; `what` ("signature database") is said when it cannot be read."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        prefix = f"cannot read {what}" if what else "cannot read"
        raise InputError(f"{prefix}: {e.strerror or e}", source=source) from None
    cache = _cache_path(raw) if _shipped(source) else None
    if cache is not None and isinstance(kept := keptfile.read(cache, (_CACHE_FORMAT, sys.version, raw)), dict):
        return kept
    data = load_toml(raw, source)
    if cache is not None:
        keptfile.write(cache, (_CACHE_FORMAT, sys.version, raw), data)
        _prune_once(cache)
    return data


_CACHE_FORMAT = "toml-document/2"
_PRUNED: list[str] = []


def _prune_once(cache: str) -> None:
    """Hold `toml/` to the cache policy (`doctor.cacheprune`) after this process's first write there. A release's
    first `check` writes ~20 entries, and one scan bounds the directory as well as twenty: what the run writes after it
    is the most recently used."""
    if _PRUNED:
        return
    _PRUNED.append(cache)
    import re

    from doctor import cacheprune

    shard = os.path.dirname(cache)
    cacheprune.prune(os.path.dirname(shard), re.compile(r"[0-9a-f]{6}-[0-9a-f]+-[0-9a-f]{8}\.marshal"), cache,
                     shards=True)


def _shipped(source: str) -> bool:
    """A file of the packaged knowledge (profiles/), read on every run; a user's file is parsed as it is."""
    from doctor.knowledge.location import packaged_dir

    return os.path.realpath(source).startswith(_real(packaged_dir()) + os.sep)


@functools.lru_cache(maxsize=8)
def _real(path: str) -> str:
    """realpath of the packaged directory, resolved once per process (a `check` reads ~20 of its files)."""
    return os.path.realpath(path)


def _cache_path(raw: bytes) -> str:
    # plain os paths: pathlib (with urllib.parse and ipaddress under it) is nothing else a `check` imports; a CRC,
    # not hashlib (whose OpenSSL start-up was ~2.4 ms of a check): the bytes kept in the file decide a hit
    import zlib

    from doctor.cachedir import cache_dir

    key = f"{zlib.crc32(raw):08x}"
    return cache_dir("toml", key[:2], f"{key[2:]}-{len(raw):x}-{sys.hexversion:08x}.marshal")
