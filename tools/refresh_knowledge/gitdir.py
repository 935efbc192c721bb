"""Read-only access to a local clone or bare mirror of an upstream repository: refs, files at a ref, dates.

Every git call is bounded (doctor.probes._run.run_bounded) and never writes to the repository.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from doctor.probes._run import run_bounded

_TIMEOUT = 60.0


class GitError(Exception):
    """The directory is not a git repository, or git failed on it."""


@dataclass
class GitDir:
    """A git directory (bare, or the .git of a work tree) and a cache of what was read from it."""

    path: str
    _cache: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, path: str) -> GitDir:
        p = os.path.abspath(path)
        for cand in (p, os.path.join(p, ".git")):
            if os.path.isfile(os.path.join(cand, "HEAD")) and os.path.isdir(os.path.join(cand, "objects")):
                return cls(cand)
        raise GitError(f"{path}: not a git directory (no HEAD/objects; pass the clone or its .git / a bare mirror)")

    def git(self, *args: str) -> str:
        r = run_bounded(["git", f"--git-dir={self.path}", *args], _TIMEOUT)
        if r.status != "ok" or r.returncode != 0:
            raise GitError(f"{self.path}: git {' '.join(args)}: {(r.err or r.error or r.status).strip()}")
        return r.out

    def refs(self, kind: str) -> list[str]:
        """Short names of `tags` or `heads` (local branches; a mirror keeps upstream branches there)."""
        out = self.git("for-each-ref", "--format=%(refname:short)", f"refs/{kind}/")
        return [x for x in out.splitlines() if x]

    def tags(self) -> list[str]:
        return self.refs("tags")

    def branches(self) -> list[str]:
        return self.refs("heads")

    def has(self, ref: str) -> bool:
        try:
            self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        except GitError:
            return False
        return True

    def commit(self, ref: str) -> str:
        return self.git("rev-parse", f"{ref}^{{commit}}").strip()

    def date(self, ref: str) -> str:
        """Committer date YYYY-MM-DD of `ref`."""
        return self.git("log", "-1", "--format=%cs", f"{ref}^{{commit}}").strip()

    def show(self, ref: str, path: str) -> str | None:
        """The text of `path` at `ref`, None when the file (or the ref) does not exist there."""
        key = (ref, path)
        if key not in self._cache:
            try:
                self._cache[key] = self.git("show", f"{ref}:{path}")
            except GitError:
                self._cache[key] = None
        return self._cache[key]

    def head_branch(self) -> str | None:
        """The default branch (what HEAD points at), None when HEAD is detached."""
        try:
            return self.git("symbolic-ref", "--short", "HEAD").strip() or None
        except GitError:
            return None

    def count(self, older: str, newer: str) -> int:
        """Commits in `newer` that `older` does not have."""
        return int(self.git("rev-list", "--count", f"{older}..{newer}").strip() or 0)
