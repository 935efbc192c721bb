"""installers.findings: the post-install check judges like `doctor check` (known deviations honoured), and
--no-host-check keeps host findings out of the verdict."""

from __future__ import annotations

from doctor.installers import findings as fd
from doctor.report import Report, finding


def test_post_install_check_honours_the_profiles_known_deviations(monkeypatch, profile) -> None:
    """Issue 15 item 7: the stand-alone check reports a warning the profile documents as a known deviation as info;
    the check after an install must too (it ran the checks without the deviations and warned)."""
    import dataclasses

    from doctor.knowledge.profiles import Deviation
    from doctor.snapshot.model import snapshot_from_dict
    from tests.cli.test_install import machine

    base = profile("verl-0.9.0-cann9.0.0-a2")
    d = machine(base, "aarch64", installed=True)
    monkeypatch.setattr("doctor.probes.collect_snapshot", lambda **_kw: snapshot_from_dict(d))
    warned = [f for f in fd.post_check("/", "/venv/bin/python", base, Report(command="install"))
              if f.severity.name == "WARNING"]
    assert warned, "the snapshot must raise a warning to document"
    dev = Deviation(finding=warned[0].id, reason="documented by this stack", source="https://example.invalid/doc")
    p = dataclasses.replace(base, deviations=(*base.deviations, dev))
    report = Report(command="install")
    got = {f.id: f for f in fd.post_check("/", "/venv/bin/python", p, report)}
    assert got[warned[0].id].severity.name == "INFO" and "known deviation" in got[warned[0].id].title
    assert report.checks


def test_no_host_check_moves_host_findings_out_of_the_verdict() -> None:
    r = Report(command="install", findings=[
        finding("cann-missing", "error", ("cann",), "no CANN", source="x"),
        finding("npu-missing", "error", ("npu", "driver"), "no NPU", source="x"),
        finding("torch-npu-torch-mismatch", "error", ("torch-npu", "torch"), "mismatch", source="x")])
    fd.split_host(r, no_host_check=False)
    assert len(r.findings) == 3
    fd.split_host(r, no_host_check=True)
    assert [f.id for f in r.findings] == ["torch-npu-torch-mismatch"]
    assert [f["id"] for f in r.extra["host_findings"]] == ["cann-missing", "npu-missing"]
