"""An --offline plan the wheelhouse cannot serve is refused when the plan is made (exit 2: the requirement, its step,
and the `--download-only` that rebuilds it), before anything in the target changes. It used to be found by the step
that needed it, after the earlier steps had changed the target (then restored). Real wheelhouses made by
`doctor install --download-only` from the stand-in stack of the verl 0.7.1 A2 profile, then hand-pruned (manifest
rewritten) or swapped for another Python's wheel; targets made by plain `python3 -m venv` (bundled pip)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.installers import wheelhouse as wh
from doctor.installers.housecheck import gaps
from doctor.installers.plan import CLONE, INSTALL, GitSource, Plan, Step, Target
from doctor.installers.wheelfit import Offer, TargetPython
from tests.cli.test_install import PROFILE, doctor, download_only
from tests.installers import wheelkit

PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return download_only(PROFILE, tmp_path_factory.mktemp("house"))


def copy_house(made: dict, dest: Path) -> Path:
    house = dest / "house"
    shutil.copytree(made["house"], house)
    return house


def rewrite(house: Path, **target: str) -> None:
    """A manifest rewritten over what the folder holds now (a hand-pruned wheelhouse; `target` overrides)."""
    m = wh.load(house)
    m.target.update(target)
    wh.write(house, wh.scan(house, m))


def state(venv: Path) -> tuple[str, str]:
    """`pip freeze --all` of the target and a sha256 over every file under it (names and bytes)."""
    cp = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "freeze", "--all"], capture_output=True,
                        text=True, timeout=120, env={"PATH": os.environ["PATH"], "PIP_CONFIG_FILE": os.devnull})
    freeze = cp.stdout if cp.returncode == 0 else f"no pip ({cp.returncode})"  # a venv whose site-packages is gone
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(venv)):
        dirs.sort()
        for n in sorted(files):
            p = os.path.join(dirpath, n)
            h.update(os.path.relpath(p, venv).encode())
            if os.path.isfile(p) and not os.path.islink(p):
                h.update(Path(p).read_bytes())
    return freeze, h.hexdigest()


def stopped_by_the_rest_only(cp: subprocess.CompletedProcess[str], name: str) -> bool:
    """A dry run against a stub wheelhouse (a few files of one project) whose pin of `name` passes its own checks: the
    plan is stopped only by what the stub lacks of the rest of the plan, never by `name`."""
    err = " ".join(cp.stderr.split())
    return cp.returncode == 2 and "cannot serve this plan offline" in err and f"{name}==" not in err


def offline(house: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--backend", "pip",
                  "--wheelhouse", str(house), "--offline", *args, env={**env, "NO_COLOR": "1"})


def test_a_hand_pruned_wheelhouse_is_refused_before_anything_changes(made, tmp_path: Path) -> None:
    house = copy_house(made, tmp_path)
    for w in (house / wh.WHEELS).glob("transformers-*.whl"):
        w.unlink()
    rewrite(house)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)  # bundled pip
    before = state(venv)
    cp = offline(house, made["env"], "--python", str(venv / "bin" / "python"))
    assert cp.returncode == 2, cp.stdout + cp.stderr
    err = " ".join(cp.stderr.split())
    assert (f"the wheelhouse {house.resolve()} cannot serve this plan offline, so nothing was done: step final-pins "
            "(") in err, err
    assert "needs transformers==4.57.6 (it holds no transformers)" in err, err
    assert (f"Rebuild it where the index is reachable: `doctor install --profile {PROFILE} --download-only "
            f"{house.resolve()} --arch {os.uname().machine} --python-version {PY}") in err, err
    assert state(venv) == before and not (venv / ".doctor").exists()
    # the wheelhouse as it was made passes the same check (its dry run plans)
    cp = offline(made["house"], made["env"], "--python", str(venv / "bin" / "python"), "--dry-run")
    assert cp.returncode == 0, cp.stderr


def test_a_wheelhouse_made_for_another_python_is_refused_naming_the_files_and_what_it_was_made_for(
        made, tmp_path: Path) -> None:
    house = copy_house(made, tmp_path)
    for w in (house / wh.WHEELS).glob("torch_npu-*.whl"):
        w.unlink()
    wheelkit.make_wheel(house / wh.WHEELS, "torch-npu", "2.8.0", tag="cp310-cp310-manylinux_2_17_x86_64")
    rewrite(house, python_version="3.10")
    venv = tmp_path / "venv"
    cp = offline(house, made["env"], "--venv", str(venv), "--json")
    assert cp.returncode == 2, cp.stdout + cp.stderr
    msg = json.loads(cp.stdout)["findings"][0]["title"] if cp.stdout.strip() else cp.stderr
    msg = " ".join(msg.split())
    assert "step torch-stack (" in msg and "needs torch-npu==2.8.0 (no file of it fits CPython" in msg, msg
    assert "for another Python or machine: torch_npu-2.8.0-cp310-cp310-manylinux_2_17_x86_64.whl" in msg, msg
    assert "It was made for CPython 3.10 on x86_64, glibc 2.35 (its manifest.json)" in msg, msg
    assert "step final-pins (" in msg, msg  # the final pins name it again
    assert not venv.exists()


def _plan(*steps: Step) -> Plan:
    return Plan(profile="p", reason="", target=Target(None, "3.11", "x86_64", "2.35"), steps=steps)


def test_what_the_target_has_or_a_marker_rules_out_needs_nothing_and_a_source_needs_its_bundle() -> None:
    src = GitSource(name="MindSpeed", url="https://gitcode.com/Ascend/MindSpeed.git", ref="2.3.0_core_r0.12.1")
    plan = _plan(Step("pins", INSTALL, "Pins", requirements=(
                     "numpy<2.0.0", "pandas; python_version < '3.9'", "TransferQueue @ git+https://x/tq.git@main")),
                 Step("clone-mindspeed", CLONE, "Clone MindSpeed", source=src))
    target = TargetPython("3.11.7", "x86_64", "2.35")
    held = {"numpy": [Offer("numpy-2.2.6-cp311-cp311-manylinux_2_17_x86_64.whl", "2.2.6")],
            "transferqueue": [Offer("transferqueue-0.1.0.tar.gz", "0.1.0")]}
    got = gaps(plan, lambda n: held.get(n, []), {}, target, ())
    assert [(g.step, g.requirement, g.why) for g in got] == [
        ("pins", "numpy<2.0.0", "it holds numpy 2.2.6"),
        ("clone-mindspeed", "MindSpeed (git 2.3.0_core_r0.12.1)", "it holds no git bundle of it")]
    assert gaps(plan, lambda n: held.get(n, []), {"numpy": "1.26.4"}, target, ("MindSpeed",)) == []
