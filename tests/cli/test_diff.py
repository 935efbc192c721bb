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


def _eight_npus_unknown():
    b = healthy()
    for dev in b["ascend"]["devices"]:
        dev["health"] = "unknown"
        dev["hbm_used_mb"] = 0  # volatile
    b["packages"]["torch-npu"]["version"] = "2.8.0.post2"
    return b


def test_a_change_repeated_on_every_npu_is_one_line_and_volatile_facts_are_counted_not_shown(tmp_path):
    files = _files(tmp_path, healthy(), _eight_npus_unknown())
    r = CliRunner().invoke(cli, ["diff", *files])
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    grouped = [ln for ln in lines if "ascend.devices[0-7].health" in ln]
    assert len(grouped) == 1 and "OK -> unknown" in grouped[0] and "(8 NPUs)" in grouped[0]
    assert "ascend.devices[3].health" not in r.stdout and "hbm_used_mb" not in r.stdout
    # packages come before the Ascend facts; the count still counts every key, and says what is hidden
    assert r.stdout.index("packages.torch-npu") < r.stdout.index("ascend.devices")
    assert "9 difference(s) on 2 line(s), 8 volatile one(s) not shown" in lines[-1] and "-v lists each" in lines[-1]


def test_verbose_lists_every_key_with_the_volatile_ones_and_keeps_the_exit_code(tmp_path):
    files = _files(tmp_path, healthy(), _eight_npus_unknown())
    r = CliRunner().invoke(cli, ["diff", "-v", *files])
    assert r.exit_code == 1
    assert all(f"ascend.devices[{i}].health" in r.stdout for i in range(8))
    assert "ascend.devices[5].hbm_used_mb" in r.stdout and "[0-7]" not in r.stdout
    assert "17 difference(s)" in r.stdout.splitlines()[-1] and "not shown" not in r.stdout
    # volatile-only differences: listed under -v, still exit 0 as without it
    b = healthy()
    b["ascend"]["devices"][0]["hbm_used_mb"] = 1
    files = _files(tmp_path, healthy(), b)
    quiet, verbose = (CliRunner().invoke(cli, ["diff", *v, *files]) for v in ([], ["-v"]))
    assert quiet.exit_code == verbose.exit_code == 0
    assert "no differences" in quiet.stdout and "1 volatile one(s) not shown" in quiet.stdout
    assert "ascend.devices[0].hbm_used_mb" in verbose.stdout


def test_npus_and_modules_missing_on_one_side_are_one_line_each_and_json_keeps_every_key(tmp_path):
    a, b = healthy(), healthy()
    b["ascend"]["devices"] = []
    del b["modules"]["verl"]
    files = _files(tmp_path, a, b)
    r = CliRunner().invoke(cli, ["diff", *files])
    assert r.exit_code == 1
    npus = [ln for ln in r.stdout.splitlines() if ln.startswith("- ascend.devices[0-7] ")]
    assert len(npus) == 1 and "8 NPUs only in A" in npus[0] and "health=OK" in npus[0]
    verl = [ln for ln in r.stdout.splitlines() if "modules.verl" in ln]
    assert len(verl) == 1 and "only in A" in verl[0]
    j = json.loads(CliRunner().invoke(cli, ["--json", "diff", *files]).stdout)
    keys = {c["key"] for c in j["changes"]}
    assert {f"ascend.devices[{i}].health" for i in range(8)} <= keys and "modules.verl.origins" in keys


def test_a_path_list_that_changed_in_part_says_which_entries():
    from doctor.snapshot.diff import summarize

    a = snapshot_from_dict(healthy())
    d = healthy()
    d["env"]["PATH"] = "/opt/new/bin:" + d["env"].get("PATH", "/usr/bin")
    b = snapshot_from_dict(d)
    lines = summarize(a, b, diff_snapshots(a, b))
    assert ("~", "env.PATH", "with /opt/new/bin") in lines


def test_a_module_probed_absent_on_one_side_is_one_only_in_line(tmp_path):
    """A module the probe recorded as not found (`modules.numpy: null`) on one side and found on the other is the one
    line "only in B"; it was also printed as `- modules.numpy  None`, as if it had been removed from A as well."""
    a, b = healthy(), healthy()
    a["modules"]["numpy"] = None
    b["modules"]["numpy"] = {"kind": "package", "origins": ["/venv/lib/python3.11/site-packages/numpy"],
                             "version": "2.4.6"}
    for x, y, sign in ((a, b, "+"), (b, a, "-")):
        r = CliRunner().invoke(cli, ["diff", *_files(tmp_path, x, y)])
        assert r.exit_code == 1
        numpy = [ln for ln in r.stdout.splitlines() if "modules.numpy" in ln]
        assert len(numpy) == 1, r.stdout
        assert numpy[0].startswith(f"{sign} modules.numpy ") and f"only in {'B' if sign == '+' else 'A'}" in numpy[0]
        assert "version=2.4.6" in numpy[0]
        keys = {c["key"] for c in json.loads(CliRunner().invoke(cli, ["--json", "diff", *_files(tmp_path, x, y)])
                                             .stdout)["changes"]}
        assert {"modules.numpy", "modules.numpy.version"} <= keys


def test_help_says_that_a_difference_is_exit_1(tmp_path):
    """`doctor diff` exits 1 when the snapshots differ (a warning finding, as diff(1) does), which the exit codes that
    `doctor --help` and the README give for every command (1: an error finding) did not say: a user scripting
    `doctor diff a b || alert` read its 1 as a doctor error. Both helps say it now, as does the README's line."""
    from pathlib import Path

    own = " ".join(CliRunner().invoke(cli, ["diff", "--help"]).stdout.split())
    assert "1 when something does" in own and "2 when a file cannot be read" in own
    top = " ".join(CliRunner().invoke(cli, ["--help"]).stdout.split())
    assert "`doctor diff`, the snapshots differ" in top
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8").split())
    exit_line = readme[readme.index("**Exit codes, everywhere:**"):][:400]
    assert "`doctor diff`" in exit_line
