"""Verdict rules: every requested step with finite pg_loss and grad_norm, and exit 0."""

from __future__ import annotations

from pathlib import Path

from doctor.report import finding
from doctor.smoke.logparse import LogScanner
from doctor.smoke.runner import RunResult
from doctor.smoke.verdict import judge

GOOD = ("(TaskRunner pid=9) step:{s} - actor/pg_loss:np.float64(-0.01) - actor/grad_norm:np.float64(0.5) - "
        "perf/throughput:np.float64(100.5) - timing_s/step:np.float64(3.0)")


def _scan(*lines: str) -> LogScanner:
    return LogScanner().feed_all(lines)


def _run(code: int | None = 0, **kw) -> RunResult:
    return RunResult(argv=["python3"], log_path=Path("/tmp/x.log"), exit_code=code, started=True, wall_seconds=42.0,
                     **kw)


def ids(v) -> list[str]:
    return [f.id for f in v.findings]


def test_pass_reports_metrics_throughput_and_wall_time() -> None:
    v = judge(_run(), _scan(GOOD.format(s=1), GOOD.format(s=2)), steps=2)
    assert v.passed and ids(v) == ["smoke-passed"]
    assert v.metrics[2]["actor/grad_norm"] == 0.5 and v.throughput == 100.5
    extra = v.to_extra()
    assert extra["verdict"] == "pass" and extra["wall_seconds"] == 42.0 and extra["log"] == "/tmp/x.log"


def test_missing_second_step_fails() -> None:
    v = judge(_run(), _scan(GOOD.format(s=1)), steps=2)
    assert not v.passed and ids(v) == ["smoke-step-missing"]
    assert v.findings[0].evidence["step"] == 2


def test_nan_and_missing_metric_fail() -> None:
    nan = "(TaskRunner pid=9) step:1 - actor/pg_loss:np.float64(nan) - actor/entropy:np.float64(1.0)"
    v = judge(_run(), _scan(nan), steps=1)
    assert sorted(ids(v)) == ["smoke-metric-missing", "smoke-metric-not-finite"]


def test_nonzero_exit_fails_even_with_good_steps_and_is_explained() -> None:
    seen = []

    def explain(path: str):
        seen.append(path)
        return [finding("cann-libhccl-missing", "error", "cann", "libhccl missing", evidence={"line": 1},
                        fix="source set_env.sh")]

    v = judge(_run(1), _scan(GOOD.format(s=1)), steps=1, explain=explain)
    assert not v.passed and ids(v) == ["smoke-exit-nonzero", "cann-libhccl-missing"]
    assert seen == ["/tmp/x.log"] and v.explained[0].id == "cann-libhccl-missing"


def test_timeout_interrupt_not_started_and_orphans() -> None:
    assert "smoke-timeout" in ids(judge(_run(-15, timed_out=True), _scan(), 1))
    assert "smoke-interrupted" in ids(judge(_run(-15, interrupted=True), _scan(), 1))
    ns = judge(RunResult(argv=["/x/python"], log_path=Path("/l"), start_error="no such file"), _scan(), 1)
    assert ns.could_not_run and ids(ns) == ["smoke-could-not-start"]
    orphan = judge(_run(survivors=[123]), _scan(GOOD.format(s=1)), 1)
    assert orphan.passed and "smoke-orphan-processes" in ids(orphan)


def test_a_broken_explainer_never_loses_the_verdict() -> None:
    def boom(path: str):
        raise RuntimeError("db broken")

    v = judge(_run(1), _scan(), 1, explain=boom)
    assert not v.passed and "smoke-explain-unavailable" in ids(v)
