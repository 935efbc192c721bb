"""Config keys a verl release dropped, from removed_keys.json: the key paths of consecutive releases' composed
trainer configs (ppo_trainer, ppo_megatron_trainer, model_engine=megatron), diffed by tools/verl_removed_keys.py.

Config group options (`model_engine/mindspeed`) that only some releases have are listed with those releases:
a script that selects one names the release it was written for, and a release without it gets one finding.

A key Hydra does not know in the target release is named "removed in verl X" when an earlier release had it
(or had the section it sits in); a `+key` that Hydra accepts because of the `+` is one verl no longer reads. One
that only a later release has (`added_in`: the first release with each key path the oldest lacks) is named "added
in verl X": the script was written for a newer verl than the target. The SFT trainers' configs have tables of their
own (`added_in_by_config`, `present_in_by_config`): their `data.*` / `model.*` are not the PPO trainer's, so an SFT
entry point is never judged by the PPO tables (an SFT config no table knows gets neither story).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import Version

from doctor.knowledge.versions import parse_pkg_version
from doctor.launch.features import vt

_FILE = Path(__file__).with_name("removed_keys.json")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    """removed_keys.json, {} when it cannot be read."""
    try:
        data = json.loads(_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=1)
def _groups() -> dict[str, list[str]]:
    """Config group options not every release has (`model_engine/mindspeed`) -> the releases that have them."""
    try:
        return {k: list(v) for k, v in _data().get("group_options", {}).items()}
    except (AttributeError, TypeError):
        return {}


def group_removed(option: str, version: str) -> tuple[str, str] | None:
    """(the last release that had config group option `option` ("model_engine/mindspeed"), the release that dropped
    it) when an earlier release had it and `version` does not; None otherwise."""
    releases = _table()[0]
    had = _groups().get(option)
    target = _order(version)
    if not had or target is None:
        return None
    # whole versions, not release tuples: verl main's `0.10.0.dev` (its version file) or a dated snapshot
    # `0.10.0.dev20260822` is at or after the table's `0.10.0.dev0`, not a release that dropped what that one has
    had_at = [(v, r) for r in had if (v := _order(r)) is not None and v <= target]
    if not had_at:
        return None
    last_v, last = max(had_at)
    later = [(v, r) for r in releases if (v := _order(r)) is not None and last_v < v <= target]
    return (last, min(later)[1]) if later else None


def group_added_later(option: str, version: str) -> str | None:
    """The first release with config group option `option` ("engine/automodel") when only releases after `version`
    have it: the script was written for a newer verl (main's automodel SFT scripts linted for 0.7.1). None otherwise."""
    had = _groups().get(option)
    target = _order(version)
    if not had or target is None:
        return None
    orders = [(v, r) for r in had if (v := _order(r)) is not None]
    if not orders or any(v <= target for v, _ in orders):
        return None
    return min(orders)[1]


def _order(version: str) -> Version | None:
    """`version` as PEP 440 orders it (a dev build before its release), None when it is not a version."""
    return parse_pkg_version(version)


def newest_with(options: set[str], newest: str) -> str | None:
    """The newest release (no later than `newest`, never a dev version) that has every one of `options` the table
    knows; None when no option of them is release-specific, or no release has them all."""
    groups = _groups()
    known = [o for o in options if o in groups]
    if not known:
        return None
    cands = [r for r in _table()[0] if "dev" not in r and vt(r) <= vt(newest) and all(r in groups[o] for o in known)]
    return max(cands, key=vt, default=None)


@lru_cache(maxsize=8)
def _table(config: str | None = None) -> tuple[list[str], dict[str, list[str]]]:
    """(the releases, key path -> the releases that have it) of the PPO trainer configs, or with `config` of that SFT
    trainer config (`present_in_by_config`; empty when it has none for it)."""
    data = _data()
    try:
        table = data["present_in"] if config is None else data.get("present_in_by_config", {}).get(config, {})
        return list(data["releases"]), {k: list(v) for k, v in table.items()}
    except (KeyError, TypeError, AttributeError):
        return [], {}


def removed_in(key: str, version: str, config: str | None = None) -> tuple[str, str, str] | None:
    """(the path that went, the last release that had it, the release that removed it) when `key`, or the
    section it sits in, was in an earlier release's config and is not in `version`'s; None otherwise. `config` is
    the SFT trainer config the entry point composes (its own table), None for the PPO trainer and its variants."""
    releases, table = _table(config)
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


@lru_cache(maxsize=8)
def _added(config: str | None = None) -> dict[str, str]:
    """Key paths the oldest release of the table lacks -> the first release that has them (`added_in`, the PPO
    trainer configs, `config` None). An SFT trainer config (`sft_trainer_engine`, `sft_trainer`) has a table of its own
    (`added_in_by_config`, from the first release with that config; empty for one the table does not know): its
    `data.*` / `model.*` are not the PPO ones."""
    try:
        by_config = _data().get("added_in_by_config", {})
        table = _data().get("added_in", {}) if config is None else by_config.get(config, {})
        return {k: str(v) for k, v in table.items()}
    except (AttributeError, TypeError):
        return {}


def added_after(key: str, version: str, config: str | None = None) -> tuple[str, str] | None:
    """(the path, the release that added it) when `key`, or the section it sits in, first appears in a release after
    `version`: a script written for a newer verl than the one it is linted for. `config` is the SFT trainer config
    the entry point composes (its own table), None for the PPO trainer and its variants. None when the table says
    nothing of it, or the nearest path it knows was already in `version`."""
    target = _order(version)
    if target is None:
        return None
    added = _added(config)
    parts = key.split(".")
    for n in range(len(parts), 0, -1):
        path = ".".join(parts[:n])
        first = added.get(path)
        if first is None:
            continue
        at = _order(first)
        return (path, first) if at is not None and at > target else None
    return None


def release_name(version: str) -> str:
    """How a release of the table is named in a message (a dev version is verl main after the last release)."""
    return f"verl main ({version})" if "dev" in version else f"verl {version}"
