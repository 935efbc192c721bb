"""Read a JSON knowledge file, or refuse it with the file and the reason (exit 2 via InputError): the shipped JSON
tables (import surface, later releases' bounds) read the same way everywhere, as doctor/tomlfile.py does for TOML."""

from __future__ import annotations

import json
from typing import Any

from doctor.errors import InputError


def read_json(path: str, what: str) -> Any:
    """The parsed document of `path`; `what` names the table in the error ("the import-surface table")."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise InputError(f"cannot read {what}: {e.strerror or e}", source=path) from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", source=path) from None
    except ValueError as e:
        raise InputError(f"not valid JSON: {e}", source=path) from None
