"""Git facts of source checkouts on the target's path (Megatron-LM, MindSpeed, vllm-ascend clones), from git.

The in-target probe reports where each module comes from; for a package directory inside a git work tree
the doctor asks git itself: one `git status --porcelain=v2 --branch` (commit, branch, tracked changes) and,
on a commit, one `git tag --points-at HEAD` (git peels annotated tags). A missing git, a hang past the
timeout or a directory git refuses gives no facts and a recorded reason, never an exception.

A vllm-ascend checkout also states, in its own tree, which vLLM it pairs with: since
https://github.com/vllm-project/vllm-ascend/pull/9801 (first tag v0.21.0rc1) `.github/vllm-release-tag.commit`
holds the vLLM release tag its CI tests (`v0.23.0` at tag v0.23.0) and `.github/vllm-main-verified.commit` the
vLLM main commit it is verified against. Those two files are read (a bounded read each, no git) for the module
`vllm_ascend` only; that is the one fact about a source build that no release matrix can give.
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


# (snapshot key, file under the work tree's root, what vllm-ascend's CI accepts in it). The patterns are the ones its
# workflows validate the files with before use (a tag `v<major>.<minor>.<micro>` with an optional `.`/`-` suffix; a
# 7-40 hex commit: https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/.github/
# workflows/pr_test.yaml), so a value CI would refuse is not a fact here either.
VLLM_ANCHORS = (
    ("vllm_release_tag", ".github/vllm-release-tag.commit", re.compile(r"v[0-9]+\.[0-9]+\.[0-9]+([.-].*)?")),
    ("vllm_main_verified", ".github/vllm-main-verified.commit", re.compile(r"[0-9a-f]{7,40}")),
)
_ANCHOR_MAX_BYTES = 256  # a tag or a sha and a newline; anything longer is not such a file


def vllm_anchors(root: str, errors: list[str]) -> dict[str, str]:
    """The vLLM refs a vllm-ascend work tree states (see the module docstring), whitespace removed as its CI does.
    An absent file is no fact (trees before v0.21.0rc1); an unreadable, oversized, empty or malformed one is no
    fact either, with the reason in `errors`: the check stays silent rather than judge from a guess."""
    out: dict[str, str] = {}
    for key, rel, pattern in VLLM_ANCHORS:
        path = os.path.join(root, rel)
        try:
            with open(path, "rb") as f:
                raw = f.read(_ANCHOR_MAX_BYTES + 1)
        except FileNotFoundError:
            continue
        except OSError as e:
            errors.append(f"{path}: {e.strerror or e}")
            continue
        try:
            text = "".join(raw.decode("utf-8").split())
        except UnicodeDecodeError:
            text = None
        if len(raw) > _ANCHOR_MAX_BYTES or text is None or not pattern.fullmatch(text):
            errors.append(f"{path}: not a vLLM {'release tag' if key == 'vllm_release_tag' else 'commit'} "
                          f"({raw[:40]!r}); not recorded")
            continue
        out[key] = text
    return out


def add_git_facts(doc: dict[str, Any], env: Mapping[str, str]) -> list[str]:
    """Add `git` to every module of a probe document whose package directory is in a work tree; returns
    the reasons git could not answer."""
    errors: list[str] = []
    for name, facts in (doc.get("modules") or {}).items():
        if not isinstance(facts, dict) or facts.get("kind") not in ("package", "namespace"):
            continue
        origins = facts.get("resolved") or facts.get("origins") or []
        if origins and isinstance(origins[0], str):
            git = git_facts(origins[0], env, errors)
            if git is not None:
                if name == "vllm_ascend":
                    git.update(vllm_anchors(git["root"], errors))
                facts["git"] = git
    return errors
