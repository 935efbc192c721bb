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


# -- resource limits and free disk space ------------------------------------------------------------------------


def test_limits_from_getrlimit_and_the_cgroup_pids_file(tmp_path: Path, monkeypatch) -> None:
    import resource

    from doctor.probes.system import process_limits

    limits = {resource.RLIMIT_NOFILE: (1024, 524288), resource.RLIMIT_NPROC: (resource.RLIM_INFINITY,
                                                                              resource.RLIM_INFINITY)}
    monkeypatch.setattr(resource, "getrlimit", lambda res: limits[res])
    write(tmp_path / "sys/fs/cgroup/pids.max", "4096\n")  # cgroup v2 (Docker --pids-limit 4096)
    assert process_limits(RootFS(str(tmp_path))) == {"nofile_soft": 1024, "nofile_hard": 524288, "nproc_soft": None,
                                                     "nproc_hard": None, "pids_max": 4096}
    (tmp_path / "sys/fs/cgroup/pids.max").unlink()
    write(tmp_path / "sys/fs/cgroup/pids/pids.max", "max\n")  # cgroup v1, no limit: null = unlimited
    assert process_limits(RootFS(str(tmp_path)))["pids_max"] is None
    (tmp_path / "sys/fs/cgroup/pids/pids.max").unlink()
    assert "pids_max" not in process_limits(RootFS(str(tmp_path)))  # no file: unknown, not unlimited


def test_pids_max_parser() -> None:
    from doctor.probes.system import parse_pids_max

    assert parse_pids_max("max\n") == (True, None) and parse_pids_max("32768") == (True, 32768)
    assert parse_pids_max("") == (False, None) and parse_pids_max(None) == (False, None)
    assert parse_pids_max("-1") == (False, None) and parse_pids_max("٣") == (False, None)


@given(st.text())
def test_pids_max_parser_never_raises(s: str) -> None:
    from doctor.probes.system import parse_pids_max

    ok, v = parse_pids_max(s)
    assert (v is None or (ok and v >= 0)) and isinstance(ok, bool)


def test_disks_one_entry_per_filesystem_with_rays_temp_dir(tmp_path: Path, monkeypatch) -> None:
    import os
    import shutil
    from collections import namedtuple

    from doctor.probes.system import disk_usage

    for d in ("tmp/ray", "data/ray", "workspace"):
        (tmp_path / d).mkdir(parents=True)
    devs = {str(tmp_path / "tmp/ray"): 1, str(tmp_path / "tmp"): 1, str(tmp_path / "workspace"): 2,
            str(tmp_path / "data/ray"): 3}
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: (os.stat_result((0,) * 2 + (devs[str(p)],) + (0,) * 7)
                                                         if str(p) in devs else real_stat(p, *a, **k)))
    usage = namedtuple("usage", "total used free")
    sizes = {1: usage(100 * 2**30, 96 * 2**30, 4 * 2**30), 2: usage(10 * 2**30, 0, 10 * 2**30),
             3: usage(500 * 2**30, 0, 400 * 2**30)}
    monkeypatch.setattr(shutil, "disk_usage", lambda p: sizes[devs[str(p)]])
    fs = RootFS(str(tmp_path))
    assert disk_usage(fs, {}, "/workspace") == [
        {"path": "/tmp/ray", "paths": ["/tmp/ray", "/tmp"], "roles": ["ray_temp", "tmp"], "total_gb": 100.0,
         "free_gb": 4.0, "used_fraction": 0.96},
        {"path": "/workspace", "paths": ["/workspace"], "roles": ["cwd"], "total_gb": 10.0, "free_gb": 10.0,
         "used_fraction": 0.0}]
    # RAY_TMPDIR moves Ray's temp dir (Ray 2.60's get_default_system_temp_dir); a cwd that does not exist is left out
    disks = disk_usage(fs, {"RAY_TMPDIR": "/data"}, "/gone")
    assert [(d["path"], d["roles"], d["used_fraction"]) for d in disks] == [("/data/ray", ["ray_temp"], 0.2),
                                                                           ("/tmp", ["tmp"], 0.96)]


def test_the_live_probe_records_limits_and_disks(tmp_path: Path) -> None:
    import os

    host, _ = probe_system(RootFS("/"), {}, os.getcwd())
    assert isinstance(host["limits"]["nofile_soft"], (int, type(None))) and "nofile_hard" in host["limits"]
    assert host["disks"] and all(0 <= d["used_fraction"] <= 1 and d["total_gb"] >= d["free_gb"] for d in host["disks"])
    assert any("ray_temp" in d["roles"] for d in host["disks"])


# Run as uid/gid 65534 after the imports: root may write any directory, so only a real non-root process gets the
# kernel's refusal. Prints the probe's fact as JSON.
_RAY_TEMP_AS = """
import json, os, stat, sys
from doctor.probes._fs import RootFS
from doctor.probes.system import ray_temp_access
if sys.argv[1] != "0":
    os.setgroups([]); os.setegid(int(sys.argv[1])); os.seteuid(int(sys.argv[1]))
print(json.dumps(ray_temp_access(RootFS("/"), {"TMPDIR": sys.argv[2]})))
"""


def test_ray_temp_access_is_the_kernels_answer_for_the_collecting_user() -> None:
    """Another user's Ray temp dir (mode 0755) is refused to uid 65534 and open to root; a TMPDIR that does not
    exist is judged by the nearest directory above it, where Ray's os.makedirs would have to create it."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="doctor-raytmp-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        (base / "ray").mkdir(mode=0o755)  # made by root, as `ray start` run by another user leaves it
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

        def run(uid: int, tmpdir: Path) -> dict:
            out = subprocess.run([sys.executable, "-c", _RAY_TEMP_AS, str(uid), str(tmpdir)], env=env, cwd="/",
                                 capture_output=True, text=True, check=True).stdout
            return json.loads(out)

        nobody = run(65534, base)
        assert nobody == {"path": f"{base}/ray", "checked": f"{base}/ray", "uid": 65534, "owner_uid": 0,
                          "mode": "0755", "writable": False}
        assert run(0, base)["writable"] is True
        missing = run(65534, base / "gone" / "tmp")  # TMPDIR pointing at nothing: base is where makedirs starts
        assert missing["path"] == f"{base}/gone/tmp/ray" and missing["checked"] == str(base)
        assert missing["writable"] is False
        os.chmod(base / "ray", 0o777)  # what Ray's try_to_create_directory leaves: every user may use it
        assert run(65534, base)["writable"] is True
    finally:
        shutil.rmtree(base)


def test_ray_temp_access_is_not_judged_under_a_root_prefix(tmp_path: Path) -> None:
    from doctor.probes.system import ray_temp_access

    (tmp_path / "tmp").mkdir()
    assert ray_temp_access(RootFS(str(tmp_path)), {}) is None
    host, _ = probe_system(RootFS(str(tmp_path)), {}, "/")
    assert "ray_temp" not in host
