"""installers.target: the installed set is read by the target interpreter itself."""

from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize("value", ["0", "-5", "nan"])
def test_a_step_timeout_that_is_no_time_is_refused(value: str, tmp_path: Path) -> None:
    """`--step-timeout 0` was read as unset (3 h per step), and a negative one failed every step at once (restored,
    exit 1, "no result after -5 s"): help says "give up on a step after this long". Refused before anything runs."""
    from tests.cli.test_install import doctor

    cp = doctor("install", "--venv", str(tmp_path / "v"), "--profile", "verl-0.8.0-cann9.0.0-a3", "--no-host-check",
                "--dry-run", "--step-timeout", value)
    assert cp.returncode == 2, cp.stderr
    assert "--step-timeout takes seconds above 0" in cp.stderr
    assert not (tmp_path / "v").exists()
