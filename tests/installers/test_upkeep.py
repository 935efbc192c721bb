"""House upkeep of installers/ (issue 21, item 9): each of these has one path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from doctor.installers import rollback, upstream
from doctor.installers import versionfile as vf
from doctor.installers.backends import PipBackend
from doctor.probes import _target_probe as tp


def test_the_plan_resolution_is_a_pip_backend_command_like_the_download() -> None:
    pip = PipBackend(isolated=True)
    res = pip.resolve_report(["torch==2.10.0"], "/w/r.json", python_version="3.11", foreign=True,
                             platforms=["manylinux_2_28_aarch64"], target="/w/t")
    dl = pip.download(["torch==2.10.0"], "/w/d", python_version="3.11", platforms=["manylinux_2_28_aarch64"])
    assert res.argv[:6] == dl.argv[:6]  # the doctor's pip, --isolated, the same flags
    assert ("PIP_CONFIG_FILE", "/dev/null") in res.env
    i = res.argv.index("install")
    assert res.argv[i:i + 5] == ("install", "--dry-run", "--ignore-installed", "--report", "/w/r.json")
    assert "--platform" in res.argv and res.argv[-1] == "torch==2.10.0"
    native = pip.resolve_report(["x"], "/w/r.json", python_version="3.11")
    assert "--target" not in native.argv and "--platform" not in native.argv


def test_one_install_guide_url() -> None:
    assert not hasattr(upstream, "SYSTEM") and not hasattr(upstream, "ENVFILE")
    assert upstream.INSTALL_GUIDE.endswith("/v0.9.0/docs/ascend_tutorial/get_start/install_guidance.rst")


@dataclass
class J:
    state: str


def test_next_to_undo_is_the_newest_interrupted_or_finished_install() -> None:
    js = [J("done"), J("undone"), J("rolled-back")]
    assert rollback.next_to_undo(js) is js[0]  # type: ignore[arg-type]
    js.append(J("running"))
    assert rollback.next_to_undo(js) is js[-1]  # type: ignore[arg-type]
    assert rollback.next_to_undo([J("undone")]) is None  # type: ignore[list-item]


def test_version_files_are_read_by_the_probes_readers(tmp_path: Path) -> None:
    (tmp_path / "megatron" / "core").mkdir(parents=True)
    (tmp_path / "megatron" / "core" / "package_info.py").write_text("MAJOR = 0\nMINOR = 16\nPATCH = 2\nPRE_RELEASE = 'rc1'\n")
    assert vf.read(vf.MEGATRON_FILE, tmp_path) == "0.16.2rc1" == str(tp.megatron_version(str(tmp_path / "megatron")))
    (tmp_path / "verl" / "version").mkdir(parents=True)
    (tmp_path / "verl" / "version" / "version").write_text("0.9.1\n")
    assert vf.read(vf.VERL_FILE, tmp_path) == tp.file_version(str(tmp_path / "verl")) == "0.9.1"
