"""Read a TOML file into a dict, or refuse it with the file and the reason (exit 2 via InputError).

Profiles, the signature database and waiver files all go through here, so a broken file reads the same
everywhere. tomllib is imported on first use: most `doctor` runs that never read a TOML file skip it.

Parsing is a good part of what reading the shipped knowledge costs (tomllib is pure Python; the 15 stack profiles
are read on every `doctor check`), so the parsed document of a packaged knowledge file is kept in the cache directory, keyed by the
file's bytes (SHA-256) and the Python version (marshal), and read from there when the same bytes come again. What
the callers do with the document — validation above all — runs every time; a file that does not parse is never
cached, and a cache that cannot be read or written is passed over.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

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
    if cache is not None:
        try:
            import marshal

            with open(cache, "rb") as fh:
                data = marshal.loads(fh.read())
            if isinstance(data, dict):
                return data
        except (OSError, EOFError, ValueError, TypeError):
            pass
    data = load_toml(raw, source)
    if cache is not None:
        _store(cache, data)
    return data


_CACHE_FORMAT = b"toml-document/1"


def _shipped(source: str) -> bool:
    """A file of the packaged knowledge (profiles/), read on every run; a user's file is parsed as it is."""
    from doctor.knowledge.location import packaged_dir

    return os.path.realpath(source).startswith(_real(packaged_dir()) + os.sep)


@functools.lru_cache(maxsize=8)
def _real(path: str) -> str:
    """realpath of the packaged directory, resolved once per process (a `check` reads ~20 of its files)."""
    return os.path.realpath(path)


def _cache_path(raw: bytes) -> str:
    # plain os paths: pathlib (with urllib.parse and ipaddress under it) is nothing else a `check` imports
    import hashlib

    from doctor.cachedir import cache_dir

    key = hashlib.sha256(_CACHE_FORMAT + b"\0" + sys.version.encode() + b"\0" + raw).hexdigest()
    return cache_dir("toml", key[:2], key[2:34] + ".marshal")


def _store(cache: str, data: dict[str, Any]) -> None:
    import marshal

    from doctor.atomic import atomic_binary

    try:
        blob = marshal.dumps(data)  # a TOML date or time is no marshal type: such a file is parsed each time
    except ValueError:
        return
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with atomic_binary(cache) as fh:
            fh.write(blob)
    except OSError:
        pass
