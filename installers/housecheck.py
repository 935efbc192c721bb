"""Whether a wheelhouse can serve every step of an `--offline` plan, judged when the plan is made.

An `--offline` install reads nothing but the wheelhouse (`--no-index --find-links HOUSE/wheels`, the git bundles).
A requirement it does not hold used to be found by the step that needs it: pip's "No matching distribution found"
at the final pins, after the conflicting packages were removed, every source cloned and built, then the whole run
restored. That is a wheelhouse made for another target (`--download-only --python-version 3.10` holds cp310 wheels
of torch-npu, which a Python 3.11 venv cannot install) or one pruned by hand whose manifest was rewritten. What can
be known before the first change is judged here, against what the manifest lists (`wheelhouse.held`, hash-verified
later): each install step's named requirements (an exact pin and a range alike; a marker false for the target
drops the line, as pip drops it) must be met by a file of a version they admit whose tags and Requires-Python fit
the target (installers/wheelfit.py, which holds wheel tags against doctor/knowledge/tagfit.py), unless the target
has such a version already; each git source the plan clones needs its bundle. An `name @ git+URL` line installs
offline as the bare name (the wheelhouse carries its source archive). What a step reads only after a clone (a `-r`
file in it, a source's own dependencies, its `[build-system].requires`) is read from the bundles at their commits
(installers/clonereqs.py) and judged here the same way, as `more` lines of its step.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from doctor.installers.orphans import marker_env
from doctor.installers.plan import CLONE, INSTALL, Plan
from doctor.installers.wheelfit import Offer, TargetPython, judge, some
from doctor.knowledge.pipcheck import marker_applies
from doctor.snapshot.model import normalize_name


@dataclass(frozen=True)
class Gap:
    """A step the wheelhouse cannot serve: what it needs and why (what the wheelhouse holds of it instead)."""

    step: str
    requirement: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"step": self.step, "requirement": self.requirement, "why": self.why}


def named_requirements(lines: Sequence[str]) -> list[Requirement]:
    """The requirements an install step names itself: `-r FILE` pairs and paths are left out (read after a clone),
    `name @ git+URL` is the bare name (what the wheelhouse carries of it offline)."""
    out: list[Requirement] = []
    skip = False
    for line in lines:
        if skip or line == "-r":
            skip = line == "-r"
            continue
        try:
            r = Requirement(line)
        except InvalidRequirement:
            continue  # a path or an option
        if r.url:
            r = Requirement(r.name + (f"; {r.marker}" if r.marker else ""))
        out.append(r)
    return out


def _version(v: str | None) -> Version | None:
    try:
        return Version(v) if v else None
    except InvalidVersion:
        return None


def _admits(spec: SpecifierSet, v: str | None) -> bool:
    """Whether `spec` admits version `v` as pip's resolver does for a pinned requirement (pre-releases and local
    labels: `==2.8.0` admits 2.8.0+cpu)."""
    parsed = _version(v)
    return parsed is not None and spec.contains(parsed, prereleases=True)


def gaps(plan: Plan, offers: Any, installed: Mapping[str, str | None], target: TargetPython | None,
         bundles: Iterable[str], more: Mapping[str, Sequence[str]] | None = None) -> list[Gap]:
    """Every requirement of the plan the wheelhouse cannot serve, in step order. `offers(name)` lists the files of a
    project the wheelhouse holds (wheelfit Offers); `installed` the target's versions; `bundles` the git sources the
    manifest carries; `more` (step id -> lines) what steps read after a clone, a `-r SOURCE/PATH` pair there a file
    the bundle's commit does not hold. A requirement the target already meets needs nothing from the wheelhouse."""
    have = {normalize_name(n): v for n, v in installed.items()}
    env = marker_env(target.version, target.arch) if target is not None else None
    git = set(bundles)
    out: list[Gap] = []
    for step in plan.steps:
        if step.kind == CLONE and step.source is not None and step.source.name not in git:
            out.append(Gap(step.id, f"{step.source.name} (git {step.source.ref})", "it holds no git bundle of it"))
        later = list((more or {}).get(step.id, ()))
        out += [Gap(step.id, f"-r {later[i + 1]}", "its bundle's commit has no such file: pip stops on it")
                for i, w in enumerate(later[:-1]) if w == "-r"]
        if step.kind != INSTALL and not later:
            continue
        for r in named_requirements([*(step.requirements if step.kind == INSTALL else ()), *later]):
            if env is not None and marker_applies(r.marker, env) is False:
                continue  # None: a marker on what the target's facts do not say, judged as if it held
            name = normalize_name(r.name)
            if _admits(r.specifier, have.get(name)):
                continue
            files: list[Offer] = offers(name)
            fitting = [o for o in files if _admits(r.specifier, o.version)]
            if fitting and (target is None or judge(fitting, target)[0] is not False):
                continue
            line = f"{r.name}{r.specifier}" if str(r.specifier) else r.name
            if fitting:
                assert target is not None
                out.append(Gap(step.id, line, f"no file of it fits {target}: {judge(fitting, target)[1]}"))
            else:
                held = sorted({o.version for o in files}, key=lambda v: (_version(v) is None, _version(v) or Version("0")))
                out.append(Gap(step.id, line, f"it holds {name} {some(held, 'version')}" if held
                               else f"it holds no {name}"))
    return out


def made_for(manifest_target: Mapping[str, Any]) -> str:
    """What the manifest says the wheelhouse was made for ("CPython 3.10 on aarch64, glibc 2.28"), "" if it says
    nothing."""
    py, arch, glibc = (manifest_target.get(k) for k in ("python_version", "arch", "glibc"))
    if not (py or arch):
        return ""
    return f"CPython {py or '?'} on {arch or '?'}" + (f", glibc {glibc}" if glibc else "")


def rebuild_command(profile: str, house: str, target: TargetPython | None, sets: Mapping[str, str]) -> str:
    """The `--download-only` that makes a wheelhouse for this target and these pins, on a host that reaches the
    index (the same folder: pip reuses the files already there)."""
    q = shlex.quote
    facts = ""
    if target is not None:
        facts = f" --arch {q(target.arch)} --python-version {q('.'.join(target.version.split('.')[:2]))}" \
            + (f" --glibc {q(target.glibc)}" if target.glibc else "")
    pins = "".join(f" --set {q(f'{n}={v}')}" for n, v in sets.items())
    return f"doctor install --profile {q(profile)} --download-only {q(house)}{facts}{pins}"


def refusal(gaps_: Sequence[Gap], plan: Plan, house: str, target: TargetPython | None, manifest_target: Mapping[str, Any],
            sets: Mapping[str, str]) -> str:
    """The exit-2 message: each step and what it needs that the wheelhouse lacks, what the wheelhouse was made for
    when that is not the target, and the command that rebuilds it."""
    titles = {s.id: s.title for s in plan.steps}
    by_step: dict[str, list[Gap]] = {}
    for g in gaps_:
        by_step.setdefault(g.step, []).append(g)
    said = "; ".join(f"step {sid} ({titles.get(sid, sid)}) needs " + ", ".join(f"{g.requirement} ({g.why})" for g in gs)
                     for sid, gs in by_step.items())
    made = made_for(manifest_target)
    other = ""
    if made and target is not None and made != f"CPython {'.'.join(target.version.split('.')[:2])} on {target.arch}" + \
            (f", glibc {target.glibc}" if target.glibc else ""):
        other = f" It was made for {made} (its manifest.json); the target is {target}."
    return (f"the wheelhouse {house} cannot serve this plan offline, so nothing was done: {said}.{other} An --offline "
            "install reads nothing else, and the step would fail after the earlier ones changed the target. Rebuild "
            f"it where the index is reachable: `{rebuild_command(plan.profile, house, target, sets)}`")
