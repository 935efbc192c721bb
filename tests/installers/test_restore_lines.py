"""Every line a clone restore writes about something it left is marked so where it is written (restoreline), and
`--rollback`'s warning `install-clone-left` is built from those marks: a line reworded one day cannot drop out of the
warning, as it did while the warning picked lines by their wording. One case per place in `clonestate.restore` and
`gitsrc.put_back` that leaves something, each on real local git repositories: the run's change, then someone's
change since, then the restore."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from doctor.installers import clonestate
from doctor.installers.restoreline import clones_left
from tests.installers.wheelkit import git

Act = Callable[[Path], None]
FILE = ("-c", "protocol.file.allow=always")


def new_repo(d: Path, files: dict[str, str]) -> Path:
    """`git init` at `d` (branch main) and one commit of `files`."""
    d.mkdir()
    git("init", "-q", "-b", "main", cwd=d)
    for rel, text in files.items():
        (d / rel).write_text(text)
    git("add", "-A", cwd=d)
    git("commit", "-q", "-m", "first", cwd=d)
    return d


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, str]:
    """A local repository (no remote: a user's own checkout) on `main` at commit B, with v1 at commit A before it,
    `build/` ignored."""
    work = new_repo(tmp_path / "clone", {".gitignore": "build/\n", "core.py": "A = 1\n"})
    git("tag", "v1", cwd=work)
    a = git("rev-parse", "HEAD", cwd=work)
    (work / "core.py").write_text("A = 2\n")
    git("commit", "-q", "-am", "B", cwd=work)
    return {"A": a, "B": git("rev-parse", "HEAD", cwd=work)}


def restore(clone: Path, run: Act, since: Act, *, recorded: bool = True, moved_to: str | None = None) -> list:
    """Record `clone` (absent: the run makes it), let `run` change it and record what it left (unless `recorded` is
    False: the run stopped first), let `since` change it, and restore it as `--rollback` does."""
    rec = clonestate.record(clone)
    if rec["before"] is None:
        rec["made_dirs"] = clonestate.missing_parents(clone)
    rec["touched"] = True
    run(clone)
    if recorded:
        rec["after"] = clonestate.snapshot(clone)
    if moved_to:
        rec["moved_to"] = moved_to
    since(clone)
    return clonestate.restore(rec, live=False)


def nothing(_c: Path) -> None:
    pass


def write(rel: str, text: str) -> Act:
    def act(c: Path) -> None:
        (c / rel).parent.mkdir(parents=True, exist_ok=True)
        (c / rel).write_text(text)
    return act


def gitdo(*args: str) -> Act:
    return lambda c: None if git(*args, cwd=c) is None else None


def both(*acts: Act) -> Act:
    def act(c: Path) -> None:
        for a in acts:
            a(c)
    return act


def superproject(tmp_path: Path) -> Path:
    """A user's checkout of a project with one submodule (`sub`), not initialised."""
    sub = new_repo(tmp_path / "subrepo", {"k.h": "// kernels\n"})
    top = new_repo(tmp_path / "top", {"README": "top\n"})
    git(*FILE, "submodule", "add", "-q", str(sub), "sub", cwd=top)
    git("commit", "-q", "-m", "sub", cwd=top)
    (sub / "k.h").write_text("// kernels 2\n")
    git("commit", "-q", "-am", "k2", cwd=sub)  # a later commit of the submodule, which the superproject does not pin
    clone = tmp_path / "clone"
    git("clone", "-q", str(top), str(clone))
    return clone


def CASES(r: dict[str, str]) -> dict[str, tuple[dict, str]]:  # noqa: N802
    """{site: (restore's arguments, a word of the line it writes)}."""
    return {
        "not-a-clone-any-more": ({"run": gitdo("tag", "run-tag"), "since": lambda c: shutil.rmtree(c / ".git")},
                                 "not a git clone any more"),
        "stopped-before-recording": ({"run": gitdo("tag", "run-tag"), "since": nothing, "recorded": False},
                                     "stopped before recording"),
        "ref-moved-since": ({"run": gitdo("tag", "run-tag"), "since": gitdo("tag", "-f", "run-tag", r["A"])},
                            "refs/tags/run-tag moved since"),
        "config-changed-since": ({"run": gitdo("config", "submodule.x.url", "/run"),
                                  "since": gitdo("config", "submodule.x.url", "/mine")}, "config submodule.x.url"),
        "untracked-changed-since": ({"run": write("build/out.o", "run\n"), "since": write("build/out.o", "mine\n")},
                                    "changed since it wrote them left"),
        "untracked-rewritten": ({"run": write("build/out.o", "run\n"), "since": nothing}, "were rewritten"),
        "checkout-moved-since": ({"run": gitdo("checkout", "-q", "--detach", r["A"]),
                                  "since": gitdo("checkout", "-q", "--detach", r["B"]), "moved_to": r["A"]},
                                 "the run checked out; left as it is"),
        "checkout-tracked-changed": ({"run": gitdo("checkout", "-q", "--detach", r["A"]),
                                      "since": write("core.py", "mine\n"), "moved_to": r["A"]},
                                     "tracked files changed since the run"),
        "checkout-failed": ({"run": gitdo("checkout", "-q", "--detach", r["A"]),
                             "since": gitdo("branch", "-q", "-D", "main"), "moved_to": r["A"]},
                            "could not check main out again"),
        "made-changed-since": ({"run": lambda c: None if git("clone", "-q", str(c.parent.parent / "clone"), str(c)) else None,
                                "since": write("mine.py", "1\n")}, "made by the run, but changed since"),
        "made-not-a-clone": ({"run": lambda c: None if git("clone", "-q", str(c.parent.parent / "clone"), str(c)) else None,
                              "since": lambda c: shutil.rmtree(c / ".git")}, "made by the run, but not a git clone"),
    }


SITES = ["not-a-clone-any-more", "stopped-before-recording", "ref-moved-since", "config-changed-since",
         "untracked-changed-since", "untracked-rewritten", "checkout-moved-since", "checkout-tracked-changed",
         "checkout-failed", "made-changed-since", "made-not-a-clone"]


@pytest.mark.parametrize("site", SITES)
def test_every_line_that_leaves_something_is_marked_and_warned_about(site, repo, tmp_path) -> None:
    args, word = CASES(repo)[site]
    clone = tmp_path / "clone"
    if site == "untracked-rewritten":  # the build output was there before the run (the user's own build)
        write("build/out.o", "mine\n")(clone)
    if site.startswith("made-"):
        clone = tmp_path / "src" / "made"
    lines = restore(clone, **args)
    marked = [ln for ln in lines if ln.left]
    assert [ln.path for ln in marked] == [str(clone)] and word in marked[0].text, [str(ln) for ln in lines]
    assert marked[0].text.startswith(f"{clone}: ")
    assert marked[0].made == (site == "made-changed-since")
    warning = clones_left([ln.record() for ln in marked], "the rollback of install i1")
    assert [f.id for f in warning] == ["install-clone-left"] and warning[0].evidence["lines"] == [marked[0].text]


@pytest.mark.parametrize("site", ["submodule-dirty", "submodule-moved", "submodule-not-as-before"])
def test_a_submodule_the_run_changed_and_someone_changed_since_is_marked(site, tmp_path) -> None:
    """The run initialises the submodule (`git submodule init` + update), or, where the user had it initialised,
    checks it out at another commit; then someone writes into it or commits in it."""
    clone = superproject(tmp_path)
    init = gitdo(*FILE, "submodule", "update", "--init", "-q")
    if site == "submodule-not-as-before":
        init(clone)
        run = gitdo(*FILE, "-C", "sub", "pull", "-q", "origin", "main")  # the later commit
    else:
        run = init
    since = both(write("sub/k.h", "// mine\n"), gitdo("-C", "sub", "commit", "-q", "-am", "mine")) \
        if site == "submodule-moved" else write("sub/notes.txt", "mine\n")
    lines = restore(clone, run, since)
    marked = [ln.text for ln in lines if ln.left]
    word = {"submodule-dirty": "submodule sub has changes or untracked files",
            "submodule-moved": "submodule sub moved since the run",
            "submodule-not-as-before": "submodules not as they were"}[site]
    assert any(word in t for t in marked), [str(ln) for ln in lines]
    assert all(t.startswith(f"{clone}: ") for t in marked)


def test_a_clean_restore_marks_nothing(repo, tmp_path) -> None:
    clone = tmp_path / "clone"
    run = both(gitdo("tag", "run-tag"), gitdo("config", "submodule.x.url", "/run"), write("build/out.o", "run\n"),
               gitdo("checkout", "-q", "--detach", repo["A"]))
    lines = restore(clone, run, nothing, moved_to=repo["A"])
    assert len(lines) == 4 and not [str(ln) for ln in lines if ln.left]
    made = restore(tmp_path / "src" / "made",
                   lambda c: None if git("clone", "-q", str(clone), str(c)) else None, nothing)
    assert [str(ln) for ln in made] == [f"{tmp_path / 'src' / 'made'}: made by the run; removed",
                                        f"{tmp_path / 'src'}: made by the run (empty); removed"]
