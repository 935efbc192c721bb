"""What three shipped tables cover, read without validating them: the variable names of env-values.toml and of
env-guidance.toml, and the caller releases of import-surface/index.json. A check asks first, so a host that gives it
nothing to judge (no such variable set, no caller release that was read) skips before importing the table's module and validating the file, which
costs a few ms each on every `doctor check`. The tables' loaders still validate them wherever they are used: a
malformed file is refused wherever it could change a verdict. None means the file does not have the expected shape;
the check then loads it, and the loader says what is wrong.
"""

from __future__ import annotations

import json
import os
from typing import Any

from doctor.knowledge.location import table_path


def env_variable_names(path: str | None = None) -> frozenset[str] | None:
    """The names profiles/env-values.toml has rows for."""
    return _row_names("env-values.toml", "table of the values environment variables take", "var", "name", path)


def env_guidance_names(path: str | None = None) -> frozenset[str] | None:
    """The variables profiles/env-guidance.toml has rules for (a rule judges a value that is set, never an unset
    variable)."""
    return _row_names("env-guidance.toml", "table of upstream guidance on environment values", "rule", "var", path)


def _row_names(file: str, what: str, rows_key: str, key: str, path: str | None) -> frozenset[str] | None:
    from doctor.tomlfile import read_toml

    data = read_toml(table_path(file, path), what)
    rows = data.get(rows_key) if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get(key), str) for r in rows):
        return None
    return frozenset(r[key] for r in rows)


# the import-surface index parsed here, which doctor.knowledge.import_surface.load validates without parsing it again
_INDEXES: dict[str, Any] = {}


def parsed_index(path: str) -> Any:
    """The document import_callers_read parsed from `path` in this process (None: it did not)."""
    return _INDEXES.get(path)


def import_callers_read(path: str | None = None) -> dict[str, tuple[tuple[str, str], ...]] | None:
    """caller -> the (version, commit) of each of its releases profiles/import-surface/ read, from its index.json
    alone (each release's imports are in a file of their own, read only when a check judges that release)."""
    p = table_path(os.path.join("import-surface", "index.json"), path)  # import_surface.INDEX, not imported to skip
    try:
        with open(p, "rb") as fh:
            data: Any = json.loads(fh.read().decode("utf-8"))
        _INDEXES[p] = data
        return {name: tuple((str(r.get("version") or ""), str(r.get("commit") or "")) for r in c["releases"])
                for name, c in data["callers"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
