"""Git facts of source checkouts on the target's path (Megatron-LM, MindSpeed, vllm-ascend clones), from git.

The in-target probe reports where each module comes from; for a package directory inside a git work tree
the doctor asks git itself: one `git status --porcelain=v2 --branch` (commit, branch, tracked changes) and,
on a commit, one `git tag --points-at HEAD` (git peels annotated tags). A missing git, a hang past the
timeout or a directory git refuses gives no facts and a recorded reason, never an exception.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from doctor.probes._run import run_bounded

GIT_TIMEOUT = 5.0
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def find_repo(pkg_dir: str, levels: int = 4) -> str | None:
    """The work tree holding `pkg_dir` (a `.git` dir or file within `levels` parents), never an installed
    package: site-packages and dist-packages are skipped without spawning git."""
    d = os.path.abspath(pkg_dir)
    if {"site-packages", "dist-packages"} & set(d.split(os.sep)):
        return None
    for _ in range(levels):
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def _git(repo: str, args: list[str], env: Mapping[str, str], errors: list[str]) -> str | None:
    run_env = {**env, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    r = run_bounded(["git", "-c", "safe.directory=*", "-C", repo, *args], GIT_TIMEOUT, env=run_env)
    if r.status != "ok" or r.returncode != 0:
        errors.append(f"git {args[0]} in {repo}: {(r.error or r.err.strip())[:200]}")
        return None
    return r.out


def parse_status(text: str) -> tuple[str | None, str | None, bool]:
    """(commit, branch, dirty) from `git status --porcelain=v2 --branch --untracked-files=no` output."""
    commit = branch = None
    dirty = False
    for line in text.splitlines():
        if line.startswith("# branch.oid "):
            oid = line[len("# branch.oid "):].strip()
            commit = oid if _SHA.match(oid) else None
        elif line.startswith("# branch.head "):
            head = line[len("# branch.head "):].strip()
            branch = None if head == "(detached)" else head
        elif line and not line.startswith("#"):
            dirty = True
    return commit, branch, dirty


def git_facts(pkg_dir: str, env: Mapping[str, str], errors: list[str]) -> dict[str, Any] | None:
    """{"commit", "branch", "tag", "dirty", "root"} of the checkout holding `pkg_dir`, or None."""
    repo = find_repo(pkg_dir)
    if repo is None:
        return None
    status = _git(repo, ["status", "--porcelain=v2", "--branch", "--untracked-files=no"], env, errors)
    if status is None:
        return None
    commit, branch, dirty = parse_status(status)
    tag = None
    if commit:
        tags = sorted((_git(repo, ["tag", "--points-at", "HEAD"], env, errors) or "").split())
        tag = tags[0] if tags else None
    return {"commit": commit, "branch": branch, "tag": tag, "dirty": dirty, "root": repo}


def add_git_facts(doc: dict[str, Any], env: Mapping[str, str]) -> list[str]:
    """Add `git` to every module of a probe document whose package directory is in a work tree; returns
    the reasons git could not answer."""
    errors: list[str] = []
    for facts in (doc.get("modules") or {}).values():
        if not isinstance(facts, dict) or facts.get("kind") not in ("package", "namespace"):
            continue
        origins = facts.get("resolved") or facts.get("origins") or []
        if origins and isinstance(origins[0], str):
            git = git_facts(origins[0], env, errors)
            if git is not None:
                facts["git"] = git
    return errors
