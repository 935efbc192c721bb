"""The probe runner: probes run concurrently, a crashing or stuck probe leaves its part unknown and is
recorded, and the other probes' facts still arrive."""

from __future__ import annotations

import threading
import time

from doctor.probes.host import CollectOptions, ProbeOutcome, _run_all, assemble


def test_crash_and_hang_are_recorded_not_raised() -> None:
    release = threading.Event()

    def good(opts: CollectOptions) -> ProbeOutcome:
        return ProbeOutcome({"env": {"HCCL_BUFFSIZE": "200"}})

    def crash(opts: CollectOptions) -> ProbeOutcome:
        raise RuntimeError("boom")

    def stuck(opts: CollectOptions) -> ProbeOutcome:  # a read on a dead NFS mount
        release.wait(30)
        return ProbeOutcome({"host": {}})

    t0 = time.monotonic()
    out = _run_all(CollectOptions(), {"good": (good, 5.0), "crash": (crash, 5.0), "stuck": (stuck, 0.3)})
    release.set()
    assert time.monotonic() - t0 < 10
    assert out["good"][0].part == {"env": {"HCCL_BUFFSIZE": "200"}} and out["good"][1].status == "ok"
    assert out["crash"][0] is None and out["crash"][1].status == "error"
    assert out["crash"][1].errors == ["probe crashed: RuntimeError: boom"]
    assert out["stuck"][0] is None and out["stuck"][1].status == "timeout"


def test_probes_run_concurrently() -> None:
    barrier = threading.Barrier(3, timeout=5)

    def meet(opts: CollectOptions) -> ProbeOutcome:
        barrier.wait()  # only passes if all three run at the same time
        return ProbeOutcome({})

    out = _run_all(CollectOptions(), {n: (meet, 10.0) for n in ("a", "b", "c")})
    assert {s.status for _, s in out.values()} == {"ok"}


def test_assemble_merges_the_shared_ascend_section() -> None:
    data = assemble([{"ascend": {"toolkit": None}}, {"ascend": {"pci": []}}, {"host": {"cwd": "/"}}])
    assert data == {"ascend": {"toolkit": None, "pci": []}, "host": {"cwd": "/"}}
