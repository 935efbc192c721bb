"""checks.fix_target: a fix's `pip ...` lines made to run on the target the snapshot examined (snapshot rule 13).

The rendering rules on their own, then real targets made here (a `venv --without-pip`, a `uv venv`, a plain venv)
with the real jwt / PyJWT wheels: `pip uninstall jwt` leaves PyJWT without its jwt/__init__.py, check prints a
reinstall, and the test RUNS the printed commands in the target (offline, from the local wheels) and checks again.
The Debian interpreter (externally managed) is only read, never installed into."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from doctor.checks.fix_target import ENSUREPIP, MANAGED, NO_PIP, PIP, UV, Route, for_target, route_of
from doctor.installers.backends import find_uv
from doctor.report import Fix
from doctor.snapshot.model import snapshot_from_dict
from tests.fakes import externally_managed_python

ROOT = Path(__file__).resolve().parents[2]
EXE = "/t/bin/python"


def _snap(python: dict[str, Any], packages: dict[str, Any] | None = None) -> Any:
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "complete": True,
                               "python": {"executable": EXE, **python}, "packages": packages or {}})


@pytest.mark.parametrize(("python", "packages", "how"), [
    ({}, None, PIP),  # an older snapshot: as before the facts existed
    ({"pip": True, "uv_venv": "0.13.9"}, None, PIP),  # pip is there: the target's own
    ({"pip": False, "uv_venv": "0.13.9"}, None, UV),
    ({"pip": False, "uv_venv": None, "ensurepip": True}, {"six": {"version": "1.16.0", "installer": "uv"}}, UV),
    ({"pip": False, "uv_venv": None, "ensurepip": True}, {"six": {"version": "1.16.0", "installer": "pip"}}, ENSUREPIP),
    ({"pip": False, "uv_venv": None, "ensurepip": False}, None, NO_PIP),
    ({"pip": False}, None, NO_PIP),  # ensurepip not recorded: no command that may fail
    ({"pip": True, "externally_managed": True}, None, MANAGED),
    ({"pip": False, "externally_managed": True, "uv_venv": None}, None, MANAGED),
])
def test_the_route_follows_what_the_target_has(python, packages, how):
    assert route_of(_snap(python, packages)) == Route(how, EXE)


def test_without_a_named_interpreter_the_fix_stays_as_the_check_wrote_it():
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"pip": False}})
    fix = Fix("Reinstall.", ("pip install x",))
    assert route_of(snap) is None and for_target(fix, None) is fix


def test_pip_lines_and_a_fix_sentence_that_is_a_pip_command_line_run_by_the_targets_pip():
    f = for_target(Fix("pip uninstall -y triton triton-ascend && pip install --no-deps triton-ascend"), Route(PIP, EXE))
    assert f is not None and f.text == (f"{EXE} -m pip uninstall -y triton triton-ascend && "
                                        f"{EXE} -m pip install --no-deps triton-ascend")
    g = Fix("Install them with pip into the target.", ("doctor install --profile p",))
    assert for_target(g, Route(PIP, EXE)) is g


@pytest.mark.parametrize(("route", "then"), [
    (Route(PIP, EXE), f"{EXE} -m pip install -e MindSpeed"),
    (Route(UV, EXE), f"uv pip install --python {EXE} -e MindSpeed"),
])
def test_a_fix_sentence_that_runs_pip_after_a_git_command_runs_the_targets_pip_too(route, then):
    """mindspeed-no-repatch / mindspeed-llm-mindspeed-mismatch: `git -C MindSpeed checkout X && pip install -e
    MindSpeed`. The bare pip there ran whichever pip is first on PATH: in a uv venv (no pip) the OS's, which
    refuses (PEP 668) or installs MindSpeed into another interpreter."""
    f = for_target(Fix("git -C MindSpeed checkout 2.3.0_core_r0.12.1 && pip install -e MindSpeed"), route)
    assert f is not None and f.text == f"git -C MindSpeed checkout 2.3.0_core_r0.12.1 && {then}"
    prose = Fix("Install 1.2 (PEP 592: yanked releases are not to be used); pip installs it only for an exact pin.")
    assert for_target(prose, route) is prose


@pytest.mark.parametrize(("route", "then"), [
    (Route(PIP, EXE), f"TORCH_DEVICE_BACKEND_AUTOLOAD=0 {EXE} -m pip install verl==0.9.1 --extra-index-url X"),
    (Route(ENSUREPIP, EXE), f"TORCH_DEVICE_BACKEND_AUTOLOAD=0 {EXE} -m pip install verl==0.9.1 --extra-index-url X"),
    (Route(UV, EXE), f"TORCH_DEVICE_BACKEND_AUTOLOAD=0 uv pip install --python {EXE} verl==0.9.1 --extra-index-url X"),
])
def test_a_plan_line_that_sets_the_environment_first_runs_the_targets_pip_too(route, then):
    """A verified stack's plan line (doctor.installers.fixline) puts the step's environment before pip:
    `TORCH_DEVICE_BACKEND_AUTOLOAD=0 pip install verl==0.9.1 ...`. Read as no pip line, it ran whichever pip is
    first on PATH (real: `check --python VENV --profile verl-0.9.1-cann9.1.0-a2` on a venv with verl 0.9.1
    installed --no-deps printed it 17 times, unrouted, and it installed into the pyenv interpreter)."""
    line = "TORCH_DEVICE_BACKEND_AUTOLOAD=0 pip install verl==0.9.1 --extra-index-url X"
    f = for_target(Fix("Install what verl declares.", (line,)), route)
    assert f is not None and f.commands[-1] == then
    env = "TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
    t = for_target(Fix(f"git -C MindSpeed checkout X && A=1 B='c d' {line.removeprefix(env)}"), route)
    assert t is not None and t.text.endswith(f"&& A=1 B='c d' {then.removeprefix(env)}")
    m = for_target(Fix("Install what verl declares.", (line,)), Route(MANAGED, EXE))
    assert m is not None and m.commands == () and f"{env}DIR/bin/python -m pip install" in m.text


def test_a_verified_stacks_plan_line_in_a_live_fix_names_the_examined_interpreter():
    """End to end through the checks: verl 0.9.1 with its requirements missing, the stack forced (a CPU host): the
    fix is the stack's own plan line, and it runs by the examined interpreter's pip, not PATH's."""
    from doctor.checks.diagnose import diagnose

    snap = snapshot_from_dict({
        "schema": "doctor.snapshot/1", "complete": True, "host": {"arch": "x86_64"},
        "python": {"executable": EXE, "version": "3.11.7", "implementation": "CPython", "pip": True},
        "packages": {"verl": {"version": "0.9.1", "requires_dist": ["accelerate", "codetiming"],
                              "requires_python": ">=3.10"}}})
    rep = diagnose([(None, snap, None)], forced_profile="verl-0.9.1-cann9.1.0-a2", only=["packages"])
    fixes = [f.fix for f in rep.findings if f.id == "requirement-missing" and f.fix is not None]
    assert fixes and all(f.commands for f in fixes)
    for fix in fixes:
        for c in fix.commands:
            assert not re.match(r"(\w+=\S* )*pip ", c), c
            assert f"{EXE} -m pip install verl==0.9.1" in c, c


def test_a_uv_venv_gets_uv_pip_with_the_target_named_and_no_yes_flag():
    f = for_target(Fix("Swap them.", ("pip uninstall -y triton && pip install --force-reinstall --no-deps "
                                       "--index-url https://download.pytorch.org/whl/cpu 'torch==2.5.1+cpu'",
                                       "apt-get install g++")), Route(UV, EXE))
    assert f is not None and f.commands == (
        f"uv pip uninstall --python {EXE} triton && uv pip install --python {EXE} --force-reinstall --no-cache --no-deps "
        "--index-url https://download.pytorch.org/whl/cpu 'torch==2.5.1+cpu'", "apt-get install g++")
    assert f.text == "Swap them."


def test_a_user_site_install_has_no_uv_command_and_says_why():
    f = for_target(Fix("Reinstall.", ("pip install --user --force-reinstall --no-deps 'pyjwt==2.10.1'",)), Route(UV, EXE))
    assert f is not None and f.commands == () and "no --user" in f.text


def test_without_pip_ensurepip_comes_first_once():
    f = for_target(Fix("Reinstall.", ("pip uninstall -y a", "pip install b")), Route(ENSUREPIP, EXE))
    assert f is not None and f.commands == (f"{EXE} -m ensurepip", f"{EXE} -m pip uninstall -y a", f"{EXE} -m pip install b")
    t = for_target(Fix("pip install 'numpy<2.0.0' (e.g. numpy==1.26.4)"), Route(ENSUREPIP, EXE))
    assert t is not None and t.text == f"{EXE} -m ensurepip && {EXE} -m pip install 'numpy<2.0.0' (e.g. numpy==1.26.4)"


def test_without_pip_or_ensurepip_no_command_is_printed_and_the_text_says_what_is_missing():
    f = for_target(Fix("Install what nox declares.", ("pip install 'attrs>=24.1'", "apt-get install g++")),
                   Route(NO_PIP, EXE))
    assert f is not None and f.commands == ("apt-get install g++",)
    assert "pip is not installed" in f.text and f"`{EXE} -m pip install 'attrs>=24.1'`" in f.text


def test_an_externally_managed_interpreter_gets_no_pip_command_but_the_venv_to_run_it_in():
    f = for_target(Fix("Install what nox declares.", ("pip install 'attrs>=24.1'",)), Route(MANAGED, EXE))
    assert f is not None and f.commands == ()
    assert "PEP 668" in f.text and f"`{EXE} -m venv DIR`" in f.text and "`DIR/bin/python -m pip install 'attrs>=24.1'`" in f.text
    # the venv is new: none of the dependencies --no-deps keeps is there (real: torch 2.13.0+cpu installed so in a
    # venv of Debian's python, `import torch`: No module named 'typing_extensions'), and it has no user site
    r = for_target(Fix("Reinstall torch.", ("pip install --user --force-reinstall --no-deps --index-url "
                                            "https://download.pytorch.org/whl/cpu 'torch==2.13.0+cpu'",)), Route(MANAGED, EXE))
    assert r is not None and ("`DIR/bin/python -m pip install --force-reinstall --index-url "
                              "https://download.pytorch.org/whl/cpu 'torch==2.13.0+cpu'`") in r.text
    t = for_target(Fix("pip install 'numpy<2.0.0'"), Route(MANAGED, EXE))
    assert t is not None and t.text.startswith("pip install 'numpy<2.0.0' pip refuses") and t.commands == ()


BY_ENV = {"install": "PIP_BREAK_SYSTEM_PACKAGES=1", "uninstall": "PIP_BREAK_SYSTEM_PACKAGES=1"}


@pytest.mark.parametrize(("python", "overridden"), [
    ({"pip": True, "externally_managed": True, "break_system_packages": BY_ENV},
     (("install", "PIP_BREAK_SYSTEM_PACKAGES=1"), ("uninstall", "PIP_BREAK_SYSTEM_PACKAGES=1"))),
    ({"pip": True, "externally_managed": True, "break_system_packages": {"install": "/etc/pip.conf"}},
     (("install", "/etc/pip.conf"),)),
    ({"pip": True, "externally_managed": True, "break_system_packages": {}}, ()),
    ({"pip": True, "externally_managed": True}, ()),  # an older snapshot: as before rule 15
    ({"pip": False, "externally_managed": True, "break_system_packages": BY_ENV}, ()),  # no pip to run
])
def test_a_managed_interpreter_carries_what_the_users_pip_override_covers(python, overridden):
    assert route_of(_snap(python)) == Route(MANAGED, EXE, overridden)


def test_with_pips_guard_turned_off_by_the_user_the_lines_run_the_interpreters_pip_and_say_so():
    route = route_of(_snap({"pip": True, "externally_managed": True, "break_system_packages": BY_ENV}))
    f = for_target(Fix("Reinstall pyjwt.", ("pip install --force-reinstall --no-deps 'pyjwt==2.10.1'",)), route)
    assert f is not None and f.commands == (f"{EXE} -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'",)
    assert "pip refuses" not in f.text and "PIP_BREAK_SYSTEM_PACKAGES=1 turns its guard off" in f.text
    assert f"changes {EXE} itself, which the OS manages (PEP 668)" in f.text
    t = for_target(Fix("pip uninstall -y triton && pip install triton-ascend"), route)
    assert t is not None and t.text.startswith(f"{EXE} -m pip uninstall -y triton && {EXE} -m pip install triton-ascend")


def test_an_override_for_install_only_keeps_install_lines_and_withholds_an_uninstall():
    route = route_of(_snap({"pip": True, "externally_managed": True,
                            "break_system_packages": {"install": "/root/.config/pip/pip.conf"}}))
    f = for_target(Fix("Swap triton.", ("pip uninstall -y triton && pip install triton-ascend", "pip install x")), route)
    assert f is not None and f.commands == (f"{EXE} -m pip install x",)
    assert "the user's override covers pip install (/root/.config/pip/pip.conf) only" in f.text
    assert "/root/.config/pip/pip.conf turns its guard off" in f.text  # said of the line that is kept


# -- real targets ---------------------------------------------------------------------------------------------


def _wheels() -> Path:
    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")  # nox -s tests downloads them next to the verl wheels
    w = Path(d) / "wheels" if d else None
    if w is None or not all(any(w.glob(f"{n}-*.whl")) for n in ("jwt-1.3.1", "PyJWT-2.10.1")):
        pytest.skip("no jwt-1.3.1 / PyJWT-2.10.1 wheels under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    return w


def _whl(w: Path, name: str) -> str:
    return str(next(w.glob(f"{name}-*.whl")))


def _missing(py: Path, cwd: Path, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", str(py), "--only", "packages"],
                       capture_output=True, text=True, timeout=300, cwd=str(cwd),
                       env={**(env or os.environ), "PYTHONPATH": str(ROOT)})
    return [f for f in json.loads(r.stdout)["findings"] if f["id"] == "installed-files-missing"]


def _offline(w: Path, uv: str | None = None) -> dict[str, str]:
    """Where the printed commands find PyJWT here: the local wheels, no index (the commands run as printed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(w), PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               UV_NO_INDEX="1", UV_FIND_LINKS=str(w), UV_OFFLINE="1", UV_NO_CONFIG="1")
    if uv:
        env["PATH"] = os.path.dirname(uv) + os.pathsep + env.get("PATH", "")
    return env


def _jwt_works(py: Path) -> bool:
    return subprocess.run([str(py), "-c", "import jwt; jwt.encode({'a': 1}, 'k', algorithm='HS256')"],
                          capture_output=True, timeout=120).returncode == 0


def _break_run_fix_and_check_again(py: Path, tmp: Path, w: Path, install: list[str], uninstall: list[str],
                                   uv: str | None = None, user_env: dict[str, str] | None = None) -> list[str]:
    """jwt then PyJWT installed by `install`, jwt removed by `uninstall` (PyJWT loses jwt/__init__.py); the fix
    check prints (run with `user_env`, default: PATH with `uv`'s directory) is run as printed there, and check
    then finds nothing. Returns the commands it ran."""
    env = user_env or _offline(w, uv)
    for name in ("jwt-1.3.1", "PyJWT-2.10.1"):
        subprocess.run([*install, _whl(w, name)], check=True, capture_output=True, timeout=600, env=_offline(w, uv))
    subprocess.run([*uninstall, "jwt"], check=True, capture_output=True, timeout=300, env=_offline(w, uv))
    assert not _jwt_works(py)
    (f,) = _missing(py, tmp, env)
    cmds = f["fix"]["commands"]
    for c in cmds:
        r = subprocess.run(["bash", "-c", c], capture_output=True, text=True, timeout=600, cwd=str(tmp), env=env)
        assert r.returncode == 0, (c, r.stderr)
    assert _jwt_works(py) and _missing(py, tmp, env) == []
    return list(cmds)


@pytest.mark.slow
def test_a_venv_without_pip_is_given_ensurepip_then_its_pip_and_the_fix_runs(tmp_path):
    w = _wheels()
    venv = tmp_path / "nopip"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    assert subprocess.run([str(py), "-m", "pip", "--version"], capture_output=True, timeout=60).returncode != 0
    pip = [sys.executable, "-m", "pip", "--python", str(py)]  # the test venv's pip installs into the target
    cmds = _break_run_fix_and_check_again(py, tmp_path, w, [*pip, "install", "--no-deps"], [*pip, "uninstall", "-y"])
    q = shlex.quote(str(py))
    assert cmds == [f"{q} -m ensurepip", f"{q} -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'"]


def _uv_venv(tmp: Path, w: Path) -> tuple[str, Path]:
    """(uv, the python of a venv `uv venv` made: no pip in it), or a skip without uv."""
    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed (pip install uv)")
    venv = tmp / "uvv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=300, env=_offline(w))
    assert "uv = " in (venv / "pyvenv.cfg").read_text()
    return uv, venv / "bin" / "python"


@pytest.mark.slow
def test_a_uv_venv_is_given_uv_pip_and_the_fix_runs(tmp_path):
    w = _wheels()
    uv, py = _uv_venv(tmp_path, w)
    cmds = _break_run_fix_and_check_again(py, tmp_path, w, [uv, "pip", "install", "--python", str(py), "--no-deps"],
                                          [uv, "pip", "uninstall", "--python", str(py)], uv)
    assert cmds == [f"uv pip install --python {shlex.quote(str(py))} --force-reinstall --no-cache --no-deps 'pyjwt==2.10.1'"]


def _no_uv_path(tmp: Path) -> str:
    """PATH as here, less every directory that holds a `uv`."""
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "uv")))


@pytest.mark.slow
def test_a_uv_venv_when_path_has_no_uv_is_given_the_doctors_own_uv_by_its_full_path_and_the_fix_runs(tmp_path):
    """The user's PATH has no uv (the venv was made by a uv elsewhere, or uv was removed): a bare `uv pip` line
    would fail with "uv: command not found"; the doctor's own uv (the one `doctor install` runs) is named by path."""
    w = _wheels()
    uv, py = _uv_venv(tmp_path, w)
    if os.path.dirname(uv) != os.path.dirname(sys.executable):
        pytest.skip("no uv next to the test interpreter")
    user = {**_offline(w), "PATH": _no_uv_path(tmp_path)}
    assert subprocess.run(["bash", "-c", "command -v uv"], env=user, capture_output=True).returncode != 0
    cmds = _break_run_fix_and_check_again(py, tmp_path, w, [uv, "pip", "install", "--python", str(py), "--no-deps"],
                                          [uv, "pip", "uninstall", "--python", str(py)], user_env=user)
    assert cmds == [f"{shlex.quote(uv)} pip install --python {shlex.quote(str(py))} --force-reinstall --no-cache "
                    "--no-deps 'pyjwt==2.10.1'"]


@pytest.mark.slow
def test_a_uv_venv_with_no_uv_on_this_host_falls_back_to_ensurepip_and_the_printed_lines_run(tmp_path, monkeypatch):
    """No uv on PATH and none beside the doctor: the check is made in process (the doctor's interpreter is moved
    to a directory without uv) on the real uv venv's live snapshot, and the printed lines run as printed."""
    from doctor.checks.diagnose import diagnose
    from doctor.probes import collect_snapshot

    w = _wheels()
    uv, py = _uv_venv(tmp_path, w)
    for name in ("jwt-1.3.1", "PyJWT-2.10.1"):
        subprocess.run([uv, "pip", "install", "--python", str(py), "--no-deps", _whl(w, name)], check=True,
                       capture_output=True, timeout=600, env=_offline(w))
    subprocess.run([uv, "pip", "uninstall", "--python", str(py), "jwt"], check=True, capture_output=True, timeout=300,
                   env=_offline(w))
    user = {**_offline(w), "PATH": _no_uv_path(tmp_path)}
    monkeypatch.setenv("PATH", user["PATH"])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    snap = collect_snapshot(python=str(py))
    assert snap.python.pip is False and snap.python.uv_venv and snap.python.ensurepip is True

    def fixes(local: bool) -> list[Any]:
        rep = diagnose([(None, snap, None)], only=["packages"], local=local)
        return [f.fix for f in rep.findings if f.id == "installed-files-missing"]

    (before,) = fixes(local=False)  # a snapshot from elsewhere: uv is assumed there, as before
    assert before.commands[0].startswith("uv pip install")
    (fix,) = fixes(local=True)
    q = shlex.quote(str(py))
    assert fix.commands == (f"{q} -m ensurepip", f"{q} -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'")
    for c in fix.commands:
        r = subprocess.run(["bash", "-c", c], capture_output=True, text=True, timeout=600, cwd=str(tmp_path), env=user)
        assert r.returncode == 0, (c, r.stderr)
    assert _jwt_works(py)


def test_without_uv_here_or_ensurepip_a_uv_venv_gets_no_command_but_how_to_get_uv(monkeypatch, tmp_path):
    from doctor.checks.fix_target import NO_UV
    from doctor.probes.uv import uv_here

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    none_here = uv_here(str(tmp_path)).for_user()
    assert none_here is None
    assert route_of(_snap({"pip": False, "uv_venv": "0.13.9", "ensurepip": False}), local=True, uv=none_here) == \
        Route(NO_UV, EXE)
    assert route_of(_snap({"pip": False, "uv_venv": "0.13.9", "ensurepip": True}), local=True, uv=none_here) == \
        Route(ENSUREPIP, EXE)
    assert route_of(_snap({"pip": False, "uv_venv": "0.13.9"}), local=False) == Route(UV, EXE)  # not this host
    (tmp_path / "uv").write_text("#!/bin/sh\n")
    (tmp_path / "uv").chmod(0o755)
    assert uv_here(str(tmp_path)).for_user() == "uv"
    assert route_of(_snap({"pip": False, "uv_venv": "0.13.9"}), local=True, uv="uv") == Route(UV, EXE, uv="uv")
    own = tmp_path / "elsewhere"  # the doctor's own uv, beside its interpreter, when PATH has none
    own.mkdir()
    (tmp_path / "uv").rename(own / "uv")
    found = uv_here(str(tmp_path))
    assert found.for_user() == str(own / "uv") and found.to_run() == str(own / "uv")
    f = for_target(Fix("Reinstall.", ("pip install --force-reinstall x",)), Route(NO_UV, EXE))
    assert f is not None and f.commands == ()
    assert "`uv` is not on PATH here: install uv (https://docs.astral.sh/uv/getting-started/installation/" in f.text
    assert f"`uv pip install --python {EXE} --force-reinstall --no-cache x`" in f.text


def test_a_live_check_looks_uv_up_once_before_the_checks_and_its_fix_lines_name_it(monkeypatch, tmp_path):
    """diagnose (local) finds uv here (doctor.probes.uv) and every check's fix lines are routed with it, from their
    options: none on PATH, then the uv PATH has."""
    import doctor.checks.runner as runner
    from doctor.checks.diagnose import diagnose

    seen: list[Any] = []
    real = runner.route_of
    monkeypatch.setattr(runner, "route_of", lambda snap, local=False, uv=None: seen.append((local, uv)) or
                        real(snap, local=local, uv=uv))
    snap = _snap({"pip": False, "uv_venv": "0.13.9", "ensurepip": False})
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    diagnose([(None, snap, None)], only=["packages"], local=True)
    (tmp_path / "uv").write_text("#!/bin/sh\n")
    (tmp_path / "uv").chmod(0o755)
    diagnose([(None, snap, None)], only=["packages"], local=True)
    assert seen and set(seen) == {(True, None), (True, "uv")}


@pytest.mark.slow
def test_a_plain_venv_keeps_its_own_pip_and_the_fix_runs(tmp_path):
    w = _wheels()
    venv = tmp_path / "plain"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    cmds = _break_run_fix_and_check_again(py, tmp_path, w, [str(py), "-m", "pip", "install", "--no-deps"],
                                          [str(py), "-m", "pip", "uninstall", "-y"])
    assert cmds == [f"{shlex.quote(str(py))} -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'"]


def _probe_env(w: Path, home: Path, **extra: str) -> dict[str, str]:
    """This host's environment for a real run on the OS's interpreter: a throwaway HOME, the local wheels, the
    user's override (`extra`); the machine's own /etc pip files stay as they are (none sets the override here)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "XDG_CONFIG"))}
    env.update(HOME=str(home), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(w), PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYTHONPATH=str(ROOT), **extra)
    return env


def _collected_with_pip(exe: str, tmp_path: Path, env: dict[str, str]) -> Any:
    """`doctor collect` of the OS's interpreter with `env`, read back; skipped where it has no pip here."""
    snap = tmp_path / "snap.json"
    subprocess.run([sys.executable, "-m", "doctor", "collect", "--python", exe, "-o", str(snap)], check=True,
                   capture_output=True, timeout=300, cwd=str(tmp_path), env=env)
    s = snapshot_from_dict(json.loads(snap.read_text()))
    if not s.python.pip:
        pytest.skip(f"{exe} has no pip here (python3-pip)")
    return s


@pytest.mark.slow
@pytest.mark.parametrize("how", ["env", "pip.conf"])
def test_the_debian_interpreter_with_pips_override_gets_its_own_pip_line_and_pip_would_run_it(tmp_path, how):
    """PIP_BREAK_SYSTEM_PACKAGES=1, or `break-system-packages = true` in the user's pip.conf: the printed line is
    the interpreter's own pip, and pip accepts it (run with --dry-run: nothing is installed into /usr)."""
    exe = _debian_python()
    w = _wheels()
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    extra = {"PIP_BREAK_SYSTEM_PACKAGES": "1"} if how == "env" else {}
    if how == "pip.conf":
        (home / ".config" / "pip" / "pip.conf").write_text("[global]\nbreak-system-packages = true\n")
    env = _probe_env(w, home, **extra)
    s = _collected_with_pip(exe, tmp_path, env)
    by = "PIP_BREAK_SYSTEM_PACKAGES=1" if how == "env" else str(home / ".config" / "pip" / "pip.conf")
    assert s.python.break_system_packages == {"install": by, "uninstall": by}
    fix = for_target(Fix("Reinstall pyjwt 2.10.1.", ("pip install --force-reinstall --no-deps 'pyjwt==2.10.1'",)),
                     route_of(s))
    assert fix is not None and fix.commands == (f"{exe} -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'",)
    assert f"{by} turns its guard off" in fix.text
    (line,) = fix.commands
    r = subprocess.run(["bash", "-c", line.replace(" -m pip install ", " -m pip install --dry-run ", 1)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and "Would install PyJWT-2.10.1" in r.stdout, r.stdout + r.stderr
    # without the override the same line is refused: the fact is what decides
    r = subprocess.run(["bash", "-c", line.replace(" -m pip install ", " -m pip install --dry-run ", 1)],
                       capture_output=True, text=True, timeout=300, env=_probe_env(w, tmp_path / "bare"))
    assert r.returncode != 0 and "externally-managed-environment" in r.stdout + r.stderr


def test_an_install_into_a_directory_of_its_own_runs_on_a_managed_interpreter_without_an_override():
    """pip skips PEP 668's check for `--target`, `--prefix` and `--root` (the interpreter is not changed): such a line
    keeps the interpreter's pip, with no override and no note that the OS's interpreter changes; a plain install, a
    `--user` one and an uninstall beside it are still refused."""
    route = Route(MANAGED, EXE)
    for flag in ("--target /opt/deps", "--prefix=/opt/p", "--root /srv/r", "-t /opt/deps"):
        f = for_target(Fix("Reinstall it there.", (f"pip install --no-deps --upgrade {flag} 'pyjwt==2.10.1'",)), route)
        assert f is not None and f.commands == (f"{EXE} -m pip install --no-deps --upgrade {flag} 'pyjwt==2.10.1'",)
        assert f.text == "Reinstall it there.", flag
    for line in ("pip install 'pyjwt==2.10.1'", "pip install --user 'pyjwt==2.10.1'",
                 "pip uninstall -y jwt && pip install --target /opt/deps 'pyjwt==2.10.1'"):
        f = for_target(Fix("Reinstall.", (line,)), route)
        assert f is not None and f.commands == () and "pip refuses to change" in f.text, line
    # with an override for install only, the --target line needs none, and says nothing of changing the interpreter
    over = Route(MANAGED, EXE, (("install", "PIP_BREAK_SYSTEM_PACKAGES=1"),))
    f = for_target(Fix("Put it there.", ("pip install --target /opt/deps x",)), over)
    assert f is not None and f.commands == (f"{EXE} -m pip install --target /opt/deps x",) and f.text == "Put it there."


@pytest.mark.slow
def test_the_debian_interpreter_runs_a_printed_target_install_and_stays_as_it_was(tmp_path):
    """Real: the OS's interpreter, no override; the printed `--target` line runs (offline, from the local wheels) and
    the interpreter itself still cannot import what went into the directory."""
    exe = _debian_python()
    w = _wheels()
    env = _probe_env(w, tmp_path / "home")
    s = _collected_with_pip(exe, tmp_path, env)
    assert s.python.externally_managed is True and not s.python.break_system_packages
    deps = tmp_path / "deps"
    fix = for_target(Fix("Reinstall pyjwt there.", (f"pip install --no-deps --target {deps} 'pyjwt==2.10.1'",)),
                     route_of(s))
    assert fix is not None
    (line,) = fix.commands
    assert line == f"{exe} -m pip install --no-deps --target {deps} 'pyjwt==2.10.1'"
    r = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (deps / "jwt" / "__init__.py").is_file()
    probe = "import importlib.util as u; print(u.find_spec('jwt') is None or not u.find_spec('jwt').origin.startswith(%r))"
    r = subprocess.run([exe, "-I", "-c", probe % str(deps)], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "True"


def _debian_python() -> str:
    exe = externally_managed_python()
    if exe is None:
        pytest.skip("/usr/bin/python3 is absent or not externally managed here")
    return exe


@pytest.mark.slow
@pytest.mark.parametrize("line", [
    "pip install --force-reinstall --no-deps 'pyjwt==2.10.1'",
    # a broken copy in the user site (installed-files-missing's reinstall for it): a venv has no user site, pip
    # refuses `--user` there ("Can not perform a '--user' install"), so the venv's line is the plain install
    "pip install --user --force-reinstall --no-deps 'pyjwt==2.10.1'",
])
def test_the_debian_interpreter_gets_no_pip_command_pip_would_refuse_and_the_venv_it_names_runs_the_fix(tmp_path, line):
    exe = _debian_python()
    w = _wheels()
    snap = tmp_path / "snap.json"
    subprocess.run([sys.executable, "-m", "doctor", "collect", "--python", exe, "-o", str(snap)], check=True,
                   capture_output=True, timeout=300, cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(ROOT)})
    s = snapshot_from_dict(json.loads(snap.read_text()))
    assert s.python.externally_managed is True and route_of(s) == Route(MANAGED, exe)
    fix = for_target(Fix("Reinstall pyjwt 2.10.1.", (line,)), route_of(s))
    assert fix is not None and fix.commands == ()
    if s.python.pip:  # what the old rendering printed is refused before anything is touched (--no-index: belt)
        r = subprocess.run([exe, "-m", "pip", "install", "--no-index", "--no-deps", "pyjwt==2.10.1"],
                           capture_output=True, text=True, timeout=120, env=_offline(w))
        assert r.returncode != 0 and "externally-managed-environment" in r.stdout + r.stderr
    # the two lines the text names, DIR a new venv here: the fix runs there
    made, then = re.findall(r"`([^`]+)`", fix.text.partition("PEP 668")[2])[:2]
    venv = tmp_path / "venv"
    r = subprocess.run(["bash", "-c", made.replace("DIR", str(venv))], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.skip(f"{exe} cannot make a venv here (python3-venv missing): {r.stderr[-200:]}")
    r = subprocess.run(["bash", "-c", then.replace("DIR", str(venv))], capture_output=True, text=True, timeout=300,
                       env=_offline(w))
    assert r.returncode == 0, r.stderr
    assert _jwt_works(venv / "bin" / "python")


def test_the_other_checks_of_this_host_look_uv_up_too(monkeypatch):
    """`doctor smoke`'s preflight and the check after `doctor install` collect this host with the doctor's
    environment, as a live `doctor check` does: their fix lines must name a uv that runs here (uv_here), not a bare
    `uv` that PATH may lack ('uv: command not found', rc 127, the defect `check` was fixed for)."""
    from types import SimpleNamespace

    import doctor.checks.diagnose as dg
    from doctor.installers.findings import post_check
    from doctor.report import Report
    from doctor.smoke.session import run_preflight

    seen: list[Any] = []

    def diagnose(nodes, **kw):  # noqa: ANN001, ANN003, ANN202
        seen.append(kw.get("local"))
        return Report(command="check")

    monkeypatch.setattr(dg, "diagnose", diagnose)
    monkeypatch.setattr("doctor.probes.collect_snapshot", lambda **_kw: _snap({"pip": False, "uv_venv": "0.13.9"}))
    run_preflight(EXE)
    assert post_check("/", EXE, SimpleNamespace(name="p"), Report(command="install")) == []
    assert seen == [True, True]
