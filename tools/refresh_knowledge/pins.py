"""The git sources of the profiles: every pinned commit exists in the clone of its repository and lies on the
ref the profile names (the tag's commit, or a commit of the branch)."""

from __future__ import annotations

from collections.abc import Iterable

from doctor.knowledge.profiles import Profile
from tools.refresh_knowledge.diff import Difference, Findings
from tools.refresh_knowledge.gitdir import GitDir, GitError

# profile git component -> the --option whose clone holds it
COMPONENT_REPO = {"vllm-ascend": "vllm-ascend", "mindspeed": "mindspeed", "verl": "verl"}


def check(repos: dict[str, GitDir], profiles: Iterable[Profile], out: Findings) -> None:
    for p in profiles:
        for comp, g in p.git.items():
            name = COMPONENT_REPO.get(comp)
            if name not in repos or not g.commit:
                continue
            git = repos[name]
            subject = f"{p.name} git.{comp}"
            where = f"{g.repo} @ {g.ref}"
            out.count(name)
            if not git.has(g.commit):
                out.add(Difference(name, "not-in-clone", subject, g.commit, None, where))
                continue
            if not git.has(g.ref):
                out.add(Difference(name, "not-in-clone", f"{subject} ref", g.ref, None, where))
                continue
            full = git.commit(g.commit)
            if g.ref in git.tags():
                if git.commit(g.ref) != full:
                    out.add(Difference(name, "changed", subject, g.commit, git.commit(g.ref)[:12], where))
            elif not _ancestor(git, full, g.ref):
                out.add(Difference(name, "changed", subject, f"{g.commit} (not on {g.ref})", git.commit(g.ref)[:12], where))


def _ancestor(git: GitDir, commit: str, ref: str) -> bool:
    try:
        git.git("merge-base", "--is-ancestor", commit, f"{ref}^{{commit}}")
    except GitError:
        return False
    return True
