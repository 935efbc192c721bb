"""What an --offline plan's steps read only after a clone, read from the wheelhouse's git bundles before the first change.

A step may install what only its clone says: a `-r` file inside it (verl's requirements-npu.txt), an editable
source's own dependencies (MindSpeed's setup.py installs its requirements.txt, `numpy<=1.26.0` among them) and the
[build-system].requires pip builds it with in isolation, or a build-requirements step's files (vllm-ascend's). Offline,
the wheelhouse carries every source as a bundle at the commit the install checks out (manifest `git.<name>.commit`),
so those files can be read there before anything runs, without a checkout: the bundle is cloned bare into a temporary
directory and each file read with `git cat-file blob COMMIT:PATH`. What is read joins the step's requirements in the
one wheelhouse judgement (installers/housecheck.py).

A source's own dependencies are read as its static metadata says them: pyproject `[project].dependencies` when not
`dynamic`; else a setup.py whose `install_requires` is a list literal (verl's) or reads a requirements file it names
(MindSpeed's `Path("requirements.txt").read_text().splitlines()`). Anything else (computed in code) is not known
before a build: left to the step, as before.
"""

from __future__ import annotations

import ast
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from doctor.installers.plan import EDITABLE, INSTALL, Plan, Step
from doctor.installers.satisfy import expanded_file_lines, requirement_lines

Read = Callable[[str, str], "str | None"]  # (source name, path in its tree) -> the text at the pinned commit


class BundleFiles:
    """Files of the wheelhouse's git sources at their pinned commits, read from the bundles (no work tree). A
    context manager: the bare copies live in a temporary directory removed on exit."""

    def __init__(self, house: str | Path, git: Mapping[str, Any]) -> None:
        self.house = Path(house)
        self.git = git
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._repos: dict[str, str | None] = {}

    def __enter__(self) -> BundleFiles:
        self._tmp = tempfile.TemporaryDirectory(prefix="doctor-bundles-")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    def _repo(self, source: str) -> str | None:
        if source not in self._repos:
            g = self.git.get(source)
            repo = None
            if isinstance(g, dict) and g.get("bundle") and self._tmp is not None:
                repo = os.path.join(self._tmp.name, f"{len(self._repos)}.git")
                cp = subprocess.run(["git", "clone", "-q", "--bare", str(self.house / str(g["bundle"])), repo],
                                    capture_output=True, text=True, timeout=600)
                repo = repo if cp.returncode == 0 else None
            self._repos[source] = repo
        return self._repos[source]

    def read(self, source: str, path: str) -> str | None:
        """The text of `path` in `source` at the manifest's commit; None when the bundle or the file is not there."""
        repo = self._repo(source)
        commit = str((self.git.get(source) or {}).get("commit") or "")
        if repo is None or not commit:
            return None
        cp = subprocess.run(["git", "--git-dir", repo, "cat-file", "blob", f"{commit}:{path}"], capture_output=True,
                            timeout=120)
        return cp.stdout.decode("utf-8", "replace") if cp.returncode == 0 else None


def file_lines(read: Read, source: str, path: str) -> list[str] | None:
    """The requirement lines of a requirements file in a source's tree (comments and options dropped), a nested `-r`
    replaced by its file's lines (satisfy.expanded_file_lines, as for a file on disk); None when one is not there."""
    got = expanded_file_lines(lambda p: read(source, os.path.normpath(p)), path)
    return None if got is None else [line for line, _ in requirement_lines(got)]


def build_requires(read: Read, source: str) -> list[str]:
    """[build-system].requires at the pinned commit (PEP 517's default without one), as the step builds it."""
    from doctor.installers.execute import build_system_requires

    text = read(source, "pyproject.toml")
    return build_system_requires(text.encode() if text is not None else None, f"{source}:pyproject.toml")


def own_dependencies(read: Read, source: str) -> list[str] | None:
    """A source's own dependencies from its static metadata (see the module's docstring); None when not known
    before a build."""
    from doctor.tomlfile import load_toml

    text = read(source, "pyproject.toml")
    if text is not None:
        try:
            project = load_toml(text.encode(), f"{source}:pyproject.toml").get("project")
        except Exception:  # noqa: BLE001 - a file that does not parse says nothing here; pip finds out
            project = None
        if isinstance(project, dict) and "dependencies" not in (project.get("dynamic") or []):
            deps = project.get("dependencies") or []
            return [str(d) for d in deps] if isinstance(deps, list) else None
    setup = read(source, "setup.py")
    return None if setup is None else _setup_requires(setup, lambda p: file_lines(read, source, p))


def _setup_requires(text: str, lines_of: Callable[[str], list[str] | None]) -> list[str] | None:
    """`install_requires` of a setup.py: a list literal (in the call or assigned to a name), or the lines of the one
    requirements file the expression names."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    names: dict[str, ast.expr] = {}
    value: ast.expr | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            value = node.value
    if isinstance(value, ast.Name):
        value = names.get(value.id)
    if value is None:
        return []  # setup() without install_requires: no dependencies
    try:
        got = ast.literal_eval(value)
        return [str(x) for x in got] if isinstance(got, (list, tuple)) else None
    except ValueError:
        pass
    files = {n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value.endswith(".txt")}
    return lines_of(files.pop()) if len(files) == 1 else None


def _in_source(path: str, plan: Plan) -> tuple[str, str] | None:
    """(source, path in its tree) of a file under one of the plan's clones."""
    src = os.path.abspath(plan.target.src_dir or ".")
    for s in plan.sources():
        root = os.path.join(src, s.name)
        if os.path.abspath(path).startswith(root + os.sep):
            return s.name, os.path.relpath(os.path.abspath(path), root)
    return None


def after_clone(plan: Plan, read: Read) -> dict[str, list[str]]:
    """step id -> the requirement lines it reads only after a clone, read through `read`. A file the pinned commit
    does not hold is said as a `-r SOURCE/PATH` line (pip stops on it); housecheck names it."""
    out: dict[str, list[str]] = {}
    for step in plan.steps:
        got = _step_lines(step, plan, read)
        if got:
            out[step.id] = got
    return out


def _step_lines(step: Step, plan: Plan, read: Read) -> list[str]:
    lines: list[str] = []
    if step.kind == INSTALL and step.build_for:
        served = plan.step(step.build_for).source
        if served is not None:
            lines += build_requires(read, served.name)
            for f in step.requirement_files:
                got = file_lines(read, served.name, f)
                lines += got if got is not None else []  # a file the clone lacks is skipped, as the step skips it
    if step.kind == INSTALL:
        reqs = step.requirements
        for i, word in enumerate(reqs[:-1]):
            where = _in_source(reqs[i + 1], plan) if word == "-r" else None
            if where is not None:
                got = file_lines(read, *where)
                lines += got if got is not None else ["-r", f"{where[0]}/{where[1]}"]
    if step.kind == EDITABLE and step.source is not None:
        if not step.no_build_isolation:
            lines += build_requires(read, step.source.name)
        if not step.no_deps:
            lines += own_dependencies(read, step.source.name) or []
    return lines
