"""What a failed run (and a `--rollback`) leaves of the git clones it used: a clone the run made goes, with the
directories it created for it, unless someone changed it since; in a clone that was there (a user's `--src`
checkout) the tags the run fetched and the build outputs its editable install wrote into the work tree go too, and
whatever was there before stays byte for byte. Compared as an operator would: sha256 of every file of the venv and
of the `--src` directory, and of the clone `git status --porcelain --ignored`, `for-each-ref`, `remote -v` and
`config --list --local`."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest

from doctor.console import Console
from doctor.installers import rollback as rb
from doctor.installers.backends import Source, UvBackend
from doctor.installers.execute import Executor
from doctor.installers.plan import CLONE, INSTALL, GitSource, Plan, Step, Target
from tests.installers.test_user_clone import megatron_plan
from tests.installers.wheelkit import freeze, git, make_source_repo, make_venv, make_wheel

URL = "https://github.com/NVIDIA/Megatron-LM.git"


@pytest.fixture
def world(tmp_path: Path) -> dict[str, object]:
    """Upstream Megatron-LM-like repository (pinned tag, later `main`; its editable build writes an egg-info into
    the work tree, as setuptools does), a mirror of it, and the wheels of the steps around it (one breaks)."""
    shas = make_source_repo(tmp_path / "up" / "Megatron-LM.git", dist="megatron-core",
                            packages={"megatron/core/__init__.py": ""}, egg_info=True,
                            refs=[("tag", "core_v0.12.1", "0.12.1"), ("branch", "main", "0.13.0")])
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "2.7.1+cpu")
    make_wheel(wheels, "triton-ascend", "3.2.0rc4", broken=True)  # fails midway through its files
    return {"upstream": tmp_path / "up" / "Megatron-LM.git", "wheels": wheels, "pin": shas["core_v0.12.1"],
            "main": shas["main"]}


def run(tmp_path: Path, w: dict, src_dir: Path, *, fail: bool, ref: str = "core_v0.12.1") -> object:
    src = GitSource("Megatron-LM", URL, ref, commit=str(w["pin"]) if ref == "core_v0.12.1" else None, module="megatron")
    plan = megatron_plan(src, src_dir, fail=fail)
    return Executor(plan, UvBackend(isolated=True), str(tmp_path / "v" / "bin" / "python"),
                    log_path=tmp_path / "install.log", mirrors={URL.removesuffix(".git"): str(w["upstream"])},
                    source=Source(find_links=(str(w["wheels"]),), no_index=True, offline=True)).run()


def tree(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """sha256 (or link target, or 'dir') of every path under `root`; `skip`: top-level names left out."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == "." or rel.split(os.sep)[0] not in skip:
            dirs[:] = [d for d in dirs if rel != "." or d not in skip]
            for n in files + dirs:
                p = os.path.join(dirpath, n)
                key = os.path.relpath(p, root)
                if os.path.islink(p):
                    out[key] = "-> " + os.readlink(p)
                elif os.path.isdir(p):
                    out[key] = "dir"
                elif "__pycache__" not in key:
                    out[key] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def clone_state(clone: Path) -> tuple[dict[str, str], str, str, str, str, str, str | None]:
    """The work tree's files, status (ignored files too), refs, remotes, local config, checked-out branch and
    `.git/FETCH_HEAD`."""
    fh = clone / ".git" / "FETCH_HEAD"
    return (tree(clone, skip=(".git",)), git("status", "--porcelain", "--ignored", cwd=clone),
            git("for-each-ref", cwd=clone), git("remote", "-v", cwd=clone), git("config", "--list", "--local", cwd=clone),
            git("symbolic-ref", "-q", "HEAD", cwd=clone), fh.read_text() if fh.exists() else None)


def test_a_failed_first_run_leaves_no_clone_in_the_prefix(world, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    before = tree(tmp_path / "v", skip=(".doctor",))
    out = run(tmp_path, world, tmp_path / "v" / "src", fail=True)
    assert not out.ok and out.restored["ok"]  # type: ignore[attr-defined]
    assert [r.status for r in out.results] == ["done", "done", "done", "failed"]  # type: ignore[attr-defined]
    assert freeze(py) == []
    assert tree(tmp_path / "v", skip=(".doctor",)) == before  # no src/, no src/Megatron-LM
    assert any("src/Megatron-LM: made by the run; removed" in c for c in out.restored["clones"])  # type: ignore[attr-defined]


def test_a_failed_run_into_a_users_src_dir_removes_only_the_clone_it_made(world, tmp_path, hermetic) -> None:
    make_venv(tmp_path / "v")
    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "notes" / "todo.txt").write_text("mine\n")
    before = tree(work)
    out = run(tmp_path, world, work, fail=True)
    assert not out.ok and out.restored["ok"]  # type: ignore[attr-defined]
    assert tree(work) == before
    # a --src that did not exist: made by the run, so it goes too (its parents as well)
    out = run(tmp_path, world, tmp_path / "new" / "deep", fail=True)
    assert not out.ok and not (tmp_path / "new").exists()  # type: ignore[attr-defined]


def test_rollback_after_a_successful_run_removes_the_clone_it_made(world, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    before = tree(tmp_path / "v", skip=(".doctor",))
    out = run(tmp_path, world, tmp_path / "v" / "src", fail=False)
    assert out.ok, out.error  # type: ignore[attr-defined]
    assert (tmp_path / "v" / "src" / "Megatron-LM" / "megatron_core.egg-info").is_dir()  # the editable build's
    report = rb.rollback(str(py), Console(err=io.StringIO()))
    assert [f.id for f in report.findings] == ["install-rolled-back"]
    assert freeze(py) == []
    assert tree(tmp_path / "v", skip=(".doctor",)) == before


@pytest.mark.parametrize("change", ["untracked", "commit", "egg-info"])
def test_rollback_leaves_a_made_clone_someone_changed_since_and_names_it(change, world, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    out = run(tmp_path, world, tmp_path / "v" / "src", fail=False)
    assert out.ok, out.error  # type: ignore[attr-defined]
    clone = tmp_path / "v" / "src" / "Megatron-LM"
    if change == "untracked":
        (clone / "my_experiment.py").write_text("print(1)\n")
    elif change == "commit":
        git("checkout", "-q", "-b", "fix", cwd=clone)
        (clone / "megatron" / "core" / "__init__.py").write_text("X = 1\n")
        git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "my fix", cwd=clone)
    else:
        (clone / "megatron_core.egg-info" / "PKG-INFO").write_text("rebuilt by hand\n")
    err = io.StringIO()
    report = rb.rollback(str(py), Console(err=err))
    # the packages are back, but the clone stays: a warning names it and how to remove it, not only a line of text
    assert [(f.id, f.severity.value) for f in report.findings] == [("install-rolled-back", "info"),
                                                                   ("install-clone-left", "warning")]
    assert freeze(py) == []
    assert clone.is_dir()
    lines = report.extra["rollback"]["clones"]
    assert any(f"{clone}: made by the run, but changed since" in ln and "left as it is" in ln for ln in lines), lines
    left = report.findings[1]
    assert str(clone) in left.title and left.evidence["clones"] == [str(clone)]
    assert left.fix is not None and left.fix.text.startswith(f"`rm -rf {clone}` if nothing in it is yours"), left.fix
    assert not left.fix.commands  # never a command a "fix all" line would run: the user looks first


def test_a_users_clone_loses_the_tag_and_the_build_output_the_run_added_and_keeps_its_own(world, tmp_path,
                                                                                           hermetic) -> None:
    """The user's checkout (on `main`, cloned without tags, with an untracked file and an ignored one of their own):
    the run fetches the pinned tag into it, checks it out and builds it editable (an egg-info in the tree)."""
    make_venv(tmp_path / "v")
    clone = tmp_path / "work" / "Megatron-LM"
    git("clone", "-q", "--no-tags", str(world["upstream"]), str(clone))
    (clone / ".git" / "info" / "exclude").write_text("*.log\n")
    (clone / "NOTES.md").write_text("mine\n")
    (clone / "train.log").write_text("step 1\n")
    before = clone_state(clone)
    assert "core_v0.12.1" not in before[2]
    out = run(tmp_path, world, tmp_path / "work", fail=True)
    assert not out.ok and out.restored["ok"]  # type: ignore[attr-defined]
    assert clone_state(clone) == before
    lines = out.restored["clones"]  # type: ignore[attr-defined]
    assert any("refs/tags/core_v0.12.1 (the run's) deleted" in ln for ln in lines), lines
    assert any("megatron_core.egg-info" in ln and "removed" in ln for ln in lines), lines


def test_rollback_keeps_a_build_output_in_a_users_clone_that_changed_since(world, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    clone = tmp_path / "work" / "Megatron-LM"
    git("clone", "-q", str(world["upstream"]), str(clone))
    out = run(tmp_path, world, tmp_path / "work", fail=False)
    assert out.ok, out.error  # type: ignore[attr-defined]
    (clone / "megatron_core.egg-info" / "PKG-INFO").write_text("rebuilt by hand\n")
    report = rb.rollback(str(py), Console(err=io.StringIO()))
    assert freeze(py) == [] and git("symbolic-ref", "-q", "HEAD", cwd=clone) == "refs/heads/main"
    assert (clone / "megatron_core.egg-info" / "PKG-INFO").read_text() == "rebuilt by hand\n"
    lines = report.extra["rollback"]["clones"]
    assert any("changed since it wrote them left: megatron_core.egg-info" in ln for ln in lines), lines


@pytest.mark.parametrize("on_main", [True, False], ids=["main-has-it", "pin-only"])
def test_submodules_the_run_initialised_in_a_users_clone_are_deinitialised_and_its_config_put_back(on_main, tmp_path,
                                                                                                     hermetic) -> None:
    """vllm-ascend's kernels come as a submodule (csrc/third_party/catlass, from gitcode): the clone step runs
    `git submodule init`, points its URL at the mirror and checks it out. A user's checkout on `main` that had it
    uninitialised gets it uninitialised again, its `.git/config` as it was; where `main` has no such submodule,
    the work tree the run checked out (which `git checkout main` leaves behind) goes."""
    cat = tmp_path / "up" / "catlass.git"
    make_source_repo(cat, dist="catlass", packages={"include/catlass.h": "// kernels\n"}, refs=[("branch", "main", "1.0")])
    up = tmp_path / "up" / "vllm-ascend.git"
    make_source_repo(up, dist="vllm-ascend", packages={"vllm_ascend/__init__.py": ""}, refs=[("branch", "main", "0.13.0")])
    work = up.with_name(up.name + ".work")
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(cat), "csrc/third_party/catlass", cwd=work)
    git("config", "-f", ".gitmodules", "submodule.csrc/third_party/catlass.url", "https://gitcode.com/cann/catlass.git",
        cwd=work)
    git("commit", "-q", "-am", "catlass", cwd=work)
    git("tag", "v0.13.0", cwd=work)
    pin = git("rev-parse", "HEAD", cwd=work)
    if on_main:
        (work / "vllm_ascend" / "later.py").write_text("")
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", "later", cwd=work)
    git("push", "-q", "-f", str(up), "refs/tags/v0.13.0", *(["HEAD:refs/heads/main"] if on_main else []), cwd=work)
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "2.7.1+cpu")
    make_wheel(wheels, "triton-ascend", "3.2.0rc4", broken=True)
    clone = tmp_path / "work" / "vllm-ascend"
    git("clone", "-q", str(up), str(clone))
    git("-c", "protocol.file.allow=always", "fetch", "-q", "origin", "v0.13.0", cwd=clone)  # the user had fetched it
    before = clone_state(clone), git("submodule", "status", cwd=clone)
    py = make_venv(tmp_path / "v")
    url = "https://github.com/vllm-project/vllm-ascend.git"
    src = GitSource("vllm-ascend", url, "v0.13.0", commit=pin, module="vllm_ascend", submodules=True)
    steps = (Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",)),
             Step("clone-vllm-ascend", CLONE, "clone", source=src),
             Step("triton-ascend", INSTALL, "triton-ascend", requirements=("triton-ascend==3.2.0rc4",)))
    plan = Plan("test", "", Target(None, "3.11", "x86_64", None, src_dir=str(tmp_path / "work")), steps)
    out = Executor(plan, UvBackend(isolated=True), str(py), log_path=tmp_path / "install.log",
                   mirrors={url.removesuffix(".git"): str(up), "https://gitcode.com/cann/catlass": str(cat)},
                   source=Source(find_links=(str(wheels),), no_index=True, offline=True)).run()
    assert [r.status for r in out.results] == ["done", "done", "failed"], out.error
    assert (clone_state(clone), git("submodule", "status", cwd=clone)) == before
    lines = out.restored["clones"]  # type: ignore[index]
    want = "(the run initialised it) deinitialised" if on_main else "the run checked out (the branch has none) removed"
    assert any(f"submodule csrc/third_party/catlass {want}" in ln for ln in lines), lines


def test_a_missing_ref_leaves_a_users_clone_as_it_was(world, tmp_path, hermetic) -> None:
    """`--git-ref Megatron-LM=no-such-tag` into the user's checkout: the fetch finds nothing (and still writes an
    empty FETCH_HEAD), the checkout fails; the clone is as before, FETCH_HEAD included."""
    make_venv(tmp_path / "v")
    clone = tmp_path / "work" / "Megatron-LM"
    git("clone", "-q", str(world["upstream"]), str(clone))
    before = clone_state(clone)
    out = run(tmp_path, world, tmp_path / "work", fail=False, ref="no-such-tag")
    assert [r.status for r in out.results][:2] == ["done", "failed"] and out.restored["ok"]  # type: ignore[attr-defined]
    assert clone_state(clone) == before


def test_a_clone_whose_checkout_failed_midway_goes_and_a_full_disk_does_not_stop_the_restore(world, tmp_path, hermetic,
                                                                                            monkeypatch) -> None:
    """The disk fills during the clone step (a real verl checkout on a 40 MB tmpfs: `git checkout` stops with
    'unable to write file', half the tracked files missing): the install log cannot be written any more either.
    The restore still runs, removes the half-made clone and records itself in the journal."""
    import errno

    from doctor.installers import execute as ex_mod
    from doctor.installers import journal as jr

    real_open = open
    full = {"on": False}

    class FullLog:
        def __init__(self, fh) -> None:  # type: ignore[no-untyped-def]
            self.fh = fh

        def write(self, text: str) -> int:
            if full["on"]:
                raise OSError(errno.ENOSPC, "No space left on device")
            if "-- clone-megatron-lm" in text:
                full["on"] = True  # from the clone step on, nothing more fits
            return self.fh.write(text)

        def flush(self) -> None:
            if full["on"]:
                raise OSError(errno.ENOSPC, "No space left on device")
            self.fh.flush()

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self

        def __exit__(self, *a) -> None:  # type: ignore[no-untyped-def]
            self.fh.close()

    def fake_open(path, mode="r", *a, **kw):  # type: ignore[no-untyped-def]
        fh = real_open(path, mode, *a, **kw)
        return FullLog(fh) if "a" in mode else fh

    monkeypatch.setattr(ex_mod, "open", fake_open, raising=False)
    py = make_venv(tmp_path / "v")
    before = tree(tmp_path / "v", skip=(".doctor",))
    w = dict(world, pin="0" * 40)  # the tag clones, the pinned commit is not there: the checkout fails, tree empty
    out = run(tmp_path, w, tmp_path / "v" / "src", fail=False)
    assert [r.status for r in out.results][:2] == ["done", "failed"], out.error  # type: ignore[attr-defined]
    assert out.restored["ok"], out.restored  # type: ignore[attr-defined]
    assert freeze(py) == [] and tree(tmp_path / "v", skip=(".doctor",)) == before
    assert jr.latest(str(tmp_path / "v")).state == jr.ROLLED_BACK  # type: ignore[union-attr]


def test_a_clone_someone_made_after_the_run_started_is_theirs(world, tmp_path, hermetic) -> None:
    """The journal found no clone at DIR/Megatron-LM when the run started; by the clone step there is one (the user
    cloned it meanwhile): it is recorded as theirs, put back, never removed."""
    from doctor.installers import journal as jr
    from doctor.installers.target import probe

    py = make_venv(tmp_path / "v")
    dest = tmp_path / "work" / "Megatron-LM"
    j = jr.Journal.start(probe(str(py), files=True), profile="p", clones=(str(dest),))
    git("clone", "-q", str(world["upstream"]), str(dest))  # the user, while the run installs torch
    j.clone_moving(str(dest))
    git("checkout", "-q", "--detach", str(world["pin"]), cwd=dest)  # what the clone step does
    j.clone_moved(str(dest), str(world["pin"]))
    res = j.restore(str(py), live=True)
    assert dest.is_dir() and git("symbolic-ref", "-q", "HEAD", cwd=dest) == "refs/heads/main", res


@pytest.mark.parametrize("live", [True, False], ids=["failed-run", "rollback"])
def test_a_users_clone_the_run_never_used_is_not_touched(live, world, tmp_path, hermetic) -> None:
    """The run failed (or finished and is rolled back) before any step cloned into or built from the user's
    checkout: what the user wrote there meanwhile (an untracked file, mid-run) is theirs, not the run's output."""
    from doctor.installers import journal as jr
    from doctor.installers.target import probe

    py = make_venv(tmp_path / "v")
    dest = tmp_path / "work" / "Megatron-LM"
    git("clone", "-q", str(world["upstream"]), str(dest))
    j = jr.Journal.start(probe(str(py), files=True), profile="p", clones=(str(dest),))
    (dest / "eval_results.json").write_text("{}\n")  # the user, while the run installs torch
    if not live:
        j.finish(probe(str(py)))
    res = j.restore(str(py), live=live)
    assert (dest / "eval_results.json").read_text() == "{}\n", res
