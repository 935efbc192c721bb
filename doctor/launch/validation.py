"""Validation entry points shared by `launch`, `lint` and `smoke`: the rules (rules*.py) plus, when verl's
config files for the target version are available, real Hydra composition (hydra_compose.py, answered from
compose_cache.py when the same composition ran before).

Composition runs only against config files of the *target* verl version: the directory the user names
(`--verl-config`), the installed verl when its version is the target, or the target release's config unpacked
from its wheel into the cache (verl_release.py). Checking a 0.7.1 script against 0.9.1's schema would report
differences between the releases, not mistakes. Without matching files the prefix rules come from the
per-release key tables in features.py, and a warning says what was not checked.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from doctor.errors import InputError
from doctor.launch import sources as S
from doctor.launch.entry import engine_of, is_sft
from doctor.launch.features import vt
from doctor.launch.model_config import ModelInfo, load_model_config
from doctor.launch.model_key import PPO, ModelKey
from doctor.launch.override_list import Override, build_overrides, config_name_for
from doctor.launch.rules import Context, check, hub_id
from doctor.launch.spec import LaunchSpec
from doctor.report import Finding, Severity, finding, first_few

_NOT_COMPOSED_DETAIL = ("Prefix rules were checked from the per-release key tables of doctor.launch.features; keys "
                        "outside those tables, and every key outside the megatron block, were not checked.")


def resolve_config_dir(verl_version: str, config_dir: str | Path | None, compose: bool | None,
                       *, download: bool = True) -> tuple[Path | None, Finding | None]:
    """Which verl trainer config directory to compose against, or why none (as a finding)."""
    from doctor.launch import hydra_compose

    if compose is False:
        return None, finding("launch-schema-not-composed", "info", ("config",),
                             f"verl {verl_version}'s Hydra config was not composed (--no-compose)",
                             detail=_NOT_COMPOSED_DETAIL)
    if config_dir is not None:
        return hydra_compose.check_config_dir(config_dir), None
    inst_version, inst_dir = hydra_compose.installed_verl()
    if inst_dir is not None and inst_version is not None and vt(inst_version) == vt(verl_version):
        return inst_dir, None
    why = (f"installed verl is {inst_version}, target is {verl_version}" if inst_dir is not None
           else "no verl installed here")
    # the installed verl counts only in the doctor's own interpreter: the line names it, and the version
    fix = (f"Make the index reachable (the verl {verl_version} wheel is unpacked into the cache on first use), "
           f"install the target verl beside the doctor (`{shlex.quote(sys.executable)} -m pip install --no-deps "
           f"verl=={verl_version}`) or pass --verl-config DIR.")
    if download:
        from doctor.launch.verl_release import NO_SUCH_RELEASE, release_config

        cdir, failed = release_config(verl_version)
        if cdir is not None:
            return cdir, None
        why += f"; {failed}"
        if failed and failed.startswith(NO_SUCH_RELEASE):
            fix = (f"Check --verl-version: verl {verl_version} is not released (the index was read). For a build "
                   "of your own pass --verl-config DIR (its verl/trainer/config).")
    if compose is True:
        raise InputError(f"cannot compose verl {verl_version}'s config: {why}; pass --verl-config DIR",
                         path="--compose")
    return None, finding("launch-schema-not-composed", "warning", ("config", "verl"),
                         f"verl {verl_version}'s Hydra config could not be composed ({why})",
                         detail=_NOT_COMPOSED_DETAIL, fix=fix, source=S.VERL_TRAINER_YAML)


def downloads_config(verl_version: str, config_dir: str | Path | None, compose: bool | None) -> bool:
    """Whether resolve_config_dir will fetch the release's wheel from the index: no directory named, no installed
    verl of that version, nothing cached for it. The download runs pip (seconds; up to its timeout when the index is
    slow), which a command says before it starts rather than sit silent."""
    if compose is False or config_dir is not None:
        return False
    from doctor.launch import hydra_compose
    from doctor.launch.verl_release import cached_config

    inst_version, inst_dir = hydra_compose.installed_verl()
    if inst_dir is not None and inst_version is not None and vt(inst_version) == vt(verl_version):
        return False
    return cached_config(verl_version) is None


def compose_findings(ovs: list[Override], ctx: Context, cdir: Path, config_name: str,
                     main_ppo: bool = True, entry: str | None = None) -> tuple[list[Finding], object]:
    """Hydra's verdict on the overrides (from the cache when the same composition ran before), with the
    engine and composed values put into `ctx` for the rules."""
    from doctor.launch.compose_cache import compose_cached
    from doctor.launch.value_types import check_values

    res = compose_cached(ovs, cdir, config_name, ctx.verl_version)
    ctx.flat = res.flat
    ctx.outside = res.outside_sections
    ctx.engine, _ = engine_of(ovs, config_name, res.flat, ctx.outside)
    unknown = {o.key for o in ovs if o.unknown}
    # the release tables of an SFT trainer are its config's own (removed_keys.py), never the PPO trainer's
    sft = config_name.removesuffix(".yaml") if entry is not None and is_sft(entry) else None
    keep = [_removed(f, ctx.verl_version, res.flat, res.dicts, sft) for f in res.findings if f.key not in unknown
            or f.id in ("launch-key-needs-plus", "launch-key-not-in-config", "launch-key-plus-on-existing")]
    root = source_root(cdir, ctx.verl_version)
    keep += _plus_on_closed(ovs, res.flat, root, {f.key for f in keep}, entry)
    keep += _plus_removed(ovs, ctx.verl_version, {f.key for f in keep}, res.flat, res.dicts, sft)
    keep += check_values([o for o in ovs if o.text not in res.rejected], res.flat, res.types, root,
                         main_ppo, {f.key for f in keep}, entry)
    composed = {o.text for o in ovs} - set(res.rejected) if res.flat is not None else set()
    keep = _group_removed([o for o in ovs if o.text not in composed], keep, ctx.verl_version)
    if res.flat is not None:
        keep.append(finding("launch-schema-composed", "info", ("config",),
                            f"composed verl {ctx.verl_version}'s {config_name} config with "
                            f"{len(ovs) - len(res.rejected)} override(s)",
                            evidence={"config_dir": str(cdir), "config_name": config_name,
                                      "rejected": len(res.rejected), "engine": ctx.engine}))
    return keep, res


def source_root(cdir: Path, version: str) -> Path | None:
    """Where verl's dataclass sources for `cdir` are: the checkout the config directory sits in, else the cached
    release of the target version (a `--verl-config DIR` that is a bare config copy has no sources)."""
    from doctor.launch.schema import verl_root
    from doctor.launch.verl_release import cached_config

    root = verl_root(cdir)
    if root is not None and (root / "verl" / "base_config.py").is_file():
        return root
    cached = cached_config(version)
    return verl_root(cached) if cached is not None else root


def _plus_on_closed(ovs: list[Override], flat: dict[str, object] | None, root: Path | None,
                    flagged: set[str | None], entry: str | None = None) -> list[Finding]:
    """`+key=…` that Hydra accepts into a section verl builds as a dataclass without that field: the run fails at
    start-up (schema.py). When the dataclass source is not here, an info names the keys that were not checked.

    verl's own workers build those sections; a recipe's entry point (`recipe.dance_grpo….main_dance`) may run its own
    workers, which read the section as a mapping (verl-recipe's dance_grpo_mindspeed_mm reads
    `config.model.reward_model_path` so), so outside verl's package it is a warning."""
    from doctor.launch.advice import closed_section
    from doctor.launch.schema import dataclass_info, section_target

    out: list[Finding] = []
    unchecked: dict[str, str] = {}
    for o in ovs:
        if o.prefix != "+" or "." not in o.key or o.key in flagged:
            continue
        section, leaf = o.key.rsplit(".", 1)
        target = section_target(flat, section)
        if target is None:
            continue
        info = dataclass_info(root, target)
        if info is None:
            unchecked[o.key] = target
            continue
        if leaf in info.fields:
            continue
        title, fix = closed_section(o.key, o.value, target)
        own = entry is None or entry.split(".", 1)[0] == "verl"
        out.append(finding("launch-key-not-in-config", "error" if own else "warning", ("config",),
                           title if own else f"{title} (if {entry} builds it with verl's workers)", key=o.key, fix=fix,
                           evidence={"override": o.text, "dataclass": target, **({"line": o.line} if o.line else {})},
                           source=S.HYDRA_OVERRIDES))
    if unchecked:
        out.append(finding("launch-plus-keys-not-checked", "info", ("config", "verl"),
                           f"not checked: whether verl's dataclasses take {', '.join('+' + k for k in unchecked)} "
                           "(their source is not here)",
                           detail="A '+key' in a section verl builds as a dataclass fails at start-up when the class "
                                  "has no such field; the config directory has no verl source beside it and the "
                                  "target release is not cached.",
                           evidence={"keys": unchecked, "root": str(root) if root else None},
                           fix="Pass --verl-config …/verl/trainer/config of a verl checkout, or run `doctor lint "
                               "--verl-version X` once without --verl-config (it caches release X's wheel).",
                           source=S.HYDRA_OVERRIDES))
    return out


def _removed(f: Finding, version: str, flat: dict[str, object] | None = None,
             dicts: dict[str, int] | None = None, sft: str | None = None) -> Finding:
    """An unknown key that this release removed says so (not a did-you-mean to a neighbour): from the Megatron
    key table, else from the composed configs of consecutive releases (removed_keys.py; `sft`: the SFT trainer
    config the entry point composes, whose own tables are read). A key under an open mapping of the composed config
    (schema.open_mapping: engine_kwargs.sglang) is handed on, never "removed"."""
    from dataclasses import replace

    from doctor.launch.features import key_info
    from doctor.launch.removed_keys import release_name, removed_in
    from doctor.report import Fix

    if f.id not in ("launch-key-needs-plus", "launch-key-not-in-config") or not f.key:
        return f
    fix = Fix(f"Delete the override {f.evidence.get('override', f.key)}.")
    state, info = key_info(f.key, version) if sft is None else ("", None)  # the Megatron table: PPO's actor keys
    if state == "removed" and info is not None:
        return replace(f, id="launch-key-removed", components=("config", "verl"),
                       title=f"{f.key} was removed in verl {info.removed}", fix=fix, source=S.VERL_MEGATRON_YAML,
                       evidence={**f.evidence, "removed_in": info.removed})
    handed_on = _handed_on(f.key, flat, dicts)
    gone = None if handed_on else removed_in(f.key, version, sft)
    if gone is None:
        # a key of a later release in a plain section: named with that release, '+' only with its condition
        return f if handed_on else _added_later(f, version, sft)
    path, last, removed = gone
    what = f.key if path == f.key else f"{f.key} ({path} is gone)"
    if f.id == "launch-key-needs-plus":  # its section is an open mapping: '+' still hands it on
        fix = Fix(f"Delete the override, or write +{f.key}={f.evidence.get('override', '=').split('=', 1)[-1]} if "
                  f"the consumer of {f.key.rsplit('.', 1)[0]} (an open mapping) still reads it.")
    return replace(f, id="launch-key-removed", components=("config", "verl"),
                   title=f"{what} was removed in {release_name(removed)} (last in verl {last})", fix=fix,
                   evidence={**f.evidence, "removed_in": removed, "last_release": last},
                   source=S.VERL_TRAINER_YAML)


def _added_later(f: Finding, version: str, sft: str | None = None) -> Finding:
    """An unknown key that a later release has (removed_keys.added_after) names that release and the target: the
    script was written for a newer verl, and the fix is the target (or the key), not a neighbour's spelling; for a key
    Hydra would take with '+' (launch-key-needs-plus), the '+' only with its condition (the target's code reads it)."""
    from dataclasses import replace

    from doctor.launch.removed_keys import added_after, release_name
    from doctor.report import Fix

    found = added_after(f.key or "", version, sft)
    if found is None:
        return f
    path, first = found
    what = f.key if path == f.key else f"{f.key} ({path})"
    # with '+' Hydra takes it; whether the target's code reads it anyway (`config.get(...)`, as code often did before
    # a release declared the key) only its code says, so the '+' stays an option, named with that condition
    needs_plus = f.id == "launch-key-needs-plus"
    plus = (f" Writing +{f.key} makes Hydra take it; verl {version} declares no such key, so only its code reading "
            "it by name (config.get) would see it." if needs_plus else "")
    plus_fix = (f" (+{f.key} only if verl {version}'s own code reads it)" if needs_plus else "")
    return replace(f, id="launch-key-added-later", components=("config", "verl"),
                   title=f"{what} was added in {release_name(first)} (the target is verl {version})",
                   detail=f"verl {version}'s config does not have it ({f.title}); Hydra refuses the override.{plus}",
                   fix=Fix(f"Lint against the verl the cluster runs (--verl-version), run verl {first} or later, or "
                           f"delete the override {f.evidence.get('override', f.key)}{plus_fix}."),
                   evidence={**f.evidence, "added_in": first, "path": path}, source=S.VERL_TRAINER_YAML)


_GROUP_NOUN = {"model_engine": "engine"}


def _group_removed(ovs: list[Override], found: list[Finding], version: str) -> list[Finding]:
    """A config group option the target release does not have is one finding that names the release: dropped
    (`model_engine=mindspeed` on 0.9.1: launch-group-removed) or not yet there (`engine=automodel` on 0.7.1, added in
    0.8.0: launch-group-added-later). The keys of that option's own section (`actor.mindspeed.*`, `engine.*`), which
    Hydra judged against the default option composed in its place, are listed in it rather than each told "delete".
    `ovs` are the overrides real Hydra did not compose: an option the target's own config selected is there,
    whatever the release table says of its version."""
    from doctor.launch.removed_keys import group_added_later, group_removed, release_name

    for o in ovs:
        if "." in o.key or "@" in o.key or o.prefix == "~" or not o.value:
            continue
        gone = group_removed(f"{o.key}/{o.value}", version)
        first = None if gone is not None else group_added_later(f"{o.key}/{o.value}", version)
        if gone is None and first is None:
            continue
        mine = [f for f in found if f.key and f.key != o.key and f.severity is not Severity.INFO
                and (o.value in f.key.split(".") or f.key.startswith(o.key + "."))]
        noun = _GROUP_NOUN.get(o.key, f"{o.key} option")
        keys = sorted({f.key for f in mine if f.key})
        listed = f" ({first_few(keys, 4)})" if keys else ""
        not_judged = f"{len(mine)} override(s) of its section were not judged one by one{listed}."
        if gone is not None:
            last, removed = gone
            folded = finding(
                "launch-group-removed", "error", ("config", "verl"),
                f"{o.key}={o.value}: no such {noun} in verl {version} (last in verl {last})",
                detail=f"{release_name(removed)} removed {o.key}/{o.value}.yaml. The script was written for a "
                       f"release that has it; {not_judged}",
                key=o.key, evidence={"override": o.text, "last_release": last, "removed_in": removed, "keys": keys},
                fix=f"Lint and run it with verl {last} (--verl-version {last}), or port it to a {o.key} that verl "
                    f"{version} has.", source=S.VERL_TRAINER_YAML)
        else:
            folded = finding(
                "launch-group-added-later", "error", ("config", "verl"),
                f"{o.key}={o.value}: no such {noun} in verl {version} (added in {release_name(first or '')})",
                detail=f"verl {version} has no {o.key}/{o.value}.yaml; the script was written for a later release. "
                       + not_judged,
                key=o.key, evidence={"override": o.text, "added_in": first, "keys": keys},
                fix=f"Lint and run it with verl {first} or later (--verl-version), or port it to a {o.key} that "
                    f"verl {version} has.", source=S.VERL_TRAINER_YAML)
        drop = {id(f) for f in mine}
        found = [folded if f.key == o.key and f.severity is Severity.ERROR else f for f in found
                 if id(f) not in drop]
        if not any(f is folded for f in found):
            found.insert(0, folded)
    return found


def _handed_on(key: str, flat: dict[str, object] | None, dicts: dict[str, int] | None) -> bool:
    """Whether `key` sits in an open mapping of the composed config, which verl passes to its consumer whole."""
    from doctor.launch.schema import under_open_mapping

    return dicts is not None and under_open_mapping(flat, dicts, key) is not None


def _plus_removed(ovs: list[Override], version: str, flagged: set[str | None],
                  flat: dict[str, object] | None = None, dicts: dict[str, int] | None = None,
                  sft: str | None = None) -> list[Finding]:
    """`+key=…` for a key this release removed: Hydra adds it, and verl reads it no more (unless it lands in an
    open mapping, whose consumer reads what it is given: +rollout.engine_kwargs.sglang.attention_backend)."""
    from doctor.launch.removed_keys import release_name, removed_in

    out = []
    for o in ovs:
        if o.prefix not in ("+", "++") or o.key in flagged or _handed_on(o.key, flat, dicts):
            continue
        gone = removed_in(o.key, version, sft)
        if gone is None:
            continue
        path, last, removed = gone
        out.append(finding("launch-key-removed", "warning", ("config", "verl"),
                           f"{o.key} was removed in {release_name(removed)} (last in verl {last}): with "
                           f"'{o.prefix}' the run accepts it and nothing reads it",
                           key=o.key, evidence={"override": o.text, "removed_in": removed, "last_release": last},
                           fix=f"Delete the override {o.text}.", source=S.VERL_TRAINER_YAML))
    return out


def validate_overrides(
    ovs: list[Override],
    ctx: Context,
    *,
    compose: bool | None = None,
    config_dir: str | Path | None = None,
) -> tuple[list[Finding], object | None]:
    """Composition (when possible), then the rules with what it composed. Returns (findings, ComposeResult)."""
    cdir, note = resolve_config_dir(ctx.verl_version, config_dir, compose)
    hydra: list[Finding] = [] if note is None else [note]
    res = None
    if cdir is not None:
        more, res = compose_findings(ovs, ctx, cdir, ctx.config_name or config_name_for(ctx.verl_version))
        hydra += more
    return with_hydra(check(ovs, ctx), hydra), res


def with_hydra(found: list[Finding], hydra: list[Finding]) -> list[Finding]:
    """The rules' findings, then Hydra's; a rule's error on a key stands for Hydra's error on the same key."""
    flagged = {f.key for f in found if f.severity is Severity.ERROR and f.key}
    return found + [f for f in hydra if f.key not in flagged or f.severity is not Severity.ERROR]


MODEL_KEY = PPO.key


def model_missing(said: str, fix: str, appended: str = "", model: ModelKey = PPO) -> Finding:
    """launch-model-missing, for launch (no --model) and lint (a call that sets no model path over verl's
    placeholder: `model` is the key of the entry point's config, main_ppo's or an SFT trainer's): the run fails loading
    the placeholder unless the path is appended when the script runs, which is why it is a warning and not an error.
    `appended`: what lint knows of that (the call passes no arguments on)."""
    return finding(
        "launch-model-missing", "warning", ("model", "config"),
        f"{said}: the script runs verl's placeholder model, {model.placeholder}",
        detail="The model path is left to verl's config, whose default is an example; the run fails loading it "
               f"unless `{model.key}=DIR` is appended when the script runs{appended}.",
        key=model.key, evidence={"default": model.placeholder}, fix=fix, source=model.source)


def load_model(path: str | None) -> tuple[ModelInfo | None, Finding | None]:
    """Model facts when the path exists here. One that exists is read as the model (InputError, exit 2, names the
    file and what is wrong: it cannot be the model the run loads); one that does not is a warning (the model may
    live only on the cluster, doctor.launch.inputs) and the model-dependent rules are skipped."""
    if path is None:
        return None, finding("launch-model-unknown", "info", ("model",), "no model config: model-dependent checks skipped",
                             fix="Pass --model DIR (a local Hugging Face model directory).")
    if os.path.lexists(os.path.expanduser(path)):
        return load_model_config(os.path.expanduser(path)), None
    what = ("a Hugging Face model id (verl downloads it on every node; the doctor does not)" if hub_id(path)
            else "a path only the cluster's nodes have is fine; a typo fails the run when verl loads the model")
    return None, finding("launch-model-unreadable", "warning", ("model",),
                         f"model {path} does not exist here: heads/layers/experts checks skipped",
                         detail=f"No such file or directory here: {what}.", evidence={"model": path},
                         key="actor_rollout_ref.model.path",
                         fix="Check the path; run where the model directory exists (or pass a copy of it) to run "
                             "those checks.",
                         source=S.HF_CONFIG)


def validate(
    spec: LaunchSpec,
    *,
    compose: bool | None = None,
    config_dir: str | Path | None = None,
    model: ModelInfo | None = None,
) -> list[Finding]:
    """Public: every finding for `spec` (rules + Hydra composition when verl's config is available)."""
    found: list[Finding] = []
    if model is None:
        model, note = load_model(spec.model)
        if note is not None:
            found.append(note)
    ctx = Context(verl_version=spec.verl_version, model=model, megatron_bridge=spec.megatron_bridge,
                  config_name=config_name_for(spec.verl_version))
    more, _ = validate_overrides(build_overrides(spec), ctx, compose=compose, config_dir=config_dir)
    return found + more
