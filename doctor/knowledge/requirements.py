"""What each release of the tracked projects declares on PyPI: Requires-Python and Requires-Dist, read from the
release's own wheel METADATA (or sdist PKG-INFO) by `python -m tools.refresh_knowledge.pypi` into the directory
profiles/requirements/.

Checks ask `declared("vllm-ascend", "0.30.0rc2")` for what an installed release itself requires, instead of
keeping copies of those pins. The table is several MB, and a plain `doctor check` needs only its read date and the
newest vLLM release (the knowledge line): so it is laid out as one small index plus one file per project, and a
project's file is read and validated only when a check asks about that project. A malformed file is an
InputError naming the file and the key (exit 2) when it is read.

Layout (`layout()` builds it from the refresh tool's whole document, so the writer and this reader share it):
    index.json      {"schema": "doctor.requirements-index/1", "read": "YYYY-MM-DD",
                     "projects": {"<PEP 503 name>": {"releases": <count>, "newest": "<version>" | null,
                                                     "yanked": {"<version>": "<reason>", ...},
                                                     "requires_torch": true | false}}}
    <name>.json     {"schema": "doctor.requirements-project/1", "read": "YYYY-MM-DD", "project": "<name>",
                     "releases": {"<version as PyPI lists it>": {
                         "requires_python": str | null, "requires_dist": [str, ...], "uploaded": "YYYY-MM-DD",
                         "source": "https://pypi.org/project/<p>/<v>/#<file the metadata was read from>",
                         "wheels": ["<sibling wheel declaring the same>", ...],
                         "machines": {"x86_64" | "aarch64": {"requires_python": str | null,
                                                             "requires_dist": [str, ...], "wheels": [<file>, ...]}},
                         "files": ["<wheel tag: python-abi-platform>" | "sdist", ...],
                         "yanked": "<the maintainers' reason, or \"\">"}},
                     "unstated": ["<version>", ...]}
`wheels` (optional) names the release's other Linux wheels that were read and declare the same (the same
requirement set, however written): the row applies to their Pythons and machines too.
`machines` (optional; tables before it stay valid) keeps, per machine, what the release's other wheels of that
machine declare when they declare something else than the row's file and all agree among themselves: torch-npu's
x86_64 wheels pin `torch==X+cpu` where its aarch64 ones pin `torch==X`. It applies only to a target whose machine
the snapshot states and whose Python and machine one of its `wheels` names (`Declared.on`); an unstated machine is
judged by the row alone, as before. torch-npu's x86_64 check (torch-not-cpu-build-x86) reads it, and so does the
published-metadata fallback of declared-requirements for every stated release (which leaves torch-npu's `+cpu` pin
unmet by a plain torch to that check: one finding for the pair).
`files` (optional; tables before it stay valid) lists what the release publishes for Linux hosts: the tag triple
of each Linux or pure wheel (`cp310-cp310-manylinux_2_17_x86_64`, `py3-none-any`) and "sdist" when it has a source
archive; `Declared.installable` answers from it whether pip can install the release for a Python and machine.
`yanked` (optional) is there only for a release PyPI lists as yanked (PEP 592: every file yanked, so pip picks it
only for an exact pin), with the reason its maintainers gave ("" when none). The index repeats the project's
yanked releases (`yanked`, left out when there are none) so a live check asks about an installed release without
reading the project's file.
`unstated` (optional) lists the releases the size policy keeps whose only file is an sdist that does not state its
requirements (PKG-INFO before Metadata-Version 2.2: older deepspeed and flash-attn): nothing can be said about
them, and the refresh must not report them as missing from the table.
`requires_torch` says whether the newest release's Requires-Dist names torch outside an extra: a fix line that lets
pip resolve the unpinned name brings torch in, and a check asks that of every fix line without reading a project's
file (an index written before the field lacks it: the project's file answers then).
A project's file must agree with the index (same read date, release count, newest release, yanked releases and
requires_torch): the index is a summary of the files, never a second source, and a copy mixing files of two
refreshes is refused.

The refresh tool's whole document (schema "doctor.requirements/1": {"schema", "read", "projects": {name:
{version: entry}}, "unstated": {name: [version, ...]}}) is validated by `parse_requirements` with the same per-release rules before it is written.

One file is read per release; its name in `source` records which. A platform wheel's METADATA is written per build
and may differ from its siblings' (only one is read), so `Declared.fits` applies it only to a target whose Python
and machine one of its tags names.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from itertools import repeat
from types import MappingProxyType
from typing import Any, NamedTuple

from packaging.tags import Tag, parse_tag
from packaging.version import Version

from doctor.knowledge import tagfit
from doctor.knowledge.location import knowledge_file
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import parse_pkg_version, valid_specifier

SCHEMA = "doctor.requirements/1"  # the refresh tool's whole document
INDEX_SCHEMA = "doctor.requirements-index/1"
PROJECT_SCHEMA = "doctor.requirements-project/1"
DIR = "requirements"  # inside the knowledge directory
INDEX = "index.json"
_ENTRY = {"requires_python", "requires_dist", "uploaded", "source"}
_ENTRY_OPTIONAL = {"wheels", "machines", "files", "yanked"}
MACHINES = ("aarch64", "x86_64")  # the `machines` keys: the Linux machines Ascend hosts have
SDIST = "sdist"  # a `files` entry: the release publishes a source archive


class MachineDeclaration(NamedTuple):
    """What a release's wheels of one machine declare where it differs from the row's file (`machines`)."""

    machine: str
    requires_python: str | None
    requires_dist: tuple[str, ...]
    wheels: tuple[str, ...]


class Declared(NamedTuple):
    """What one release declares about its own needs, and the page it was read from."""

    requires_python: str | None
    requires_dist: tuple[str, ...]
    source: str
    uploaded: str = ""
    wheels: tuple[str, ...] = ()  # siblings of the source wheel read and found to declare the same
    files: tuple[str, ...] = ()  # what the release publishes for Linux: wheel tag triples and "sdist"; () unknown
    yanked: str | None = None  # PyPI yanked the release: the maintainers' reason ("" none given); None not yanked
    machines: tuple[MachineDeclaration, ...] = ()  # other machines' wheels that declare something else

    def installable(self, python: str | None, arch: str | None, glibc: str | None = None) -> str:
        """What pip finds among the release's published files for an interpreter `python` (X.Y[.Z]) on `arch` with
        `glibc` (X.Y): "wheel" (a platform wheel for it), "pure" (only a pure wheel fits), "sdist" (no wheel fits:
        pip builds the source archive), "none" (nothing pip can install), or "unknown" (the table does not record
        the files). An unstated Python, machine or glibc rules no wheel out (`tagfit`)."""
        if not self.files:
            return "unknown"
        tags = [t for f in self.files if f != SDIST for t in _tag_set(f)]
        fitting = [t for t in tags if tagfit.tag_fits(t, python, arch, glibc)]
        if any(t.platform != "any" for t in fitting):
            return "wheel"
        if fitting:
            return "pure"
        return "sdist" if SDIST in self.files else "none"

    def wheel_files(self, python: str | None, arch: str | None) -> tuple[str, ...]:
        """The `files` entries of the wheels pip chooses among for an interpreter `python` (X.Y[.Z]) on `arch` (an
        unstated one rules none out, `tagfit`), their glibc level not judged."""
        return tuple(f for f in self.files if f != SDIST and tagfit.fits(_tag_set(f), python, arch))

    def file_page(self, entry: str) -> str:
        """The PyPI page of one `files` entry, the file named as PyPI names it (`pypi_file_name`), for the project
        and version of the source page (https://pypi.org/project/<p>/<v>/#<file>)."""
        page = self.source.rpartition("#")[0]
        project, version = page.rstrip("/").split("/")[-2:]
        return f"{page}#{pypi_file_name(project, version, entry)}"

    @property
    def wheel_targets(self) -> str:
        """The Pythons and machines the release's wheels are for, in short: 'cp38–cp311 on x86_64'."""
        tags = [t for f in self.files if f != SDIST for t in _tag_set(f)]
        pys = sorted({t.interpreter for t in tags},
                     key=lambda p: (p[:2], int(p[2:])) if re.fullmatch(r"(?:cp|py)\d+", p) else (p, 0))
        machines = sorted({m for t in tags for m in ("x86_64", "aarch64") if t.platform.endswith(m)}
                          | ({"any"} if any(t.platform == "any" for t in tags) else set()))
        if not pys:
            return "no Python"
        py = f"{pys[0]}–{pys[-1]}" if len(pys) > 2 else ", ".join(pys)
        return f"{py} on {', '.join(machines)}"

    @property
    def platform_wheels(self) -> bool:
        """Whether the release publishes a wheel built for a platform (a compiled extension)."""
        return any(t.platform != "any" for f in self.files if f != SDIST for t in _tag_set(f))

    @property
    def wheel(self) -> str | None:
        """The file the metadata was read from, when it is a wheel: the source URL's fragment names it (the refresh
        tool reads one file per release, tools/refresh_knowledge/pypi.py), and its tags say which Pythons and
        platforms that metadata was built for."""
        name = self.source.rpartition("#")[2]
        return name if name.endswith(".whl") else None

    def fits(self, python: str | None, arch: str | None) -> bool:
        """Whether the release's metadata applies to an interpreter `python` (X.Y[.Z]) on `arch`: a pure wheel,
        an sdist or an unknown file always; a platform wheel (whose Requires-Dist may differ from its siblings', which
        were not read) only when one of the wheels read is for that Python and machine. A fact the snapshot does not
        state (a bug report gives versions, rarely the interpreter or machine) rules no wheel out: the stated
        release's published wheels declare what they declare, and a stated Python or machine that none of them is
        for still fits nothing (`2.6.0` on Python 3.12 with only cp39-cp311 wheels read)."""
        tags = tagfit.wheel_tags(self.wheel)
        if tags is None or all(t.platform == "any" and t.abi == "none" for t in tags):
            return True
        return self.fitting_wheel(python, arch) is not None

    def on(self, python: str | None, arch: str | None) -> "Declared | None":
        """The declaration that applies to an interpreter `python` on `arch`: this row when it `fits`, else, for a
        stated machine, the `machines` entry one of whose wheels is for that Python and machine (as a row of its
        own: its requirements, its first wheel as the source); None when neither applies. An unstated machine is
        judged by the row alone: which machine's declaration holds is then unknown."""
        if self.fits(python, arch):
            return self
        if arch is None:
            return None
        for m in self.machines:
            if m.machine == arch and any(_speaks_for(w, python, arch) for w in m.wheels):
                first = self.source.rpartition("#")[0] + "#" + m.wheels[0]  # the page of that machine's first wheel
                return self._replace(requires_python=m.requires_python, requires_dist=m.requires_dist,
                                     source=first, wheels=m.wheels[1:], machines=())
        return None

    def fitting_wheel(self, python: str | None, arch: str | None) -> str | None:
        """The first of the wheels read (the source's, then `wheels`) whose tags name this Python and machine."""
        return next((w for w in (self.wheel, *self.wheels)
                     if w and _speaks_for(w, python, arch)), None)

    def source_for(self, python: str | None, arch: str | None) -> str:
        """The page of the file whose metadata applies to this target: the source, or the sibling wheel that fits
        (it declares the same, and it is the file that target installs)."""
        w = self.fitting_wheel(python, arch) if self.wheels else None
        return f"{self.source.rpartition('#')[0]}#{w}" if w and w != self.wheel else self.source


class ProjectSummary(NamedTuple):
    """A project's line of the index: how many releases its file holds, the newest of them, the yanked ones
    (version -> reason, in version order), and whether the newest release requires torch (`requires_torch`: None
    when the index predates the field, a knowledge directory carried in from an older doctor)."""

    releases: int
    newest: str | None
    yanked: tuple[tuple[str, str], ...] = ()
    requires_torch: bool | None = False


def summary_of(releases: Mapping[str, Any]) -> ProjectSummary:
    """A project's index line from its releases (Declared or the refresh tool's entries): the one definition the
    writer and the agreement check use."""
    def reason(d: Any) -> str | None:
        return d.get("yanked") if isinstance(d, Mapping) else d.yanked

    def dist(d: Any) -> Iterable[str]:
        return (d.get("requires_dist") or ()) if isinstance(d, Mapping) else d.requires_dist

    yanked = sorted(((k, r) for k, d in releases.items() if (r := reason(d)) is not None), key=lambda kv: Version(kv[0]))
    newest = newest_of(releases)
    return ProjectSummary(len(releases), newest, tuple(yanked),
                          newest is not None and requires_torch(dist(releases[newest])))


def requires_torch(declared: Iterable[str]) -> bool:
    """A release's Requires-Dist names torch outside an extra (an environment marker on the platform or Python still
    counts: the targets are Linux, where such markers hold): pip installing the release into a target resolves
    torch. Only a line that starts with "torch" (in any case, after PEP 508's leading blanks) can name it: a
    canonical name equal to "torch" is those five letters, separators cannot occur inside it; the others are not
    parsed."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    for line in declared:
        if line.lstrip(" \t")[:5].lower() != "torch":
            continue
        try:
            r = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(r.name) == "torch" and (r.marker is None or "extra" not in str(r.marker)):
            return True
    return False


def newest_of(versions: Iterable[str]) -> str | None:
    """The highest release (pre-releases count: an rc is on PyPI for anyone who pins it); the one definition the
    index, the knowledge line and the agreement check use."""
    vs = list(versions)
    return max(vs, key=Version) if vs else None


class ProjectTable(NamedTuple):
    """One project's file: its releases, and the kept releases whose metadata states nothing (`unstated`)."""

    releases: Mapping[str, Declared]
    unstated: frozenset[str] = frozenset()


class _Projects(Mapping[str, Mapping[str, Declared]]):
    """project -> its releases, each project's file read (and validated) on first access."""

    def __init__(self, names: Iterable[str], load: Callable[[str], ProjectTable]) -> None:
        self._names = tuple(names)
        self._load = load
        self._cache: dict[str, ProjectTable] = {}

    def table(self, name: str) -> ProjectTable:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = self._load(name)
        return self._cache[name]

    def __getitem__(self, name: str) -> Mapping[str, Declared]:
        return self.table(name).releases

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class RequirementsTable:
    """The table in use: the index eagerly, each project's releases lazily (`projects[name]`)."""

    def __init__(self, read: str, index: Mapping[str, ProjectSummary],
                 load: Callable[[str], ProjectTable], path: str = "") -> None:
        self.read = read
        self.index = MappingProxyType(dict(index))
        self._projects = _Projects(self.index, load)
        self.projects: Mapping[str, Mapping[str, Declared]] = self._projects
        self.path = path

    def unstated(self, project: str) -> frozenset[str]:
        """The kept releases of `project` whose published metadata states no requirements (an old sdist)."""
        name = _normalize(project)
        return self._projects.table(name).unstated if name in self.index else frozenset()

    def yanked(self, project: str, version: str) -> str | None:
        """Why PyPI yanked this release of `project` ("" when no reason was given), None when it did not or the
        table does not hold the release (from the index: no project file is read). A local version label
        (`2.8.0+cpu`) is another build than PyPI's and never matches."""
        s = self.index.get(_normalize(project))
        if not s or not s.yanked or "+" in version:
            return None
        v = parse_pkg_version(version)
        return next((r for k, r in s.yanked if k == version or (v is not None and Version(k) == v)), None)

    def newest(self, project: str) -> str | None:
        """The newest release the table holds for `project` (from the index: no project file is read)."""
        s = self.index.get(_normalize(project))
        return s.newest if s else None

    def newest_requires_torch(self, project: str) -> bool | None:
        """Whether the newest release the table holds for `project` requires torch (what pip resolves for the
        unpinned name brings torch in): from the index, so a check asks it of every fix line without reading a
        project's file; from the project's file only for an index that predates the field. None for a project the
        table does not hold."""
        name = _normalize(project)
        s = self.index.get(name)
        if s is None:
            return None
        if s.requires_torch is not None:
            return s.requires_torch
        return summary_of(self.projects[name]).requires_torch

    def nearest_installable(self, project: str, version: str, python: str | None, arch: str | None,
                            admits: Callable[[Declared], bool] | None = None, glibc: str | None = None) -> str | None:
        """The release nearest `version` that publishes a wheel for this Python, machine and glibc (and that `admits`
        accepts, e.g. by its Requires-Python): one of the same major.minor, else the first newer one, else the newest
        older one (pre-releases only for a pre-release)."""
        name = _normalize(project)
        v = parse_pkg_version(version)
        if name not in self.index or v is None:
            return None
        ok = sorted((Version(k), k) for k, d in self.projects[name].items()
                    if d.installable(python, arch, glibc) in ("wheel", "pure") and (v.is_prerelease or not Version(k).is_prerelease)
                    and (admits is None or admits(d)))
        same = [(w, k) for w, k in ok if w.release[:2] == v.release[:2]]
        for group in (same, ok):
            newer = [k for w, k in group if w > v]
            if newer:
                return newer[0]
            if group:
                return group[-1][1]
        return None

    def declared(self, project: str, version: str) -> Declared | None:
        """The release's entry: the version as PyPI lists it, else the same public version (2.8.0+cpu -> 2.8.0,
        2.10.0.post04 -> 2.10.0.post4); None for a project or release the table does not hold."""
        name = _normalize(project)
        if name not in self.index:
            return None
        rels = self.projects[name]
        if not rels:
            return None
        if version in rels:
            return rels[version]
        v = parse_pkg_version(version)
        if v is None:
            return None
        want = Version(v.public)
        return next((d for k, d in rels.items() if Version(k) == want), None)


def pypi_file_name(project: str, version: str, entry: str) -> str:
    """One `files` entry under the name PyPI gives the file: a wheel's is `<name>-<version>-<tag triple>.whl`
    with the name's runs of `-_.` as `_` (PEP 427; torch-npu 2.8.0.post2's
    `torch_npu-2.8.0.post2-cp310-cp310-manylinux_2_28_aarch64.whl`); an sdist, whose extension the table does not
    keep, is named `<name>-<version>.tar.gz` (PEP 625)."""
    dist = _SEPARATORS.sub("_", project).lower()
    return f"{dist}-{version}.tar.gz" if entry == SDIST else f"{dist}-{version}-{entry}.whl"


def _speaks_for(wheel: str, python: str | None, arch: str | None) -> bool:
    """Whether the METADATA read from `wheel` speaks for an interpreter `python` on `arch`: the wheel is for that
    Python and machine, a musllinux build too (built from the same source as the manylinux one beside it)."""
    return tagfit.fits(tagfit.wheel_tags(wheel) or (), python, arch, any_libc=True)


@lru_cache(maxsize=4096)
def _tag_set(triple: str) -> frozenset[Tag]:
    """The tags of one `files` entry (`cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64`); empty when it is
    not a python-abi-platform triple. Parsed once per text per process: project files repeat their wheels' tags in
    every release (the ~20 files of verl 0.9.1's requirements, read when a torchless target's fix lines are judged
    for torch: ~7,800 triples, ~350 distinct). The answer is immutable (a frozenset of frozen Tags)."""
    parts = triple.split("-")
    if len(parts) != 3 or not all(re.fullmatch(r"[A-Za-z0-9_.]+", x) and not x.startswith(".") and not x.endswith(".")
                                  for x in parts):
        return frozenset()
    return parse_tag(triple)


_SEPARATORS = re.compile(r"[-_.]+")


def _normalize(name: str) -> str:
    return _SEPARATORS.sub("-", name).lower()


def declaration(v: Validator, rp: Any, rd: Any, path: str) -> tuple[str | None, tuple[str, ...]]:
    """A release's Requires-Python (null or a version specifier) and Requires-Dist (requirement strings), checked
    the same way in the PyPI table and the git-sources table; InputError names `path`."""
    if rp is not None and not (isinstance(rp, str) and valid_specifier(rp)):
        raise v.fail(f"{path}.requires_python", f"must be null or a version specifier, got {rp!r}")
    # C-level passes (those ~20 project files hold ~80,000 lines): every item a str, then every one with a
    # non-blank character
    if not isinstance(rd, list) or not (all(map(isinstance, rd, repeat(str))) and all(map(str.strip, rd))):
        raise v.fail(f"{path}.requires_dist", "must be an array of requirement strings")
    return rp, tuple(rd)


def _project_name(v: Validator, name: Any, path: str) -> str:
    if not isinstance(name, str) or not name or name != _normalize(name):
        raise v.fail(path, f"project names are PEP 503 normalised ({_normalize(str(name))!r})")
    return name


def _releases(v: Validator, rels: Any, path: str) -> Mapping[str, Declared]:
    """One project's releases (version -> entry), every entry checked; the rules of every copy of the table."""
    if not isinstance(rels, dict):
        raise v.fail(path, "must be an object of version -> entry")
    out: dict[str, Declared] = {}
    for ver, e in rels.items():
        q = f"{path}.{ver}"
        v.version(ver, q)
        t = v.keys(e, _ENTRY | _ENTRY_OPTIONAL, q, required=tuple(sorted(_ENTRY)))
        rp, rd = declaration(v, t["requires_python"], t["requires_dist"], q)
        wheels = v.strs(t.get("wheels"), f"{q}.wheels")
        bad = next((w for w in wheels if tagfit.wheel_tags(w) is None), None)
        if bad is not None:
            raise v.fail(f"{q}.wheels", f"not a wheel file name: {bad!r}")
        files = v.strs(t.get("files"), f"{q}.files")
        bad = next((f for f in files if f != SDIST and not _tag_set(f)), None)
        if bad is not None:
            raise v.fail(f"{q}.files", f"not a wheel tag (python-abi-platform) or \"{SDIST}\": {bad!r}")
        yanked = t.get("yanked")
        if yanked is not None and not isinstance(yanked, str):
            raise v.fail(f"{q}.yanked", f"must be the reason PyPI lists (a string, \"\" when none), got {yanked!r}")
        out[ver] = Declared(rp, rd, v.url(t["source"], f"{q}.source"), v.date(t["uploaded"], f"{q}.uploaded"), wheels,
                            files, yanked, _machines(v, t.get("machines"), f"{q}.machines"))
    return MappingProxyType(out)


def _machines(v: Validator, raw: Any, path: str) -> tuple[MachineDeclaration, ...]:
    """A row's `machines`: per machine (MACHINES), a declaration and the non-empty list of that machine's wheels
    it was read from."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise v.fail(path, f"must be an object of machine ({', '.join(MACHINES)}) -> declaration")
    out = []
    for m, e in raw.items():
        q = f"{path}.{m}"
        if m not in MACHINES:
            raise v.fail(q, f"is not a machine the table keeps ({', '.join(MACHINES)})")
        t = v.keys(e, {"requires_python", "requires_dist", "wheels"}, q,
                   required=("requires_python", "requires_dist", "wheels"))
        rp, rd = declaration(v, t["requires_python"], t["requires_dist"], q)
        wheels = v.strs(t["wheels"], f"{q}.wheels")
        bad = next((w for w in wheels if not any(x.platform.endswith("_" + m) for x in tagfit.wheel_tags(w) or ())), None)
        if not wheels or bad is not None:
            raise v.fail(f"{q}.wheels", f"must name {m} wheel files, got {bad!r}")
        out.append(MachineDeclaration(m, rp, rd, wheels))
    return tuple(out)


def _unstated(v: Validator, raw: Any, rels: Mapping[str, Declared], path: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list):
        raise v.fail(path, "must be an array of versions")
    out = frozenset(v.version(x, f"{path}.{x}") for x in raw)
    both = sorted(out & set(rels))
    if both:
        raise v.fail(f"{path}.{both[0]}", "is also in releases: a release either states its requirements or not")
    return out


def parse_requirements(data: Any, source: str) -> RequirementsTable:
    """Validate the refresh tool's whole document (every project, eagerly); InputError names `source` and the
    key on any problem. The refresh validates what it read with this before it writes the directory."""
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "projects", "unstated"}, "", required=("schema", "read", "projects"))
    v.schema(t["schema"], SCHEMA)
    read = v.date(t["read"], "read")
    raw = t["projects"]
    if not isinstance(raw, dict):
        raise v.fail("projects", "must be an object of project -> releases")
    projects = {_project_name(v, name, f"projects.{name}"): _releases(v, rels, f"projects.{name}")
                for name, rels in raw.items()}
    unstated = t.get("unstated") or {}
    if not isinstance(unstated, dict):
        raise v.fail("unstated", "must be an object of project -> versions")
    for name in unstated:
        if name not in projects:
            raise v.fail(f"unstated.{name}", "is not a project of the table")
    tables = {p: ProjectTable(r, _unstated(v, unstated.get(p), r, f"unstated.{p}")) for p, r in projects.items()}
    index = {p: summary_of(r) for p, r in projects.items()}
    return RequirementsTable(read, index, tables.__getitem__, source)


def layout(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The files of the requirements directory for a whole document `parse_requirements` accepted: the index
    (read date, per project its release count, newest release and yanked releases) and one file per project."""
    projects = doc["projects"]

    def line(rels: Mapping[str, Any]) -> dict[str, Any]:
        s = summary_of(rels)
        return {"releases": s.releases, "newest": s.newest, **({"yanked": dict(s.yanked)} if s.yanked else {}),
                "requires_torch": s.requires_torch}

    files: dict[str, dict[str, Any]] = {INDEX: {
        "schema": INDEX_SCHEMA, "read": doc["read"],
        "projects": {p: line(r) for p, r in sorted(projects.items())}}}
    unstated = doc.get("unstated") or {}
    for p, rels in sorted(projects.items()):
        files[f"{p}.json"] = {"schema": PROJECT_SCHEMA, "read": doc["read"], "project": p, "releases": rels}
        if unstated.get(p):
            files[f"{p}.json"]["unstated"] = sorted(unstated[p], key=Version)
    return files


def _read_json(path: str) -> Any:
    from doctor.jsonfile import read_json

    return read_json(path, "the requirements table")


def parse_index(data: Any, source: str) -> tuple[str, dict[str, ProjectSummary]]:
    """index.json: the read date and each project's summary line."""
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "projects"}, "", required=("schema", "read", "projects"))
    v.schema(t["schema"], INDEX_SCHEMA)
    read = v.date(t["read"], "read")
    if not isinstance(t["projects"], dict):
        raise v.fail("projects", "must be an object of project -> {releases, newest}")
    index: dict[str, ProjectSummary] = {}
    for name, e in t["projects"].items():
        p = f"projects.{name}"
        _project_name(v, name, p)
        s = v.keys(e, {"releases", "newest", "yanked", "requires_torch"}, p, required=("releases", "newest"))
        n = s["releases"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise v.fail(f"{p}.releases", f"must be a count of releases, got {n!r}")
        newest = None if s["newest"] is None else v.version(s["newest"], f"{p}.newest")
        if (newest is None) != (n == 0):
            raise v.fail(f"{p}.newest", "must be null exactly when the project has no releases")
        y = s.get("yanked") or {}
        if not isinstance(y, dict) or not all(isinstance(r, str) for r in y.values()):
            raise v.fail(f"{p}.yanked", "must be an object of version -> reason")
        yanked = sorted(((v.version(k, f"{p}.yanked.{k}"), r) for k, r in y.items()), key=lambda kv: Version(kv[0]))
        rt = s.get("requires_torch")
        if rt is not None and not isinstance(rt, bool):
            raise v.fail(f"{p}.requires_torch", f"must be true or false, got {rt!r}")
        index[name] = ProjectSummary(n, newest, tuple(yanked), rt)
    return read, index


def parse_project(data: Any, source: str, name: str, read: str, summary: ProjectSummary) -> ProjectTable:
    """<name>.json: the project's releases, which must agree with its index line (and the index's read date)."""
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "project", "releases", "unstated"}, "",
               required=("schema", "read", "project", "releases"))
    v.schema(t["schema"], PROJECT_SCHEMA)
    if v.date(t["read"], "read") != read:
        raise v.fail("read", f"read {t['read']}, but {INDEX} says {read}: the files come from different refreshes")
    if t["project"] != name:
        raise v.fail("project", f"is {t['project']!r}, but the file is {name}.json")
    rels = _releases(v, t["releases"], "releases")
    got = summary_of(rels)
    if summary.requires_torch is None:  # an index that predates the field: nothing there to agree with
        got = got._replace(requires_torch=None)
    if got != summary:
        raise v.fail("releases", f"{got.releases} releases, newest {got.newest}, yanked {dict(got.yanked)}, newest "
                                 f"requires torch {got.requires_torch}, but {INDEX} says {summary.releases}, newest "
                                 f"{summary.newest}, yanked {dict(summary.yanked)}, newest requires torch "
                                 f"{summary.requires_torch}: the index and this file disagree")
    return ProjectTable(rels, _unstated(v, t.get("unstated"), rels, "unstated"))


def read_dir(path: str) -> RequirementsTable:
    """The requirements directory at `path`: its index now, each project's file when it is asked for."""
    ipath = os.path.join(path, INDEX)
    read, index = parse_index(_read_json(ipath), ipath)

    def load(name: str) -> ProjectTable:
        p = os.path.join(path, f"{name}.json")
        return parse_project(_read_json(p), p, name, read, index[name])

    return RequirementsTable(read, index, load, path)


_TABLE: dict[str, RequirementsTable] = {}


def load_requirements(path: str | os.PathLike[str] | None = None) -> RequirementsTable:
    """The table in use (the knowledge directory's requirements/), read once per process and path."""
    p = os.fspath(path) if path is not None else knowledge_file(DIR)
    if p not in _TABLE:
        _TABLE[p] = read_dir(p)
    return _TABLE[p]


def declared(project: str, version: str) -> Declared | None:
    """What `project` `version` declares on PyPI, None when the table does not hold that release."""
    return load_requirements().declared(project, version)


def read_date() -> str:
    """The day PyPI was read (YYYY-MM-DD)."""
    return load_requirements().read
