"""Advice for a key verl's config does not have: a did-you-mean from the composed config's own key paths, and
`+` only where the key may legitimately be new.

Hydra's message for an unknown key always says "To append to your config use +key". Followed blindly it
hides a typo: `+actor_rollout_ref.actor.megatron.tensor_parallel_size=4` composes, and TP silently stays 1. So
`+` is advised only when the key's parent is an open mapping of the composed config (schema.py: a plain dict,
not a section verl builds as a dataclass from its `_target_`, unless that dataclass declares the field) and no
existing key there (or anywhere, for a key written without its prefix) is a near miss — open dicts such as
`override_transformer_config` or `engine_kwargs.vllm`. A key whose last part names a config group
(`actor_rollout_ref.actor.model_engine=megatron`) gets the group override (`model_engine=megatron`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from doctor.launch.schema import TARGET, is_open
from doctor.report import Finding, Fix, first_few

_IDS = ("launch-key-needs-plus", "launch-key-not-in-config")


def _misspelt(written: str, leaf: str) -> bool:
    """Whether `leaf` can be a misspelling of `written`: word by word (`_`) each differs by a few letters (npu/gpu),
    or a word was left out or added; `grad_offload` is not `param_offload`, another knob of the same family."""
    a, b = written.split("_"), leaf.split("_")
    if len(a) != len(b):
        return True
    return all(x == y or difflib.SequenceMatcher(None, x, y).ratio() >= 0.6 for x, y in zip(a, b, strict=True))


def did_you_mean(key: str, paths: set[str], parent_exists: bool, limit: int = 3) -> list[str]:
    """Existing key paths the user probably meant, best first: a near-miss sibling when the parent exists,
    else the key found under a prefix, or keys whose last part is a near miss."""
    parts = key.split(".")
    leaf = parts[-1]
    parent = ".".join(parts[:-1])
    out: list[str] = []
    siblings = {p.rsplit(".", 1)[-1]: p for p in paths if "." in p and p.rsplit(".", 1)[0] == parent}
    out += [siblings[m] for m in difflib.get_close_matches(leaf, list(siblings), n=limit, cutoff=0.75)
            if siblings[m] != key and _misspelt(leaf, m)]  # the key itself is there when another override added it with '+'
    if parent_exists:
        return out[:limit]
    out += sorted((p for p in paths if p.endswith("." + key)), key=len)  # written without its prefix
    by_leaf: dict[str, list[str]] = {}
    for p in paths:
        by_leaf.setdefault(p.rsplit(".", 1)[-1], []).append(p)
    for m in difflib.get_close_matches(leaf, list(by_leaf), n=limit, cutoff=0.8):
        if not _misspelt(leaf, m):
            continue
        cands = by_leaf[m]
        out += sorted(cands, key=lambda c: (-_overlap(c, parts[:-1]), -difflib.SequenceMatcher(None, c, key).ratio()))[:2]
    out += [p for p in difflib.get_close_matches(key, list(paths), n=limit, cutoff=0.85)
            if _misspelt(leaf, p.rsplit(".", 1)[-1])]
    seen: list[str] = []
    for p in out:
        if p not in seen and p != key:
            seen.append(p)
    return seen[:limit]


_MEGATRON_SECTIONS = ("megatron", "mcore_kwargs", "mindspeed")


def _engine_section(key: str, dicts: dict[str, int]) -> str | None:
    """The megatron-engine section a key sits in (`actor_rollout_ref.actor.megatron`) when the composed config does
    not have it: the run composes the FSDP engine."""
    parts = key.split(".")
    for i, p in enumerate(parts[:-1]):
        if p in _MEGATRON_SECTIONS:
            section = ".".join(parts[:i + 1])
            return section if section not in dicts else None
    return None


def _overlap(path: str, parts: list[str]) -> int:
    have = path.split(".")
    return sum(1 for p in parts if p in have)


def advise(findings: list[Finding], flat: dict[str, Any] | None, dicts: dict[str, int], groups: list[str],
           values: dict[str, str | None], root: Path | None = None,
           base_dicts: set[str] | None = None) -> list[Finding]:
    """Rewrite the unknown-key findings' id and fix (see the module doc); `root` holds the release's `verl`
    source, read for the dataclasses that back sections; `base_dicts` are the sections of verl's own config (a
    section only a '+' override created is not one that accepts keys)."""
    if flat is None:
        return findings
    if base_dicts is not None:
        dicts = {k: n for k, n in dicts.items() if k in base_dicts}
    paths = {p for p in set(flat) | set(dicts) if p and not p.endswith("." + TARGET)}
    return fold_engine([_one(f, paths, flat, dicts, groups, values, root) if f.id in _IDS and f.key else f
                        for f in findings])


def fold_engine(found: list[Finding]) -> list[Finding]:
    """`actor_rollout_ref.actor.model_engine=megatron` (upstream's examples/router_replay and tuning/scaling megatron
    scripts, v0.8.0 to main) is refused, so Hydra composes the FSDP actor, and every `….megatron.*` key of the script
    is then "not in this FSDP config": 7 to 15 errors with one cause (with `model_engine=megatron` at the top level
    those scripts compose and lint clean). The misplaced group override is the one finding; the keys that need its
    engine are listed in it, to be judged again once it is set."""
    misplaced = next((f for f in found if f.id == "launch-key-not-in-config"
                      and f.evidence.get("did_you_mean") == ["model_engine=megatron"]), None)
    if misplaced is None:
        return found
    follow = [f for f in found if f.evidence.get("needs_engine") == "megatron" and f.severity is misplaced.severity]
    if not follow:
        return found
    keys = sorted({f.key for f in follow if f.key})
    shown = first_few(keys, 4)
    folded = replace(misplaced, detail=((misplaced.detail or "").rstrip() + f"\n{len(keys)} override(s) need the megatron "
                                        f"engine it meant to select and were not judged one by one: {shown}. Lint "
                                        "again once it is set.").lstrip(),
                     evidence={**misplaced.evidence, "keys": keys})
    drop = {id(f) for f in follow}
    return [folded if f is misplaced else f for f in found if id(f) not in drop]


def closed_section(key: str, value: str | None, target: str) -> tuple[str, str]:
    """(title, fix) for a new key under a section verl builds as a dataclass that does not declare it."""
    parent, leaf = key.rsplit(".", 1)
    title = f"{key}: {parent} is {target.rsplit('.', 1)[-1]}, which has no field {leaf}"
    fix = (f"Delete the override: {parent} is built as {target} (its _target_), so a new key is not allowed there; "
           f"with '+' the run fails at start-up (TypeError: {target.rsplit('.', 1)[-1]}.__init__() got an unexpected "
           f"keyword argument '{leaf}').")
    return title, fix


_PLUS_HINT = re.compile(r"^\s*To append to your config use \+.*$\n?", re.M)


def _one(f: Finding, paths: set[str], flat: dict[str, Any], dicts: dict[str, int], groups: list[str],
         values: dict[str, str | None], root: Path | None) -> Finding:
    out = _advice(f, paths, flat, dicts, groups, values, root)
    if out.id == "launch-key-not-in-config":  # Hydra's "use +key" would contradict the fix: never for a near miss
        out = replace(out, detail=_PLUS_HINT.sub("", out.detail or "").rstrip() or out.detail)
    return out


def _advice(f: Finding, paths: set[str], flat: dict[str, Any], dicts: dict[str, int], groups: list[str],
            values: dict[str, str | None], root: Path | None) -> Finding:
    key = f.key or ""
    value = values.get(key)
    leaf = key.rsplit(".", 1)[-1]
    parent = key.rsplit(".", 1)[0] if "." in key else ""
    evidence = dict(f.evidence)
    if leaf in groups and "." in key:
        fix = f"Write {leaf}={value} (a config group, set at the top level: it selects the {leaf} config), not {key}."
        evidence["did_you_mean"] = [f"{leaf}={value}"]
        return replace(f, id="launch-key-not-in-config", title=f"{key}: no such key; {leaf} is a config group",
                       fix=Fix(fix), evidence=evidence)
    engine = _engine_section(key, dicts)
    if engine is not None:
        sel = ("model_engine=megatron" if "model_engine" in groups
               else "--config-name=ppo_megatron_trainer (actor_rollout_ref.actor.strategy=megatron)")
        fix = (f"{engine} exists only with the megatron engine: select it with {sel}, or delete the override if the run "
               "is meant to use FSDP.")
        evidence["needs_engine"] = "megatron"
        return replace(f, id="launch-key-not-in-config", title=f"{key} needs the megatron engine ({engine} is not in "
                                                               "this FSDP config)", fix=Fix(fix), evidence=evidence)
    near = did_you_mean(key, paths, parent in dicts)
    if near:
        evidence["did_you_mean"] = near
        fix = f"Did you mean {near[0]}" + (f" (or {', '.join(near[1:])})" if len(near) > 1 else "") + \
              f"? Write {near[0]}={value}. A '+' would add a new key that nothing reads."
        return replace(f, id="launch-key-not-in-config", title=f"{key} is not in verl's config (did you mean {near[0]}?)",
                       fix=Fix(fix), evidence=evidence)
    open_, target = is_open(flat, dicts, parent, root, leaf)
    if open_:
        fix = (f"Write +{key}={value}: {parent} is a mapping that accepts new keys (check the spelling against the "
               "consumer's documentation: a misspelt new key is silently ignored).")
        return replace(f, id="launch-key-needs-plus", fix=Fix(fix), evidence=evidence)
    if target is not None:
        title, fix = closed_section(key, value, target)
        evidence["dataclass"] = target
        return replace(f, id="launch-key-not-in-config", title=title, fix=Fix(fix), evidence=evidence)
    missing = parent
    while missing and missing.rsplit(".", 1)[0] not in dicts and "." in missing:
        missing = missing.rsplit(".", 1)[0]
    fix = (f"Delete the override: {missing or parent} does not exist in this config (it belongs to another "
           "engine's config or was removed from this verl release).")
    return replace(f, id="launch-key-not-in-config", title=f"{key}: no such section in verl's config", fix=Fix(fix),
                   evidence=evidence)
