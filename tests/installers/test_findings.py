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


def test_an_offline_installs_fixes_install_from_the_wheelhouse(tmp_path) -> None:
    """After `install --wheelhouse H --offline` on an air-gapped host, the post-install check's fixes were online pip
    lines (`pip install 'pillow'`, the profile's --extra-index-url): pip waits out its retries on the unreachable
    index and fails. They now install from H's wheels with --no-index, and say what to do for a package H lacks."""
    import os
    import subprocess

    from tests.installers.test_rollback_guard import bundled_pip_venv
    from tests.installers.wheelkit import make_wheel

    wheels = tmp_path / "house" / "wheels"
    make_wheel(wheels, "pillow", "11.0.0")
    py = bundled_pip_venv(tmp_path / "venv")
    f = finding("package-imports-undeclared-missing", "error", "verl", "verl imports PIL, pillow is not installed",
                fix="Install pillow into the same interpreter.",
                commands=(f"{py} -m pip install 'pillow' --extra-index-url https://download.pytorch.org/whl/cpu "
                          "--trusted-host download.pytorch.org", "doctor check"))
    [got] = fd.offline_fixes([f], str(wheels))
    assert got.fix.commands[1] == "doctor check" and "downloaded on the connected host" in got.fix.text
    assert "download.pytorch.org" not in got.fix.commands[0]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull,
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "PIP_RETRIES": "0"}
    cp = subprocess.run(got.fix.commands[0], shell=True, env=env, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0 and "Successfully installed pillow-11.0.0" in cp.stdout, cp.stdout + cp.stderr


def test_a_failed_offline_install_names_the_wheelhouse_not_the_network() -> None:
    """An --offline install asks no index: a failed step there is a wheel the wheelhouse lacks or a damaged one, and
    the fix says so instead of 'network, index'."""
    from doctor.installers import execute as ex
    from doctor.installers.plan import INSTALL, Step

    step = Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",))
    out = ex.Outcome([ex.StepResult(step.id, step.kind, step.title, ex.FAILED, detail="pip exited with 1")], ok=False,
                     changed=True, restored={"ok": True}, error="torch-stack: pip exited with 1")
    online = fd.outcome_findings(out, "/log", "/t/bin/python")[0]
    assert "network, index" in str(online.fix)
    offline = fd.outcome_findings(out, "/log", "/t/bin/python", "/media/wh")[0]
    assert offline.id == "install-step-failed" and "network" not in str(offline.fix)
    assert "a wheel /media/wh lacks or that is damaged" in str(offline.fix) and "--download-only" in str(offline.fix)
