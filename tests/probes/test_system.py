"""Host facts: os-release through the root, container markers, glibc, schema types."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor.probes._fs import RootFS
from doctor.probes.system import container_evidence, parse_os_release, probe_system
from tests.fakes import make_ascend_root, write


def test_fake_root_host(tmp_path: Path) -> None:
    root = make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout")
    write(root / ".dockerenv", "")
    host, errors = probe_system(RootFS(str(root)), {}, "/workspace")
    assert host["os"] == "Ubuntu 22.04.4 LTS"
    assert host["cwd"] == "/workspace"
    assert host["in_container"] is True and host["container_evidence"] == ["/.dockerenv"]
    assert isinstance(host["cpu_count"], int) and host["cpu_count"] > 0
    assert host["memory_gb"] > 0
    assert host["libc"].startswith("glibc ")


def test_container_signs(tmp_path: Path) -> None:
    fs = RootFS(str(tmp_path))
    assert container_evidence(fs, {}) == []
    write(tmp_path / "run/.containerenv", "")
    write(tmp_path / "proc/1/cgroup", "0::/kubepods/besteffort/pod1/abc\n")
    assert container_evidence(fs, {"container": "podman"}) == ["/run/.containerenv", "container=podman", "/proc/1/cgroup"]


def test_bare_root_without_shm(tmp_path: Path) -> None:
    host, errors = probe_system(RootFS(str(tmp_path)), {}, "/")
    assert host["shm_gb"] is None and host["in_container"] is False
    assert any("/dev/shm" in e for e in errors)


def test_os_release() -> None:
    assert parse_os_release('NAME="openEuler"\nVERSION="22.03 (LTS-SP4)"\n') == "openEuler 22.03 (LTS-SP4)"
    assert parse_os_release(None) is None


@given(st.text())
def test_os_release_never_raises(s: str) -> None:
    v = parse_os_release(s)
    assert v is None or isinstance(v, str)


def test_build_tools_follow_the_given_path(tmp_path):
    from doctor.probes.system import build_tools

    (tmp_path / "ninja").write_text("#!/bin/sh\n")
    (tmp_path / "ninja").chmod(0o755)
    tools = build_tools({"PATH": str(tmp_path)})
    assert tools == {"ninja": str(tmp_path / "ninja"), "g++": None}


def test_stale_torch_extensions_lock_found_fresh_one_ignored(tmp_path):
    import os
    import time

    from doctor.probes._fs import RootFS
    from doctor.probes.system import stale_extension_locks

    ext = tmp_path / "home" / ".cache" / "torch_extensions" / "py311_cpu"
    (ext / "npu_rotary").mkdir(parents=True)
    (ext / "npu_swiglu").mkdir(parents=True)
    stale, fresh = ext / "npu_rotary" / "lock", ext / "npu_swiglu" / "lock"
    stale.write_text("")
    fresh.write_text("")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    fs = RootFS(str(tmp_path))
    assert stale_extension_locks(fs, {"HOME": "/home"}) == ["/home/.cache/torch_extensions/py311_cpu/npu_rotary/lock"]
    assert stale_extension_locks(fs, {"HOME": "/nohome"}) is None


def test_jit_facts_reach_the_check(tmp_path):
    """End to end: a stale lock under the root prefix becomes the torch-extensions-stale-lock warning."""
    import os
    import time

    from doctor.checks.runner import run_checks
    from doctor.probes._fs import RootFS
    from doctor.probes.system import probe_system
    from doctor.snapshot.model import snapshot_from_dict

    lock = tmp_path / "h" / ".cache" / "torch_extensions" / "py311_cpu" / "op" / "lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    os.utime(lock, (time.time() - 7200,) * 2)
    host, _ = probe_system(RootFS(str(tmp_path)), {"HOME": "/h", "PATH": str(tmp_path)}, "/")
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "complete": True, "host": host,
                               "packages": {"mindspeed": {"version": "0.12.1"}}})
    findings, _ = run_checks([(None, snap, None)], only=["devices"])
    ids = {f.id for f in findings}
    assert {"torch-extensions-stale-lock", "mindspeed-jit-tools-missing"} <= ids
