"""Half a venv (a `python3 -m venv` target with its pyvenv.cfg, its site-packages or its bin/python removed) is exit 2
before anything is planned or made, naming what it lacks and `pythonX.Y -m venv DIR`, which puts the parts back.
Before, each was planned: without pyvenv.cfg the interpreter runs as the Python it links to, so the plan judged (and
the steps would install into) that Python; without bin/python the run made a venv over the remains."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_install import PROFILE, doctor
from tests.installers.test_housecheck import state

PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def half(tmp_path: Path, gone: str) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    if gone == "pyvenv.cfg":
        (venv / "pyvenv.cfg").unlink()
    elif gone == "site-packages":
        shutil.rmtree(venv / "lib" / f"python{PY}" / "site-packages")
    else:
        for p in (venv / "bin").glob("python*"):
            p.unlink()
    return venv


def dry_run(hermetic: dict[str, str], *target: str) -> subprocess.CompletedProcess[str]:
    return doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--backend", "pip", "--dry-run",
                  *target, env={**hermetic, "NO_COLOR": "1"})


@pytest.mark.parametrize("gone, said, why", [
    ("pyvenv.cfg", "pyvenv.cfg", "runs as the Python it links to"),
    ("site-packages", f"lib/python{PY}/site-packages", "its packages, pip's among them, are gone"),
    ("bin/python", "bin/python", "there is no interpreter to install into"),
])
def test_half_a_venv_is_refused_before_anything_naming_what_puts_it_back(tmp_path, hermetic, gone, said, why) -> None:
    venv = half(tmp_path, gone)
    before = state(venv) if gone != "bin/python" else None
    cp = dry_run(hermetic, "--venv", str(venv))
    assert cp.returncode == 2, cp.stdout + cp.stderr
    err = " ".join(cp.stderr.split())
    assert f"error: --venv: {venv} is half a venv: it has no {said} (" in err and why in err, err
    assert f"`python{PY} -m venv {venv}` puts the missing parts back and keeps the packages that are left" in err, err
    if before is not None:
        assert state(venv) == before
    # the repair it names makes a target the install plans for
    subprocess.run([f"python{PY}" if shutil.which(f"python{PY}") else sys.executable, "-m", "venv", str(venv)],
                   check=True, timeout=120)
    assert dry_run(hermetic, "--venv", str(venv)).returncode == 0


def test_python_in_a_venv_without_its_pyvenv_cfg_is_refused_too(tmp_path, hermetic) -> None:
    venv = half(tmp_path, "pyvenv.cfg")
    cp = dry_run(hermetic, "--python", str(venv / "bin" / "python"))
    assert cp.returncode == 2, cp.stdout + cp.stderr
    assert f"error: --python: {venv} is half a venv: it has no pyvenv.cfg" in cp.stderr, cp.stderr
