"""checks.runner: how one check's outcome becomes its state."""

from __future__ import annotations

from doctor.checks.runner import Check, CheckContext, run_one, skip
from doctor.report import CheckStatus, finding
from doctor.snapshot.model import snapshot_from_dict


def _ctx() -> CheckContext:
    return CheckContext(snapshot=snapshot_from_dict({"schema": "doctor.snapshot/1"}))


def test_a_skip_before_any_finding_is_skipped_with_its_reason() -> None:
    def fn(ctx):
        skip("nothing to look at")
        yield  # pragma: no cover

    found, res = run_one(Check("t", "system", fn), _ctx())
    assert found == [] and res.status is CheckStatus.SKIP and res.reason == "nothing to look at"


def test_a_skip_after_a_finding_keeps_the_finding() -> None:
    """A check that reports, then finds the rest cannot be judged, must not lose what it reported."""
    def fn(ctx):
        yield finding("t-bad", "error", ("system",), "bad", fix="fix it")
        skip("the rest is unknown")

    found, res = run_one(Check("t", "system", fn), _ctx())
    assert [f.id for f in found] == ["t-bad"] and res.status is CheckStatus.of(found)
