"""What each release of the tracked projects declares on PyPI: Requires-Python and Requires-Dist, read from the
release's own wheel METADATA (or sdist PKG-INFO) by `python -m tools.refresh_knowledge.pypi` into
profiles/requirements.json.

Checks ask `declared("vllm-ascend", "0.30.0rc2")` for what an installed release itself requires, instead of
keeping copies of those pins. The file is read and validated on first use (a check that never asks never pays
for it); a malformed file is an InputError naming the file and the key (exit 2).

Format (schema "doctor.requirements/1"):
    {"schema": "doctor.requirements/1", "read": "YYYY-MM-DD",
     "projects": {"<PEP 503 name>": {"<version as PyPI lists it>": {
         "requires_python": str | null, "requires_dist": [str, ...], "uploaded": "YYYY-MM-DD",
         "source": "https://pypi.org/project/<p>/<v>/#<file the metadata was read from>"}}}}

One file is read per release; its name in `source` records which. A platform wheel's Requires-Dist can differ from
its siblings' (vllm-ascend 0.23.0's cp312 aarch64 wheel pins transformers==5.5.4), so `Declared.fits` applies it
only to a target whose Python and machine one of its tags names.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from doctor.errors import InputError
from doctor.knowledge.location import knowledge_file
from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import parse_pkg_version, valid_specifier

SCHEMA = "doctor.requirements/1"
FILE = "requirements.json"
_ENTRY = {"requires_python", "requires_dist", "uploaded", "source"}


@dataclass(frozen=True)
class Declared:
    """What one release declares about its own needs, and the page it was read from."""

    requires_python: str | None
    requires_dist: tuple[str, ...]
    source: str
    uploaded: str = ""

    @property
    def wheel(self) -> str | None:
        """The file the metadata was read from, when it is a wheel: the source URL's fragment names it (the refresh
        tool reads one file per release, tools/refresh_knowledge/pypi.py), and its tags say which Pythons and
        platforms that metadata was built for."""
        name = self.source.rpartition("#")[2]
        return name if name.endswith(".whl") else None

    def fits(self, python: str | None, arch: str | None) -> bool:
        """Whether the release's metadata applies to an interpreter `python` (X.Y[.Z]) on `arch`: a pure wheel,
        an sdist or an unknown file always; a platform wheel (whose Requires-Dist may differ from its siblings':
        vllm-ascend 0.23.0's cp312 aarch64 wheel pins transformers==5.5.4) only when one of its tags is for that
        Python and machine. An unknown Python or machine does not fit a platform wheel."""
        tags = _wheel_tags(self.wheel)
        if tags is None or all(t.platform == "any" and t.abi == "none" for t in tags):
            return True
        return any(_tag_fits(t, python, arch) for t in tags)


@dataclass(frozen=True)
class RequirementsTable:
    read: str
    projects: Mapping[str, Mapping[str, Declared]]
    path: str = ""

    def declared(self, project: str, version: str) -> Declared | None:
        """The release's entry: the version as PyPI lists it, else the same public version (2.8.0+cpu -> 2.8.0,
        2.10.0.post04 -> 2.10.0.post4); None for a project or release the table does not hold."""
        rels = self.projects.get(_normalize(project))
        if not rels:
            return None
        if version in rels:
            return rels[version]
        v = parse_pkg_version(version)
        if v is None:
            return None
        want = Version(v.public)
        return next((d for k, d in rels.items() if Version(k) == want), None)


def _wheel_tags(filename: str | None) -> frozenset[Tag] | None:
    if not filename:
        return None
    try:
        return parse_wheel_filename(filename)[3]
    except InvalidWheelFilename:
        return None


def _tag_fits(t: Tag, python: str | None, arch: str | None) -> bool:
    """One wheel tag against the snapshot's Python and machine (PEP 425: cpXY / abi3 from cpXY up / pyX[Y]; a
    platform `any` or one ending in the machine, `manylinux_2_28_aarch64`, `linux_x86_64`)."""
    if t.platform != "any" and not (arch and t.platform.endswith("_" + arch)):
        return False
    v = parse_pkg_version(python or "")
    if v is None or len(v.release) < 2:
        return False
    major, minor = v.release[0], v.release[1]
    m = re.fullmatch(r"(cp|py)(\d)(\d*)", t.interpreter)
    if m is None or int(m.group(2)) != major:
        return False
    if not m.group(3):  # py3
        return True
    tag_minor = int(m.group(3))
    return tag_minor == minor or (t.abi == "abi3" and tag_minor <= minor) or (m.group(1) == "py" and t.abi == "none"
                                                                            and tag_minor <= minor)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declaration(v: Validator, rp: Any, rd: Any, path: str) -> tuple[str | None, tuple[str, ...]]:
    """A release's Requires-Python (null or a version specifier) and Requires-Dist (requirement strings), checked
    the same way in the PyPI table and the git-sources table; InputError names `path`."""
    if rp is not None and not (isinstance(rp, str) and valid_specifier(rp)):
        raise v.fail(f"{path}.requires_python", f"must be null or a version specifier, got {rp!r}")
    if not isinstance(rd, list) or not all(isinstance(x, str) and x.strip() for x in rd):
        raise v.fail(f"{path}.requires_dist", "must be an array of requirement strings")
    return rp, tuple(rd)


def parse_requirements(data: Any, source: str) -> RequirementsTable:
    """Validate the parsed requirements.json; InputError names the file and the key on any problem."""
    v = Validator(source)
    t = v.keys(data, {"schema", "read", "projects"}, "", required=("schema", "read", "projects"))
    if t["schema"] != SCHEMA:
        raise v.fail("schema", f"unsupported schema {t['schema']!r} (this doctor reads {SCHEMA!r})")
    read = v.date(t["read"], "read")
    raw = t["projects"]
    if not isinstance(raw, dict):
        raise v.fail("projects", "must be an object of project -> releases")
    projects: dict[str, Mapping[str, Declared]] = {}
    for name, rels in raw.items():
        p = f"projects.{name}"
        if name != _normalize(name):
            raise v.fail(p, f"project names are PEP 503 normalised ({_normalize(name)!r})")
        if not isinstance(rels, dict):
            raise v.fail(p, "must be an object of version -> entry")
        out: dict[str, Declared] = {}
        for ver, e in rels.items():
            q = f"{p}.{ver}"
            v.version(ver, q)
            t2 = v.keys(e, _ENTRY, q, required=tuple(sorted(_ENTRY)))
            rp, rd = declaration(v, t2["requires_python"], t2["requires_dist"], q)
            out[ver] = Declared(rp, rd, v.url(t2["source"], f"{q}.source"), v.date(t2["uploaded"], f"{q}.uploaded"))
        projects[name] = MappingProxyType(out)
    return RequirementsTable(read, MappingProxyType(projects), source)


def read_file(path: str) -> RequirementsTable:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise InputError(f"cannot read the requirements table: {e.strerror or e}", source=path) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", source=path) from None
    except ValueError as e:
        raise InputError(f"not valid JSON: {e}", source=path) from None
    return parse_requirements(data, path)


_TABLE: dict[str, RequirementsTable] = {}


def load_requirements(path: str | os.PathLike[str] | None = None) -> RequirementsTable:
    """The table in use (the knowledge directory's requirements.json), read once per process and path."""
    p = os.fspath(path) if path is not None else knowledge_file(FILE)
    if p not in _TABLE:
        _TABLE[p] = read_file(p)
    return _TABLE[p]


def declared(project: str, version: str) -> Declared | None:
    """What `project` `version` declares on PyPI, None when the table does not hold that release."""
    return load_requirements().declared(project, version)


def read_date() -> str:
    """The day PyPI was read (YYYY-MM-DD)."""
    return load_requirements().read
