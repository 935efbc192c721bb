"""Config keys a verl release dropped, from removed_keys.json: the key paths of consecutive releases' composed
trainer configs (ppo_trainer, ppo_megatron_trainer, model_engine=megatron), diffed by tools/verl_removed_keys.py.

A key Hydra does not know in the target release is named "removed in verl X" when an earlier release had it
(or had the section it sits in); a `+key` that Hydra accepts because of the `+` is one verl no longer reads.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from doctor.launch.features import vt

_FILE = Path(__file__).with_name("removed_keys.json")


@lru_cache(maxsize=1)
def _table() -> tuple[list[str], dict[str, list[str]]]:
    try:
        data = json.loads(_FILE.read_text(encoding="utf-8"))
        return list(data["releases"]), {k: list(v) for k, v in data["present_in"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return [], {}


def removed_in(key: str, version: str) -> tuple[str, str, str] | None:
    """(the path that went, the last release that had it, the release that removed it) when `key`, or the
    section it sits in, was in an earlier release's config and is not in `version`'s; None otherwise."""
    releases, table = _table()
    target = vt(version)
    parts = key.split(".")
    for n in range(len(parts), 0, -1):
        path = ".".join(parts[:n])
        had = table.get(path)
        if not had:
            continue
        last = max((r for r in had if vt(r) <= target), key=vt, default=None)
        if last is None:
            return None
        later = [r for r in releases if vt(last) < vt(r) <= target]
        if not later:
            return None  # the target still has it (or no release after it is known)
        return path, last, min(later, key=vt)
    return None


def release_name(version: str) -> str:
    """How a release of the table is named in a message (a dev version is verl main after the last release)."""
    return f"verl main ({version})" if "dev" in version else f"verl {version}"
