"""installers.target: the installed set is read by the target interpreter itself."""

from __future__ import annotations

import pytest

from doctor.errors import InputError
from doctor.installers.target import freeze, probe
from tests.installers.wheelkit import make_venv


def test_probe_a_venv_without_pip(tmp_path) -> None:
    py = make_venv(tmp_path / "v")
    env = probe(str(py), files=True)
    assert env.prefix == str(tmp_path / "v") and env.dists == {} and freeze(env) == []
    assert env.python_version.count(".") == 1 and env.arch


def test_probe_the_dev_env_sees_editable_installs() -> None:
    import sys

    env = probe(sys.executable)
    assert "click" in env.dists and env.dists["verl-ascend-doctor"].editable


def test_not_an_interpreter_is_an_input_error(tmp_path) -> None:
    with pytest.raises(InputError, match="no such file"):
        probe(str(tmp_path / "nope"))
    (tmp_path / "notpy").write_text("#!/bin/sh\nexit 3\n")
    (tmp_path / "notpy").chmod(0o755)
    with pytest.raises(InputError, match="printed no result .exit code 3"):
        probe(str(tmp_path / "notpy"))


def test_the_probe_says_whether_the_os_manages_the_interpreter(tmp_path) -> None:
    """PEP 668 (snapshot rule 13): a venv never is; the Debian interpreter is, where it is present."""
    from tests.fakes import externally_managed_python

    assert probe(str(make_venv(tmp_path / "v"))).externally_managed is False
    exe = externally_managed_python()
    if exe is not None:
        assert probe(exe).externally_managed is True
