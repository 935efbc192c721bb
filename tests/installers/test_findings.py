"""installers.findings: the post-install check judges like `doctor check` (known deviations honoured), and
--no-host-check keeps host findings out of the verdict."""

from __future__ import annotations

from doctor.installers import findings as fd
from doctor.report import Report, finding


def test_post_install_check_honours_the_profiles_known_deviations(monkeypatch, profile) -> None:
    """Issue 15 item 7: vllm-ascend 0.23.0 pins torch-npu 2.10.0.post4 and verl 0.9.0 installs post2 on purpose; the
    stand-alone check says so as info, and so must the check after an install (it used to warn)."""
    from doctor.snapshot.model import snapshot_from_dict
    from tests.cli.test_install import machine

    p = profile("verl-0.9.0-cann9.0.0-a2")
    d = machine(p, "aarch64", installed=True)
    d["packages"]["vllm-ascend"]["version"] = "0.23.0"
    monkeypatch.setattr("doctor.probes.collect_snapshot", lambda **_kw: snapshot_from_dict(d))
    report = Report(command="install")
    got = {f.id: f for f in fd.post_check("/", "/venv/bin/python", p, report)}
    for fid in ("vllm-ascend-torch-npu-pairing", "vllm-ascend-cann-pairing"):
        assert got[fid].severity.name == "INFO" and "known deviation" in got[fid].title, fid
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
