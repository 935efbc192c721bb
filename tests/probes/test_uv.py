"""probes.uv: the one place the doctor finds uv on this host, for what it runs and for the lines it prints."""

from __future__ import annotations

import importlib.util
import shlex
import sys

from doctor.errors import extra_install_command
from doctor.installers.backends import find_uv
from doctor.probes.uv import uv_here


def _exe(path):  # noqa: ANN001, ANN202
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_doctor_runs_its_own_uv_first_and_a_user_is_told_the_one_on_path(monkeypatch, tmp_path):
    (tmp_path / "own").mkdir()
    (tmp_path / "path").mkdir()
    own, on_path = _exe(tmp_path / "own" / "uv"), _exe(tmp_path / "path" / "uv")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "own" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    assert find_uv() == str(own) and uv_here().for_user() == "uv"
    on_path.unlink()
    assert find_uv() == str(own) and uv_here().for_user() == shlex.quote(str(own))
    own.unlink()
    assert find_uv() is None and uv_here().for_user() is None


def test_an_extras_line_in_a_venv_without_pip_names_the_doctors_own_uv_when_path_has_none(monkeypatch, tmp_path):
    """A venv made by uv has no pip; the uv that made it need not be on PATH, but one installed beside the doctor's
    interpreter runs: the line names it by its full path, not a pip line that fails (`No module named pip`)."""
    own = _exe(tmp_path / "uv")
    exe = str(tmp_path / "python")
    monkeypatch.setattr(sys, "executable", exe)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a))
    assert extra_install_command("launch") == f"{shlex.quote(str(own))} pip install --python {exe} " \
                                              "'verl-ascend-doctor[launch]'"
    own.unlink()
    assert extra_install_command("launch") == f"{exe} -m pip install 'verl-ascend-doctor[launch]'"
