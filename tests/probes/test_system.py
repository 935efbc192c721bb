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
