"""installers.versionfile: the version a clone computes, as each project's own build reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.installers import versionfile as vf


@pytest.mark.parametrize("tag, distance, want", [
    ("v0.23.0", 0, "0.23.0"), ("v0.23.0", 11, "0.23.1.dev11"), ("v0.23.0rc1", 138, "0.23.0rc2.dev138"),
    ("v0.13.0", 14, "0.13.1.dev14"), ("core_v0.12.1", 0, None), ("0.9.1", 0, "0.9.1")])
def test_setuptools_scm_guess_next_dev(tag, distance, want) -> None:
    assert vf.next_dev(tag, distance) == want


def test_version_files(tmp_path: Path) -> None:
    (tmp_path / "verl" / "version").mkdir(parents=True)
    (tmp_path / "verl" / "version" / "version").write_text("0.8.0.dev\n")
    assert vf.read(vf.VERL_FILE, tmp_path) == "0.8.0.dev0"
    (tmp_path / "megatron" / "core").mkdir(parents=True)
    (tmp_path / "megatron" / "core" / "package_info.py").write_text(
        "MAJOR = 0\nMINOR = 16\nPATCH = 2\nPRE_RELEASE = ''\nVERSION = (MAJOR, MINOR, PATCH, PRE_RELEASE)\n")
    assert vf.read(vf.MEGATRON_FILE, tmp_path) == "0.16.2"
    (tmp_path / "setup.py").write_text("import setuptools\n__version__ = '0.16.0'\nsetuptools.setup(version=__version__)\n")
    assert vf.read(vf.SETUP_PY, tmp_path) == "0.16.0"
    assert vf.read(vf.SCM, tmp_path) is None  # not a clone
    assert vf.read(vf.VERL_FILE, tmp_path / "nowhere") is None
