"""Fault injection across commands: the doctor reports, never hangs, never leaves a partial file.

(Install-side faults — git hanging, pip killed mid-install — live with the installer tests.)"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import psutil

from tests.fakes import fake_npu_smi, make_ascend_root

DOCTOR = [sys.executable, "-m", "doctor"]


def _run(args, *, env=None, preexec=None, timeout=60, cwd=None):
    return subprocess.run([*DOCTOR, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, preexec_fn=preexec, cwd=cwd)


def test_collect_into_a_full_destination_leaves_nothing(tmp_path):
    out = tmp_path / "snap.json"

    def small_fsize():  # the kernel refuses writes past 512 bytes: a full disk, as root
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    r = _run(["collect", "-o", str(out)], preexec=small_fsize)
    assert r.returncode == 2, r.stderr
    assert "cannot write the snapshot" in r.stderr and str(out) in r.stderr
    assert list(tmp_path.iterdir()) == []  # no snap.json, no .doctor-* temp file


def test_collect_into_a_path_under_a_regular_file(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("keep me")
    r = _run(["collect", "-o", str(blocker / "snap.json")])
    assert r.returncode == 2 and "cannot write the snapshot" in r.stderr
    assert blocker.read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["not-a-dir"]


def test_junit_into_impossible_path_is_exit_2_not_a_traceback(tmp_path):
    blocker = tmp_path / "f"
    blocker.write_text("")
    r = _run(["check", "--junit", str(blocker / "x.xml")])
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_hung_npu_smi_costs_its_timeout_and_leaves_no_process(tmp_path):
    root = make_ascend_root(tmp_path / "root", "a2-cann8.3rc1-old-layout")
    bin_dir = tmp_path / "bin"
    fake_npu_smi(bin_dir, "hang")
    t0 = time.monotonic()
    r = _run(["--json", "check", "--root", str(root), "--npu-smi-timeout", "1.5"],
             env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    elapsed = time.monotonic() - t0
    report = json.loads(r.stdout)
    assert r.returncode == 1
    assert "npu-smi-failed" in {f["id"] for f in report["findings"]}
    assert elapsed < 30  # bounded by the timeout plus start-up, never the 600 s the fake sleeps
    for pidfile in ("npu-smi.pid", "child.pid"):
        pid = int((bin_dir / pidfile).read_text())
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_npu_smi_printing_half_a_table(tmp_path, shared_dir):
    full = (shared_dir / "fixtures" / "npu-smi" / "vllm-ascend-960.txt").read_text()
    half = full[: len(full) // 2]
    bin_dir = tmp_path / "bin"
    fake_npu_smi(bin_dir, half)
    r = _run(["collect"], env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert r.returncode == 0, r.stderr
    snap = json.loads(r.stdout)
    assert snap["ascend"]["npu_smi"]["status"] in ("ok", "error")
    for d in snap["ascend"].get("devices", []):
        assert isinstance(d["id"], int)


def test_npu_smi_exiting_non_zero_is_a_finding(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_npu_smi(bin_dir, "exit1")
    r = _run(["--json", "check"], env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    report = json.loads(r.stdout)
    failed = [f for f in report["findings"] if f["id"] == "npu-smi-failed"]
    assert failed and "8005" in json.dumps(failed[0])


def test_target_python_that_does_not_exist():
    r = _run(["collect", "--python", "/nonexistent/bin/python3"])
    assert r.returncode == 2 and "/nonexistent/bin/python3" in r.stderr


def test_target_python_2_is_named_as_such(tmp_path):
    stub = tmp_path / "python2"
    stub.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-V" ] || [ "$1" = "--version" ]; then echo "Python 2.7.18" >&2; exit 0; fi\n'
        "cat >/dev/null\n"
        'echo "SyntaxError: invalid syntax" >&2\nexit 1\n'
    )
    stub.chmod(0o755)
    # an interpreter the probe cannot run in is exit 2 (the doctor could not do its job), in check and collect
    for cmd in ("check", "collect"):
        r = _run(["--json", cmd, "--python", str(stub)])
        report = json.loads(r.stdout)
        assert r.returncode == 2 and [f["id"] for f in report["findings"]] == ["usage-error"]
        assert "Python 2.7.18" in report["findings"][0]["title"] and "--python" in r.stderr
