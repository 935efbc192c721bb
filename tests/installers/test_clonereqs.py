"""What an --offline plan's steps read only after a clone (a source's own dependencies, a `-r` file in a clone) is
read from the wheelhouse's git bundles at their pinned commits and judged with the rest before the first change. It
used to be found by the step: MindSpeed's `numpy<=1.26.0` stopped install-mindspeed after the clones and the earlier
installs, then the run restored. Wheelhouses made by `doctor install --download-only` from the stand-in stack,
targets made by plain `python3 -m venv` (bundled pip); the unit test reads real setup.py shapes from a bundle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from doctor.installers import wheelhouse as wh
from doctor.installers.clonereqs import BundleFiles, after_clone, own_dependencies
from doctor.installers.plan import CLONE, EDITABLE, INSTALL, GitSource, Plan, Step, Target
from tests.cli.test_install import PROFILE, download_only
from tests.installers import wheelkit
from tests.installers.test_housecheck import copy_house, offline, rewrite, state


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return download_only(PROFILE, tmp_path_factory.mktemp("house"))


def _numpy(house: Path, version: str) -> None:
    for w in (house / wh.WHEELS).glob("numpy-*.whl"):
        w.unlink()
    wheelkit.make_wheel(house / wh.WHEELS, "numpy", version)
    rewrite(house)


def test_a_sources_own_dependency_the_wheelhouse_lacks_is_refused_before_anything_changes(made, tmp_path: Path) -> None:
    house = copy_house(made, tmp_path)
    _numpy(house, "1.26.4")  # serves verl's numpy<2.0.0, not MindSpeed's numpy<=1.26.0
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    before = state(venv)
    cp = offline(house, made["env"], "--python", str(venv / "bin" / "python"))
    assert cp.returncode == 2, cp.stdout + cp.stderr
    err = " ".join(cp.stderr.split())
    assert ("cannot serve this plan offline, so nothing was done: step install-mindspeed (Install MindSpeed editable) "
            "needs numpy<=1.26.0 (it holds numpy 1.26.4)") in err, err
    assert state(venv) == before and not (venv / ".doctor").exists() and not (venv / "src").exists()


def test_a_requirement_of_a_file_in_a_clone_is_judged_in_its_step(made, tmp_path: Path) -> None:
    house = copy_house(made, tmp_path)
    _numpy(house, "2.2.6")
    cp = offline(house, made["env"], "--venv", str(tmp_path / "venv"), "--dry-run")
    assert cp.returncode == 2, cp.stdout + cp.stderr
    err = " ".join(cp.stderr.split())
    assert "step verl-requirements (Install verl's requirements-npu.txt) needs numpy<2.0.0 (it holds numpy 2.2.6)" in err
    assert not (tmp_path / "venv").exists()


def test_files_are_read_from_a_bundle_at_its_commit_and_static_dependencies_from_setup_py(tmp_path: Path) -> None:
    bare = tmp_path / "ms.git"
    shas = wheelkit.make_source_repo(bare, dist="mindspeed", packages={"mindspeed/__init__.py": ""},
                                     refs=[("branch", "main", "0.1")])
    work = bare.with_name(bare.name + ".work")
    (work / "pyproject.toml").unlink()
    (work / "setup.py").write_text('from pathlib import Path\nfrom setuptools import setup\n'
                                   'setup(name="mindspeed", install_requires=Path("requirements.txt").read_text()'
                                   '.splitlines())\n')
    (work / "requirements.txt").write_text("# runtime\nnumpy<=1.26.0\n-r extra.txt\n")
    (work / "extra.txt").write_text("six\n")
    wheelkit.git("add", "-A", cwd=work)
    wheelkit.git("commit", "-q", "-m", "setup.py", cwd=work)
    later = wheelkit.git("rev-parse", "HEAD", cwd=work)
    (tmp_path / "git").mkdir()
    wheelkit.git("bundle", "create", str(tmp_path / "git" / "ms.bundle"), "HEAD", "main", cwd=work)
    src = GitSource(name="MindSpeed", url="https://gitcode.com/Ascend/MindSpeed.git", ref="main")
    plan = Plan(profile="p", reason="", target=Target(None, "3.11", "x86_64", "2.35", src_dir="/s"),
                steps=(Step("clone", CLONE, "c", source=src), Step("ms", EDITABLE, "e", source=src),
                       Step("r", INSTALL, "r", requirements=("-r", "/s/MindSpeed/requirements-npu.txt"))))
    with BundleFiles(tmp_path, {"MindSpeed": {"bundle": "git/ms.bundle", "commit": later}}) as b:
        assert own_dependencies(b.read, "MindSpeed") == ["numpy<=1.26.0", "six"]
        assert after_clone(plan, b.read) == {"ms": ["setuptools>=40.8.0", "wheel", "numpy<=1.26.0", "six"],
                                             "r": ["-r", "MindSpeed/requirements-npu.txt"]}
    with BundleFiles(tmp_path, {"MindSpeed": {"bundle": "git/ms.bundle", "commit": shas["main"]}}) as b:
        assert own_dependencies(b.read, "MindSpeed") == []  # the first commit: a pyproject with no dependencies
