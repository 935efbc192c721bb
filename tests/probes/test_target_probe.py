"""The in-target probe's own distribution scan gives what importlib.metadata gives, and steps aside for it
whenever it could not be sure (a zip or an .egg on sys.path, another metadata finder on sys.meta_path)."""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from doctor.probes.pyenv import SCRIPT
from tests.fakes import make_site_packages, write


@pytest.fixture(scope="module")
def probe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_doctor_target_probe_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture()
def sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two site dirs and the cwd, with the odd shapes importlib.metadata accepts."""
    a, b, cwd = tmp_path / "a", tmp_path / "b", tmp_path / "cwd"
    make_site_packages(a, {"torch": "2.5.1", "Torch-NPU": "2.5.1.post1", "vllm_ascend": "0.11.0rc1"},
                       direct_url={"vllm_ascend": {"url": "file:///src/vllm-ascend", "dir_info": {"editable": True}}})
    make_site_packages(b, {"torch": "2.1.0", "numpy": "1.26.4"}, installer="uv")  # torch here is shadowed
    # a setuptools egg-info directory (PKG-INFO, no METADATA) and an old egg-info *file*
    write(a / "megatron_core-0.12.1-py3.11.egg-info" / "PKG-INFO", "Metadata-Version: 2.1\nName: megatron-core\nVersion: 0.12.1\n")
    write(a / "oldpkg-1.0-py3.11.egg-info", "Metadata-Version: 1.0\nName: oldpkg\nVersion: 1.0\n")
    # a METADATA whose header has no Name: only the real parser may decide what it is
    write(a / "noname-1.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nVersion: 1.0\n\nbody\n")
    # a wheel with a long description after the header
    write(b / "big-3.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: big\nVersion: 3.0\n\n" + "x" * 300_000)
    make_site_packages(cwd, {"verl": "0.7.1.dev0"})
    monkeypatch.chdir(cwd)
    return ["", str(a), str(b), str(tmp_path / "missing")]


def _doc(probe: ModuleType, monkeypatch: pytest.MonkeyPatch, path: list[str], fast: bool) -> list[dict[str, Any]]:
    monkeypatch.setattr(sys, "path", list(path))
    if not fast:
        monkeypatch.setattr(probe, "_scan_dists", lambda *a: None)
    probe._ERRORS[:] = []
    try:
        return probe.distributions()
    finally:
        monkeypatch.undo()


def test_scan_finds_the_same_metadata_dirs(probe: ModuleType, sites: list[str]) -> None:
    scanned = probe._scan_dists(sites, [importlib.machinery.PathFinder])
    real = importlib.metadata.distributions(path=sites)
    assert sorted(os.path.abspath(d.path) for d in scanned) == sorted(os.path.abspath(str(d._path)) for d in real)


def test_same_document_with_and_without_the_fast_scan(probe: ModuleType, sites: list[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = os.getcwd()
    assert probe._scan_dists(sites, sys.meta_path) is not None  # pytest's own import hooks find no distributions
    fast = _doc(probe, monkeypatch, sites, fast=True)
    monkeypatch.chdir(cwd)
    slow = _doc(probe, monkeypatch, sites, fast=False)
    assert fast == slow
    by_name = {d["name"]: d for d in fast}
    assert by_name["torch"]["version"] == "2.5.1" and by_name["torch"]["shadowed"][0]["version"] == "2.1.0"
    assert by_name["vllm_ascend"]["editable"] is True and by_name["numpy"]["installer"] == "uv"
    assert by_name["megatron-core"]["version"] == "0.12.1" and by_name["oldpkg"]["version"] == "1.0"
    assert by_name["big"]["version"] == "3.0" and by_name["verl"]["location"] == cwd


def test_same_document_for_this_interpreter(probe: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test venv itself (pytest, hypothesis, click, torch...): a real environment of a hundred-odd wheels."""
    path = list(sys.path)
    assert probe._scan_dists(path, [importlib.machinery.PathFinder]) is not None
    fast = _doc(probe, monkeypatch, path, fast=True)
    slow = _doc(probe, monkeypatch, path, fast=False)
    assert fast == slow and len(fast) > 20


def test_steps_aside_when_it_cannot_be_sure(probe: ModuleType, tmp_path: Path) -> None:
    archive = tmp_path / "deps.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\nVersion: 1.0\n")
    assert probe._scan_dists([str(archive)], [importlib.machinery.PathFinder]) is None
    (tmp_path / "old.egg").mkdir()
    assert probe._scan_dists([str(tmp_path / "old.egg")], [importlib.machinery.PathFinder]) is None

    class PluginFinder:
        @staticmethod
        def find_distributions(context: Any = None) -> list[Any]:
            return []

    assert probe._scan_dists([str(tmp_path)], [importlib.machinery.PathFinder, PluginFinder]) is None
    # a zip is read by importlib.metadata, so the document still lists what it holds
    assert [d.metadata["Name"] for d in importlib.metadata.distributions(path=[str(archive)])] == ["pkg"]


def test_probe_imports_only_what_it_needs(tmp_path: Path) -> None:
    """The probe's start-up is most of a live check's critical path: importlib.metadata, subprocess and
    platform stay out of an environment without git checkouts or zips on sys.path."""
    import subprocess

    code = (f"import runpy, sys; runpy.run_path({str(SCRIPT)!r}, run_name='__main__'); "
            "sys.stderr.write(' '.join(sorted(m for m in sys.modules if m in "
            "('importlib.metadata', 'subprocess', 'platform', 'email'))))")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONNOUSERSITE": "1"}
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env,
                         cwd=str(tmp_path), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == ""
    assert "@@DOCTOR-TARGET-PROBE-BEGIN@@" in out.stdout
