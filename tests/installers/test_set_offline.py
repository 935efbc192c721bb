"""A `--set` version the wheelhouse of an --offline install does not hold is refused when the plan is made (exit 2,
naming the flag, the wheelhouse and what it holds), before the venv is made or anything in the target changes: it
used to be found by the last install step, after every clone and build, with the whole run restored. Through the CLI
on the real verl 0.7.1 A2 profile, against a wheelhouse of real wheel files and a target made by plain
`python3 -m venv` (bundled pip)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.installers import wheelhouse as wh
from tests.cli.test_install import doctor
from tests.installers.test_housecheck import stopped_by_the_rest_only
from tests.installers.wheelkit import make_wheel

PROFILE = "verl-0.7.1-cann8.5.0-a2"  # pins transformers==4.57.6


@pytest.fixture
def house(tmp_path: Path) -> Path:
    h = tmp_path / "house"
    make_wheel(h / wh.WHEELS, "transformers", "4.57.6")
    make_wheel(h / wh.WHEELS, "transformers", "4.57.4")
    wh.write(h, wh.scan(h, wh.Manifest(profile=PROFILE, target={})))
    return h


def install(house: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--backend", "pip",
                  "--wheelhouse", str(house), "--offline", *args, env={**env, "NO_COLOR": "1"})


def tree(root: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for n in sorted(files + dirs):
            p = os.path.join(dirpath, n)
            h.update(os.path.relpath(p, root).encode())
            if os.path.isfile(p) and not os.path.islink(p):
                h.update(Path(p).read_bytes())
    return h.hexdigest()


def test_a_set_version_the_wheelhouse_lacks_is_refused_before_the_venv_is_made(house, tmp_path, hermetic) -> None:
    venv = tmp_path / "venv"
    cp = install(house, hermetic, "--venv", str(venv), "--set", "transformers=4.57.5")
    assert cp.returncode == 2, cp.stderr
    assert (f"transformers 4.57.5 is not in the wheelhouse {house.resolve()} (it holds transformers 4.57.4, 4.57.6), "
            "and an --offline install reads nothing else") in cp.stderr, cp.stderr
    assert "--set" in cp.stderr and not venv.exists()


def test_an_existing_target_is_not_touched_and_a_held_or_installed_version_passes(house, tmp_path, hermetic) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)  # bundled pip
    py = venv / "bin" / "python"
    before = tree(venv)
    cp = install(house, hermetic, "--python", str(py), "--set", "transformers=4.57.5")
    assert cp.returncode == 2 and "transformers 4.57.5 is not in the wheelhouse" in cp.stderr, cp.stderr
    assert tree(venv) == before and not (venv / ".doctor").exists()
    # a version the wheelhouse holds passes (what stops the plan is the rest of the plan, which the stub lacks)
    cp = install(house, hermetic, "--python", str(py), "--set", "transformers=4.57.4", "--dry-run")
    assert stopped_by_the_rest_only(cp, "transformers"), cp.stderr
    # one the target has already needs nothing from the wheelhouse
    other = tmp_path / "other"
    make_wheel(other, "transformers", "4.57.5")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(other),
                    "transformers==4.57.5"], check=True, timeout=120, env=hermetic)
    cp = install(house, hermetic, "--python", str(py), "--set", "transformers=4.57.5", "--dry-run")
    assert stopped_by_the_rest_only(cp, "transformers"), cp.stderr


def test_online_a_set_version_the_release_table_cannot_judge_is_named_before_the_plan(tmp_path, hermetic) -> None:
    """numpy 1.23.5 (2022) is older than the releases profiles/requirements/ keeps: whether the index serves it is
    found only by the install step, and the plan says so; a version the table knows is not named."""
    import json

    args = ("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--venv", str(tmp_path / "v"), "--dry-run")
    cp = doctor(*args, "--set", "numpy=1.23.5", env={**hermetic, "NO_COLOR": "1"})
    assert cp.returncode == 0, cp.stderr
    assert "--set numpy=1.23.5: not checked before the run" in cp.stdout + cp.stderr, cp.stderr
    assert json.loads(doctor(*args, "--json", "--set", "numpy=1.23.5", env={**hermetic, "NO_COLOR": "1"}).stdout)[
        "set_unchecked"] == {"numpy": "1.23.5"}
    cp = doctor(*args, "--json", "--set", "numpy=1.26.4", env={**hermetic, "NO_COLOR": "1"})
    assert cp.returncode == 0 and "not checked before the run" not in cp.stdout + cp.stderr, cp.stderr
    assert "set_unchecked" not in json.loads(cp.stdout)
