"""Is a step already done? Pure functions over a `View` of the target, built from a live interpreter or from a
snapshot, so `--dry-run --from SNAPSHOT` and the executor's skip logic give the same answer.

A step is *satisfied* when running it would change nothing: every pin is met by the installed version (local
labels matter: `torch==2.7.1+cpu` is not met by a CUDA `2.7.1`), every package to remove is absent, the clone is
at the pinned commit, the editable install points at the clone, the env file already says what it would write.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from doctor.installers.plan import CLONE, EDITABLE, ENVFILE, INSTALL, PRUNE, UNINSTALL, Plan, Step
from doctor.knowledge.ownership import in_installed_package
from doctor.knowledge.versions import pkg_satisfies
from doctor.snapshot.model import UNKNOWN, Snapshot, known, normalize_name


@dataclass
class View:
    versions: dict[str, str | None] = field(default_factory=dict)  # installed dists (normalised names)
    editable: dict[str, bool | None] = field(default_factory=dict)
    locations: dict[str, str | None] = field(default_factory=dict)  # editable: the source dir
    heads: dict[str, str | None] = field(default_factory=dict)  # source name -> checked-out commit
    refs: dict[str, str | None] = field(default_factory=dict)  # source name -> branch/tag (snapshots)
    env_ok: bool | None = None
    src_dir: str | None = None
    clone_versions: dict[str, str | None] = field(default_factory=dict)  # source name -> version its clone computes
    dirty: dict[str, list[str]] = field(default_factory=dict)  # source name -> tracked files that differ from HEAD


def expectations(step: Step, view: View | None = None) -> list[tuple[str, str | None]]:
    """(dist, specifier or None for absent) for a step; explicit `expect` wins over its requirements. An editable
    install from a clone expects the version that clone computes, when the view could read it."""
    if step.kind == EDITABLE and step.source is not None and view is not None:
        v = view.clone_versions.get(step.source.name)
        dist = normalize_name(step.editable_dist or step.source.name)
        if v:
            return [(dist, f"=={v}")]
    if step.expect:
        return [(normalize_name(n), s) for n, s in step.expect]
    if step.kind == UNINSTALL:
        return [(normalize_name(p), None) for p in step.packages]
    out: list[tuple[str, str | None]] = []
    for r in step.requirements:
        try:
            req = Requirement(r)
        except InvalidRequirement:
            continue
        out.append((normalize_name(req.name), str(req.specifier)))
    return out


def requirements_file(step: Step) -> list[tuple[str, str]] | None:
    """(dist, specifier) of each requirement line of the step's `-r FILE` (None while the file cannot be read: a
    clone not made yet is not a satisfied step). Options are pip's business; a line whose marker is false for this
    interpreter does not apply."""
    lines = requirement_file_lines(step.requirements)
    if lines is None:
        return None
    return [(normalize_name(req.name), str(req.specifier)) for _line, req in requirement_lines(lines)
            if req.marker is None or req.marker.evaluate()]


def requirement_lines(lines: Sequence[str]) -> list[tuple[str, Requirement]]:
    """(line, its PEP 508 requirement) of each requirement line of a requirements or constraints file, the trailing
    comment cut; blank lines, comments, options (`-r`, `--index-url`) and what packaging cannot read are skipped."""
    out: list[tuple[str, Requirement]] = []
    for line in lines:
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        try:
            out.append((line, Requirement(line)))
        except InvalidRequirement:
            continue
    return out


def requirement_file_lines(words: Sequence[str]) -> list[str] | None:
    """The lines of every `-r FILE` among a step's requirement words, a nested `-r` / `--requirement` line replaced
    by the lines of the file it names (relative to its own), as pip reads them; None when one cannot be read. Read
    by `requirements_file` (is the step satisfied) and by the executor's remove-orphans step (what the plan names)."""
    out: list[str] = []
    for i, word in enumerate(words[:-1]):
        if word == "-r":
            got = _file_lines(Path(words[i + 1]))
            if got is None:
                return None
            out += got
    return out


def _file_lines(path: Path) -> list[str] | None:
    return expanded_file_lines(_read_file, str(path))


def _read_file(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError:
        return None


def expanded_file_lines(read: Callable[[str], str | None], path: str, depth: int = 0) -> list[str] | None:
    """The lines of the requirements file at `path` as `read` gives its text (a file on disk, or one in a git
    bundle at a commit: installers/clonereqs.py), a nested `-r` / `--requirement` line replaced by the lines of the
    file it names (relative to its own, as pip reads them); None when one cannot be read."""
    text = read(path)
    if text is None:
        return None
    out: list[str] = []
    for line in text.splitlines():
        words = line.split(" #", 1)[0].split()
        if len(words) == 2 and words[0] in ("-r", "--requirement") and depth < 5:
            more = expanded_file_lines(read, os.path.join(os.path.dirname(path), words[1]), depth + 1)
            if more is None:
                return None
            out += more
        else:
            out.append(line)
    return out


def _pin_ok(view: View, name: str, spec: str | None) -> bool:
    if spec is None:
        return name not in view.versions
    if name not in view.versions:
        return False
    if not spec:
        return True
    return bool(pkg_satisfies(view.versions[name], spec))


def _repinned_later(step: Step, plan: Plan | None) -> dict[str, list[str | None]]:
    """What the install steps after `step` pin (the final re-pins): name -> their specifiers."""
    if plan is None or step.kind != INSTALL or step not in plan.steps:
        return {}
    out: dict[str, list[str | None]] = {}
    for s in plan.steps[plan.steps.index(step) + 1:]:
        if s.kind == INSTALL and not s.build_for and "-r" not in s.requirements:
            for n, spec in expectations(s):
                out.setdefault(n, []).append(spec)
    return out


def _line_met(view: View, name: str, spec: str | None, later: dict[str, list[str | None]]) -> bool:
    """A step's line, where a later step may have the last word: the installed version that meets every later pin
    of the package and not this line is the later step's doing (verl 0.9.0's requirements-npu.txt says numpy<2.0.0,
    the final re-pin numpy>=2.0.0,<2.4): judged by this line the step could never be done, and a second install would
    run it again, and the re-pin after it. A package absent, or outside a later pin, is judged by the line as ever
    (an empty target's torch-stack step still runs before the builds that need torch)."""
    if _pin_ok(view, name, spec):
        return True
    return name in later and name in view.versions and all(_pin_ok(view, name, x) for x in later[name])


def satisfied(step: Step, view: View, plan: Plan | None = None) -> bool:
    if step.build_for and plan is not None:
        # the requirements of a build: done when the build it serves is done
        return satisfied(plan.step(step.build_for), view, plan)
    later = _repinned_later(step, plan)
    if step.kind == INSTALL and "-r" in step.requirements:
        lines = requirements_file(step)  # a clone's requirements file: met when every line of it is
        return lines is not None and all(_line_met(view, n, s, later) for n, s in lines)
    if step.kind in (INSTALL, UNINSTALL):
        return all(_line_met(view, n, s, later) for n, s in expectations(step))
    if step.kind == CLONE:
        assert step.source is not None
        head = view.heads.get(step.source.name)
        if view.dirty.get(step.source.name):
            return False  # HEAD alone does not make a work tree: a gutted or edited clone is not the pinned one
        want = step.source.commit
        if want:
            return bool(head and head.lower().startswith(want.lower()))
        return bool(head) and view.refs.get(step.source.name, step.source.ref) == step.source.ref
    if step.kind == EDITABLE:
        dist = normalize_name(step.editable_dist or (step.source.name if step.source else ""))
        if not view.editable.get(dist):
            return False
        if not all(_pin_ok(view, n, s) for n, s in expectations(step, view)):
            return False
        loc = view.locations.get(dist)
        if view.src_dir and step.source and loc is not None:
            return os.path.normpath(loc) == os.path.normpath(os.path.join(view.src_dir, step.source.name))
        return True
    if step.kind == ENVFILE:
        return bool(view.env_ok)
    if step.kind == PRUNE:
        # what it removes is what the run installs: nothing when no install step runs (the executor decides the rest)
        return plan is not None and all(satisfied(s, view, plan) for s in plan.steps if s.kind in (INSTALL, EDITABLE))
    return False


def _url_path(url: str | None) -> str | None:
    if url and url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(url).path)
    return None


def live_view(env: Any, *, src_dir: str | None, sources: list[Any], env_ok: bool | None) -> View:
    """From installers.target.TargetEnv plus the clones under src_dir."""
    from doctor.installers import gitsrc, versionfile

    v = View(src_dir=src_dir, env_ok=env_ok)
    for name, d in env.dists.items():
        v.versions[name] = d.version
        v.editable[name] = d.editable
        v.locations[name] = _url_path(d.url)
    for s in sources:
        dest = os.path.join(src_dir, s.name) if src_dir else None
        v.heads[s.name] = gitsrc.head(dest) if dest else None
        # with no pinned commit, "at the ref" is what the clone itself says the ref points to
        v.refs[s.name] = s.ref if dest and v.heads[s.name] and gitsrc.satisfied(s, dest, at=v.heads[s.name]) else None
        v.clone_versions[s.name] = versionfile.read(s.version_from, dest) if dest and v.heads[s.name] else None
        if dest and v.heads[s.name]:
            v.dirty[s.name] = gitsrc.dirty(dest)
    return v


def snapshot_view(snap: Snapshot, *, sources: list[Any], env_ok: bool | None) -> View:
    """From a snapshot: packages, and git facts of the modules the sources provide. A module whose git facts
    were not recorded counts as cloned when it is importable from outside site-packages (a checkout on PYTHONPATH,
    an editable install); a wheel's copy in site-packages is no clone."""
    v = View(env_ok=env_ok)
    if known(snap.packages):
        for name, p in snap.packages.items():
            v.versions[name] = p.version
            v.editable[name] = p.editable if known(p.editable) else None
    for s in sources:
        mod = snap.module(s.module) if s.module else UNKNOWN
        if mod is UNKNOWN or mod is None:
            v.heads[s.name] = None
            continue
        git = mod.git if known(mod.git) else None
        if git is not None and known(git.commit) and git.commit:
            v.heads[s.name] = git.commit
            ref = next((r for r in (git.tag, git.branch) if known(r) and r), None)
            v.refs[s.name] = ref
        elif known(mod.origins) and mod.origins and not all(in_installed_package(str(o)) for o in mod.origins):
            # importable from a checkout (PYTHONPATH, an editable install), no git facts: trust the pin only if the
            # snapshot cannot tell otherwise; a wheel's copy in site-packages is no clone
            v.heads[s.name] = s.commit or "unrecorded"
            v.refs[s.name] = s.ref
    return v

