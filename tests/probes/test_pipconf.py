"""doctor.probes.pipconf: whether pip's PEP 668 guard is off for a managed interpreter (snapshot rule 15), read as
pip reads its configuration. Each parametrized case was run against Debian's pip 23.0.1 and pip 26.3 themselves on
/usr/bin/python3 (`pip install --dry-run`, `pip uninstall` of a name not installed, this HOME): pip ran exactly the
commands listed here."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from doctor.probes.pipconf import add_override, pip_override
from tests.fakes import write


def _env(tmp_path: Path, conf: str | None, **extra: str) -> dict[str, str]:
    """A throwaway HOME whose ~/.config/pip/pip.conf is `conf`, no global file pip would read, and `extra`."""
    home = tmp_path / "home"
    if conf is not None:
        write(home / ".config" / "pip" / "pip.conf", conf)
    return {"HOME": str(home), "XDG_CONFIG_DIRS": str(tmp_path / "no-xdg"), "PATH": "/usr/bin", **extra}


@pytest.mark.parametrize(("conf", "env", "want"), [
    (None, {}, {}),
    (None, {"PIP_BREAK_SYSTEM_PACKAGES": "1"}, {"install": "PIP_BREAK_SYSTEM_PACKAGES=1",
                                                "uninstall": "PIP_BREAK_SYSTEM_PACKAGES=1"}),
    (None, {"PIP_break_system_packages": "TRUE"}, {"install": "PIP_break_system_packages=TRUE",
                                                   "uninstall": "PIP_break_system_packages=TRUE"}),
    ("[global]\nbreak-system-packages = true\n", {}, {"install": "CONF", "uninstall": "CONF"}),
    ("[DEFAULT]\nbreak_system_packages = on\n[global]\nx = 1\n", {}, {"install": "CONF", "uninstall": "CONF"}),
    ("[install]\n--break-system-packages = yes\n", {}, {"install": "CONF"}),  # the command's own section
    ("[global]\nbreak-system-packages = true\n[install]\nbreak-system-packages = off\n", {}, {"uninstall": "CONF"}),
    ("[global]\nbreak-system-packages = true\n", {"PIP_BREAK_SYSTEM_PACKAGES": "0"}, {}),  # the environment wins
    ("[global]\nbreak-system-packages = true\n", {"PIP_BREAK_SYSTEM_PACKAGES": ""}, {"install": "CONF",
                                                                                    "uninstall": "CONF"}),
    ("[global]\nbreak-system-packages = true # yes\n", {}, {}),  # no inline comments: pip stops on the value
    ("[global]\nbreak-system-packages = maybe\n", {"PIP_BREAK_SYSTEM_PACKAGES": "1"}, {}),  # pip stops
    ("[global]\nbreak-system-packages = true\n", {"PIP_CONFIG_FILE": os.devnull}, {}),  # no file is read
    ("[global]\nbreak-system-packages = true\n[global]\n", {}, {}),  # pip cannot parse it: stops
    ("[global]\nbreak-system-packages = true\n", {"XDG_CONFIG_HOME": "/nowhere"}, {}),  # not where pip looks then
    # require-virtualenv: outside a venv pip refuses install/uninstall first ("Could not find an activated
    # virtualenv (required)"), the override notwithstanding (Debian's pip 23.0.1, this HOME)
    ("[global]\nrequire-virtualenv = true\n", {"PIP_BREAK_SYSTEM_PACKAGES": "1"}, {}),
    ("[global]\nrequire-venv = true\n", {"PIP_BREAK_SYSTEM_PACKAGES": "1"}, {}),
    ("[install]\nrequire-virtualenv = true\n", {"PIP_BREAK_SYSTEM_PACKAGES": "1"},
     {"uninstall": "PIP_BREAK_SYSTEM_PACKAGES=1"}),
    ("[global]\nrequire-virtualenv = true\n", {"PIP_BREAK_SYSTEM_PACKAGES": "1", "PIP_REQUIRE_VIRTUALENV": "0"},
     {"install": "PIP_BREAK_SYSTEM_PACKAGES=1", "uninstall": "PIP_BREAK_SYSTEM_PACKAGES=1"}),
    ("[global]\nrequire-virtualenv = sure\n", {"PIP_BREAK_SYSTEM_PACKAGES": "1"}, {}),  # pip stops on the value
    ("[global]\nbreak-system-packages = true\n", {"PIP_REQUIRE_VENV": "1"}, {}),
])
def test_pips_override_of_pep_668_is_read_as_pip_reads_its_configuration(
        tmp_path: Path, conf: str | None, env: dict[str, str], want: dict[str, str]) -> None:
    where = str(tmp_path / "home" / ".config" / "pip" / "pip.conf")
    found, _ = pip_override(_env(tmp_path, conf, **env), str(tmp_path / "prefix"))
    assert found == {k: where if v == "CONF" else v for k, v in want.items()}


def test_pip_config_file_wins_over_the_users_file_which_it_also_hides(tmp_path: Path) -> None:
    write(tmp_path / "env.conf", "[global]\nbreak-system-packages = true\n")
    env = _env(tmp_path, "[uninstall]\nbreak-system-packages = true\n", PIP_CONFIG_FILE=str(tmp_path / "env.conf"))
    prefix = str(tmp_path / "prefix")
    assert pip_override(env, prefix)[0] == {"install": str(tmp_path / "env.conf"), "uninstall": str(tmp_path / "env.conf")}
    write(tmp_path / "prefix" / "pip.conf", "[install]\nbreak-system-packages = false\n")  # the interpreter's own
    assert pip_override(env, prefix)[0] == {"uninstall": str(tmp_path / "env.conf")}
    env["PIP_CONFIG_FILE"] = str(tmp_path / "absent.conf")  # a name that is no file: the user's file counts
    assert pip_override(env, prefix)[0] == {"uninstall": str(tmp_path / "home" / ".config" / "pip" / "pip.conf")}


def test_what_stops_pip_is_said_once(tmp_path: Path) -> None:
    found, errors = pip_override(_env(tmp_path, "[global]\nbreak-system-packages = maybe\n"), "/usr")
    assert found == {} and len(errors) == 1 and "'maybe'" in errors[0] and "not a boolean" in errors[0]


def test_the_override_is_added_for_an_externally_managed_interpreter_only(tmp_path: Path) -> None:
    env = _env(tmp_path, None, PIP_BREAK_SYSTEM_PACKAGES="yes")
    doc: dict[str, Any] = {"python": {"externally_managed": True, "prefix": "/usr"}, "errors": []}
    add_override(doc, env)
    assert doc["python"]["break_system_packages"] == {"install": "PIP_BREAK_SYSTEM_PACKAGES=yes",
                                                      "uninstall": "PIP_BREAK_SYSTEM_PACKAGES=yes"}
    venv: dict[str, Any] = {"python": {"externally_managed": False, "prefix": "/v"}, "errors": []}
    add_override(venv, env)
    assert "break_system_packages" not in venv["python"]


def test_a_file_that_does_not_name_the_option_is_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The common case (a pip.conf with an index or a cert) costs a read, not a configparser import (the live
    check's path: its cost is measured in bench/, never asserted here)."""
    env = _env(tmp_path, "[global]\nindex-url = https://mirror.example/simple\n")
    monkeypatch.setitem(sys.modules, "configparser", None)  # importing it would raise
    assert pip_override(env, "/usr") == ({}, [])


def test_a_real_probe_of_the_os_interpreter_records_it_with_the_environment_it_ran_with(tmp_path: Path) -> None:
    from doctor.probes.pyenv import run_target_probe
    from tests.fakes import externally_managed_python

    exe = externally_managed_python()
    if exe is None:
        pytest.skip("/usr/bin/python3 is absent or not externally managed here")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")},
           **_env(tmp_path, None, PIP_BREAK_SYSTEM_PACKAGES="1")}
    doc, err, _ = run_target_probe(exe, environ=env, args=["--dists-only"])
    assert err is None and doc is not None
    assert doc["python"]["break_system_packages"] == {"install": "PIP_BREAK_SYSTEM_PACKAGES=1",
                                                      "uninstall": "PIP_BREAK_SYSTEM_PACKAGES=1"}
    env.pop("PIP_BREAK_SYSTEM_PACKAGES")
    doc, err, _ = run_target_probe(exe, environ=env, args=["--dists-only"])
    assert doc is not None and doc["python"]["break_system_packages"] == {}


@pytest.mark.parametrize(("conf", "env", "want"), [
    (None, {}, None),
    (None, {"PIP_TARGET": "/opt/deps"}, "PIP_TARGET=/opt/deps"),
    (None, {"PIP_PREFIX": "/opt/p"}, "PIP_PREFIX=/opt/p"),
    (None, {"PIP_ROOT": "/srv/r", "PIP_ROOT_USER_ACTION": "ignore"}, "PIP_ROOT=/srv/r"),
    (None, {"PIP_ROOT_USER_ACTION": "ignore", "PIP_TARGET": ""}, None),  # empty: pip skips it
    ("[install]\ntarget = /opt/deps\n", {}, "target = /opt/deps (CONF)"),
    ("[global]\nprefix=/opt/p\n", {}, "prefix = /opt/p (CONF)"),
    ("[uninstall]\ntarget = /opt/deps\n", {}, None),  # another command's section
    ("[install]\ntarget = /opt/deps\n", {"PIP_TARGET": "/elsewhere"}, "PIP_TARGET=/elsewhere"),  # the env wins
    ("[install\ntarget = /opt/deps\n", {}, None),  # pip stops on a file it cannot parse
])
def test_what_sends_every_pip_install_to_a_directory_of_its_own(tmp_path, conf, env, want):
    """Real (Debian's pip 23.0.1 on /usr/bin/python3, no override): with PIP_TARGET or PIP_PREFIX set a plain `pip
    install x` installs into that directory, past PEP 668's check; `pip uninstall` is still refused."""
    from doctor.probes.pipconf import install_elsewhere

    path = str(tmp_path / "home" / ".config" / "pip" / "pip.conf")
    got = install_elsewhere(_env(tmp_path, conf, **env), str(tmp_path / "prefix"))
    assert got == (want.replace("CONF", path) if want else None)
