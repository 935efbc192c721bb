"""`doctor smoke` as a function: preflight → workload → launch spec → (dry-run | run → verdict) → Report.

The CLI only parses options and renders; everything a test wants to see (the report, its JUnit cases, the
artifacts, the command and env) is produced here.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from doctor.console import Console
from doctor.errors import InputError
from doctor.launch import sources as S
from doctor.report import CheckResult, CheckStatus, Finding, Report, Severity, finding
from doctor.smoke import plan, runner, workload
from doctor.smoke.logparse import LogScanner, parse_step_line, strip_prefix
from doctor.smoke.verdict import judge, shown

DEFAULT_RUN_TIMEOUT = 1800.0


@dataclass(frozen=True)
class SmokeOptions:
    workdir: Path
    model: Path | None = None
    tp: int | None = None
    pp: int | None = None
    steps: int = 1
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    ignore_preflight: bool = False
    dry_run: bool = False
    python: str = sys.executable
    trainer_script: str | None = None  # test seam: a file run instead of -m verl.trainer.main_ppo
    seed: int = 0


class _Checks:
    """Collects the report's checks (JUnit test cases) and tags each finding with the check it belongs to."""

    def __init__(self) -> None:
        self.checks: list[CheckResult] = []
        self.findings: list[Finding] = []

    def add(self, check_id: str, area: str, findings: list[Finding], seconds: float, skip: str | None = None) -> None:
        """`skip`: the reason this phase did not run (it is then `skip`, never `pass`)."""
        tagged = [replace(f, check=check_id) for f in findings]
        status = CheckStatus.SKIP if skip else CheckStatus.of(tagged)
        self.checks.append(CheckResult(id=check_id, area=area, status=status, seconds=seconds, reason=skip))
        self.findings.extend(tagged)

    def has_errors(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    def report(self, extra: dict[str, Any], internal_error: bool = False) -> Report:
        return Report(command="smoke", findings=self.findings, checks=self.checks, extra=extra,
                      internal_error=internal_error)




@dataclass
class _Launch:
    """What the run needs from the launch step: argv, the environment, and where its files go."""

    argv: list[str]
    launch_env: dict[str, str]
    run_id: str
    run_dir: Path
    log_path: Path
    script: str | None


def _no_verl(python: str) -> str:
    """The smoke runs verl in the training environment, which is rarely the doctor's own (pipx, a tools venv)."""
    # an interpreter's environment is the directory above its bin/ (a venv's python links to the base one)
    own = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(python)))) == os.path.realpath(sys.prefix)
    where = "the doctor's own interpreter" if own else "this interpreter"
    msg = (f"verl is not installed in {where}: "
           "pass --python with the training environment's interpreter (the python that imports verl, e.g. "
           "--python /opt/verl/bin/python)")
    # the doctor never installs into itself: for its own interpreter the plan offered is a new venv (a user who
    # has no training environment yet, as check's target-holds-no-stack says), for another one that interpreter
    if own:
        return f"{msg}; with no training environment yet, `doctor install --venv DIR --dry-run` plans one"
    return f"{msg}; `doctor install --dry-run --python {shlex.quote(python)}` plans the stack for it"


def run_smoke(opts: SmokeOptions, console: Console, *, preflight: Callable[[str], list[Finding] | None] | None = None) -> Report:
    """Do the whole smoke and return its report (exit code: 0 pass, 1 fail, 2 could not run)."""
    c = _Checks()
    extra: dict[str, Any] = {"dry_run": opts.dry_run, "steps": opts.steps}
    if not _preflight(opts, console, c, extra, preflight or run_preflight):
        return c.report(extra)
    target = plan.probe_target(opts.python)
    if not target.verl:
        raise InputError(_no_verl(opts.python), source=opts.python)
    layout = plan.choose_layout(plan.visible_npus(), opts.tp, opts.pp)
    extra["target"] = {"python": target.python, "python_version": target.python_version, "verl": target.verl,
                       "megatron_bridge": target.megatron_bridge}
    extra["layout"] = layout.to_dict()
    wl = _workload(opts, layout, console, c, extra)
    if wl is None:
        return c.report(extra, internal_error=True)
    launch = _launch(opts, target, layout, wl, c, extra)
    if c.has_errors():
        return c.report(extra)
    if opts.dry_run:
        console.status("dry run: nothing was started")
        skip = "--dry-run: nothing was started"
        refused = _refused_without_waiver(opts, extra)
        if refused:
            extra["refused_without_waiver"] = refused  # the CLI says it last, under the verdict
            skip = f"{skip}; {refused}"
        c.add("smoke-run", "smoke", [], 0.0, skip=skip)
        return c.report(extra)
    return _run(opts, layout, launch, console, c, extra)


def _refused_without_waiver(opts: SmokeOptions, extra: dict[str, Any]) -> str | None:
    """What a dry run cannot show by running: whether the real run would start. Its preflight errors are listed as
    "(ignored)" warnings and its verdict counts no error, so without this a dry run on a host that cannot train
    reads as ready."""
    errors = extra.get("preflight", {}).get("errors", 0)
    if not errors or opts.ignore_preflight:
        return None
    return (f"a real run would be refused: `doctor check` found {errors} error(s), listed as \"(ignored)\"; "
            "fix them, or pass --ignore-preflight to run anyway")


def _preflight(opts: SmokeOptions, console: Console, c: _Checks, extra: dict[str, Any],
               preflight: Callable[[str], list[Finding] | None]) -> bool:
    """`doctor check` first; False when its errors refuse the run (a dry run reports what it would do)."""
    t = time.monotonic()
    if opts.ignore_preflight:  # still run, so what was ignored is said; but it is not a gate
        console.status("doctor check (its errors do not stop the run: --ignore-preflight)…")
    elif opts.dry_run:
        console.status("doctor check (a dry run reports its errors; it starts nothing)…")
    else:
        console.status("preflight: doctor check…")
    pre = preflight(opts.python)
    if pre is None:
        c.add("smoke-preflight", "smoke", [
            finding("smoke-preflight-unavailable", "info", "verl", "`doctor check` is not available; preflight skipped")
        ], time.monotonic() - t, skip="`doctor check` is not available")
        extra["preflight"] = {"ran": False}
        return True
    errors = [f for f in pre if f.severity is Severity.ERROR]
    extra["preflight"] = {"ran": True, "errors": len(errors),
                          "warnings": sum(f.severity is Severity.WARNING for f in pre),
                          "ignored": bool(errors and (opts.ignore_preflight or opts.dry_run))}
    if errors and not opts.ignore_preflight and not opts.dry_run:
        refusal = finding(
            "smoke-preflight-failed", "error", errors[0].components[0],
            f"`doctor check` found {len(errors)} error(s); the smoke run was not started",
            evidence={"errors": [f.id for f in errors]},
            fix="Fix the errors below (or pass --ignore-preflight to run anyway).")
        c.add("smoke-preflight", "smoke", [refusal, *pre], time.monotonic() - t)
        return False
    # Errors ignored (or a dry run): keep them visible as "(ignored)" warnings, never under a ✓, and the preflight
    # is not a pass (JUnit shows it skipped, with why); warnings stay warnings.
    shown_pre = [_as_ignored(f) if f.severity is Severity.ERROR else f for f in pre if f.severity is not Severity.INFO]
    why = None
    if errors:
        flag = "--dry-run" if opts.dry_run and not opts.ignore_preflight else "--ignore-preflight"
        why = f"`doctor check` found {len(errors)} error(s), ignored under {flag}: the host was not found ready"
    c.add("smoke-preflight", "smoke", shown_pre, time.monotonic() - t, skip=why)
    return True


def _workload(opts: SmokeOptions, layout: plan.Layout, console: Console, c: _Checks,
              extra: dict[str, Any]) -> workload.Workload | None:
    """Build or reuse the tiny model and dataset; None (after an error finding) when it is not usable."""
    t = time.monotonic()
    params = workload.WorkloadParams(tp=layout.tp, pp=layout.pp, seed=opts.seed,
                                     model_dir=str(opts.model) if opts.model else None)
    wl = workload.build_workload(opts.workdir, params)
    extra["workload"] = wl.to_dict()
    extra["artifacts"] = [a.to_dict() for a in wl.artifacts]
    if wl.problems:
        bad = finding("smoke-workload-invalid", "error", "model" if opts.model else "verl",
                      "The smoke workload is not usable", detail="\n".join(wl.problems),
                      evidence={"problems": list(wl.problems)},
                      fix="Pass a model directory that fits the layout (--model) or different --tp/--pp."
                      if opts.model else "Delete the work directory and run again.",
                      source=S.MEGATRON_TRANSFORMER_CONFIG)
        c.add("smoke-workload", "smoke", [bad], time.monotonic() - t)
        return None
    console.status(f"workload {'reused' if wl.reused else 'built'}: {wl.root}")
    c.add("smoke-workload", "smoke", [], time.monotonic() - t)
    return wl


def _launch(opts: SmokeOptions, target: plan.Target, layout: plan.Layout, wl: workload.Workload, c: _Checks,
            extra: dict[str, Any]) -> _Launch:
    """The launch spec through doctor.launch's validator and renderer: the exact argv and env of the run."""
    t = time.monotonic()
    run_id = runner.new_run_id()
    ray_tmp = runner.ray_temp_path(run_id)
    assert target.verl is not None  # run_smoke refused an interpreter without verl
    spec = plan.build_spec(layout=layout, steps=opts.steps, verl_version=target.verl, model_dir=wl.model_dir,
                           train_file=wl.train_file, val_file=wl.val_file,
                           megatron_bridge=bool(target.megatron_bridge),
                           ray_overrides=runner.ray_isolation_overrides(ray_tmp))
    out = plan.through_launch(spec)
    c.add("smoke-launch-spec", "config", out.findings, time.monotonic() - t)
    extra["launch"] = {"spec": spec.to_dict(), "missing_api": out.missing}
    argv = runner.trainer_argv(opts.python, [f"--config-name={out.config_name}", *out.overrides], opts.trainer_script)
    launch_env = plan.recommended_env(os.environ)
    env_set = runner.run_env({}, ray_tmp=ray_tmp, run_id=run_id, extra=launch_env)
    env_unset = [k for k in runner.RAY_CLUSTER_VARS if k in os.environ]
    run_dir = wl.root.parent / "runs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{run_id}"
    log_path = run_dir / "main_ppo.log"
    extra.update({"argv": argv, "command_line": shlex.join(argv), "env_set": env_set, "env_unset": env_unset,
                  "run_dir": str(run_dir), "log": str(log_path), "ray_temp_dir": str(ray_tmp)})
    return _Launch(argv, launch_env, run_id, run_dir, log_path, out.script)


def _write_run_files(launch: _Launch, extra: dict[str, Any]) -> None:
    run_dir = launch.run_dir
    _prune_runs(run_dir.parent)
    run_dir.mkdir(parents=True, exist_ok=True)
    if launch.script is not None:
        (run_dir / "launch.sh").write_text(launch.script, encoding="utf-8")
        os.chmod(run_dir / "launch.sh", 0o755)
        extra["launch_script"] = str(run_dir / "launch.sh")
    command = {"argv": launch.argv, "env_set": extra["env_set"], "env_unset": extra["env_unset"]}
    (run_dir / "command.json").write_text(json.dumps(command, indent=2) + "\n", encoding="utf-8")


def _run(opts: SmokeOptions, layout: plan.Layout, launch: _Launch, console: Console, c: _Checks,
         extra: dict[str, Any]) -> Report:
    """Run main_ppo, then judge its exit and log; one JUnit case for the run and one per step."""
    if layout.assumed:
        c.add("smoke-devices", "npu", [finding(
            "smoke-no-npu-visible", "warning", "npu",
            f"No NPU is visible to this process; the run was planned for {plan.ASSUMED_NPUS}",
            evidence={"ASCEND_RT_VISIBLE_DEVICES": os.environ.get("ASCEND_RT_VISIBLE_DEVICES"), "dev": "/dev/davinci*"},
            fix="Run on an Ascend host (in a container, pass the /dev/davinci* devices), or use --dry-run.",
            source=S.VERL_NPU_FAQ,
        )], 0.0)
    _write_run_files(launch, extra)
    ray_dir = runner.make_ray_temp_dir(launch.run_id)
    env = runner.run_env(os.environ, ray_tmp=ray_dir, run_id=launch.run_id, extra=launch.launch_env)
    console.status(f"running {opts.steps} step(s) on {layout.world} NPU(s) (TP{layout.tp} PP{layout.pp} "
                   f"DP{layout.dp}); log: {launch.log_path}; time limit {opts.run_timeout:.0f} s")
    t = time.monotonic()
    progress = Progress(console)
    res = runner.run(launch.argv, env, launch.log_path, timeout=opts.run_timeout, ray_tmp=ray_dir,
                     run_id=launch.run_id, cwd=str(launch.run_dir), on_line=progress, on_tick=progress.tick)
    scan = LogScanner()
    with open(launch.log_path, encoding="utf-8", errors="replace") as fh:
        scan.feed_all(fh)
    verdict = judge(res, scan, opts.steps, explain=explain_log)
    extra.update(verdict.to_extra())
    extra["run"] = res.to_dict()
    explained = {id(f) for f in verdict.explained}
    per_step = {id(f) for f in verdict.findings if id(f) not in explained and "step" in f.evidence}
    c.add("smoke-run", "smoke", [f for f in verdict.findings if id(f) not in per_step], time.monotonic() - t)
    for step in range(1, opts.steps + 1):
        step_f = [f for f in verdict.findings if id(f) in per_step and f.evidence.get("step") == step]
        c.add(f"smoke-step-{step}", "smoke", step_f, 0.0)
    if verdict.passed or not any(ray_dir.iterdir()):
        _remove_tree(ray_dir)  # keep Ray's session logs only when they help explain a failure (an empty dir never does)
    return c.report(extra, internal_error=not res.started or res.interrupted)


def _as_ignored(f: Finding) -> Finding:
    return replace(f, severity=Severity.WARNING, title=f"(ignored) {f.title}")


KEEP_RUNS = 20


def _prune_runs(runs: Path, keep: int = KEEP_RUNS) -> None:
    """Keep the newest `keep - 1` run directories (ours: `YYYYmmdd-HHMMSS-<run id>`), so logs do not pile up."""
    import re
    import shutil

    if not runs.is_dir():
        return
    ours = sorted(p for p in runs.iterdir() if p.is_dir() and re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{12}", p.name))
    for old in ours[: max(0, len(ours) - (keep - 1))]:
        shutil.rmtree(old, ignore_errors=True)


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


class Progress:
    """The on-screen progress (stderr): milestones and per-step metrics; every line under -v."""

    MILESTONES = (
        ("ray init kwargs", "starting Ray (own temp dir)"),
        ("Total training steps", None),
        ("Error executing job", None),
        ("Traceback (most recent call last)", "a traceback was printed (see the log)"),
    )

    def __init__(self, console: Console) -> None:
        self.console = console
        self.seen: set[str] = set()
        self.last = ""

    def tick(self, elapsed: float) -> None:
        """Heartbeat: vLLM and Megatron start-up can be quiet for minutes."""
        self.console.status(f"still running ({elapsed:.0f} s); last line: {self.last[:160]}")

    def __call__(self, line: str) -> None:
        text = line.rstrip("\r\n")
        if text.strip():
            self.last = strip_prefix(text)
        if self.console.verbosity >= 1:
            self.console.status(text)
            return
        step = parse_step_line(text)
        if step is not None:
            parts = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown(step.metrics))
            self.console.status(f"step {step.step}: {parts}")
            return
        for needle, label in self.MILESTONES:
            if needle in text and needle not in self.seen:
                self.seen.add(needle)
                self.console.status(label or strip_prefix(text)[:200])


def explain_log(path: str) -> list[Finding]:
    """The signature matcher's findings for a failed run's log (doctor.explain.signatures); empty when not available."""
    try:
        from doctor.explain.signatures import explain_file
    except ImportError:
        return [finding("smoke-explain-unavailable", "info", "verl",
                        "The failure-signature matcher (doctor.explain.signatures) is not available; read the log")]
    return list(explain_file(path))


def run_preflight(python: str) -> list[Finding] | None:
    """`doctor check` on this host for the training interpreter (same probes, profile choice and waivers as
    the command: `doctor.toml` / `[tool.doctor]` in the cwd); None when the check is not available."""
    try:
        from doctor.checks.diagnose import diagnose, load_check_config
        from doctor.probes import collect_snapshot
    except ImportError:
        return None
    cfg = load_check_config()
    snap = collect_snapshot(root="/", python=python, npu_smi_timeout=10.0, environ=None)
    report = diagnose([(None, snap, None)], forced_profile=cfg.profile, only=cfg.only, ignore=cfg.ignore,
                      local=True, command="smoke", python_named=python != sys.executable)  # this host, the
    # doctor's environment: fix lines name a uv that runs here, and "name the training python" says `doctor smoke
    # --python PY` (named: "instead")
    return list(report.findings)
