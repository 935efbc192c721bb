"""`doctor lint SCRIPT|-`: read a verl launch script (never run it) and validate its overrides."""

from __future__ import annotations

import sys
from typing import Any

import click

from doctor.cli.options import doctor_command, output_options, strict_option


@click.command("lint")
@click.argument("script", metavar="SCRIPT|-")
@click.option("--verl-version", metavar="VER", help="verl the script targets [default: the installed verl's].")
@click.option("--model", metavar="DIR", help="Model directory for the layout rules [default: the script's model "
                                             "path when it exists here].")
@click.option("--verl-config", type=click.Path(file_okay=False), help="verl's trainer/config directory to compose against.")
@click.option("--compose/--no-compose", default=None, help="Require / skip the real Hydra composition [auto].")
@click.option("--megatron-bridge/--no-megatron-bridge", default=None,
              help="Whether Megatron-Bridge is installed on the target [unknown].")
@strict_option()
@output_options
@doctor_command
def command(console: Any, script: str, verl_version: str | None, model: str | None, verl_config: str | None,
            compose: bool | None, megatron_bridge: bool | None, strict: bool) -> int:
    """Validate an existing verl launch script's overrides (same rules as `doctor launch`)."""
    from dataclasses import replace

    from doctor.errors import InputError
    from doctor.knowledge.versions import parse_pkg_version
    from doctor.launch import hydra_compose
    from doctor.launch.script_parser import parse_script
    from doctor.render import emit
    from doctor.report import Report, finding

    source = "<stdin>" if script == "-" else script
    try:
        if script == "-":
            text = sys.stdin.read()
        else:
            with open(script, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read: {getattr(e, 'strerror', None) or e}", source=source) from None
    parsed = parse_script(text, source)
    if not parsed.invocations:
        raise InputError("no `python3 -m verl.trainer.main_ppo` invocation found", source=source)
    if verl_version is None:
        verl_version, _ = hydra_compose.installed_verl()
        if verl_version is None:
            raise InputError("no verl installed here to take the target version from; pass --verl-version",
                             source=source)
    elif parse_pkg_version(verl_version) is None:
        raise InputError(f"not a version: {verl_version!r}", path="--verl-version")
    several = len(parsed.invocations) > 1
    findings = []
    if several:
        findings.append(finding("lint-several-invocations", "info", ("config",),
                                f"{len(parsed.invocations)} main_ppo invocations; each is checked, findings name their line",
                                evidence={"lines": [i.line for i in parsed.invocations]}))
    if parsed.unresolved:
        findings.append(finding("lint-unresolved", "info", ("config",),
                                "values the script does not define were kept literally: " + ", ".join(parsed.unresolved),
                                detail="They come from the environment or commands at run time; rules that need "
                                       "their values were skipped.", evidence={"unresolved": parsed.unresolved}))
    for inv in parsed.invocations:
        found = _lint_invocation(inv, verl_version, model, verl_config, compose, megatron_bridge)
        if several:  # say which run each finding is about
            found = [replace(f, title=f"line {inv.line}: {f.title}", evidence={**f.evidence, "line": inv.line})
                     for f in found]
        findings.extend(found)
    first = parsed.invocations[0]
    report = Report(command="lint", findings=findings, extra={
        "script": source, "verl_version": verl_version, "config_name": first.config_name,
        "overrides": [o.text for o in first.overrides], "line": first.line,
        "invocations": [{"line": i.line, "config_name": i.config_name, "overrides": [o.text for o in i.overrides]}
                        for i in parsed.invocations],
    })
    return emit(report, console, strict=strict)


def _lint_invocation(inv: Any, verl_version: str, model: str | None, verl_config: str | None, compose: bool | None,
                     megatron_bridge: bool | None) -> list[Any]:
    """Findings for one `main_ppo` invocation: its model (from --model, else the script's model path when it
    exists here), then every override through the launch rules and, when possible, real Hydra."""
    import os

    from doctor.launch.rules import Context
    from doctor.launch.validation import load_model, validate_overrides
    from doctor.report import finding

    out = []
    if inv.ignored:
        out.append(finding("lint-ignored-arguments", "info", ("config",),
                           "arguments that are not Hydra overrides were ignored: " + " ".join(inv.ignored),
                           evidence={"ignored": inv.ignored}))
    model_dir = model
    if model_dir is None:
        path = next((o.py for o in reversed(inv.overrides) if o.key == "actor_rollout_ref.model.path"), None)
        if isinstance(path, str) and os.path.isfile(os.path.join(os.path.expanduser(path), "config.json")):
            model_dir = os.path.expanduser(path)
    info, note = load_model(model_dir)
    if note is not None:
        out.append(note)
    ctx = Context(verl_version=verl_version, model=info, megatron_bridge=megatron_bridge,
                  config_name=inv.config_name, origin="lint")
    more, _ = validate_overrides(inv.overrides, ctx, compose=compose, config_dir=verl_config)
    return out + list(more)
