"""`doctor smoke`: a tiny verl GRPO run (megatron strategy, MindSpeed, flash attention on) with a verdict.

Exit codes: 0 pass, 1 fail (or refused by the preflight check), 2 could not run (bad options, no verl in the
training interpreter, unusable workload, interrupted).
"""

from __future__ import annotations

import sys

import click

from doctor.cli.options import doctor_command, junit_option, output_options, python_option


@click.command("smoke")
@click.option("--workdir", type=click.Path(file_okay=False), default=None,
              help="Where the dataset, tiny model and run logs go (reused when unchanged). "
                   "Default: $XDG_CACHE_HOME/verl-ascend-doctor/smoke (~/.cache/...).")
@click.option("--model", type=click.Path(exists=True, file_okay=False), default=None,
              help="A local Hugging Face model directory to use instead of the built tiny Qwen2.")
@click.option("--tp", type=click.IntRange(min=1), default=None, help="Tensor parallel size (default: fits the NPUs).")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Pipeline parallel size (default: fits the NPUs).")
@click.option("--steps", type=click.IntRange(1, 2), default=1, show_default=True, help="Training steps to run.")
@click.option("--run-timeout", type=click.FloatRange(min=1), default=1800, show_default=True, metavar="SECONDS",
              help="Seconds before the run is ended (its process group and its own Ray daemons only).")
@click.option("--ignore-preflight", is_flag=True, help="Run even if `doctor check` reports errors.")
@click.option("--dry-run", is_flag=True, help="Build the workload and print the command and env; run nothing.")
@junit_option("junit_path")
@python_option("The training environment's interpreter runs the trainer.")
@output_options
@doctor_command
def command(console, workdir, model, tp, pp, steps, run_timeout, ignore_preflight, dry_run, junit_path, python) -> int:
    """Run a tiny verl GRPO job on the megatron strategy with MindSpeed flash attention and judge it."""
    import os
    from pathlib import Path

    from doctor.render import emit, write_junit
    from doctor.smoke.runner import TRAINER_ENV
    from doctor.smoke.session import SmokeOptions, run_smoke
    from doctor.smoke.workload import default_workdir

    opts = SmokeOptions(
        workdir=Path(workdir).expanduser() if workdir else default_workdir(),
        model=Path(model).expanduser().absolute() if model else None,
        tp=tp,
        pp=pp,
        steps=steps,
        run_timeout=float(run_timeout),
        ignore_preflight=ignore_preflight,
        dry_run=dry_run,
        python=python or sys.executable,
        trainer_script=os.environ.get(TRAINER_ENV) or None,
    )
    report = run_smoke(opts, console)
    if junit_path:
        write_junit(report, junit_path, console, "doctor-smoke")
    if not console.json_mode:
        _print_summary(console, report.extra)
    code = emit(report, console)
    if not console.json_mode and report.extra.get("refused_without_waiver"):
        console.print(console.style(report.extra["refused_without_waiver"], "yellow"))
    return code


def runnable(argv: list[str], env_set: dict[str, str], env_unset: list[str]) -> list[str]:
    """The dry run's command as one shell command a user can paste: `env -u NAME … NAME=value … python -m
    verl.trainer.main_ppo --config-name=… \\` then one override a line, every word shell-quoted. Printed apart
    (the command on one line of thousands of characters, the variables as a list of their own), it ran only after
    the user turned the list into exports by hand."""
    import shlex

    words = [f"-u {shlex.quote(k)}" for k in env_unset] + [shlex.quote(f"{k}={v}") for k, v in env_set.items()]
    cut = next((i for i, a in enumerate(argv) if i and "=" in a and not a.startswith("-")), len(argv))
    lines = ["env" + (" " + words[0] if words else "")] + words[1:]
    lines += [shlex.join(argv[:cut])] + [shlex.quote(a) for a in argv[cut:]]
    return [line + " \\" for line in lines[:-1]] + [lines[-1]]


def _print_summary(console, extra: dict) -> None:
    """Human lines the generic renderer does not know about: command, artifacts, metrics, log."""
    c = console
    if extra.get("dry_run") and extra.get("argv"):
        c.print(c.style("command (its environment, then the trainer; one shell command, runnable as is):", "bold"))
        for line in runnable(extra["argv"], extra.get("env_set", {}), extra.get("env_unset", [])):
            c.print(f"  {line}")
    if extra.get("artifacts"):
        c.print(c.style("artifacts:", "bold") + f" ({extra['workload']['root']}, "
                f"{'reused' if extra['workload']['reused'] else 'built'})")
        for a in extra["artifacts"]:
            c.print(f"  {a['name']}  {a['bytes']} bytes")
    from doctor.smoke.verdict import shown

    for step, metrics in (extra.get("metrics") or {}).items():
        c.print(f"step {step}: " + ", ".join(f"{k}={v}" for k, v in shown(metrics)))
    if extra.get("wall_seconds") is not None and not extra.get("dry_run"):
        tp = extra.get("throughput")
        c.print(f"wall time {extra['wall_seconds']:.1f} s" + (f", throughput {tp:.1f} tokens/s/NPU" if tp else ""))
    if extra.get("log") and not extra.get("dry_run"):
        c.print(f"log: {extra['log']}")
