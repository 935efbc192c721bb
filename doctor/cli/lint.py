"""`doctor lint SCRIPT|-`: read a verl launch script (never run it) and validate its overrides."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from doctor.cli.options import doctor_command, output_options, strict_option


@click.command("lint")
@click.argument("script", metavar="SCRIPT|-")
@click.option("--verl-version", metavar="VER", help="verl the script targets [default: the script's `for verl X` "
                                                    "header, else the version file of --verl-config's verl tree, "
                                                    "else the installed verl's].")
@click.option("--model", metavar="DIR", help="Model directory for the layout rules [default: the script's model "
                                             "path when it exists here].")
@click.option("--verl-config", type=click.Path(file_okay=False), help="verl's trainer/config directory to compose against.")
@click.option("--compose/--no-compose", default=None, help="Require / skip the real Hydra composition [auto].")
@click.option("--megatron-bridge/--no-megatron-bridge", default=None,
              help="Whether Megatron-Bridge is installed on the target [unknown].")
@click.option("--target", type=click.Choice(["auto", "npu", "gpu"]), default="auto", show_default=True,
              help="Device the run targets (auto: trainer.device, else Ascend/HCCL/vllm-ascend settings or an "
                   "*_npu.sh name in the script, else NPUs on this host; unknown: NPU breaks are warnings; npu/gpu: "
                   "paths through the script's branches for the other device are not linted).")
@strict_option()
@output_options
@doctor_command
def command(console: Any, script: str, verl_version: str | None, model: str | None, verl_config: str | None,
            compose: bool | None, megatron_bridge: bool | None, target: str, strict: bool) -> int:
    """Validate an existing verl launch script's overrides (same rules as `doctor launch`)."""
    from doctor.errors import InputError
    from doctor.knowledge.versions import parse_pkg_version
    from doctor.launch.inputs import script_without_commands
    from doctor.launch.lint_script import Options, lint_parsed
    from doctor.launch.script_parser import parse_script
    from doctor.render import emit
    from doctor.report import Report

    source = "<stdin>" if script == "-" else script
    try:
        if script == "-":
            text = sys.stdin.read()
        else:
            with open(script, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read: {getattr(e, 'strerror', None) or e}", source=source) from None
    if (empty := script_without_commands(text)) is not None:
        raise InputError(f"nothing to lint: {empty} (give the script that starts the training run)", source=source)
    if model is not None and not os.path.lexists(os.path.expanduser(model)):
        # read here and nowhere else (unlike launch's, which the script also runs on the cluster)
        raise InputError("no such file or directory (--model: a copy of the model's directory, or its config.json, "
                         "for the layout rules)", source=model)
    if verl_version is not None and parse_pkg_version(verl_version) is None:
        raise InputError(f"not a version: {verl_version!r}", path="--verl-version")
    parsed = parse_script(text, source, None if script == "-" else script)
    opts = Options(verl_version, model, verl_config, compose, megatron_bridge, target,
                   None if script == "-" else script)
    findings, version, calls = lint_parsed(parsed, text, opts)
    first = calls[0] if calls else {}
    report = Report(command="lint", findings=findings, extra={
        "script": source, "verl_version": version, "config_name": first.get("config_name"),
        "overrides": first.get("overrides", []), "line": first.get("line"), "invocations": calls,
    })
    return emit(report, console, strict=strict)
