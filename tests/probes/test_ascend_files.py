"""Ascend files probe against fake roots built from the real layouts (tests/fakes.py) and the real
version files in shared/fixtures/info."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.probes._fs import RootFS
from doctor.probes.ascend_files import (
    nnal_version,
    parse_colon_kv,
    parse_kv,
    parse_version_cfg,
    parse_version_file,
    probe_ascend_files,
    soc_from_ops_package,
)
from tests.fakes import ASCEND_KINDS, EXPECTED, make_ascend_root, write

ROOT_ENV = {"HOME": "/root"}


def probe(root: Path, env: dict[str, str] | None = None, euid: int = 0):
    return probe_ascend_files(RootFS(str(root)), env if env is not None else ROOT_ENV, euid=euid)


@pytest.mark.parametrize("kind", ASCEND_KINDS)
def test_every_fake_root_reports_its_facts(tmp_path: Path, kind: str) -> None:
    facts, errors = probe(make_ascend_root(tmp_path, kind))
    exp = EXPECTED[kind]
    tk = facts["toolkit"]
    assert tk["version"] == exp["toolkit"]
    assert tk["path"] == exp["path"]
    assert tk["layout"] == exp["layout"]
    assert tk["arch"] == exp["arch"]
    assert (facts["kernels"] or {}).get("soc") == exp["kernels_soc"]
    assert (facts["nnal"] or {}).get("version") == exp["nnal"]
    assert (facts["driver"] or {}).get("version") == exp["driver"]
    assert facts["firmware"]["version"] == exp["firmware"]
    assert [t for t in facts["toolkits"] if t["active"]] == [{"version": exp["toolkit"], "path": exp["path"], "active": True}]
    # paths are machine paths: the test's prefix never leaks into the snapshot
    assert str(tmp_path) not in json.dumps(facts)
    assert all(isinstance(e, str) for e in errors)


def test_missing_kernels_and_nnal_are_null_not_unknown(tmp_path: Path) -> None:
    facts, _ = probe(make_ascend_root(tmp_path, "missing-kernels"))
    assert "kernels" in facts and facts["kernels"] is None
    facts, _ = probe(make_ascend_root(tmp_path, "missing-nnal"))
    assert "nnal" in facts and facts["nnal"] is None


def test_corrupt_driver_file_is_a_recorded_error(tmp_path: Path) -> None:
    facts, errors = probe(make_ascend_root(tmp_path, "corrupt-version-info"))
    assert facts["driver"]["version"] is None
    assert "no Version=" in facts["driver"]["error"]
    assert facts["toolkit"]["version_source"].endswith("/runtime/version.info")
    assert any("ascend_toolkit_install.info" in e for e in errors)


def test_symlink_loops_are_reported_and_survived(tmp_path: Path) -> None:
    facts, errors = probe(make_ascend_root(tmp_path, "symlink-loop"))
    assert any("ascend-toolkit/latest: symlink loop" in e for e in errors)
    assert any("/usr/local/Ascend/cann: symlink loop" in e for e in errors)
    assert facts["toolkit"]["selected_by"] == "highest installed"


def test_file_where_a_directory_should_be(tmp_path: Path) -> None:
    facts, errors = probe(make_ascend_root(tmp_path, "file-instead-of-dir"))
    assert facts["driver"] == {"version": None, "path": "/usr/local/Ascend/driver",
                               "error": "/usr/local/Ascend/driver/version.info missing or unreadable",
                               "install_type": "full"}
    assert any("not a directory" in e for e in errors)


def test_old_layout_latest_dir_of_symlinks_resolves_to_the_versioned_dir(tmp_path: Path) -> None:
    root = make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout")
    facts, _ = probe(root, {"HOME": "/root", "ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest"})
    assert facts["toolkit"]["path"] == "/usr/local/Ascend/ascend-toolkit/8.3.RC1"
    assert facts["toolkit"]["selected_by"] == "$ASCEND_HOME_PATH"
    assert facts["root"] == "/usr/local/Ascend"


def test_ascend_home_path_wins_over_the_cann_link(tmp_path: Path) -> None:
    root = make_ascend_root(tmp_path, "a3-cann9.1.0-new-layout")
    facts, _ = probe(root, {"HOME": "/root", "ASCEND_HOME_PATH": "/usr/local/Ascend/cann-8.5.0"})
    assert facts["toolkit"]["version"] == "8.5.0"
    assert {t["version"]: t["active"] for t in facts["toolkits"]} == {"8.5.0": True, "9.1.0": False}


def test_absolute_latest_link_resolves_inside_the_root(tmp_path: Path) -> None:
    root = make_ascend_root(tmp_path, "a3-cann9.1.0-new-layout")
    facts, _ = probe(root, {"HOME": "/root", "ASCEND_TOOLKIT_HOME": "/usr/local/Ascend/ascend-toolkit/latest"})
    assert facts["toolkit"]["path"] == "/usr/local/Ascend/cann-9.1.0"
    assert facts["toolkit"]["selected_by"] == "$ASCEND_TOOLKIT_HOME"


def test_ascend_home_path_pointing_nowhere_is_noted(tmp_path: Path) -> None:
    root = make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout")
    facts, errors = probe(root, {"HOME": "/root", "ASCEND_HOME_PATH": "/opt/nothing"})
    assert "$ASCEND_HOME_PATH=/opt/nothing: no CANN toolkit there" in errors
    assert facts["toolkit"]["selected_by"] == "/usr/local/Ascend/ascend-toolkit/latest"


def test_non_root_install_under_home(tmp_path: Path) -> None:
    root = tmp_path / "r"
    c = root / "home/alice/Ascend/cann-9.0.0"
    write(c / "share/info/runtime/version.info", "Version=9.0.0-beta.1\n")
    write(c / "x86_64-linux/ascend_toolkit_install.info", "version=9.0.0-beta.1\narch=x86_64\n")
    (root / "home/alice/Ascend/cann").symlink_to("cann-9.0.0")
    facts, _ = probe(root, {"HOME": "/home/alice"}, euid=1000)
    assert facts["toolkit"]["version"] == "9.0.0-beta.1"
    assert facts["toolkit"]["path"] == "/home/alice/Ascend/cann-9.0.0"
    assert facts["root"] == "/home/alice/Ascend"
    assert facts["driver"] is None and facts["nnal"] is None


def test_layout_comes_from_files_not_from_the_version(tmp_path: Path) -> None:
    """8.5 pre-releases shipped in the old layout (docs/ascend-install-layouts.md)."""
    root = tmp_path / "r"
    v = root / "usr/local/Ascend/ascend-toolkit/8.5.0.alpha002"
    write(v / "aarch64-linux/ascend_toolkit_install.info", "package_name=Ascend-cann-toolkit\nversion=8.5.0.alpha002\narch=aarch64\n")
    write(v / "runtime/version.info", "Version=8.5.0.0.100\nversion_dir=8.5.0.alpha002\n")
    facts, _ = probe(root)
    assert facts["toolkit"]["layout"] == "old"
    assert facts["toolkit"]["version"] == "8.5.0.alpha002"


def test_no_ascend_at_all(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    facts, errors = probe(tmp_path)
    assert facts["toolkit"] is None and facts["toolkits"] == [] and facts["driver"] is None
    assert facts["device_files"] == []
    assert errors == []


# -- the real files users pasted ------------------------------------------------------------------------

def _info_fixtures(shared: Path):
    for exp in sorted((shared / "fixtures" / "info").glob("*.expect.json")):
        yield exp.with_name(exp.name[: -len(".expect.json")]), json.loads(exp.read_text())


def test_real_version_files_parse_to_their_expected_versions(shared_dir: Path) -> None:
    seen = 0
    for path, exp in _info_fixtures(shared_dir):
        kind = {"runtime": "component"}.get(exp["kind"], exp["kind"])
        assert parse_version_file(kind, path.read_text(encoding="utf-8")) == exp["version"], path.name
        seen += 1
    assert seen >= 4


def test_lenient_kv_parsing_of_pasted_files() -> None:
    text = "     1\tVersion=25.0.rc1.1\n     2\tpackage_version=25.0.rc1.1\r\njunk line\nVersion=9.9.9\n"
    assert parse_kv(text)["Version"] == "25.0.rc1.1"  # first occurrence wins, as in ACL
    assert parse_version_file("driver", text) == "25.0.rc1.1"
    assert parse_version_file("component", "Version=9.2.0-beta.2\nversion_dir=cann\n") == "9.2.0-beta.2"
    assert parse_version_cfg("runtime_installed_version=[7.7.T9.0.B057:8.1.T6][7.7.T20.0.B210:8.1.RC1]\n") == "8.1.RC1"
    assert nnal_version("    Ascend-cann-atb : 8.2.RC1\n    Ascend-cann-atb Version : 8.2.RC1.B150\n") == "8.2.RC1"
    assert parse_colon_kv("        Chip Name                      : 910B4\n") == {"Chip Name": "910B4"}


@pytest.mark.parametrize(("name", "soc"), [
    ("Ascend-cann-910b-ops", "ascend910b"), ("Ascend-cann-A3-ops", "ascend910_93"),
    ("Atlas-A3-cann-kernels", "ascend910_93"), ("Ascend-cann-310p-ops", "ascend310p"),
    ("Ascend-cann-950-ops", "ascend950"), ("Ascend-cann-kernels-910b", "ascend910b"), (None, None), ("x", None),
])
def test_ops_package_soc(name: str | None, soc: str | None) -> None:
    assert soc_from_ops_package(name) == soc


@settings(max_examples=200, deadline=None)
@given(st.text(), st.sampled_from(["toolkit", "ops", "component", "runtime", "driver", "firmware", "cfg", "nnal", "x"]))
def test_parsers_never_raise_on_text(text: str, kind: str) -> None:
    v = parse_version_file(kind, text)
    assert v is None or isinstance(v, str)
    assert isinstance(parse_kv(text), dict) and isinstance(parse_colon_kv(text), dict)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=2048))
def test_probe_survives_arbitrary_bytes_in_every_version_file(tmp_path_factory, data: bytes) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    asc = root / "usr/local/Ascend"
    for rel in ("cann-9.1.0/share/info/runtime/version.info", "cann-9.1.0/aarch64-linux/ascend_toolkit_install.info",
                "cann-9.1.0/aarch64-linux/ascend_ops_install.info", "driver/version.info", "firmware/version.info",
                "nnal/atb/latest/version.info"):
        write(asc / rel, data)
    write(root / "etc/ascend_install.info", data)
    facts, errors = probe(root)
    assert set(facts) >= {"toolkit", "toolkits", "kernels", "nnal", "driver", "firmware"}
    json.dumps(facts)


def test_driver_mounts_a_container_needs(tmp_path: Path) -> None:
    facts, _ = probe(make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout"))
    assert facts["driver_mounts"] == {"/etc/ascend_install.info": True, "/usr/local/Ascend/driver": True,
                                      "/usr/local/Ascend/driver/lib64": True, "/usr/local/dcmi": True,
                                      "/usr/local/bin/npu-smi": False, "/usr/local/sbin/npu-smi": False}
    facts, _ = probe(tmp_path / "empty")
    assert not any(facts["driver_mounts"].values())


def test_device_access_records_each_nodes_permissions_and_the_user(tmp_path: Path) -> None:
    import os

    for name, mode, gid in (("davinci0", 0o660, 1000), ("davinci_manager", 0o666, 0), ("hisi_hdc", 0o600, 0)):
        write(tmp_path / "dev" / name, "")
        os.chmod(tmp_path / "dev" / name, mode)
        os.chown(tmp_path / "dev" / name, 0, gid)
    facts, _ = probe_ascend_files(RootFS(str(tmp_path)), ROOT_ENV, euid=1001, groups=[1001, 1001, 27])
    acc = facts["device_access"]
    assert acc["uid"] == 1001 and acc["gids"] == [27, 1001]
    assert acc["nodes"]["/dev/davinci0"]["mode"] == "0660" and acc["nodes"]["/dev/davinci0"]["gid"] == 1000
    assert acc["nodes"]["/dev/hisi_hdc"] == {"mode": "0600", "uid": 0, "gid": 0, "group": "root"}
    assert "rw" not in acc["nodes"]["/dev/davinci0"]  # under a root prefix the kernel's answer would be the runner's


def test_no_device_nodes_no_access_facts(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    facts, _ = probe_ascend_files(RootFS(str(tmp_path)), ROOT_ENV, euid=1001, groups=[1001])
    assert facts["device_files"] == [] and "device_access" not in facts


_AS_USER = """
import grp, json, os, sys  # grp first: uid 65534 cannot read this interpreter's stdlib once it is that user
from doctor.probes._fs import RootFS
from doctor.probes.ascend_files import _Probe
uid = int(sys.argv[1])
if uid:
    os.setgroups([])
    os.setegid(uid)
    os.seteuid(uid)
print(json.dumps(_Probe(RootFS("/"), {}, os.geteuid()).device_access(sys.argv[2:], None)))
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() != 0,
                    reason="needs root to run the probe as another user")
def test_device_access_on_the_live_host_asks_the_kernel() -> None:
    """On the live host (no root prefix) `rw` is the kernel's answer (os.access with the effective ids) for the
    user the probe runs as: a node mode 0660 root:root is refused to uid 65534, one mode 0666 is not, root passes."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="doctor-dev-", dir="/tmp"))  # a directory uid 65534 may enter
    try:
        os.chmod(base, 0o755)
        for name, mode in (("davinci0", 0o660), ("davinci1", 0o666)):
            (base / name).write_text("")
            os.chmod(base / name, mode)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

        def run(uid: int) -> dict:
            out = subprocess.run([sys.executable, "-c", _AS_USER, str(uid), str(base / "davinci0"),
                                  str(base / "davinci1")], env=env, capture_output=True, text=True, cwd="/",
                                 check=True).stdout
            return json.loads(out)

        nobody = run(65534)
        assert nobody["uid"] == 65534 and nobody["gids"] == [65534]
        assert nobody["nodes"][str(base / "davinci0")]["rw"] is False
        assert nobody["nodes"][str(base / "davinci1")]["rw"] is True
        assert run(0)["nodes"][str(base / "davinci0")]["rw"] is True
    finally:
        shutil.rmtree(base)
