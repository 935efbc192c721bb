"""Validation entry points shared by `launch` and `lint`: the rules (rules.py) plus, when verl's config
files for the target version are available, real Hydra composition (hydra_compose.py).

Composition is only run against config files of the *target* verl version (or a directory the user names
with --verl-config): checking a 0.7.1 script against 0.9.1's schema would report differences between the
releases, not mistakes. Without matching files the prefix rules come from the per-release key tables in
features.py, and an info finding says so.
"""

from __future__ import annotations

from pathlib import Path

from doctor.errors import InputError
from doctor.launch.features import vt
from doctor.launch.model_config import ModelInfo, load_model_config
from doctor.launch.override_list import CONFIG_NAME, Override, build_overrides
from doctor.launch.rules import Context, check
from doctor.launch.spec import LaunchSpec
from doctor.report import Finding, Severity, finding


def resolve_config_dir(verl_version: str, config_dir: str | Path | None, compose: bool | None) -> tuple[Path | None, Finding | None]:
    """Which verl config directory to compose against, or why none (as an info finding)."""
    from doctor.launch import hydra_compose

    if compose is False:
        return None, finding("launch-schema-not-composed", "info", ("config",),
                             f"verl {verl_version}'s Hydra config was not composed (--no-compose)",
                             detail="Prefix rules were checked from the per-release key tables "
                                    "(shared/reference/verl.md §2.5); keys outside those tables were not checked.")
    if config_dir is not None:
        return hydra_compose.check_config_dir(config_dir), None
    inst_version, inst_dir = hydra_compose.installed_verl()
    if inst_dir is not None and inst_version is not None and vt(inst_version) == vt(verl_version):
        return inst_dir, None
    why = (f"installed verl is {inst_version}, target is {verl_version}" if inst_dir is not None
           else "no verl installed here")
    if compose is True:
        raise InputError(f"cannot compose verl {verl_version}'s config: {why}; pass --verl-config DIR",
                         path="--compose")
    return None, finding("launch-schema-not-composed", "info", ("config",),
                         f"verl {verl_version}'s Hydra config was not composed ({why})",
                         detail="Prefix rules were checked from the per-release key tables "
                                "(shared/reference/verl.md §2.5); keys outside those tables were not checked.",
                         fix="Install the target verl (pip install --no-deps verl==VERSION) or pass --verl-config DIR.")


def validate_overrides(
    ovs: list[Override],
    ctx: Context,
    *,
    compose: bool | None = None,
    config_dir: str | Path | None = None,
) -> tuple[list[Finding], object | None]:
    """Rules + optional composition. Returns (findings, composed config or None)."""
    found = check(ovs, ctx)
    cdir, note = resolve_config_dir(ctx.verl_version, config_dir, compose)
    composed = None
    if note is not None:
        found.append(note)
    if cdir is not None:
        from doctor.launch import hydra_compose

        res = hydra_compose.compose(ovs, cdir, ctx.config_name or CONFIG_NAME)
        composed = res.config
        flagged = {f.key for f in found if f.severity is Severity.ERROR and f.key}
        found.extend(f for f in res.findings if f.key not in flagged)
        if res.config is not None:
            found.append(finding("launch-schema-composed", "info", ("config",),
                                 f"composed verl's {CONFIG_NAME} config with "
                                 f"{len(ovs) - len(res.rejected)} override(s)",
                                 evidence={"config_dir": str(cdir), "rejected": len(res.rejected)}))
    return found, composed


def load_model(path: str | None) -> tuple[ModelInfo | None, Finding | None]:
    """Model facts when the directory is readable here; otherwise a warning (the model may live only on the
    cluster) and the model-dependent rules are skipped."""
    if path is None:
        return None, finding("launch-model-unknown", "info", ("model",), "no model config: model-dependent checks skipped",
                             fix="Pass --model DIR (a local Hugging Face model directory).")
    try:
        return load_model_config(path), None
    except InputError as e:
        return None, finding("launch-model-unreadable", "warning", ("model",),
                             "model config.json not readable here: heads/layers/experts checks skipped",
                             detail=str(e), evidence={"model": path}, key="actor_rollout_ref.model.path",
                             fix="Run on a host where the model directory exists, or fix the path.",
                             source="issue 5 (config.json gives layers, heads, experts)")


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
    ctx = Context(verl_version=spec.verl_version, model=model, megatron_bridge=spec.megatron_bridge)
    more, _ = validate_overrides(build_overrides(spec), ctx, compose=compose, config_dir=config_dir)
    return found + more
