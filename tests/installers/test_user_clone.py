"""A clone the user already has where the plan clones (`--src DIR` pointed at their checkout, on a branch at another
commit than the profile pins): the run checks the pinned commit out, detached; a failed or interrupted run, and a
`--rollback` of the run, put the checkout back on the user's branch, and the clone's own configuration (its
`origin` URL) is never rewritten to the `--git-mirror` the run fetched from."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from doctor.console import Console
from doctor.installers import rollback as rb
from doctor.installers.backends import Source, UvBackend
from doctor.installers.execute import Executor
from doctor.installers.plan import CLONE, EDITABLE, INSTALL, GitSource, Plan, Step, Target
from doctor.installers.target import probe
from tests.installers.wheelkit import freeze, git, make_source_repo, make_venv, make_wheel


@pytest.fixture
def user_clone(tmp_path: Path) -> dict[str, Path | str]:
    """Upstream with the pinned tag and a later `main`; the user's clone of it on `main` (origin: upstream), and a
    separate mirror copy the run is pointed at."""
    shas = make_source_repo(tmp_path / "up" / "Megatron-LM.git", dist="megatron-core",
                            packages={"megatron/core/__init__.py": ""},
                            refs=[("tag", "core_v0.12.1", "0.12.1"), ("branch", "main", "0.13.0")])
    upstream = tmp_path / "up" / "Megatron-LM.git"
    mirror = tmp_path / "mirror" / "Megatron-LM.git"
    git("clone", "-q", "--bare", str(upstream), str(mirror))
    clone = tmp_path / "src" / "Megatron-LM"
    git("clone", "-q", str(upstream), str(clone))
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "2.7.1+cpu")
    make_wheel(wheels, "triton-ascend", "3.2.0rc4", broken=True)  # fails midway through its files
    return {"clone": clone, "mirror": mirror, "upstream": str(upstream), "wheels": wheels,
            "pin": shas["core_v0.12.1"], "main": shas["main"]}


def where(clone: Path) -> tuple[str, str, str]:
    return (git("symbolic-ref", "-q", "HEAD", cwd=clone), git("rev-parse", "HEAD", cwd=clone),
            git("remote", "get-url", "origin", cwd=clone))


def megatron_plan(src: GitSource, src_dir: Path, *, fail: bool) -> Plan:
    """torch, the Megatron-LM clone and its editable install; with `fail`, then a wheel that breaks midway."""
    steps = [Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",)),
             Step("clone-megatron-lm", CLONE, "clone", source=src),
             Step("install-megatron-lm", EDITABLE, "megatron", source=src, editable_dist="megatron-core",
                  no_deps=True, expect=(("megatron-core", "==0.12.1"),))]
    if fail:
        steps.append(Step("triton-ascend", INSTALL, "triton-ascend", requirements=("triton-ascend==3.2.0rc4",)))
    return Plan("test", "", Target(None, "3.11", "x86_64", None, src_dir=str(src_dir)), tuple(steps))


def run(tmp_path: Path, uc: dict, *, fail: bool, dry: bool = False) -> object:
    src = GitSource("Megatron-LM", "https://github.com/NVIDIA/Megatron-LM.git", "core_v0.12.1",
                    commit=str(uc["pin"]), module="megatron")
    plan = megatron_plan(src, tmp_path / "src", fail=fail)
    ex = Executor(plan, UvBackend(isolated=True), str(tmp_path / "v" / "bin" / "python"),
                  log_path=tmp_path / "install.log", mirrors={"https://github.com/NVIDIA/Megatron-LM": str(uc["mirror"])},
                  source=Source(find_links=(str(uc["wheels"]),), no_index=True, offline=True))
    return ex.statuses(probe(ex.python)) if dry else ex.run()


def test_the_dry_run_says_the_users_clone_is_moved_and_put_back(user_clone, tmp_path, hermetic) -> None:
    make_venv(tmp_path / "v")
    st = {s.id: s for s in run(tmp_path, user_clone, fail=False, dry=True)}  # type: ignore[attr-defined]
    assert st["clone-megatron-lm"].status == "pending"
    assert st["clone-megatron-lm"].detail == (
        f"existing clone at {user_clone['main'][:12]} (branch main): the run checks {user_clone['pin'][:12]} out, "
        "detached; a failed run or --rollback checks main out again")


def test_a_failed_run_puts_the_users_clone_back_on_its_branch(user_clone, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    before = where(Path(user_clone["clone"]))
    assert before == ("refs/heads/main", user_clone["main"], user_clone["upstream"])
    out = run(tmp_path, user_clone, fail=True)
    assert not out.ok and out.restored["ok"]  # type: ignore[attr-defined]
    assert [r.status for r in out.results] == ["done", "done", "done", "failed"]  # type: ignore[attr-defined]
    assert freeze(py) == []
    assert not (tmp_path / "v" / ".lock").exists()  # uv's environment lock, made by the run: gone with it
    assert where(Path(user_clone["clone"])) == before
    assert git("status", "--porcelain", "--untracked-files=no", cwd=user_clone["clone"]) == ""


def test_rollback_of_a_run_puts_the_users_clone_back_on_its_branch(user_clone, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    before = where(Path(user_clone["clone"]))
    out = run(tmp_path, user_clone, fail=False)
    assert out.ok, out.error  # type: ignore[attr-defined]
    head, origin = git("rev-parse", "HEAD", cwd=user_clone["clone"]), git("remote", "get-url", "origin", cwd=user_clone["clone"])
    assert head == user_clone["pin"] and origin == user_clone["upstream"]  # the run fetched from the mirror, by URL
    report = rb.rollback(str(py), Console(err=io.StringIO()))
    assert [f.id for f in report.findings] == ["install-rolled-back"]
    assert freeze(py) == []
    assert not (tmp_path / "v" / ".lock").exists()
    assert where(Path(user_clone["clone"])) == before


def test_a_clone_the_user_moved_since_the_run_is_left_where_it_is(user_clone, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    out = run(tmp_path, user_clone, fail=False)
    assert out.ok, out.error  # type: ignore[attr-defined]
    git("checkout", "-q", "-b", "mine", cwd=user_clone["clone"])  # the user works on in the checkout
    (Path(user_clone["clone"]) / "megatron" / "core" / "__init__.py").write_text("X = 1\n")
    rb.rollback(str(py), Console(err=io.StringIO()))
    assert git("symbolic-ref", "-q", "HEAD", cwd=user_clone["clone"]) == "refs/heads/mine"
    assert (Path(user_clone["clone"]) / "megatron" / "core" / "__init__.py").read_text() == "X = 1\n"


def test_a_users_edited_clone_stops_the_run_before_its_first_change(user_clone, tmp_path, hermetic) -> None:
    """A tracked file the user edited in their checkout: the clone step refuses it (never a reset). It did so when
    its turn came, after the steps before it installed and were undone (real: 11 of the stack's 19 steps); asked
    before the first change, nothing runs, and the checkout and the target are as they were."""
    py = make_venv(tmp_path / "v")
    clone = Path(user_clone["clone"])
    edited = next(p for p in sorted(clone.rglob("*.py")) if ".git" not in p.parts)
    edited.write_text(edited.read_text() + "# mine\n")
    out = run(tmp_path, user_clone, fail=False)
    assert not out.ok and not out.changed and out.journal is None  # type: ignore[attr-defined]
    assert [(r.id, r.status) for r in out.results] == [  # type: ignore[attr-defined]
        ("torch-stack", "not-run"), ("clone-megatron-lm", "failed"), ("install-megatron-lm", "not-run")]
    assert "has local changes" in str(out.error) and "stash" in out.fix  # type: ignore[attr-defined]
    assert freeze(py) == [] and edited.read_text().endswith("# mine\n")
    assert where(clone) == ("refs/heads/main", user_clone["main"], user_clone["upstream"])
