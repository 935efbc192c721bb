"""Advice for a key verl's config does not have: a did-you-mean from the composed config's own key paths, and
`+` only where the key may legitimately be new.

Hydra's message for an unknown key always says "To append to your config use +key". Followed blindly it
hides a typo: `+actor_rollout_ref.actor.megatron.tensor_parallel_size=4` composes, and TP silently stays 1. So
`+` is advised only when the key's parent is a mapping of the composed config and no existing key there (or
anywhere, for a key written without its prefix) is a near miss — open dicts such as
`override_transformer_config` or `engine_kwargs.vllm`. A key whose last part names a config group
(`actor_rollout_ref.actor.model_engine=megatron`) gets the group override (`model_engine=megatron`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any

from doctor.report import Finding, Fix

_IDS = ("launch-key-needs-plus", "launch-key-not-in-config")


def did_you_mean(key: str, paths: set[str], parent_exists: bool, limit: int = 3) -> list[str]:
    """Existing key paths the user probably meant, best first: a near-miss sibling when the parent exists,
    else the key found under a prefix, or keys whose last part is a near miss."""
    parts = key.split(".")
    leaf = parts[-1]
    parent = ".".join(parts[:-1])
    out: list[str] = []
    siblings = {p.rsplit(".", 1)[-1]: p for p in paths if "." in p and p.rsplit(".", 1)[0] == parent}
    out += [siblings[m] for m in difflib.get_close_matches(leaf, list(siblings), n=limit, cutoff=0.75)]
    if parent_exists:
        return out[:limit]
    out += sorted((p for p in paths if p.endswith("." + key)), key=len)  # written without its prefix
    by_leaf: dict[str, list[str]] = {}
    for p in paths:
        by_leaf.setdefault(p.rsplit(".", 1)[-1], []).append(p)
    for m in difflib.get_close_matches(leaf, list(by_leaf), n=limit, cutoff=0.8):
        cands = by_leaf[m]
        out += sorted(cands, key=lambda c: (-_overlap(c, parts[:-1]), -difflib.SequenceMatcher(None, c, key).ratio()))[:2]
    out += difflib.get_close_matches(key, list(paths), n=limit, cutoff=0.85)
    seen: list[str] = []
    for p in out:
        if p not in seen and p != key:
            seen.append(p)
    return seen[:limit]


def _overlap(path: str, parts: list[str]) -> int:
    have = path.split(".")
    return sum(1 for p in parts if p in have)


def advise(findings: list[Finding], flat: dict[str, Any] | None, dicts: dict[str, int], groups: list[str],
           values: dict[str, str | None]) -> list[Finding]:
    """Rewrite the unknown-key findings' id and fix (see the module doc)."""
    if flat is None:
        return findings
    paths = set(flat) | {p for p in dicts if p}
    return [_one(f, paths, dicts, groups, values) if f.id in _IDS and f.key else f for f in findings]


_PLUS_HINT = re.compile(r"^\s*To append to your config use \+.*$\n?", re.M)


def _one(f: Finding, paths: set[str], dicts: dict[str, int], groups: list[str], values: dict[str, str | None]) -> Finding:
    out = _advice(f, paths, dicts, groups, values)
    if out.id == "launch-key-not-in-config":  # Hydra's "use +key" would contradict the fix: never for a near miss
        out = replace(out, detail=_PLUS_HINT.sub("", out.detail or "").rstrip() or out.detail)
    return out


def _advice(f: Finding, paths: set[str], dicts: dict[str, int], groups: list[str],
            values: dict[str, str | None]) -> Finding:
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
    near = did_you_mean(key, paths, parent in dicts)
    if near:
        evidence["did_you_mean"] = near
        fix = f"Did you mean {near[0]}" + (f" (or {', '.join(near[1:])})" if len(near) > 1 else "") + \
              f"? Write {near[0]}={value}. A '+' would add a new key that nothing reads."
        return replace(f, id="launch-key-not-in-config", title=f"{key} is not in verl's config (did you mean {near[0]}?)",
                       fix=Fix(fix), evidence=evidence)
    if parent in dicts:
        fix = (f"Write +{key}={value}: {parent} is a mapping that accepts new keys (check the spelling against the "
               "consumer's documentation: a misspelt new key is silently ignored).")
        return replace(f, id="launch-key-needs-plus", fix=Fix(fix), evidence=evidence)
    missing = parent
    while missing and missing.rsplit(".", 1)[0] not in dicts and "." in missing:
        missing = missing.rsplit(".", 1)[0]
    fix = (f"Delete the override: {missing or parent} does not exist in this config (it belongs to another "
           "engine's config or was removed from this verl release).")
    return replace(f, id="launch-key-not-in-config", title=f"{key}: no such section in verl's config", fix=Fix(fix),
                   evidence=evidence)
