"""A verl run stopped from outside: Ray's processes print `*** SIGTERM received at time=… on cpu N ***` (the
failure signal handler Ray's logging installs) and nothing else says why the job ended.

stopped_runs/ppo_waiting_then_sigterm.log is a real run, kept as it wrote it (stdout+stderr): a python3.11 venv with
torch 2.13.0 (CPU), verl 0.9.1 and its run set (TransferQueue, fastapi, uvicorn, cachetools, ...), ray 2.60.0;
`timeout 500 python -m verl.trainer.main_ppo data.train_files=/tmp/h120/nonexistent/train.parquet ...
trainer.device=cpu ray_kwargs.ray_init.num_cpus=2 algorithm.adv_estimator=grpo critic.enable=False` (micro batch
sizes 2) on a 2-core host. The TaskRunner printed its config at 23:30 and then waited; `timeout` sent SIGTERM at
23:38:16. `doctor explain` said "warnings", three of them about notices the run went on after, and nothing about
the job having been stopped."""

from __future__ import annotations

from pathlib import Path

from doctor.explain.stream import explain_lines, explain_path
from doctor.report import Severity

HERE = Path(__file__).parent / "verl_runs"  # verl 0.9.1 runs that failed, each with its expected first finding
LOG = Path(__file__).parent / "stopped_runs" / "ppo_waiting_then_sigterm.log"


def test_a_run_stopped_by_sigterm_says_so():
    found, _ = explain_path(str(LOG))
    [f] = [f for f in found if f.id == "process-terminated"]
    assert f.severity is Severity.WARNING
    assert "SIGTERM received at time=1796600296" in LOG.read_text().splitlines()[f.evidence["line"] - 1]
    assert not [g for g in found if g.severity is Severity.ERROR]


def test_a_failure_above_the_signal_stays_first():
    # Ray ends the workers with SIGTERM after the driver failed: the failure is the cause, the signal a knock-on
    lines = (HERE / "ppo_batch_not_divisible.log").read_text().splitlines()
    tail = LOG.read_text().splitlines()[-6:]
    found = explain_lines(lines + tail)
    ids = [f.id for f in found]
    assert found[0].severity is Severity.ERROR and found[0].id != "process-terminated"
    assert "process-terminated" in ids
