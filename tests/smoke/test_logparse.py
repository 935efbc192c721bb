"""verl console metrics lines as they really print (docs/verl-mindspeed.md, "Log lines")."""

from __future__ import annotations

import math

from doctor.smoke.logparse import LogScanner, is_finite, parse_step_line, parse_value

# numpy >= 2 under verl >= 0.5: pprint.pformat of numpy scalars, inside the Ray TaskRunner actor.
NUMPY2 = (
    "(TaskRunner pid=20931) step:1 - global_seqlen/min:np.int64(5566) - global_seqlen/max:np.int64(6210) - "
    "actor/entropy:np.float64(0.5231) - actor/pg_loss:np.float64(-0.0016540750698186457) - "
    "actor/pg_clipfrac:np.float64(0.0) - actor/ppo_kl:np.float64(0.0) - actor/grad_norm:np.float64(0.3174) - "
    "perf/mfu/actor:np.float64(0.05) - actor/lr:np.float64(1e-06) - "
    "val-core/openai/gsm8k/reward/mean@1:np.float64(0.25) - training/global_step:1 - training/epoch:0 - "
    "critic/score/mean:np.float64(0.0625) - timing_s/step:np.float64(84.3) - perf/throughput:np.float64(731.2)"
)
# numpy < 2: plain reprs; an ANSI-coloured prefix with the node ip as Ray prints it on multi-node clusters.
NUMPY1 = (
    "\x1b[36m(TaskRunner pid=7, ip=10.0.0.2)\x1b[0m step:2 - actor/pg_loss:0.0012345678 - "
    "actor/grad_norm:inf - response_length/clip_ratio:0.0 - training/global_step:2 - balance:True"
)


def test_numpy2_line_with_ray_prefix() -> None:
    s = parse_step_line(NUMPY2)
    assert s is not None and s.step == 1 and s.actor == "TaskRunner" and s.pid == 20931
    assert s.metrics["actor/pg_loss"] == -0.0016540750698186457
    assert s.metrics["global_seqlen/min"] == 5566 and isinstance(s.metrics["global_seqlen/min"], int)
    assert s.metrics["val-core/openai/gsm8k/reward/mean@1"] == 0.25
    assert s.metrics["actor/lr"] == 1e-06
    assert s.metrics["perf/throughput"] == 731.2


def test_numpy1_line_ansi_ip_prefix_inf_and_bool() -> None:
    s = parse_step_line(NUMPY1)
    assert s is not None and s.step == 2 and s.pid == 7
    assert s.metrics["actor/pg_loss"] == 0.0012345678
    assert math.isinf(s.metrics["actor/grad_norm"]) and not is_finite(s.metrics["actor/grad_norm"])
    assert s.metrics["balance"] is True


def test_unprefixed_and_old_format_lines() -> None:
    s = parse_step_line("step:3 - actor/pg_loss:-0.004 - actor/grad_norm:0.512\n")
    assert s is not None and s.step == 3 and s.actor is None and s.metrics["actor/grad_norm"] == 0.512
    assert parse_step_line("step:0") is not None  # a step-0 line may carry only validation metrics


def test_non_step_lines_are_ignored() -> None:
    for line in (
        "(TaskRunner pid=1) Training Progress:   0%|          | 0/1",
        "(WorkerDict pid=2) INFO step: 1 started",
        "(TaskRunner pid=1) training/global_step:1",
        "step:abc - x:1",
        "Error executing job with overrides: ['step:1']",
        "",
    ):
        assert parse_step_line(line) is None, line


def test_values() -> None:
    assert parse_value("np.float64(nan)") != parse_value("np.float64(nan)")  # NaN
    assert math.isnan(parse_value("nan"))  # type: ignore[arg-type]
    assert parse_value("np.int64(-5)") == -5
    assert parse_value("np.float32(1.5)") == 1.5
    assert parse_value("np.True_") is True
    assert parse_value("tensor(1.0)") is None
    assert parse_value("-1.2e-05") == -1.2e-05
    assert not is_finite(True) and not is_finite(None) and is_finite(0)


def test_scanner_merges_steps_reads_total_and_keeps_a_bounded_tail() -> None:
    scanner = LogScanner(tail_lines=50)
    scanner.feed("(TaskRunner pid=3) Total training steps: 2")
    for i in range(10_000):
        scanner.feed(f"(WorkerDict pid=4) noise {i}")
    scanner.feed(NUMPY2)
    scanner.feed("(TaskRunner pid=3) step:1 - extra/metric:np.float64(2.0)")
    assert scanner.total_training_steps == 2
    assert scanner.steps[1]["actor/grad_norm"] == 0.3174 and scanner.steps[1]["extra/metric"] == 2.0
    assert len(scanner.tail) == 50 and scanner.lines == 10_003
