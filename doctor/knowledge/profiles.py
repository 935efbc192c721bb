"""Verified stacks ("profiles"): one TOML file per stack under `profiles/`, loaded and validated here,
and the rule that picks the one matching a snapshot.

A profile is what an upstream documents as working together (verl's Ascend install guide at a release
tag, plus its release Dockerfile): CANN range, driver, chips, arches, Python, exact pins, git sources,
index options, env, and the *known deviations* — vendor pairings that the documented stack itself
breaks, so `doctor check` does not report them as problems of that stack. Schema: profiles/README.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from packaging.version import Version

from doctor.errors import InputError
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import CannVersion, DriverVersion, parse_pkg_version, pkg_satisfies, release
from doctor.snapshot._base import normalize_name
from doctor.tomlfile import read_toml

CHIPS = ("A2", "A3", "950", "310P")
ARCHES = ("aarch64", "x86_64")
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_NAME = re.compile(r"^verl-(?P<verl>[0-9a-z.]+)-cann(?P<cann>[0-9a-z.\-]+)-(?P<chip>a2|a3|950|310p)$")


# A git source's key -> the distribution its checkout installs as (Megatron-LM's setup.py names megatron-core).
_GIT_DIST = {"megatron-lm": "megatron-core"}


# PyTorch's CPU builds (`2.7.1+cpu`, what torch-npu pins on x86_64) are served by its own index only: the index an
# x86_64 plan adds when a profile names none (`index.x86_cpu_torch`), and the one check's reinstall fixes name
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class GitSource:
    """A component installed from git (MindSpeed, Megatron-LM, vllm, vllm-ascend, verl)."""

    repo: str
    ref: str
    commit: str | None = None
    version: str | None = None  # the version the checkout reports once installed (e.g. megatron-core 0.12.1)
    install: str = "editable"  # editable | pythonpath | empty-target (vllm built with VLLM_TARGET_DEVICE=empty)


@dataclass(frozen=True)
class Deviation:
    """A vendor pairing the documented stack itself breaks: findings with this id whose evidence matches
    `when` are reported as info, citing `source`, instead of as problems."""

    finding: str
    reason: str
    source: str
    when: Mapping[str, str] = field(default_factory=dict)

    def matches(self, finding_id: str, evidence: Mapping[str, Any]) -> bool:
        if finding_id != self.finding:
            return False
        for k, want in self.when.items():
            got = evidence.get(k)
            if got is None:
                return False
            if str(got) == want:
                continue
            a, b = parse_pkg_version(str(got)), parse_pkg_version(want)
            if a is None or b is None or Version(a.public) != Version(b.public):
                ca, cb = CannVersion.try_parse(str(got)), CannVersion.try_parse(want)
                if ca is None or cb is None or ca != cb:
                    return False
        return True


@dataclass(frozen=True)
class Profile:
    """One verified stack (profiles/verl-*.toml): the versions that work together on one chip and CANN."""

    name: str
    verl: str
    description: str
    source: str
    cann_version: str  # the CANN the stack documents; the low end of its range when `cann_unknown`
    cann_min: str
    cann_max: str
    chips: tuple[str, ...]
    arches: tuple[str, ...]
    python: str
    pins: Mapping[str, str]
    driver_min: str | None = None
    nnal: bool = True
    cann_unknown: bool = False  # the upstream has not named the CANN yet (`unknown.cann` says what it does say)
    python_recommended: str | None = None
    sources: tuple[str, ...] = ()
    git: Mapping[str, GitSource] = field(default_factory=dict)
    index_x86_cpu_torch: str | None = None
    index_extra: tuple[str, ...] = ()
    set_env: tuple[str, ...] = ()
    exports: Mapping[str, str] = field(default_factory=dict)
    deviations: tuple[Deviation, ...] = ()
    notes: tuple[str, ...] = ()
    provenance: Mapping[str, str] = field(default_factory=dict)  # field (a pin, cann, python...) -> upstream URL
    choices: Mapping[str, str] = field(default_factory=dict)  # field -> which source was chosen where they disagree
    unknown: Mapping[str, str] = field(default_factory=dict)  # field the upstream leaves unknown -> what it says
    # Requirements the stack's own packages leave unmet upstream (`pip check` fails on the documented stack too):
    # each {package, requirement, source}; the requirement checks report these as info, not as errors.
    upstream_conflicts: tuple[Mapping[str, str], ...] = ()
    # verl from PyPI (no git.verl clone to read it from): the requirement file upstream's script installs after
    # verl (`pip install -r requirements-npu.txt`), {file: its URL at the pinned commit, lines: its requirements}
    verl_requirements: Mapping[str, Any] | None = None
    path: str = ""

    def __hash__(self) -> int:
        return hash(self.name)

    def pin(self, package: str) -> str | None:
        return self.pins.get(normalize_name(package))

    @property
    def built_from_source(self) -> frozenset[str]:
        """The distributions this stack's install plan builds from a git checkout (installers/steps.py: an
        editable, PYTHONPATH or VLLM_TARGET_DEVICE=empty install of `git.<name>`). Their requirements are the
        checkout's, not those of PyPI's wheel of the same version (vllm-ascend 0.23.0's aarch64 cp312 wheel pins
        transformers==5.5.4; the stack builds releases/v0.23.0 next to transformers 5.10.4)."""
        return frozenset(_GIT_DIST.get(k, k) for k, g in self.git.items() if g.install != "wheel")

    def builds(self, dist: str, version: Any) -> bool:
        """Whether an installed `dist` at `version` is this stack's source build: one it builds from git, at a
        version its pin accepts (vllm-ascend ==0.23.*), else the same major.minor as the checkout reports. Another
        release (vllm-ascend 0.7.3 on a 0.13 stack) was installed some other way, most likely PyPI's wheel."""
        name = normalize_name(dist)
        if name not in self.built_from_source:
            return False
        pin = self.pin(name)
        if pin:
            return pkg_satisfies(version, pin) is True
        key = next((k for k in self.git if _GIT_DIST.get(k, k) == name), None)
        got, ref = parse_pkg_version(version), parse_pkg_version(self.git[key].version if key else None)
        return got is not None and ref is not None and release(got, 2) == release(ref, 2)

    def build_commit(self, dist: str, version: Any) -> str | None:
        """The commit this stack builds `dist` from, when `version` is its source build (`builds`); else None."""
        if not self.builds(dist, version):
            return None
        name = normalize_name(dist)
        key = next((k for k in self.git if _GIT_DIST.get(k, k) == name), None)
        return self.git[key].commit or None if key else None

    @property
    def verl_version(self) -> Version:
        return Version(self.verl)

    @property
    def is_snapshot(self) -> bool:
        """A dated snapshot of verl main (0.10.0.dev20260822), not a release."""
        return self.verl_version.is_devrelease

    @property
    def verl_key(self) -> tuple[Version, str]:
        """Newest-first ordering key (a main snapshot sorts above the releases before it)."""
        return (self.verl_version, self.name)

    def cann_matches(self, cann: CannVersion) -> bool:
        """Half-open [cann_min, cann_max). A series-only version ("8.3") matches when the documented
        CANN is in that series."""
        if cann.precision == 2:
            return CannVersion(self.cann_version).series == cann.series
        return CannVersion(self.cann_min) <= cann < CannVersion(self.cann_max)

    def python_fits(self, version: str) -> bool | None:
        """Whether a Python (`3.11` or `3.11.9`) is inside the stack's range; None when unreadable. The one rule
        of selection, `check` (python-outside-profile) and `install` (refusal): the range covers what the
        release's docs and its release image run."""
        v = version if version.count(".") >= 2 else version + ".0"
        return pkg_satisfies(v, self.python)

    def deviation_for(self, finding_id: str, evidence: Mapping[str, Any]) -> Deviation | None:
        return next((d for d in self.deviations if d.matches(finding_id, evidence)), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "verl": self.verl, "description": self.description, "source": self.source,
            "sources": list(self.sources),
            "cann": {"version": UNKNOWN if self.cann_unknown else self.cann_version, "min": self.cann_min, "max": self.cann_max,
                     "driver_min": self.driver_min, "nnal": self.nnal},
            "chips": list(self.chips), "arches": list(self.arches), "python": self.python,
            "python_recommended": self.python_recommended, "pins": dict(self.pins),
            "git": {k: {"repo": g.repo, "ref": g.ref, "commit": g.commit, "version": g.version, "install": g.install}
                    for k, g in self.git.items()},
            "index": {"x86_cpu_torch": self.index_x86_cpu_torch, "extra": list(self.index_extra)},
            "env": {"set_env": list(self.set_env), "exports": dict(self.exports)},
            "deviations": [{"finding": d.finding, "when": dict(d.when), "reason": d.reason, "source": d.source}
                           for d in self.deviations],
            "notes": list(self.notes), "provenance": dict(self.provenance), "choices": dict(self.choices),
            "unknown": dict(self.unknown),
            "upstream_conflicts": [dict(c) for c in self.upstream_conflicts],
            "verl_requirements": dict(self.verl_requirements) if self.verl_requirements else None,
            "path": self.path,
        }


# -- loading and validation ----------------------------------------------------------------------------

_TOP = {"name", "verl", "description", "source", "sources", "cann", "chips", "arches", "python",
        "python_recommended", "pins", "git", "index", "env", "deviations", "notes", "provenance", "choices", "unknown",
        "upstream_conflicts", "verl_requirements"}
_UPSTREAM_CONFLICT = {"package", "requirement", "source"}
_CANN = {"version", "min", "max", "driver_min", "nnal"}
_GIT = {"repo", "ref", "commit", "version", "install"}
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")
_INDEX = {"x86_cpu_torch", "extra"}
_ENV = {"set_env", "exports"}
_DEV = {"finding", "when", "reason", "source"}
_INSTALL = {"editable", "pythonpath", "empty-target", "wheel"}
UNKNOWN = "unknown"  # cann.version of a stack whose upstream has not named its CANN yet


def parse_profile(data: Any, source: str, stem: str | None = None) -> Profile:
    """Validate one parsed TOML document; InputError names the file and key on any problem."""
    v = Validator(source)
    t = v.keys(data, _TOP, "", required=("name", "verl", "source", "cann", "chips", "arches", "python", "pins"))
    name = v.req(t["name"], "name")
    if not _NAME.match(name):
        raise v.fail("name", f"must look like verl-<ver>-cann<ver>-<a2|a3|950>, got {name!r}")
    if stem is not None and stem != name:
        raise v.fail("name", f"must equal the file name {stem!r}, got {name!r}")
    verl = v.req(t["verl"], "verl")
    if parse_pkg_version(verl) is None:
        raise v.fail("verl", f"must be a version (a main snapshot is 0.X.0.devYYYYMMDD), got {verl!r}")
    src = v.url(t["source"], "source")
    c = _cann(v, t["cann"])
    chips = v.strs(t["chips"], "chips")
    bad = [x for x in chips if x not in CHIPS]
    if not chips or bad:
        raise v.fail("chips", f"must list chip families from {', '.join(CHIPS)}" + (f"; got {bad[0]!r}" if bad else ""))
    arches = v.strs(t["arches"], "arches")
    bad = [x for x in arches if x not in ARCHES]
    if not arches or bad:
        raise v.fail("arches", f"must list arches from {', '.join(ARCHES)}" + (f"; got {bad[0]!r}" if bad else ""))
    pins_raw = t["pins"]
    if not isinstance(pins_raw, dict):
        raise v.fail("pins", "must be a table of package = \"specifier\"")
    pins = {normalize_name(k): v.spec(val, f"pins.{k}") for k, val in pins_raw.items()}
    idx = v.keys(t.get("index", {}), _INDEX, "index")
    env = v.keys(t.get("env", {}), _ENV, "env")
    exports_raw = env.get("exports", {})
    if not isinstance(exports_raw, dict) or not all(isinstance(x, str) for x in exports_raw.values()):
        raise v.fail("env.exports", "must be a table of NAME = \"value\"")
    return Profile(
        name=name, verl=verl, description=str(t.get("description", "")), source=src,
        sources=tuple(v.url(s, f"sources[{i}]") for i, s in enumerate(v.strs(t.get("sources"), "sources"))),
        cann_version=c["version"], cann_min=c["min"], cann_max=c["max"], driver_min=c["driver_min"], nnal=c["nnal"],
        cann_unknown=c["unknown"],
        chips=chips, arches=arches, python=v.spec(t["python"], "python"),
        python_recommended=v.s(t.get("python_recommended"), "python_recommended", optional=True),
        pins=MappingProxyType(pins), git=MappingProxyType(_git(v, t.get("git", {}))),
        index_x86_cpu_torch=v.s(idx.get("x86_cpu_torch"), "index.x86_cpu_torch", optional=True),
        index_extra=v.strs(idx.get("extra"), "index.extra"), set_env=v.strs(env.get("set_env"), "env.set_env"),
        exports=MappingProxyType(dict(exports_raw)), deviations=_deviations(v, t.get("deviations", [])),
        notes=v.strs(t.get("notes"), "notes"),
        provenance=MappingProxyType({k: v.url(u, f"provenance.{k}") for k, u in _table(v, t, "provenance").items()}),
        choices=MappingProxyType(_table(v, t, "choices")), unknown=MappingProxyType(_table(v, t, "unknown")),
        upstream_conflicts=_upstream_conflicts(v, t.get("upstream_conflicts", [])),
        verl_requirements=_verl_requirements(v, t),
        path=source,
    )


def _verl_requirements(v: Validator, t: dict[str, Any]) -> Mapping[str, Any] | None:
    """`verl_requirements = {file, lines}`: the file a URL at a tag or commit, the lines non-empty strings. A verl
    from PyPI has no clone to read the file from; a git verl's clone has it, and the profile carries its lines only
    where it pins one of them (a `name @ git+URL@main` line: a moving branch), so the file must be the one at the
    clone's pinned commit (a ref the user chooses reads the clone's own file). That each line is a PEP 508
    requirement is checked where they are read (`verl_requirement_lines`): `packaging.requirements` costs ~18 ms of
    imports, and every run that reads the profiles for their pins (explain on a traceback crossing packages) would
    pay it for lines only an install plan uses."""
    raw = t.get("verl_requirements")
    if raw is None:
        return None
    r = v.keys(raw, {"file", "lines"}, "verl_requirements", required=("file", "lines"))
    git = (t.get("git") or {}).get("verl")
    commit = str((git.get("commit") if isinstance(git, dict) else "") or "")
    if git is not None and (not commit or f"/{commit}/" not in str(r["file"])):
        at = f"[git.verl]'s commit {commit}" if commit else "a [git.verl].commit (none is pinned)"
        raise v.fail("verl_requirements.file", f"must be the file at {at}: the lines stand for the clone's file only there")
    lines = v.strs(r["lines"], "verl_requirements.lines")
    if not lines:
        raise v.fail("verl_requirements.lines", "must list the file's requirements")
    return MappingProxyType({"file": v.url(r["file"], "verl_requirements.file"), "lines": lines})


def verl_requirement_lines(profile: Profile) -> tuple[str, ...]:
    """The profile's `verl_requirements` lines, each checked to be a PEP 508 requirement (an InputError naming the
    profile's file and the line's key otherwise, exit 2): the one place they are read, the install plan."""
    if not profile.verl_requirements:
        return ()
    from packaging.requirements import InvalidRequirement, Requirement

    lines = tuple(profile.verl_requirements["lines"])
    for i, line in enumerate(lines):
        try:
            Requirement(line)
        except InvalidRequirement as e:
            raise Validator(profile.path or profile.name).fail(f"verl_requirements.lines[{i}]",
                                                               f"not a requirement: {e}") from None
    return lines


def _upstream_conflicts(v: Validator, raw: Any) -> tuple[Mapping[str, str], ...]:
    if not isinstance(raw, list):
        raise v.fail("upstream_conflicts", "must be an array of {package, requirement, source}")
    out = []
    for i, item in enumerate(raw):
        c = v.keys(item, _UPSTREAM_CONFLICT, f"upstream_conflicts[{i}]", required=("package", "requirement", "source"))
        out.append(MappingProxyType({"package": normalize_name(v.req(c["package"], f"upstream_conflicts[{i}].package")),
                                     "requirement": v.req(c["requirement"], f"upstream_conflicts[{i}].requirement"),
                                     "source": v.url(c["source"], f"upstream_conflicts[{i}].source")}))
        if any((o["package"], o["requirement"]) == (out[-1]["package"], out[-1]["requirement"]) for o in out[:-1]):
            raise v.fail(f"upstream_conflicts[{i}]", f"names {out[-1]['package']} {out[-1]['requirement']!r} twice")
    return tuple(out)


def _table(v: Validator, t: dict[str, Any], key: str) -> dict[str, str]:
    raw = t.get(key, {})
    if not isinstance(raw, dict):
        raise v.fail(key, "must be a table of name = \"text\"")
    return {k: v.req(x, f"{key}.{k}") for k, x in raw.items()}


def _cann(v: Validator, raw: Any) -> dict[str, Any]:
    c = v.keys(raw, _CANN, "cann", required=("version", "min", "max"))
    version = None if c["version"] == UNKNOWN else v.cann(c["version"], "cann.version")
    cmin, cmax = v.cann(c["min"], "cann.min"), v.cann(c["max"], "cann.max")
    if not CannVersion(cmin) < CannVersion(cmax):
        raise v.fail("cann.max", f"range is empty: min {cmin} is not below max {cmax}")
    if version is not None and (CannVersion(version) < CannVersion(cmin) or not CannVersion(version) < CannVersion(cmax)):
        raise v.fail("cann.version", f"{version} is outside [{cmin}, {cmax})")
    driver_min = v.s(c.get("driver_min"), "cann.driver_min", optional=True)
    if driver_min is not None and DriverVersion.try_parse(driver_min) is None:
        raise v.fail("cann.driver_min", f"not a driver version: {driver_min!r} (e.g. 25.0.rc1, 26.0.rc1)")
    return {"version": version or cmin, "unknown": version is None, "min": cmin, "max": cmax, "driver_min": driver_min,
            "nnal": v.boolean(c.get("nnal"), "cann.nnal", default=True)}


def _git(v: Validator, g_raw: Any) -> dict[str, GitSource]:
    if not isinstance(g_raw, dict):
        raise v.fail("git", "must be a table of tables")
    git: dict[str, GitSource] = {}
    for comp, g in g_raw.items():
        p = f"git.{comp}"
        gt = v.keys(g, _GIT, p, required=("repo", "ref"))
        install = gt.get("install", "editable")
        if not isinstance(install, str) or install not in _INSTALL:
            raise v.fail(f"{p}.install", f"must be one of {', '.join(sorted(_INSTALL))}")
        commit = v.s(gt.get("commit"), f"{p}.commit", optional=True)
        if commit is not None and not _COMMIT.match(commit):  # the clone is verified against it: a name never matches
            raise v.fail(f"{p}.commit", f"not a commit (7 to 40 hex digits): {commit!r}")
        git[normalize_name(comp)] = GitSource(
            repo=v.req(gt["repo"], f"{p}.repo"), ref=v.req(gt["ref"], f"{p}.ref"), commit=commit,
            version=v.s(gt.get("version"), f"{p}.version", optional=True), install=install)
    return git


def _deviations(v: Validator, d_raw: Any) -> tuple[Deviation, ...]:
    if not isinstance(d_raw, list):
        raise v.fail("deviations", "must be an array of tables ([[deviations]])")
    devs: list[Deviation] = []
    for i, d in enumerate(d_raw):
        p = f"deviations[{i}]"
        dt = v.keys(d, _DEV, p, required=("finding", "reason", "source"))
        fid = v.req(dt["finding"], f"{p}.finding")
        if not _ID.match(fid):
            raise v.fail(f"{p}.finding", f"must be a kebab-case finding id, got {fid!r}")
        when = dt.get("when", {})
        if not isinstance(when, dict) or not all(isinstance(x, str) for x in when.values()):
            raise v.fail(f"{p}.when", "must be a table of evidence key = \"value\"")
        src = v.urls(dt["source"], f"{p}.source")
        devs.append(Deviation(fid, v.req(dt["reason"], f"{p}.reason"), src, MappingProxyType(dict(when))))
    return tuple(devs)


def load_profile_file(path: str | os.PathLike[str]) -> Profile:
    path = os.fspath(path)
    data = read_toml(path)
    return parse_profile(data, path, stem=os.path.splitext(os.path.basename(path))[0])


def installed_stacks_dir() -> str:
    """`stacks/` of the knowledge in use: the packaged `profiles/stacks`, or DOCTOR_KNOWLEDGE's (location.py)."""
    from doctor.knowledge.location import knowledge_file

    return knowledge_file("stacks")


_INSTALLED: list[Profile] | None = None


def load_profiles(dir: str | os.PathLike[str] | None = None) -> list[Profile]:
    """Every profile (`*.toml`) in `dir` (default: the installed `profiles/stacks`), newest verl first.
    The installed set is parsed once per process (it cannot change under a running doctor)."""
    global _INSTALLED
    if dir is None and _INSTALLED is not None:
        return list(_INSTALLED)
    d = installed_stacks_dir() if dir is None else os.fspath(dir)
    if not os.path.isdir(d):
        raise InputError("not a directory of profiles", source=d)
    profiles = [load_profile_file(os.path.join(d, n)) for n in sorted(os.listdir(d)) if n.endswith(".toml")]
    seen: dict[str, str] = {}
    for p in profiles:
        if p.name in seen:
            raise InputError(f"duplicate profile name {p.name!r} (also in {seen[p.name]})", source=p.path)
        seen[p.name] = p.path
    result = sorted(profiles, key=lambda p: (p.verl_key, p.name), reverse=True)
    if dir is None:
        _INSTALLED = result
    return list(result)


def find_profile(profiles: list[Profile], name: str, source: str = "--profile") -> Profile:
    for p in profiles:
        if p.name == name:
            return p
    raise InputError(f"no profile named {name!r}; known: {', '.join(p.name for p in profiles)} (see `doctor profiles`)",
                     source=source)


# -- selection -----------------------------------------------------------------------------------------


def wrong_chip(profile: Profile, chip: str | None, profiles: Sequence[Profile] = (),
               where: str = "here") -> str | None:
    """Why a profile cannot serve NPUs of this chip family (None when it can, or the family is unknown): its
    kernels, driver and firmware packages are the chip's own, so a stack forced for another chip installs
    and names the wrong ones. One rule for `check --profile` (an error) and `install --profile` (refused)."""
    if not chip or chip in profile.chips:
        return None
    same = [p.name for p in profiles if p.verl == profile.verl and p.cann_version == profile.cann_version
            and chip in p.chips]
    return (f"profile {profile.name} is for {'/'.join(profile.chips)} NPUs, not the {chip} NPUs {where}"
            + (f"; the {chip} stack of this release is {same[0]}" if same else ""))


def select_profile(snapshot: Any, profiles: list[Profile], forced: str | None = None) -> tuple[Profile | None, str]:
    """Pick the verified stack that matches this snapshot and say why.

    Order: CANN inside the profile's half-open range; then chip family (a family no stack serves, 310P or the
    first-generation 910, selects none: another chip's stack names the wrong kernels), arch and Python (a filter
    that would leave nothing is skipped and said in the reason); ties go to the profile of the installed verl (its
    version not stated: to the stacks whose pins the most stated package versions meet), then to the newest release (a main snapshot only when it is the installed verl's line). CANN newer than
    every profile's range picks the newest profiles; older picks none."""
    from doctor.knowledge import chips as chipmod
    from doctor.snapshot.model import known

    if forced:
        p = find_profile(profiles, forced)
        return p, "forced with --profile"
    if not profiles:
        return None, "no profiles installed"
    facts: list[str] = []
    toolkit = snapshot.ascend_part("toolkit")
    cann_s = toolkit.version if toolkit not in (None,) and known(toolkit) and known(toolkit.version) else None
    cann = CannVersion.try_parse(cann_s) if isinstance(cann_s, str) else None
    verl_installed = snapshot.version("verl")
    verl_v = parse_pkg_version(verl_installed) if isinstance(verl_installed, str) else None
    if cann is None:
        absent = toolkit is None or (known(snapshot.ascend) and snapshot.ascend is None)
        by_verl = [] if absent else [p for p in profiles if same_verl_line(p, verl_v)]
        if by_verl:
            cands = by_verl
            facts.append(f"CANN {'unreadable' if cann_s else 'unknown'}; matched installed verl {verl_installed}")
        else:
            if absent:
                return None, "no CANN toolkit installed; no profile applies"
            return None, f"CANN version {'unreadable: ' + repr(cann_s) if cann_s else 'unknown'}; no profile applies"
    else:
        pool = chip_pool(snapshot, profiles)  # an A2's CANN is judged against A2 stacks, not a 950's range
        cands = [p for p in pool if p.cann_matches(cann)]
        if not cands:
            if all(not cann < CannVersion(p.cann_max) for p in pool):
                top = max(CannVersion(p.cann_version) for p in pool)
                cands = [p for p in pool if CannVersion(p.cann_version) == top]
                facts.append(f"CANN {cann} is newer than every verified stack; using the newest (CANN {top})")
            else:
                lowest = min(CannVersion(p.cann_min) for p in pool)
                if cann < lowest:
                    return None, f"CANN {cann} is older than every verified stack (the oldest starts at CANN {lowest})"
                return None, f"CANN {cann} is between the verified stacks' CANN ranges; no profile applies"
        else:
            facts.append(f"CANN {cann} in [{cands[0].cann_min}, {cands[0].cann_max})")
    fam = chipmod.family(snapshot)
    arch = snapshot.host.arch if known(snapshot.host) and known(snapshot.host.arch) else None
    py = snapshot.python.version if known(snapshot.python) and known(snapshot.python.version) else None
    for label, value, pred in (
        ("chip", fam if isinstance(fam, str) else None, lambda p, x: x in p.chips),
        ("arch", arch, lambda p, x: x in p.arches),
        ("Python", py, lambda p, x: p.python_fits(x) is not False),
    ):
        if value is None:
            facts.append(f"{label} unknown")
            continue
        kept = [p for p in cands if pred(p, value)]
        if kept:
            cands = kept
            facts.append(f"{label} {value}")
        elif label == "chip":
            # the kernels, driver and firmware packages are the chip's own: another chip's stack is no fallback
            return None, ", ".join([*facts, f"no verified stack for chip {value} (another chip's stack names the wrong "
                                            "kernels, driver and firmware); no profile applies"])
        else:
            facts.append(f"no verified stack for {label} {value}")
    if verl_v is not None:
        same = [p for p in cands if same_verl_line(p, verl_v)]
        if same:
            cands = same
            facts.append(f"installed verl {verl_installed}")
    elif len({p.verl for p in cands}) > 1:
        cands, met = _by_stated_pins(snapshot, cands)
        if met:
            named = ", ".join(met[:3]) + (f" and {len(met) - 3} more" if len(met) > 3 else "")
            facts.append(f"verl's version not stated; installed {named} {'meets its pin' if len(met) == 1 else 'meet its pins'}")
    best = max(cands, key=lambda p: (not p.is_snapshot, p.verl_version, p.name))
    if len({p.verl for p in cands}) > 1:
        facts.append("newest release of several matches")
    tied = [p for p in cands if p.verl_version == best.verl_version and p.is_snapshot == best.is_snapshot]
    if len(tied) > 1:
        best, why = _break_tie(snapshot, tied)
        names = [p.name for p in sorted(tied, key=lambda p: p.name)]
        facts.append(f"{', '.join(names[:-1])} and {names[-1]} {'both' if len(names) == 2 else 'all'} match; "
                     f"{best.name} chosen: {why} "
                     "(pass --profile NAME to choose)")
    return best, ", ".join(facts)


def _by_stated_pins(snapshot: Any, cands: list[Profile]) -> tuple[list[Profile], list[str]]:
    """Without verl's version, the verl lines one CANN serves (0.8.0 and 0.9.0 on CANN 9.0.0) are told apart by the
    versions the snapshot states: the stacks whose pins the most stated packages meet, and those packages' names
    (none when no stated version tells them apart). Picking the newest line instead judges a stated torch 2.9.0
    against 0.9.0's torch==2.10.0 pin although the 0.8.0 stack is the one installed; a package the snapshot does
    not state counts for no stack."""
    def met(p: Profile) -> list[str]:
        out = []
        for name, spec in p.pins.items():
            v = snapshot.version(name)
            if isinstance(v, str) and pkg_satisfies(v, spec) is True:
                out.append(name)
        return out

    by = {p.name: met(p) for p in cands}
    top = max(len(m) for m in by.values())
    kept = [p for p in cands if len(by[p.name]) == top]
    if top == 0 or len(kept) == len(cands):
        return cands, []
    return kept, by[kept[0].name]


def chip_pool(snapshot: Any, profiles: list[Profile]) -> list[Profile]:
    """The profiles for the snapshot's chip family, or all of them when the family is unknown or has none: CANN
    ranges are per chip (the 950's reaches CANN 9.2.0 while the A2/A3 stacks end at 9.1.x)."""
    from doctor.knowledge import chips as chipmod

    fam = chipmod.family(snapshot)
    same = [p for p in profiles if isinstance(fam, str) and fam in p.chips]
    return same or profiles


def _break_tie(snapshot: Any, tied: list[Profile]) -> tuple[Profile, str]:
    """Stacks that match equally (the chip family is unknown: A2, A3 and 950 of one verl): the one whose pins
    the installed packages satisfy most, so an unknown chip never makes a stack's own packages look off it;
    then one whose facts upstream has all named (not a stack with `unknown` fields); then the last by name."""
    def satisfied(p: Profile) -> int:
        return sum(1 for name, spec in p.pins.items() if pkg_satisfies(snapshot.version(name), spec) is True)

    scores = {p.name: satisfied(p) for p in tied}
    best = max(tied, key=lambda p: (scores[p.name], not p.unknown, p.name))
    if len(set(scores.values())) > 1:
        return best, f"the installed packages satisfy {scores[best.name]} of its {len(best.pins)} pins"
    if any(p.unknown for p in tied) and not best.unknown:
        return best, "upstream names all of its facts"
    return best, "the last by name"


def same_verl_line(p: Profile, installed: Version | None) -> bool:
    """The profile documents the installed verl's release line: same X.Y.Z; a main snapshot only for a
    pre/dev build of its line (an installed 0.10.0 final is newer than the 0.10.0.dev2026… snapshot)."""
    if installed is None or release(p.verl_version) != release(installed):
        return False
    return not p.is_snapshot or installed.is_prerelease
