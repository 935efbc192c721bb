"""`doctor diff A B` on real snapshot files."""

import json

from click.testing import CliRunner

from doctor.cli import cli
from doctor.snapshot.diff import diff_snapshots
from doctor.snapshot.model import snapshot_from_dict
from tests.stacks import healthy


def _files(tmp_path, a, b):
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    return str(pa), str(pb)


def test_identical_snapshots_exit_0(tmp_path):
    r = CliRunner().invoke(cli, ["diff", *_files(tmp_path, healthy(), healthy())])
    assert r.exit_code == 0 and "no differences" in r.stdout


def test_changes_are_listed_by_key(tmp_path):
    b = healthy()
    b["packages"]["torch-npu"]["version"] = "2.8.0.post2"
    b["env"]["HCCL_CONNECT_TIMEOUT"] = "1800"
    del b["env"]["ATB_HOME_PATH"]
    b["ascend"]["toolkit"]["version"] = "8.5.1"
    b["network"]["listening_ports"] = [22, 6379, 60000]  # volatile: hidden by default
    r = CliRunner().invoke(cli, ["diff", *_files(tmp_path, healthy(), b)])
    assert r.exit_code == 1
    out = r.stdout
    assert "~ packages.torch-npu" in out and "2.8.0 -> 2.8.0.post2" in out
    assert "+ env.HCCL_CONNECT_TIMEOUT" in out and "- env.ATB_HOME_PATH" in out
    assert "ascend.toolkit.version" in out and "listening_ports" not in out
    r = CliRunner().invoke(cli, ["--json", "diff", "--all", *_files(tmp_path, healthy(), b)])
    keys = {c["key"] for c in json.loads(r.stdout)["changes"]}
    assert "network.listening_ports" in keys and "env.ATB_HOME_PATH" in keys


def test_unknown_vs_absent_are_different():
    a = {"schema": "doctor.snapshot/1", "ascend": {"nnal": None}}
    b = {"schema": "doctor.snapshot/1", "ascend": {}}
    changes = diff_snapshots(snapshot_from_dict(a), snapshot_from_dict(b))
    assert changes == [("ascend.nnal", None, "(not probed)")]


def test_bad_file_exits_2(tmp_path):
    pa, _ = _files(tmp_path, healthy(), healthy())
    r = CliRunner().invoke(cli, ["diff", pa, str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and "missing.json" in r.stderr


def test_free_disk_space_is_volatile_but_a_changed_limit_is_not() -> None:
    from doctor.snapshot.diff import diff_snapshots
    from doctor.snapshot.model import snapshot_from_dict

    def snap(free: float, nofile: int) -> object:
        return snapshot_from_dict({"schema": "doctor.snapshot/1", "host": {
            "limits": {"nofile_soft": nofile, "nofile_hard": 65536},
            "disks": [{"path": "/tmp", "paths": ["/tmp"], "roles": ["ray_temp", "tmp"], "total_gb": 100.0,
                       "free_gb": free, "used_fraction": round(1 - free / 100, 4)}]}})

    assert diff_snapshots(snap(40.0, 65536), snap(3.0, 65536)) == []
    assert [k for k, _, _ in diff_snapshots(snap(40.0, 65536), snap(3.0, 65536), volatile=True)] == [
        "host.disks[/tmp].free_gb", "host.disks[/tmp].used_fraction"]
    assert diff_snapshots(snap(40.0, 1024), snap(40.0, 65536)) == [("host.limits.nofile_soft", 1024, 65536)]
