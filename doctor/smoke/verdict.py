"""Turn a run (exit status + parsed log) into findings: pass only when every requested step printed finite
`actor/pg_loss` and `actor/grad_norm` and the trainer exited 0.

Why those two metrics: they are the first numbers verl logs that need the whole chain to work — rollout (vLLM),
reward, old/ref log-probs and one Megatron optimizer step with MindSpeed's flash attention (`actor/pg_loss`
and `actor/grad_norm` come from the actor update). A NaN/inf there means the step ran but
the numerics are broken, which is a failure too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from doctor.launch import sources as S
from doctor.report import Finding, finding
from doctor.smoke.logparse import LogScanner, Value, is_finite
from doctor.smoke.runner import RunResult

REQUIRED_METRICS = ("actor/pg_loss", "actor/grad_norm")
# Shown per step when present.
SHOWN_METRICS = (
    "actor/pg_loss",
    "actor/grad_norm",
    "actor/entropy",
    "actor/lr",
    "critic/score/mean",
    "response_length/mean",
    "timing_s/gen",
    "timing_s/update_actor",
    "timing_s/step",
    "perf/throughput",
    "perf/max_memory_allocated_gb",
)
# The console metrics line (`step:N - key:value - ...`) is written by concat_dict_to_str.
SOURCE = "https://github.com/verl-project/verl/blob/v0.9.0/verl/utils/logger/aggregate_logger.py"
# main_ppo raises out of the Ray task on any trainer exception, so the process exits non-zero.


@dataclass
class Verdict:
    passed: bool
    findings: list[Finding]
    metrics: dict[int, dict[str, Value]]
    wall_seconds: float
    throughput: float | None
    log: str
    could_not_run: bool = False
    explained: list[Finding] = field(default_factory=list)

    def to_extra(self) -> dict[str, Any]:
        return {
            "verdict": "pass" if self.passed else ("could-not-run" if self.could_not_run else "fail"),
            "metrics": {str(k): v for k, v in sorted(self.metrics.items())},
            "wall_seconds": round(self.wall_seconds, 3),
            "throughput": self.throughput,
            "log": self.log,
        }


def judge(
    run: RunResult,
    scan: LogScanner,
    steps: int,
    *,
    explain: Callable[[str], list[Finding]] | None = None,
) -> Verdict:
    """The verdict for `steps` requested training steps (1-based step numbers 1..steps)."""
    log = str(run.log_path)
    if not run.started:
        return Verdict(False, [_could_not_start(run)], {}, run.wall_seconds, None, log, could_not_run=True)
    problems = _process_findings(run, scan, log) + _step_findings(scan, steps, log)
    passed = not any(f.severity.value == "error" for f in problems)
    explained = _explained(log, explain) if not passed and explain is not None else []
    metrics = {s: dict(v) for s, v in scan.steps.items()}
    throughput = _last_throughput(metrics)
    if passed:
        problems.append(_passed(steps, metrics, run.wall_seconds, throughput))
    return Verdict(passed, problems + explained, metrics, run.wall_seconds, throughput, log, explained=explained)


def _could_not_start(run: RunResult) -> Finding:
    return finding("smoke-could-not-start", "error", "python", "The trainer process could not be started",
                   detail=run.start_error or "", evidence={"argv0": run.argv[0] if run.argv else None},
                   fix="Pass the training environment's interpreter with --python PATH.")


def _process_findings(run: RunResult, scan: LogScanner, log: str) -> list[Finding]:
    """How the trainer process ended (interrupted, timed out, non-zero exit) and what it left behind."""
    out: list[Finding] = []
    last = list(scan.tail)[-5:]
    if run.interrupted:
        out.append(finding(
            "smoke-interrupted", "error", "verl", "The smoke run was interrupted (Ctrl-C); its processes were ended",
            evidence={"log": log, "ended_pids": len(run.ended_pids)},
            fix="Run `doctor smoke` again and let it finish (or raise --run-timeout)."))
    elif run.timed_out:
        out.append(finding(
            "smoke-timeout", "error", "verl",
            f"The smoke run did not finish within the time limit ({run.wall_seconds:.0f} s)",
            detail="Its process group and the Ray daemons of its own temp dir were ended.",
            evidence={"log": log, "wall_seconds": round(run.wall_seconds, 1), "last_lines": last},
            fix="Read the end of the log for where it stopped (a HCCL or NPU hang often shows no error); "
                "raise --run-timeout if the host is just slow."))
    elif run.exit_code != 0:
        out.append(finding(
            "smoke-exit-nonzero", "error", "verl", f"verl.trainer.main_ppo exited with code {run.exit_code}",
            evidence={"exit_code": run.exit_code, "log": log, "last_lines": last},
            fix="See the diagnosis below and the log.", source=S.VERL_MAIN_PPO))
    if run.survivors:
        out.append(finding(
            "smoke-orphan-processes", "warning", "ray", f"{len(run.survivors)} process(es) of this run would not exit",
            evidence={"pids": run.survivors},
            fix="End them by pid (`kill -9 PID`); they belong to this run's Ray temp dir only."))
    return out


def _step_findings(scan: LogScanner, steps: int, log: str) -> list[Finding]:
    """Every requested step printed a metrics line with finite values of the required metrics."""
    out: list[Finding] = []
    for step in range(1, steps + 1):
        m = scan.steps.get(step)
        if m is None:
            out.append(finding(
                "smoke-step-missing", "error", "verl", f"Training step {step} printed no metrics line",
                evidence={"step": step, "steps_seen": sorted(scan.steps), "log": log},
                fix="The run stopped before this step finished; see the log and the diagnosis.", source=SOURCE))
            continue
        for key in REQUIRED_METRICS:
            if key not in m:
                out.append(finding(
                    "smoke-metric-missing", "error", "verl", f"Step {step} printed no {key}",
                    evidence={"step": step, "metric": key, "keys": sorted(m)[:20]},
                    fix="Make sure trainer.logger includes console and the actor update ran.", source=SOURCE))
            elif not is_finite(m[key]):
                out.append(finding(
                    "smoke-metric-not-finite", "error", "mindspeed", f"Step {step}: {key} is {m[key]}",
                    detail="The step ran but produced NaN/inf: a numerics problem in the Megatron/MindSpeed "
                           "update (fused kernels, dtype) or in the rollout's log-probs.",
                    evidence={"step": step, "metric": key, "value": str(m[key])},
                    fix="Rerun with the same stack on a known-good model (--model DIR); if it persists, "
                        "report it with `doctor collect` output.", source=SOURCE))
    return out


def _explained(log: str, explain: Callable[[str], list[Finding]]) -> list[Finding]:
    """The failed run's log through the signature matcher; a matcher error never loses the verdict."""
    try:
        return list(explain(log))
    except Exception as e:  # noqa: BLE001 - the diagnosis is a bonus
        return [finding("smoke-explain-unavailable", "info", "verl",
                        "The log could not be run through the signature matcher", detail=str(e))]


def _last_throughput(metrics: dict[int, dict[str, Value]]) -> float | None:
    """perf/throughput of the last step that printed a finite one."""
    for s in sorted(metrics, reverse=True):
        x = metrics[s].get("perf/throughput")
        if isinstance(x, (int, float)) and is_finite(x):
            return float(x)
    return None


def _passed(steps: int, metrics: dict[int, dict[str, Value]], wall: float, throughput: float | None) -> Finding:
    return finding(
        "smoke-passed", "info", "verl", f"{steps} GRPO step(s) on megatron + MindSpeed with flash attention finished",
        evidence={"steps": steps,
                  **{f"step{s}.{k}": metrics[s][k] for s in range(1, steps + 1) for k in REQUIRED_METRICS},
                  "wall_seconds": round(wall, 1), "throughput": throughput},
        source=SOURCE)


def shown(metrics: dict[str, Value]) -> list[tuple[str, Value]]:
    """The metrics worth printing for a step, in a fixed order."""
    return [(k, metrics[k]) for k in SHOWN_METRICS if k in metrics]
