"""`pip check` semantics over a snapshot: which requirements the installed distributions declare and the
installed set does not meet.

What the distributions declare is the first ground for a verdict: each one's Requires-Python and
Requires-Dist, with markers and extras, as the in-target probe read them from its METADATA (snapshot rule 7).
The evaluation follows pip's own `pip check` (pip/_internal/operations/check.py): a requirement whose marker
is false for the target interpreter is ignored, a missing requirement is one whose name is not installed, and a
version is compared with the specifier allowing pre-releases (`contains(version, prereleases=True)`).
Beyond pip check, the extras other installed distributions ask for (`ray[default]`) are active, so their
requirements count too.

Markers are evaluated for the *snapshot's* interpreter and host, never the doctor's own: a marker that needs a
fact the snapshot does not hold (e.g. platform_machine with no `host.arch`) leaves that requirement unknown and
silent. Pure logic: the snapshot is the only input.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

import re
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name as _canonicalize_name
from packaging.version import InvalidVersion, Version

from doctor.knowledge.ownership import component_of_distribution
from doctor.snapshot.model import Snapshot, known


@lru_cache(maxsize=8192)
def canonicalize_name(name: str) -> str:
    """packaging's `canonicalize_name`, remembered: the declared-requirements check asks ~3,000 times for ~600 names
    (the same dependency of many packages, the same extra on every pass)."""
    return _canonicalize_name(name)


class Unmet(NamedTuple):
    """One requirement the installed set does not meet.

    kind: "missing" (the required distribution is not installed), "version" (installed at a version outside
    the specifier) or "python" (the interpreter is outside the declaring distribution's Requires-Python)."""

    kind: str
    package: str  # the declaring distribution (PEP 503 name)
    version: str | None  # its installed version
    requirement: str  # the Requires-Dist line (or the Requires-Python specifier) as declared
    name: str  # the required distribution (PEP 503 name); "python" for kind == "python"
    installed: str | None  # what is installed of it (None: nothing)
    metadata: str | None  # the METADATA file the declaration was read from (None: from the release table)
    extra: str | None = None  # the extra that activated the requirement, if any
    source: str | None = None  # where a declaration not in the snapshot was read (the release's PyPI page)
    inferred: bool = False  # the extra is judged in use because the distribution it is named for is installed
    built_on: tuple[str, ...] = ()  # the package's extras that build on `extra`, its run set (`_run_set`)
    # an inferred extra's distribution that cannot run beside the package: its own base requirement and the package's
    # on a third distribution admit no common release (`_cannot_run_beside`), as ((dist, line), (package, line))
    clash: tuple[tuple[str, str], tuple[str, str]] | None = None
    # an inferred extra whose range on its distribution no release of another installed package's base requirement
    # admits, that requirement being met (`_held_elsewhere`), as (that package, its line)
    held: tuple[str, str] | None = None


class Decl(NamedTuple):
    """What one installed package declares: from the snapshot (its METADATA, as collected), or, for a
    snapshot that only states versions, from the table of published releases (`source` says which)."""

    requires_python: str | None
    requires_dist: tuple[str, ...] | None  # None: unknown
    metadata: str | None = None
    source: str | None = None


# (project, version) -> (requires_python, requires_dist, source URL) of that published release, or None
Lookup = Callable[[str, str], "tuple[str | None, tuple[str, ...], str] | None"]


def declarations(snap: Snapshot, lookup: Lookup | None = None) -> dict[str, Decl]:
    """name -> what it declares, for every package whose declaration is known. A package the snapshot lists
    with a version but without `requires_dist` (a hand-written snapshot, an older collector) gets its
    release's published metadata through `lookup`, when the table holds that release."""
    if not known(snap.packages):
        return {}
    return {name: d for name in snap.packages if (d := declaration(snap, name, lookup)) is not None}


def declaration(snap: Snapshot, name: str, lookup: Lookup | None = None) -> Decl | None:
    """What the listed package `name` declares (its METADATA, else its release's published metadata through
    `lookup`), None when that is not known."""
    pkg = snap.packages.get(name) if known(snap.packages) else None
    if pkg is None:
        return None
    if known(pkg.requires_dist):
        return Decl(pkg.requires_python if known(pkg.requires_python) else None, tuple(pkg.requires_dist),
                    pkg.metadata if known(pkg.metadata) else None)
    if lookup is not None and isinstance(pkg.version, str) and pkg.version:
        row = lookup(name, pkg.version)
        if row is not None:
            return Decl(row[0], tuple(row[1]), None, row[2])
    if known(pkg.requires_python):
        return Decl(pkg.requires_python, None, pkg.metadata if known(pkg.metadata) else None)
    return None


def declared_rejects(snap: Snapshot, package: str, dep: str, lookup: Lookup | None = None) -> bool:
    """Whether `package`'s own declaration has a base requirement on `dep` (its marker holding for the target) that
    the installed `dep` does not meet: the pair `unmet` reports with that METADATA as the source, so a check that
    judges the same pair from the doctor's own tables has nothing to add."""
    d = declaration(snap, canonicalize_name(package), lookup)
    have = snap.packages.get(canonicalize_name(dep)) if known(snap.packages) else None
    if d is None or d.requires_dist is None or have is None or not isinstance(have.version, str):
        return False
    applies = _Applies(marker_environment(snap))
    return any(req is not None and req.spec and canonicalize_name(req.name) == canonicalize_name(dep)
               and _contains(req.specifier, have.version) is False
               for req in map(applies, d.requires_dist))


def declared_ranges(snap: Snapshot, dep: str, lookup: Lookup | None = None) -> list[tuple[str, str, SpecifierSet]]:
    """(package, requirement, specifier) for each installed package's base requirement on `dep` with a version range
    whose marker holds for the target, sorted by package."""
    dep = canonicalize_name(dep)
    applies = _Applies(marker_environment(snap))
    out = []
    for name, d in sorted(declarations(snap, lookup).items()):
        for line in d.requires_dist or ():
            req = applies(line)
            if req is not None and req.spec and canonicalize_name(req.name) == dep:
                out.append((name, bare(line), req.specifier))
    return out


def declared_excluding(snap: Snapshot, dep: str, wanted: str, lookup: Lookup | None = None) -> list[tuple[str, str]]:
    """(package, requirement) for each installed package whose base requirement on `dep` (its marker holding for the
    target) admits no release `wanted` (a version specifier) admits: installing such a `dep` breaks that package's own
    declaration (verl 0.7.1's `numpy<2.0.0` against a need of `numpy>=2.0`), so a fix that moves `dep` there is not
    the one to offer first. Sorted by package."""
    want = _specifier(wanted)
    out: dict[str, str] = {}
    for name, line, spec in declared_ranges(snap, dep, lookup):
        if name not in out and _disjoint(spec, want):
            out[name] = line
    return list(out.items())


def narrows(spec: SpecifierSet, wanted: SpecifierSet) -> bool:
    """`spec` leaves out some version `wanted` admits (vllm-ascend 0.9.1's `<4.53.0` of a need `>=4.52.4`), tried at
    the same edges as `_disjoint`."""
    return any(wanted.contains(v, prereleases=True) and not spec.contains(v, prereleases=True)
               for v in _edges(spec, wanted))


def admits_nothing(spec: SpecifierSet) -> bool:
    """No version meets every clause of `spec` (`~=3.8.0,~=3.9.0`); an empty specifier admits every version."""
    return bool(len(spec)) and _disjoint(spec, spec)


def _disjoint(a: SpecifierSet, b: SpecifierSet) -> bool:
    """No version lies in both ranges. Tried at the versions the clauses name and just above each (`>2.0` admits
    2.0.0.1): where two ranges of version bounds overlap, one of those lies in both."""
    return not any(a.contains(v, prereleases=True) and b.contains(v, prereleases=True) for v in _edges(a, b))


def _edges(a: SpecifierSet, b: SpecifierSet) -> list[Version]:
    edges = []
    for clause in (*a, *b):
        v = _version(clause.version.removesuffix(".*"))
        if v is not None:
            edges += [v, Version(f"{v.base_version}.0.0.0.1"), Version("0")]
    return edges


def marker_environment(snap: Snapshot) -> dict[str, str]:
    """The marker variables the snapshot knows (PEP 508), for its interpreter and host. Unknown ones are left
    out, so a marker that needs them is not evaluated against the doctor's own interpreter by accident."""
    env: dict[str, str] = {}
    py = snap.python if known(snap.python) else None
    ver = getattr(py, "version", None)
    if isinstance(ver, str) and ver:
        try:
            v = Version(ver)
            env["python_version"] = f"{v.major}.{v.minor}"
            env["python_full_version"] = ver
        except InvalidVersion:
            pass
    impl = getattr(py, "implementation", None)
    if isinstance(impl, str) and impl:
        env["platform_python_implementation"] = impl
        env["implementation_name"] = impl.lower()
    host = snap.host if known(snap.host) else None
    arch = getattr(host, "arch", None)
    if isinstance(arch, str) and arch:
        env["platform_machine"] = arch
    # Snapshots are of Linux hosts (the probes read /proc, /sys and the Ascend tree): what CPython reports there.
    env.update(sys_platform="linux", platform_system="Linux", os_name="posix")
    kernel = getattr(host, "kernel", None)
    if isinstance(kernel, str) and kernel:
        env["platform_release"] = kernel
    return env


_MARKER_VARS = ("python_version", "python_full_version", "platform_python_implementation", "implementation_name",
                "platform_machine", "sys_platform", "platform_system", "os_name", "platform_release",
                "platform_version", "implementation_version")


def marker_applies(marker: Marker | None, env: Mapping[str, str], extra: str = "") -> bool | None:
    """True / False for the target, None when the marker needs a fact the environment lacks."""
    if marker is None:
        return True
    text = str(marker)
    full = dict(env)
    for var in _MARKER_VARS:
        if var in text and var not in full:
            return None
    # variables the marker does not use still need values for packaging; they cannot change the result
    for var in _MARKER_VARS:
        full.setdefault(var, "")
    full["extra"] = extra
    try:
        return bool(marker.evaluate(full))
    except (UndefinedComparison, UndefinedEnvironmentName, InvalidMarker, ValueError, TypeError):
        return None


def line_applies(line: str, env: Mapping[str, str], extras: tuple[str, ...] = ()) -> bool | None:
    """Whether a Requires-Dist line's marker holds for the target with no extra or one of `extras` active: True
    when it holds for one, False when it holds for none, None when a marker needs a fact the target lacks."""
    _, sep, text = line.partition(";")
    text = text.strip()
    if not sep or not text:
        return True
    m = _marker(text)
    if m is None:
        return None
    verdicts = [marker_applies(m, env, e) for e in ("", *extras)]
    return True if True in verdicts else (None if None in verdicts else False)


class _Req(NamedTuple):
    """The parts of a requirement the check needs (name, extras, specifier), without its marker."""

    name: str
    extras: frozenset[str]
    spec: str  # the specifier as text ("" for none)

    @property
    def specifier(self) -> SpecifierSet:
        return _specifier(self.spec)


# `name [extras] specifier ; marker` without a URL: what nearly every Requires-Dist line is (PEP 508). Split with
# one regular expression; anything else goes through packaging's full parser.
_SIMPLE = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*"
                     r"\(?\s*((?:[<>=!~]=?|===)[^;()@]*?)?\s*\)?\s*(?:;.*)?$")


@lru_cache(maxsize=8192)
def _parse(line: str) -> _Req | None:
    m = _SIMPLE.match(line) if "@" not in line.partition(";")[0] else None
    if m is not None:
        extras = frozenset(e.strip() for e in (m.group(2) or "").split(",") if e.strip())
        spec = (m.group(3) or "").strip()
        try:
            _specifier(spec)
        except InvalidSpecifier:
            return None
        return _Req(m.group(1), extras, spec)
    try:
        r = Requirement(line)
    except InvalidRequirement:
        return None
    return _Req(r.name, frozenset(r.extras), str(r.specifier))


@lru_cache(maxsize=4096)
def _specifier(text: str) -> SpecifierSet:
    return SpecifierSet(text)


_ONLY_EXTRA = re.compile(r"""^extra\s*==\s*['"]([^'"]+)['"]$""")


@lru_cache(maxsize=1024)
def _marker(text: str) -> Marker | None:
    try:
        return Marker(text)
    except InvalidMarker:
        return None


_RANGE = re.compile(r"[<>=!~]")


# What `_Applies` works out for an environment: (marker text, extra) -> verdict, and (line, extra) -> result. Kept
# per environment for the process, so the `_Applies` each helper of one check makes (unmet, declared_ranges, ...)
# and the checks after it share them instead of evaluating the same markers again (a verdict depends on the
# environment, the marker and the extra alone). Bounded: a process judging many targets starts over.
_BY_ENV: dict[tuple[tuple[str, str], ...], tuple[dict[tuple[str, str], "bool | None"],
                                                 dict[tuple[str, str], "_Req | None"]]] = {}
_MAX_ENVS = 32


class _Applies:
    """Marker verdicts for one environment, by marker text: a target's ~1500 Requires-Dist lines share a few
    dozen distinct markers (ray alone has ~300 lines under `extra == "..."`), and a requirement is parsed only
    when its marker holds. This keeps the whole evaluation to a few milliseconds."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        key = tuple(sorted(env.items()))
        if key not in _BY_ENV and len(_BY_ENV) >= _MAX_ENVS:
            _BY_ENV.clear()
        self.cache, self.results = _BY_ENV.setdefault(key, ({}, {}))

    def __call__(self, line: str, extra: str = "") -> _Req | None:
        """The parsed requirement when its marker holds for the target with this extra active, else None (a
        false marker, one needing an unknown fact, or an unparsable line)."""
        try:
            return self.results[(line, extra)]
        except KeyError:
            got = self.results[(line, extra)] = self._judge(line, extra)
            return got

    def _judge(self, line: str, extra: str) -> _Req | None:
        _, sep, text = line.partition(";")
        text = text.strip()
        if sep and text:
            if "extra" not in text:
                extra = ""  # the verdict does not depend on it: share the cache entry
            key = (text, extra)
            if key not in self.cache:
                only = _ONLY_EXTRA.match(text)
                if only is not None:  # `extra == "x"`, most of them: no marker evaluation needed (PEP 685 names)
                    self.cache[key] = bool(extra) and canonicalize_name(only.group(1)) == canonicalize_name(extra)
                else:
                    m = _marker(text)
                    self.cache[key] = None if m is None else marker_applies(m, self.env, extra)
            if self.cache[key] is not True:
                return None
        return _parse(line)


def active_extras(snap: Snapshot, env: Mapping[str, str], applies: _Applies | None = None,
                  decls: Mapping[str, Decl] | None = None) -> dict[str, set[str]]:
    """dist -> extras some installed distribution asks of it (`ray[default]` makes ray's `default` active),
    to a fixed point: an extra's own requirements may ask for more."""
    pkgs = snap.packages if known(snap.packages) else {}
    decls = declarations(snap) if decls is None else decls
    applies = applies or _Applies(env)
    active: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for name, d in decls.items():
            lines = [x for x in (d.requires_dist or ()) if "[" in x.partition(";")[0]]
            if not lines:
                continue
            for extra in ("", *sorted(active.get(name, ()))):
                for line in lines:
                    req = applies(line, extra)
                    if req is None or not req.extras:
                        continue
                    target = canonicalize_name(req.name)
                    if target not in pkgs:
                        continue
                    new = {canonicalize_name(e) for e in req.extras} - active.get(target, set())
                    if new:
                        active.setdefault(target, set()).update(new)
                        changed = True
    return active


def _contains(spec: SpecifierSet, version: str) -> bool | None:
    v = _version(version)
    return None if v is None else spec.contains(v, prereleases=True)


@lru_cache(maxsize=4096)
def _version(text: str) -> Version | None:
    """An installed version, parsed once: the same few (numpy's, torch's) are compared against many requirements."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def unmet(snap: Snapshot, lookup: Lookup | None = None, ascend: bool = True) -> Iterator[Unmet]:
    """Every declared requirement the snapshot's installed set does not meet, in package order. Silent for
    what the snapshot cannot tell: a package whose declaration is unknown (not collected, not in the release
    table), a version not recorded, a missing package on an incomplete snapshot, a marker needing an unknown
    fact."""
    if not known(snap.packages):
        return
    pkgs = snap.packages
    env = marker_environment(snap)
    applies = _Applies(env)
    decls = declarations(snap, lookup)
    extras = active_extras(snap, env, applies, decls)
    owners: dict[str, set[str]] = {}  # target -> the packages whose base requirements name it (this pass's own)
    under_extras: dict[str, list[str]] = {}  # package -> its lines whose marker needs an extra
    pyver = env.get("python_full_version")
    for name in sorted(decls):
        d = decls[name]
        version = pkgs[name].version
        if d.requires_python and pyver:
            try:
                ok = _contains(SpecifierSet(d.requires_python), pyver)
            except InvalidSpecifier:
                ok = None
            if ok is False:
                yield Unmet("python", name, version, d.requires_python, "python", pyver, d.metadata, None, d.source)
        if d.requires_dist is None:
            continue
        seen: set[str] = set()
        for extra in ("", *sorted(extras.get(name, ()))):
            for line in d.requires_dist:
                if line in seen:
                    continue
                req = applies(line, extra)
                if req is None:
                    if not extra and "extra" in line:
                        under_extras.setdefault(name, []).append(line)
                    continue
                seen.add(line)
                target = canonicalize_name(req.name)
                if not extra:
                    owners.setdefault(target, set()).add(name)
                dep = pkgs.get(target)
                if dep is None:
                    # "not installed" needs a complete snapshot, and the package's own METADATA: a release's
                    # published metadata says what its wheel needs, while the documented stacks install some
                    # packages from source or --no-deps on purpose (Megatron from git, vLLM's empty build)
                    if snap.is_complete and d.source is None:
                        yield Unmet("missing", name, version, line, target, None, d.metadata, extra or None, d.source)
                    continue
                if dep.version is None or not req.spec:
                    continue
                if _contains(req.specifier, dep.version) is False:
                    yield Unmet("version", name, version, line, target, dep.version, d.metadata, extra or None, d.source)
        yield from _named_extras(name, version, d, pkgs, applies, extras.get(name, set()),
                                 _SOURCE_BUILT if ascend else frozenset(), decls)
    # after the pass: it has recorded which packages' base requirements name each distribution
    for name in sorted(under_extras):
        yield from _only_extras(name, pkgs[name].version, decls[name], under_extras[name], pkgs, applies,
                                extras.get(name, set()), owners, _SOURCE_BUILT if ascend else frozenset(),
                                decls.get)
        if snap.is_complete and decls[name].source is None:
            yield from _run_set(name, pkgs[name].version, decls[name], under_extras[name], pkgs, applies,
                                extras.get(name, set()))


def _run_set(name: str, version: str | None, d: Decl, lines: list[str], pkgs: Mapping[str, Any], applies: _Applies,
             active: set[str]) -> Iterator[Unmet]:
    """What a package's run set (`run_sets`) adds to its base requirements, missing or out of range: it must be
    installed even when nobody asked for the extra by name (pip check would not look)."""
    for core, (users, adds) in run_sets(name, d, lines, applies).items():
        if core in active:
            continue  # an active extra: the main pass judged it
        for line, target, req in adds:
            dep = pkgs.get(target)
            if dep is None:
                yield Unmet("missing", name, version, line, target, None, d.metadata, core, d.source, True, users)
            elif dep.version is not None and req.spec and _contains(req.specifier, dep.version) is False:
                yield Unmet("version", name, version, line, target, dep.version, d.metadata, core, d.source, True,
                            users)


def run_sets(name: str, d: Decl, lines: list[str], applies: _Applies
             ) -> dict[str, tuple[tuple[str, ...], list[tuple[str, str, _Req]]]]:
    """A package whose own extras say its base requirements are not what it runs with: an extra that restates every
    base requirement and adds more, and that at least two of its other runtime extras build on (`verl[verl-core];
    extra == "vllm"`, the same for [sglang], [fsdp], [megatron], [cpu] in verl 0.9.1). That extra is the package's
    run set, whichever backend extra is meant. extra -> (the extras built on it, its additions as (line, name,
    requirement)). `lines` are the package's lines whose marker needs an extra. A requirement the package also lists
    under a development extra ([test]) is a development tool and is no addition, nor one of the base requirements."""
    built_on: dict[str, set[str]] = {}
    for line in lines:
        if "[" not in line or line_name(line) != name:  # a self-reference names an extra: most lines have none
            continue
        req = _parse(line)
        if req is None:
            continue
        for e in runtime_extras(line):
            if not _aggregate(e):
                for c in req.extras:
                    built_on.setdefault(canonicalize_name(c), set()).add(e)
    cores = sorted(c for c, by in built_on.items() if len(by - {c}) >= 2)
    if not cores:
        return {}
    # by name, whatever the markers: a restatement is what the package wrote, for every target
    base = {t for x in d.requires_dist or () if "extra" not in x.partition(";")[2] and (t := line_name(x)) is not None}
    out: dict[str, tuple[tuple[str, ...], list[tuple[str, str, _Req]]]] = {}
    for core in cores:
        mine = [x for x in lines if core in _marker_extras(x)]
        if not base or len(mine) <= len(base) or not base <= {line_name(x) for x in mine}:
            continue  # not a restatement of the base set: one feature's extra, however many build on it
        dev = {n for x in lines if (m := _marker_extras(x)) and all(map(dev_extra, m)) and (n := line_name(x)) is not None}
        out[core] = (tuple(sorted(built_on[core] - {core})),
                     [(x, dep, r) for x in mine if (r := applies(x, core)) is not None
                      and (dep := canonicalize_name(r.name)) != name and dep not in base and dep not in dev])
    return out


# A `[vllm]` extra pins the CUDA vLLM wheel; on Ascend vLLM is built from source (VLLM_TARGET_DEVICE=empty) at the
# release vllm-ascend pairs with, so such pins say nothing about the NPU stack (`unmet(..., ascend=False)`: a
# stack with no Ascend fact is judged by them like any other):
# https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md
_SOURCE_BUILT = frozenset({"vllm"})
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")
# Extras that hold a package's own development tools (linters, test runners, doc builders): their requirements say
# nothing about the package at run time (the only-extras rule here, the later-bounds table).
DEV_EXTRAS = frozenset({"dev", "develop", "development", "test", "tests", "testing", "testing-integration", "quality",
                        "docs", "doc", "docs-specific", "style", "lint", "linting", "typing", "types", "type", "check",
                        "cover", "enabler", "benchmark", "benchmarks", "bench", "ci", "sklearn-dev", "dev-torch",
                        "dev-tensorflow"})
# a development extra's name often carries what it tests after the word (datasets' `tests-numpy2`, accelerate's
# `test-fp8` / `test-trackers`): named so, it is one too
_DEV_WORDS = frozenset({"dev", "test", "tests", "testing"})


def dev_extra(extra: str) -> bool:
    """A development extra (tests, docs, linting), by its canonical name."""
    return extra in DEV_EXTRAS or extra.partition("-")[0] in _DEV_WORDS


@lru_cache(maxsize=8192)
def _marker_extras(line: str) -> frozenset[str]:
    """The extras a Requires-Dist line's marker names (PEP 685 names), read once per line."""
    return frozenset(canonicalize_name(e) for e in _EXTRA.findall(line.partition(";")[2]))


def dev_only(line: str) -> bool:
    """The line applies only under development extras (`extra == "dev"`, `extra == "quality"`)."""
    extras = {canonicalize_name(e) for e in _EXTRA.findall(line.partition(";")[2])}
    return bool(extras) and all(map(dev_extra, extras))


def runtime_extras(line: str) -> tuple[str, ...]:
    """The extras a line's marker names that are not development extras."""
    return tuple(sorted(e for e in {canonicalize_name(x) for x in _EXTRA.findall(line.partition(";")[2])} if not dev_extra(e)))


_NAME_END = re.compile(r"[\s\[<>=!~;(]")


def _named_for(extra: str, dist: str) -> bool:
    """An extra named for the distribution it brings (`mbridge[megatron]` -> megatron-core, `x[vllm]` -> vllm)."""
    e = canonicalize_name(extra)
    return dist == e or dist.startswith(e + "-")


def _named_extras(name: str, version: str | None, d: Decl, pkgs: Mapping[str, Any], applies: _Applies,
                  active: set[str], source_built: frozenset[str] = _SOURCE_BUILT,
                  decls: Mapping[str, Decl] | None = None) -> Iterator[Unmet]:
    """A package's extra named for a distribution that is installed is the integration in use (mbridge's
    `megatron` extra when megatron-core is installed): the range that extra declares for that distribution is
    the range the package supports, even when nobody installed `pkg[extra]` (pip check would not look).
    Unless another installed package's base requirement holds that distribution where the extra's range admits no
    release (`_held_elsewhere`): then the extra cannot be in use beside the stack, and the finding says so."""
    for line in d.requires_dist or ():
        head, _, marker = line.partition(";")
        if "extra" not in marker or not _RANGE.search(head):
            continue  # only extra-only requirements with a version range can be judged
        target = canonicalize_name(_NAME_END.split(head.strip(), maxsplit=1)[0])
        if target not in pkgs or target in source_built or component_of_distribution(target) in (None, "python"):
            # only an integration between the stack's components is judged in use: huggingface-hub's `[mcp]`
            # extra says nothing when vLLM brought mcp in for itself
            continue
        for extra in {canonicalize_name(m) for m in _EXTRA.findall(marker)} - active:
            if not _named_for(extra, target):
                continue
            dep = pkgs.get(target)
            if dep is None or dep.version is None or applies(line, "") is not None:
                continue
            req = applies(line, extra)
            if req is not None and req.spec and _contains(req.specifier, dep.version) is False:
                yield Unmet("version", name, version, line, target, dep.version, d.metadata, extra, d.source, True,
                            held=_held_elsewhere(name, target, dep.version, req.specifier, decls or {}, applies))
                break


def _held_elsewhere(name: str, target: str, installed: str, spec: SpecifierSet, decls: Mapping[str, Decl],
                    applies: _Applies) -> tuple[str, str] | None:
    """Another installed package whose base requirement on `target` the installed release meets and no release in the
    named extra's range `spec` does, as (package, line): then nobody can have installed `name[extra]` beside it.
    pip installs and checks an extra's requirements only when something asks for `name[extra]`: its resolver adds them
    through an ExtrasCandidate (https://github.com/pypa/pip/blob/26.2.1/src/pip/_internal/resolution/resolvelib/
    candidates.py#L434-L544) and pip check reads `iter_dependencies()` with no extra (https://github.com/pypa/pip/
    blob/26.2.1/src/pip/_internal/operations/check.py#L51, metadata/importlib/_dists.py#L224-L235; the same in 23.2.1).
    verl 0.8.0 + vLLM 0.12.0: flashinfer-python 0.5.3 asks for nvidia-cudnn-frontend>=1.13.0 without an extra, pip takes
    1.32.0, whose [triton] extra wants triton>=3.7.0, and torch 2.9.0 requires triton==3.5.0
    (https://pypi.org/project/nvidia-cudnn-frontend/1.32.0/, https://pypi.org/project/torch/2.9.0/): that extra
    serves a few kernels its package loads on first use, and everything else imports."""
    for other in sorted(decls):
        if other in (name, target):
            continue
        for line in decls[other].requires_dist or ():
            if line_name(line) != target:
                continue
            req = applies(line)
            if (req is not None and req.spec and _contains(req.specifier, installed) is True
                    and _disjoint(req.specifier, spec)):
                return other, bare(line)
    return None


def _only_extras(name: str, version: str | None, d: Decl, candidates: list[str], pkgs: Mapping[str, Any],
                 applies: _Applies, active: set[str], owners: Mapping[str, set[str]],
                 source_built: frozenset[str], decl_of: Callable[[str], Decl | None] = lambda _: None
                 ) -> Iterator[Unmet]:
    """A distribution the package names only under runtime extras, none of them active, that is installed and
    that no other installed distribution requires, and that at least two of its own extras (not counting [all]) need:
    it is part of how the package runs, whichever extra brought it. When every such extra's range excludes the
    installed version, the pair is out of range either way (Ray 2.8
    names pydantic only under [air], [all], [default], [serve], each `pydantic<2`; pydantic 2.5 installed beside it
    fails Ray's dashboard). Development extras ([dev], [test], ...) never count, nor exact pins."""
    by_target: dict[str, list[str]] = {}
    for line in candidates:  # the lines whose marker needs an extra (unmet's pass set them aside)
        target = line_name(line)  # the name alone first: most extras name packages that are not installed
        dep = pkgs.get(target) if target is not None else None
        if dep is None or dep.version is None or target in source_built or target == name:
            continue
        head, _, marker = line.partition(";")
        if "extra" in marker and _RANGE.search(head) and _parse(line) is not None:
            by_target.setdefault(str(target), []).append(line)
    for target, lines in sorted(by_target.items()):
        dep = pkgs[target]
        named = sorted({e for x in lines for e in runtime_extras(x)})
        if not named or set(named) & active or (any(_named_for(e, target) for e in named)
                                                and _judged_as_named(target)):
            continue  # an active extra (pip check's rule) or one named for it (_named_extras) judges it
        if sum(not _aggregate(e) for e in named) < 2 or owners.get(target):
            continue  # one integration's dependency, or a base requirement (pip check's rule; another package's)
        if all((r := _parse(x)) is None or _contains(r.specifier, dep.version) is not False for x in lines):
            continue  # no range excludes it, whatever the markers say: nothing to evaluate
        # an exact pin in an extra chooses a build (verl[vllm]'s torchvision==0.26.0 is the CUDA wheel vLLM needs;
        # the Ascend stack pairs torchvision with torch-npu instead): only ranges say what the package works with
        verdicts = [(x, e, _contains(r.specifier, dep.version)) for e in named for x in lines
                    if (r := applies(x, e)) is not None and r.spec and "==" not in r.spec]
        # a dependency of one integration ([flax] -> scipy) may be there for anything else (CANN installs scipy):
        # only one that several of the package's own extras need is part of how the package runs
        functional = {e for _, e, _ in verdicts if not _aggregate(e)}
        if len(functional) < 2 or not all(ok is False for _, _, ok in verdicts):
            continue
        yield Unmet("version", name, version, verdicts[0][0], target, dep.version, d.metadata, ", ".join(named),
                    d.source, True, clash=_cannot_run_beside(name, d, target, decl_of(target), applies))


def _cannot_run_beside(name: str, d: Decl, target: str, t: Decl | None,
                       applies: _Applies) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The first third distribution on which `target`'s own base requirement and `name`'s admit no common release:
    then no environment meets both, `name`'s extras cannot be running with this `target`, and it is what a change of
    the set left behind (transformers 4.57.6, after 5.25.0, beside the kernels 0.19.1 that 5.25.0 required: kernels
    needs huggingface-hub>=1.32.0, transformers 4.57.6 <1.0 and checks it at import, so kernels cannot import beside
    it and transformers' hub_kernels integration, which catches that ImportError, stays off; a real venv imports
    verl 0.7.1's trainer). None when the declarations do not say so."""
    if t is None or not t.requires_dist or not d.requires_dist:
        return None
    mine: dict[str, tuple[str, SpecifierSet]] = {}
    for line in d.requires_dist:
        req = applies(line)
        if req is not None and req.spec:
            mine.setdefault(canonicalize_name(req.name), (line, req.specifier))
    for line in t.requires_dist:
        req = applies(line)
        other = mine.get(canonicalize_name(req.name)) if req is not None and req.spec else None
        if req is not None and other is not None and _disjoint(req.specifier, other[1]):
            return (target, bare(line)), (name, bare(other[0]))
    return None


def _judged_as_named(target: str) -> bool:
    """`_named_extras` judges an extra named for `target` (a component of the stack): else the only-extras rule
    must, or nobody does. transformers 4.47.0 names accelerate (a plain Python distribution) only under its
    [accelerate], [agents], [deepspeed], [torch] and [all] extras, each `accelerate>=0.26.0`
    (https://pypi.org/project/transformers/4.47.0/); with accelerate 0.25.0 installed its Trainer raises
    "Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`" (a plain venv, run here)."""
    return component_of_distribution(target) not in (None, "python")


def _aggregate(extra: str) -> bool:
    """An extra that bundles the others ([all], [all-cpp], [full]), not an integration of its own."""
    return extra.startswith("all") or extra in ("full", "everything", "complete")


def requirement_names(snap: Snapshot, package: str, lookup: Lookup | None = None) -> set[str]:
    """The distributions `package` requires for the target (base requirements whose marker holds, and what its run set
    adds): what "on verl's import path" widens to."""
    d = declaration(snap, canonicalize_name(package), lookup)
    if d is None or d.requires_dist is None:
        return set()
    applies = _Applies(marker_environment(snap))
    out: set[str] = set()
    for line in d.requires_dist:
        req = applies(line)
        if req is not None:
            out.add(canonicalize_name(req.name))
    # and what its run set adds (an extra the package's backends all build on: `run_sets`)
    extra_lines = [x for x in d.requires_dist if "extra" in x.partition(";")[2]]
    for _, adds in run_sets(canonicalize_name(package), d, extra_lines, applies).values():
        out.update(t for _, t, _ in adds)
    return out


def required_through(snap: Snapshot, roots: set[str], lookup: Lookup | None = None, *,
                     verl_commit: str | None = None) -> dict[str, tuple[str, ...]]:
    """The installed distributions the `roots` need through other installed ones: name -> the chain of packages
    that requires it, first root first (`jinja2` -> ("verl", "transformers")). Followed through base requirements
    whose marker holds for the target and the extras a requiring line asks for (`ray[default]`). A requirement of a
    package on that chain is one the roots' imports run through: transformers imports jinja2 at load, and jinja2
    imports markupsafe, so a markupsafe missing under jinja2 stops `import verl` as surely as one verl names.
    `verl_commit`: the commit the installed verl was built from (a checkout of main reports a .devN version no
    release has; the import-surface table read it at the commit a stack pins)."""
    pkgs = snap.packages if known(snap.packages) else {}
    applies = _Applies(marker_environment(snap))
    chain: dict[str, tuple[str, ...]] = {r: () for r in sorted(roots) if r in pkgs}
    asked: dict[str, set[str]] = {}
    todo = list(chain)
    # then what verl imports at load without requiring it (its chains start at verl), once requirements are followed
    imported: list[str] | None = None if "verl" in chain else []
    while todo or imported is None:
        if not todo:
            imported = [n for n in _imported_by_verl(snap, verl_commit) if n not in chain]
            chain.update((n, ("verl",)) for n in imported)
            todo = list(imported)
            continue
        name = todo.pop(0)
        d = declaration(snap, name, lookup)
        if d is None or d.requires_dist is None:
            continue
        for extra in ("", *sorted(asked.get(name, ()))):
            for line in d.requires_dist:
                req = applies(line, extra)
                if req is None:
                    continue
                target = canonicalize_name(req.name)
                if target not in pkgs or target == name:
                    continue
                new = {canonicalize_name(e) for e in req.extras} - asked.get(target, set())
                if new:
                    asked.setdefault(target, set()).update(new)
                if target not in chain:
                    chain[target] = (*chain[name], name)
                    todo.append(target)
                elif new and target not in todo:
                    todo.append(target)  # an extra asked for later: its lines are followed too
    return chain


def _imported_by_verl(snap: Snapshot, commit: str | None = None) -> list[str]:
    """The installed distributions whose modules the installed verl release (or source build at `commit`) imports
    when its trainer loads, as the import-surface table read it: what it imports without naming it in its metadata
    (verl 0.9.0's verl/workers/rollout/utils.py imports fastapi) is on its path as much as what it requires."""
    p = snap.packages.get("verl") if known(snap.packages) else None
    version = getattr(p, "version", None)
    if not isinstance(version, str) or not version:
        return []
    from doctor.knowledge.import_surface import imported_at_load
    from doctor.knowledge.ownership import modules_of_distribution

    got = imported_at_load("verl", version, commit=commit)
    if got is None:
        return []
    loads = got[1].modules
    return [n for n in sorted(snap.packages) if n != "verl" and any(m in loads for m in modules_of_distribution(n, snap))]


def needs_through(snap: Snapshot, chain: tuple[str, ...], name: str) -> str:
    """'verl needs jinja2 through transformers -> jinja2 (...)': verl when it is installed (the chain's first package
    is verl's, or one it requires); else the chain starts at a stack package in an environment without verl."""
    who = "verl" if known(snap.packages) and "verl" in snap.packages else "The stack"
    return f"{who} needs {name} {chain_words(chain, name)}"


def chain_words(chain: tuple[str, ...], name: str) -> str:
    """How a `required_through` chain reads: 'through transformers -> jinja2 (each requires the next)', or, when it
    starts at a package verl imports without requiring it, says so."""
    path = " -> ".join((*chain, name))
    if chain[:1] == ("verl",):
        first = chain[1] if len(chain) > 1 else name
        return (f"through {path} (verl's modules import {first} when its trainer loads, without verl's metadata "
                "naming it" + ("; each after it requires the next)" if len(chain) > 1 else ")"))
    return f"through {path} (each requires the next)"


def exact_pins(snap: Snapshot, lines: tuple[str, ...]) -> Iterator[tuple[str, str, str]]:
    """(line, distribution, version) for each base requirement (no extra) whose marker holds for the snapshot's
    target and whose specifier is one exact pin (`torch==2.1.2`): the one release pip must install with it."""
    applies = _Applies(marker_environment(snap))
    for line in lines:
        req = applies(line)
        if req is None:
            continue
        spec = list(req.specifier)
        if len(spec) == 1 and spec[0].operator == "==" and "*" not in spec[0].version and "+" not in spec[0].version:
            yield line, canonicalize_name(req.name), spec[0].version


_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


@lru_cache(maxsize=8192)
def line_name(line: str) -> str | None:
    """The PEP 503 name at the head of a Requires-Dist line, read without parsing the rest (None: no name)."""
    m = _NAME.match(line)
    return canonicalize_name(m.group(1)) if m else None


def well_formed(line: str) -> bool:
    """A `name [extras] specifier ; marker` line by shape (what a shipped table's lines are checked with when it
    is loaded; the specifier and marker are parsed when a check evaluates the line)."""
    return _SIMPLE.match(line) is not None or _parse(line) is not None


def specifier_of(line: str) -> SpecifierSet | None:
    """The specifier of a Requires-Dist line (cached; None: unparsable)."""
    req = _parse(line)
    return None if req is None else req.specifier


def bare(requirement: str) -> str:
    """`name[extras]specifier` without the marker: what a fix installs."""
    req = _parse(requirement)
    if req is None:
        return requirement
    return f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}{req.specifier}"


def same_requirement(a: str, b: str) -> bool:
    """Two requirement strings name the same distribution with the same specifier (markers aside); a bare
    name matches any specifier of that name."""
    ra, rb = _parse(a), _parse(b)
    if ra is None or rb is None:
        return a.strip() == b.strip()
    if canonicalize_name(ra.name) != canonicalize_name(rb.name):
        return False
    return not str(ra.specifier) or not str(rb.specifier) or ra.specifier == rb.specifier
