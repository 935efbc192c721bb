"""Git facts come from git itself: status porcelain v2 parsing, tags peeled by git, and no facts (with the
reason) when git cannot answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from doctor.probes.gitrepo import add_git_facts, find_repo, git_facts, parse_status

SHA = "0123456789abcdef0123456789abcdef01234567"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_parse_status() -> None:
    text = f"# branch.oid {SHA}\n# branch.head main\n1 .M N... 100644 100644 100644 a b setup.py\n"
    assert parse_status(text) == (SHA, "main", True)
    assert parse_status("# branch.oid (initial)\n# branch.head (detached)\n") == (None, None, False)


def test_annotated_tag_on_a_detached_worktree(tmp_path: Path) -> None:
    repo = tmp_path / "MindSpeed"
    (repo / "mindspeed").mkdir(parents=True)
    (repo / "mindspeed" / "__init__.py").write_text("")
    _git(tmp_path, "init", "-q", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "c")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "tag", "-a", "v2.3.0", "-m", "release")
    sha = _git(repo, "rev-parse", "HEAD")
    wt = tmp_path / "wt"
    _git(repo, "worktree", "add", "-q", "--detach", str(wt), "v2.3.0")  # .git is a file here
    errors: list[str] = []
    assert git_facts(str(wt / "mindspeed"), {"PATH": "/usr/bin:/bin"}, errors) == {
        "commit": sha, "branch": None, "tag": "v2.3.0", "dirty": False, "root": str(wt)}
    (wt / "mindspeed" / "__init__.py").write_text("x = 1\n")
    assert git_facts(str(wt / "mindspeed"), {"PATH": "/usr/bin:/bin"}, errors)["dirty"] is True
    assert errors == []


def test_installed_packages_and_missing_git(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "site-packages" / "torch"
    (site / ".git").mkdir(parents=True)
    assert find_repo(str(site)) is None  # never spawns git for an installed package
    repo = tmp_path / "src"
    (repo / ".git").mkdir(parents=True)
    errors: list[str] = []
    doc = {"modules": {"megatron": {"kind": "package", "origins": [str(repo / "megatron")]}, "torch": None}}
    assert add_git_facts(doc, {"PATH": str(tmp_path / "empty")}) and "git" not in doc["modules"]["megatron"]
    assert git_facts(str(repo), {"PATH": str(tmp_path / "empty")}, errors) is None and "git status" in errors[0]
