"""Read a TOML file into a dict, or refuse it with the file and the reason (exit 2 via InputError).

Profiles, the signature database and waiver files all go through here, so a broken file reads the same
everywhere. tomllib is imported on first use: most `doctor` runs that never read a TOML file skip it.
"""

from __future__ import annotations

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
    return load_toml(raw, source)
