"""A restore touches only the target environment (issue 21, item 2).

The case that destroyed a source tree: pip 23 (what `python3 -m venv` brings on Python 3.11) installs a
setup.py-only project (MindSpeed) with `setup.py develop` once `wheel` is in the target. The egg-info it registers
lives in the project's git work tree, under `<prefix>/src/`, and its "files" (SOURCES.txt) are the project's
sources. A later step fails; the restore must remove the link, not the sources.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.console import Console
from doctor.installers import journal as jr
from doctor.installers import rollback as rb
from doctor.installers.execute import StepFailed
from doctor.installers.plan import INSTALL, Step
from tests.installers.wheelkit import freeze, git, make_wheel


def bundled_pip_venv(path: Path) -> Path:
    """A target as a user makes it: plain `python -m venv`, with the pip ensurepip bundles (23.2.1 on 3.11)."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    return path / "bin" / "python"


def pip(py: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    cp = subprocess.run([str(py), "-m", "pip", "--isolated", *args], env=env, capture_output=True, text=True,
                        timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return cp.stdout


def work_tree(root: Path) -> Path:
    """A setup.py-only project (as MindSpeed is) in a git work tree; `.gitignore` ignores `*.egg-info/`, as
    MindSpeed's own does."""
    root.mkdir(parents=True)
    (root / "setup.py").write_text("from setuptools import setup, find_packages\n"
                                   "setup(name='mindspeed', version='0.16.0', packages=find_packages())\n")
    (root / ".gitignore").write_text("*.egg-info/\n*.pyc\n")
    for i in range(20):
        (root / "mindspeed" / f"m{i}").mkdir(parents=True)
        (root / "mindspeed" / f"m{i}" / "__init__.py").write_text(f"X = {i}\n")
    (root / "mindspeed" / "__init__.py").write_text("")
    git("init", "-q", cwd=root)
    git("add", "-A", cwd=root)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init", cwd=root)
    return root


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
                  and "__pycache__" not in p.parts and ".egg-info" not in str(p))


def site_listing(py: Path) -> list[str]:
    site = next((py.parent.parent / "lib").glob("python*/site-packages"))
    return sorted(os.listdir(site))


@pytest.fixture
def target(tmp_path: Path) -> tuple[Path, Path]:
    """A bundled-pip venv with `wheel` importable (the vllm-ascend build-deps step installs it) and a MindSpeed-like
    work tree where the CLI clones by default: `<prefix>/src/MindSpeed`, inside the prefix."""
    py = bundled_pip_venv(tmp_path / "venv")
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "wheel", "0.45.1", files={"wheel/__init__.py": ""})
    pip(py, "install", "--no-index", "--find-links", str(wheels), "wheel")
    return py, work_tree(tmp_path / "venv" / "src" / "MindSpeed")


def legacy_develop(py: Path, src: Path) -> None:
    out = pip(py, "install", "--no-index", "-e", str(src))
    assert "setup.py develop" in out, out  # the legacy path this test is about, not a PEP 660 install
    assert "mindspeed==0.16.0" in freeze(py)


def assert_intact(py: Path, src: Path, before: tuple[list[str], list[str], list[str]]) -> None:
    status = subprocess.run(["git", "status", "--porcelain"], cwd=src, capture_output=True, text=True).stdout
    assert status == "", status
    assert files(src) == before[0]
    assert freeze(py) == before[1]
    assert site_listing(py) == before[2]


@pytest.mark.slow
@pytest.mark.parametrize("exc", [StepFailed(Step("later", INSTALL, "a later step"), "later: exited with 1"),
                                 jr.Interrupted(15)], ids=["step-failed", "sigterm"])
def test_restore_after_develop_install_keeps_the_work_tree(target, exc) -> None:
    py, src = target
    before = (files(src), freeze(py), site_listing(py))
    assert len(before[0]) == 23
    with pytest.raises(type(exc)):
        with jr.Transaction(str(py), profile="p", protect=(str(src.parent),)) as tx:
            tx.begin()
            legacy_develop(py, src)
            raise exc
    assert tx.restored is not None and tx.restored["ok"], tx.restored
    assert_intact(py, src, before)


@pytest.mark.slow
def test_guard_holds_without_the_clone_dir_being_named(target) -> None:
    """An older journal (or a caller) that names no protected directory: the work tree is still found (its egg-info
    is outside the site directories, and `.git` marks it)."""
    py, src = target
    before = (files(src), freeze(py), site_listing(py))
    with pytest.raises(StepFailed), jr.Transaction(str(py), profile="p") as tx:
        tx.begin()
        legacy_develop(py, src)
        raise StepFailed(Step("later", INSTALL, "a later step"), "boom")
    assert tx.restored is not None and tx.restored["ok"], tx.restored
    assert_intact(py, src, before)


@pytest.mark.slow
def test_rollback_of_a_develop_install_keeps_the_work_tree(target) -> None:
    py, src = target
    before = (files(src), freeze(py), site_listing(py))
    with jr.Transaction(str(py), profile="p", protect=(str(src.parent),)) as tx:
        tx.begin()
        legacy_develop(py, src)
    assert "mindspeed==0.16.0" in freeze(py)
    report = rb.rollback(str(py), Console(err=io.StringIO()))
    assert [f.id for f in report.findings] == ["install-rolled-back"]
    assert_intact(py, src, before)


def test_guard_refuses_paths_outside_the_prefix_and_in_work_trees(tmp_path: Path) -> None:
    prefix = tmp_path / "venv"
    (prefix / "src" / "proj" / ".git").mkdir(parents=True)
    (prefix / "lib").mkdir()
    g = jr.Guard((str(prefix),), (str(prefix / "protected"),))
    assert g.may_touch(str(prefix / "lib" / "x.py"))
    assert not g.may_touch(str(tmp_path / "elsewhere.py"))
    assert not g.may_touch(str(prefix / "src" / "proj" / "pkg" / "a.py"))
    assert not g.may_touch(str(prefix / "protected" / "a.py"))
