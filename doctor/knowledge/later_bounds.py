"""Bounds a package's later releases put on a dependency: profiles/later-bounds.json, derived from the published
metadata of every release (profiles/requirements/) by tools/refresh_knowledge/later_bounds.py.

A package's METADATA is written when it is released and never changes. When a dependency later publishes a
release that breaks it (click 8.3.0 and Ray, pydantic 2 and Ray, numpy 2 and half the ecosystem), upstream fixes
the *next* release: it adds `!=8.3.0`, `<2` or `~=1.4` to that release's Requires-Dist. The old release keeps
admitting the breaking version, so pip installs the pair and `pip check` is clean, and the job fails at import or
at run time. The fix is still written down: in the metadata of the releases that followed.

For each project of the requirements table and each dependency whose declaration ever carried an upper clause
(`<`, `<=`, `!=`, `~=`) outside a development extra, the file keeps the sequence of final releases at which that
declaration changed (the lines naming the dependency, markers included). `excluded_later` asks, for an installed
release and an installed dependency version, whether a release after it excludes that version by such a clause
while the installed release itself admits it. Lower bounds (`>=`) and exact pins (`==`) are not evidence: a later
release raising its floor says what *it* needs, not that the old release breaks.

Pure logic apart from `load`; read and validated on first use (a check asks), never at import.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from doctor.knowledge.location import table_path
from doctor.knowledge.pipcheck import dev_only, specifier_of, well_formed
from doctor.knowledge.validate import Validator

SCHEMA = "doctor.later-bounds/1"
FILE = "later-bounds.json"
# Operators that say "not this release or newer": what a fix for a newer dependency's break adds.
UPPER = frozenset({"<", "<=", "!=", "~="})


class Change(NamedTuple):
    """From final release `since` on (until the next change), the project declares `lines` for the dependency."""

    since: str
    lines: tuple[str, ...]  # the Requires-Dist lines naming the dependency, markers included; () = not declared


class Bounds:
    """The derived table: project -> dependency -> its changes in release order, and each project's newest
    final release (the end of what was read). A dependency's changes are validated when first asked for: a check
    judges the few pairs a snapshot holds, not the ~1,400 requirement lines of all of them."""

    def __init__(self, read: str, newest: Mapping[str, str], raw: Mapping[str, Any], source: str,
                 clauses: Mapping[str, Any] | None = None) -> None:
        self.read = read  # the day the requirements table it was derived from was read from PyPI
        self.newest = newest
        self._raw = raw
        self._clauses = clauses or {}
        self._source = source
        self._parsed: dict[tuple[str, str], tuple[Change, ...]] = {}

    def __contains__(self, project: object) -> bool:
        return project in self._raw

    def dependency_names(self, project: str) -> tuple[str, ...]:
        """The dependencies `project`'s later releases bound (() when the table has none)."""
        deps = self._raw.get(project)
        return tuple(deps) if isinstance(deps, dict) else ()

    def may_exclude(self, project: str, dep: str, version: str, release: str | None = None) -> bool:
        """Whether a release of `project` (after `release`, when given) carries a clause on `dep` that excludes
        `version` (False: none does, told from a few clauses without reading the changes; True when unsure)."""
        raw = self._clauses.get(project, {}).get(dep) if isinstance(self._clauses.get(project), dict) else None
        if not isinstance(raw, list):
            return True
        try:
            w = _version(version)
            v = _version(release) if release else None
            for clause, until in raw:
                if v is not None and until is not None and _version(until) <= v:
                    continue  # no release after the installed one carries it
                if not _specifier_clause(clause).contains(w, prereleases=True):
                    return True
            return False
        except (InvalidVersion, InvalidSpecifier, TypeError, ValueError):
            return True

    def changes(self, project: str, dep: str) -> tuple[Change, ...]:
        """`dep`'s changes in `project`'s releases, validated when first asked for (InputError: malformed)."""
        key = (project, dep)
        if key not in self._parsed:
            v, p = Validator(self._source), f"projects.{project}"
            deps = self._raw.get(project)
            if not isinstance(deps, dict):
                raise v.fail(p, "must be an object of dependency -> changes")
            self._parsed[key] = _changes(v, deps.get(dep), f"{p}.{dep}")
        return self._parsed[key]


class Exclusion(NamedTuple):
    """A release after the installed one whose requirement excludes the installed dependency version."""

    since: str  # the first later release that excludes it
    line: str  # its Requires-Dist line
    clause: str  # the clause of that line that excludes the version (`!=8.3.0`, `<2`)
    readmitted: str | None  # a still later release whose declaration admits the version again (None: none read)
    newest: str  # the newest release read
    # the clause is a floor the release sets for some Pythons only, the snapshot's among them: the break is stated
    # for this Python, not inferred from a bound that may hold on another one only
    for_this_python: bool = False
    # a release (this one or later) that names the version in a `!=` clause (`!=5.1.*`), after which no release read
    # admits it again: upstream singled the release out as broken and never declared it fixed
    singled_out: tuple[str, str] | None = None  # (release, clause)


@lru_cache(maxsize=4096)
def _requirement(line: str) -> Requirement | None:
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


def _upper(spec: SpecifierSet) -> tuple[Specifier, ...]:
    return tuple(s for s in spec if s.operator in UPPER)


def derive(releases: Mapping[str, Sequence[str] | None]) -> dict[str, tuple[Change, ...]]:
    """dependency -> its changes, from one project's releases (version -> Requires-Dist lines). Only final
    releases count (a pre-release's bound is not yet a statement), and only dependencies that some final release
    bounds from above outside a development extra."""
    finals: list[tuple[Version, str]] = []
    for v in releases:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if not (parsed.is_prerelease or parsed.is_devrelease):
            finals.append((parsed, v))
    finals.sort()
    per: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    bounded: set[str] = set()
    for _, v in finals:
        by_dep: dict[str, list[str]] = {}
        for line in releases[v] or ():
            req = _requirement(line)
            if req is None or dev_only(line):
                continue
            name = str(canonicalize_name(req.name))
            by_dep.setdefault(name, []).append(line)
            if _upper(req.specifier):
                bounded.add(name)
        for dep in set(by_dep) | set(per):
            lines = tuple(sorted(set(by_dep.get(dep, ()))))
            seq = per.setdefault(dep, [])
            if not seq or seq[-1][1] != lines:
                seq.append((v, lines))
    return {dep: tuple(Change(s, ls) for s, ls in per[dep]) for dep in sorted(bounded)}


def newest_final(versions: Iterable[str]) -> str | None:
    best: tuple[Version, str] | None = None
    for v in versions:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if not (parsed.is_prerelease or parsed.is_devrelease) and (best is None or parsed > best[0]):
            best = (parsed, v)
    return best[1] if best else None


def document(read: str, projects: Mapping[str, Mapping[str, Sequence[str] | None]]) -> dict[str, Any]:
    """The file's content for a requirements table (project -> version -> Requires-Dist lines) read on `read`."""
    out: dict[str, Any] = {}
    newest: dict[str, str] = {}
    clauses: dict[str, Any] = {}
    for name in sorted(projects):
        deps = derive(projects[name])
        top = newest_final(projects[name])
        if deps and top:
            out[name] = {dep: [{"since": c.since, "lines": list(c.lines)} for c in changes]
                         for dep, changes in deps.items()}
            clauses[name] = {dep: list(clauses_of(changes)) for dep, changes in deps.items()}
            newest[name] = top
    return {"schema": SCHEMA, "read": read, "newest": newest, "clauses": clauses, "projects": out}


def clauses_of(changes: Sequence[Change]) -> list[list[str | None]]:
    """Every clause of the changes that could exclude a version (upper clauses, and floors set for some Pythons
    only), each with the first release after the last range that carries it (None: carried to the newest release
    read): a version all of them admit, or a release at or after every clause's end, is excluded by no later release,
    which the check tells without reading a line."""
    until: dict[str, str | None] = {}
    for i, c in enumerate(changes):
        end = changes[i + 1].since if i + 1 < len(changes) else None
        for line in c.lines:
            req = _requirement(line)
            if req is None:
                continue
            split = bool(_PYTHON_MARKER.search(line.partition(";")[2]))
            for x in req.specifier:
                if x.operator in UPPER or (split and x.operator in (">=", ">")):
                    until[str(x)] = end  # changes are in release order: the last range wins
    return [[clause, until[clause]] for clause in sorted(until)]


# An `applies(line)` callback: does the line's marker hold for the target (True / False), or is a fact unknown
# (None). The check builds it from the snapshot (doctor/knowledge/pipcheck.py's marker evaluation).
Applies = Callable[[str], "bool | None"]


def _spec(line: str) -> SpecifierSet | None:
    return specifier_of(line)  # the cached parse pip check's evaluation uses


def _admits(lines: Iterable[str], version: Version, applies: Applies) -> bool | None:
    """Every line that applies admits the version (True), some line excludes it (False), or no line applies /
    a marker needs an unknown fact (None)."""
    verdict: bool | None = None
    for line in lines:
        a = applies(line)
        if a is None:
            return None
        if not a:
            continue
        spec = _spec(line)
        if spec is None:
            return None
        if not spec.contains(version, prereleases=True):
            return False
        verdict = True
    return verdict


_PYTHON_MARKER = re.compile(r"python_(?:full_)?version")


def _excluding_clause(lines: Sequence[str], version: Version, applies: Applies) -> tuple[str, str] | None:
    """(line, clause) of the first applying line that excludes the version by an upper clause; or, failing that,
    by a floor that the release sets only for some Pythons (a sibling line for other Pythons admits the version,
    and the floor's own release too): ray 2.56 declares `pydantic>=2.13.0; python_version >= "3.14"` next to
    `pydantic>=2.5.0; python_version < "3.14"`, which says pydantic 2.12 breaks on Python 3.14, not that ray 2.56
    needs a newer pydantic. Ranges that do not overlap are a build split, not a break: opencv-python-headless
    4.12.0.88 declares `numpy>=2,<2.3.0; python_version >= "3.9"` next to `numpy<2.0; python_version < "3.9"` (numpy
    2 supports no Python below 3.9), the numpy its wheels for each Python were built against; opencv-python-headless
    4.11.0.86, whose own metadata admits numpy 1.26.4, runs with it (cv2.resize, cvtColor, GaussianBlur, run here
    on Python 3.11)."""
    floor: tuple[str, str] | None = None
    for line in lines:
        if applies(line) is not True:
            continue
        spec = _spec(line)
        if spec is None:
            continue
        for s in spec:
            if s.contains(version, prereleases=True):
                continue
            if s.operator in UPPER:
                return line, str(s)
            if floor is None and s.operator in (">=", ">") and _PYTHON_MARKER.search(line.partition(";")[2]) and any(
                    o != line and applies(o) is False and _PYTHON_MARKER.search(o.partition(";")[2])
                    and (sp := _spec(o)) is not None and sp.contains(version, prereleases=True)
                    and _admits_floor(sp, s) for o in lines):
                floor = line, str(s)
    return floor


def _admits_floor(sibling: SpecifierSet, floor: Specifier) -> bool:
    """The other Pythons' range admits the floor's release too (`>=2.5.0` admits 2.13.0 of `>=2.13.0`): the ranges
    overlap, and the floor singles this Python out. False for disjoint ranges (`<2.0` beside `>=2`), or when the
    floor's release does not parse."""
    try:
        return sibling.contains(_version(floor.version), prereleases=True)
    except InvalidVersion:
        return False


@lru_cache(maxsize=4096)
def _version(text: str) -> Version:
    return Version(text)


@lru_cache(maxsize=4096)
def _specifier_clause(text: str) -> Specifier:
    return Specifier(text)


def in_effect(changes: Sequence[Change], version: Version) -> Change | None:
    """The change a release declares by: the last one at or before it (None: before the first release read)."""
    found = None
    for c in changes:
        if _version(c.since) <= version:
            found = c
        else:
            break
    return found


def excluded_later(changes: Sequence[Change], newest: str, version: str, installed: str, applies: Applies,
                   own: Sequence[str] | None = None) -> Exclusion | None:
    """Whether a release after `version` excludes dependency version `installed` by an upper clause, while
    `version` itself declares the dependency and admits `installed` (`own`: its Requires-Dist lines naming the
    dependency, when the snapshot read its METADATA; else the table's). Silent (None) when anything is unknown:
    an unparsable version, a release before the first one read or after the newest, a marker needing a fact the
    snapshot lacks."""
    try:
        v, w, top = _version(version), _version(installed), _version(newest)
    except InvalidVersion:
        return None
    if v >= top:
        return None
    if own is None:
        current = in_effect(changes, v)
        if current is None:
            return None
        own = current.lines
    if _admits(own, w, applies) is not True:
        return None  # not declared for this target, unknown, or already unmet (pip check says so)
    later = [c for c in changes if _version(c.since) > v]
    for i, c in enumerate(later):
        hit = _excluding_clause(c.lines, w, applies)
        if hit is None:
            continue
        readmitted = next((d.since for d in later[i + 1:] if _admits(d.lines, w, applies) is not False), None)
        return Exclusion(c.since, hit[0], hit[1], readmitted, newest, hit[1].startswith(">"),
                         _singled_out(later[i:], w, applies))
    return None


def no_release_accepts(changes: Sequence[Change], newest: str, installed: str,
                       applies: Applies) -> tuple[str, str] | None:
    """For a package whose release is not known: (first, newest) releases read when every release that declares
    the dependency refuses `installed`, by its own declaration or by a later release that singles the version out
    with `!=` and none since accepting it (what `excluded_later` rates an error); None when some release may accept
    it, or a marker needs a fact the snapshot lacks."""
    try:
        w = _version(installed)
    except InvalidVersion:
        return None
    declaring = [c for c in changes if c.lines]
    if not declaring:
        return None
    start = changes.index(declaring[0])
    for i, c in enumerate(changes):
        if i < start:
            continue
        if not c.lines:
            return None  # releases that dropped the dependency accept any version of it
        own = _admits(c.lines, w, applies)
        if own is None:
            return None
        if own and _singled_out(changes[i + 1:], w, applies) is None:
            return None
    return declaring[0].since, newest


def _singled_out(changes: Sequence[Change], version: Version, applies: Applies) -> tuple[str, str] | None:
    """(release, clause) of the last change whose `!=` clause excludes the version, when no change after it admits
    the version again."""
    found: tuple[str, str] | None = None
    for c in changes:
        if found is not None and _admits(c.lines, version, applies) is not False:
            found = None  # admitted again
        for line in c.lines:
            spec = _spec(line) if applies(line) is True else None
            hit = next((str(x) for x in spec or () if x.operator == "!=" and not x.contains(version, prereleases=True)),
                       None)
            if hit is not None:
                found = (c.since, hit)
                break
    return found


def parse(data: Any, source: str) -> Bounds:
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "newest", "clauses", "projects"}, "",
               required=("schema", "read", "newest", "clauses", "projects"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    if not isinstance(t["newest"], dict) or not isinstance(t["projects"], dict):
        raise v.fail("projects", "must be objects: newest (project -> version) and projects (project -> dependency "
                                 "-> changes)")
    newest = {name: v.version(ver, f"newest.{name}") for name, ver in t["newest"].items()}
    for name in t["projects"]:
        if name not in newest:
            raise v.fail(f"newest.{name}", "required for every project that has changes")
    if not isinstance(t["clauses"], dict):
        raise v.fail("clauses", "must be an object of project -> dependency -> clauses")
    return Bounds(read, newest, t["projects"], source, t["clauses"])


def _changes(v: Validator, raw: Any, path: str) -> tuple[Change, ...]:
    if not isinstance(raw, list) or not raw:
        raise v.fail(path, "must be a non-empty list of {since, lines}")
    out: list[Change] = []
    last: Version | None = None
    for i, c in enumerate(raw):
        p = f"{path}[{i}]"
        e = v.keys(c, {"since", "lines"}, p, required=("since", "lines"))
        since = v.version(e["since"], f"{p}.since")
        parsed = _version(since)
        if last is not None and parsed <= last:
            raise v.fail(f"{p}.since", "changes must be in increasing release order")
        last = parsed
        lines = v.strs(e["lines"], f"{p}.lines")
        for j, line in enumerate(lines):
            if not well_formed(line):
                raise v.fail(f"{p}.lines[{j}]", f"not a requirement: {line!r}")
        out.append(Change(since, lines))
    return tuple(out)


_CACHE: dict[str, Bounds] = {}


def load(path: str | None = None) -> Bounds:
    """The table in use (the knowledge directory's copy, else the packaged one), read once per process."""
    p = table_path(FILE, path)
    if p not in _CACHE:
        from doctor.jsonfile import read_json

        _CACHE[p] = parse(read_json(p, "the table of later releases' bounds"), p)
    return _CACHE[p]
