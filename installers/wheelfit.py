"""Whether a file a source serves of a `--set` release fits the target interpreter, judged when the plan is made.

pip installs a release only from a file that fits: a wheel whose tags (python / abi / platform, PEP 425; the
manylinux glibc level, PEP 600) name the target, and whose Requires-Python (the wheel's METADATA, or the
`data-requires-python` a PEP 503 page states for the link, PEP 503 / PEP 345) admits the target's Python; or an
sdist it builds, whose Requires-Python (its PKG-INFO, or the link's) admits it. `--set torch-npu=2.1.0` for a
Python 3.11 venv finds cp38-cp310 wheels only; `--set numpy=1.21.6` finds cp310 wheels and a zip whose
Requires-Python is `>=3.7,<3.11`: pip skips them all ("No matching distribution found") after every clone and
build. What is knowable before the run: the target's Python, machine
and glibc (the target interpreter, or the one a new `--venv` is made from), and the served files' names and
stated Requires-Python. Tags are judged by doctor/knowledge/tagfit.py, the judge `doctor check` uses too (as pip
reads them, `packaging.tags`), for CPython, which is what the plan's download asks for too (`--implementation cp`).

A file counts as fitting, not fitting, or cannot be told: an sdist that admits the target (whether it builds for
the target is found by building it), a file whose Requires-Python was not read, or a Requires-Python that the target's X.Y alone does
not settle (`>=3.10.4` for "3.10"). An unknown glibc holds no manylinux level against a wheel.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from doctor.knowledge import tagfit

if TYPE_CHECKING:
    from doctor.knowledge.requirements import Declared


@dataclass(frozen=True)
class TargetPython:
    """The interpreter the plan installs into: its Python (X.Y or X.Y.Z), machine and glibc (None: unknown)."""

    version: str
    arch: str
    glibc: str | None = None

    def __str__(self) -> str:
        return f"CPython {self.version} on {self.arch}" + (f", glibc {self.glibc}" if self.glibc else "")


class Offer(NamedTuple):
    """One file a source serves: its name, its version, and its Requires-Python (`stated` False: not known)."""

    file: str
    version: str
    requires_python: str | None = None
    stated: bool = True


def release_offers(project: str, version: str, files: Iterable[str], requires_python: str | None) -> list[Offer]:
    """The files a PyPI release table row records (doctor/knowledge/requirements.py `files`: wheel tag triples and
    "sdist"), under the names PyPI gives them (`pypi_file_name`), each with the row's Requires-Python: an online
    `--set` release is judged by `judge`, as a wheelhouse's or a local index's files are, so the manylinux glibc
    level counts there too."""
    from doctor.knowledge.requirements import pypi_file_name

    return [Offer(pypi_file_name(project, version, f), version, requires_python) for f in files]


def release_unfit(d: Declared, python: str, arch: str | None, glibc: str | None = None,
                  python_full: str | None = None) -> str | None:
    """Why pip installs no file of a release from what the release table records of it (`d`), judged once for the target, the first reason that applies:
    "files" (no wheel for its Python `python` (X.Y) and machine, and no sdist), "requires-python" (the release's
    Requires-Python for them excludes its Python, `python_full` X.Y.Z where known), "glibc" (every such wheel needs a
    newer glibc than `glibc`, and no sdist). None when a file fits, or the table cannot tell (no files recorded, a
    Requires-Python X.Y does not settle)."""
    if d.installable(python, arch) == "none":
        return "files"
    if python_admits((d.on(python, arch) or d).requires_python, python_full or python) is False:
        return "requires-python"
    if glibc and d.installable(python, arch, glibc) == "none":
        return "glibc"
    return None


def python_admits(spec: str | None, version: str) -> bool | None:
    """Whether Requires-Python `spec` admits Python `version` as pip asks it (pre-releases admitted); None when
    X.Y alone does not settle it. An unparsable spec is ignored, as pip ignores it."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not spec:
        return True
    try:
        s = SpecifierSet(spec)
    except InvalidSpecifier:
        return True
    parts = version.split(".")
    if len(parts) >= 3:
        return s.contains(version, prereleases=True)
    lo, hi = (s.contains(f"{version}.{z}", prereleases=True) for z in (0, 999))
    return lo if lo == hi else None


def requires_python(path: str) -> tuple[str | None, bool]:
    """The Requires-Python a local file states of itself, read as packaging reads core metadata: a wheel's
    `*.dist-info/METADATA`, an sdist's top-level `PKG-INFO` (zip or tar); (None, False) when it cannot be read or
    the sdist marks the field Dynamic (its wheel may say otherwise, PEP 643)."""
    import tarfile

    from packaging.metadata import parse_email

    name = os.path.basename(path)
    wheel = name.endswith(".whl")
    want = re.compile(r"[^/]+\.dist-info/METADATA" if wheel else r"[^/]+/PKG-INFO")
    try:
        if wheel or name.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                member = next((n for n in z.namelist() if want.fullmatch(n)), None)
                data = z.read(member) if member is not None else None
        else:
            with tarfile.open(path, "r:*") as t:
                data = None
                for m in t:
                    if m.isfile() and want.fullmatch(m.name):
                        f = t.extractfile(m)
                        data = f.read() if f is not None else None
                        break
        if data is None:
            return None, False
        raw, _ = parse_email(data)
    except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, ValueError):
        return None, False
    if not wheel and "requires-python" in [d.lower() for d in raw.get("dynamic", [])]:
        return None, False
    return raw.get("requires_python"), True


def judge(offers: Iterable[Offer], target: TargetPython) -> tuple[bool | None, str]:
    """(True: a file fits; None: none is known to fit, but one cannot be told; False: none fits) and why, the files
    grouped by reason ("for another Python or machine: A, B; Requires-Python >=3.7,<3.11: C")."""
    verdict: bool | None = False
    why: dict[str, list[str]] = {}
    for o in offers:
        if o.file.endswith(".whl"):
            tags = tagfit.wheel_tags(o.file)
            if tags is None:
                continue
            if not tagfit.fits(tags, target.version, target.arch, target.glibc):
                level = target.glibc is not None and tagfit.fits(tags, target.version, target.arch)
                why.setdefault(f"for a newer glibc than {target.glibc}" if level else "for another Python or machine",
                               []).append(o.file)
                continue
            ok = python_admits(o.requires_python, target.version) if o.stated else None
            if ok:
                return True, ""
        else:
            ok = python_admits(o.requires_python, target.version) if o.stated else None
            if ok is not False:
                why.setdefault("an sdist (pip builds it)", []).append(o.file)
                verdict = None
                continue
        if ok is None:
            verdict = None
        why.setdefault(f"Requires-Python {o.requires_python if o.stated else 'not read'}", []).append(o.file)
    near = f"linux_{target.arch}", f"_{target.arch}."  # the target machine's Linux wheels say the most: first

    def key(f: str) -> bool:
        return not ("linux" in f and any(n in f or f.endswith(n[:-1] + ".whl") for n in near))

    return verdict, "; ".join(f"{reason}: {some(sorted(files, key=key), 'file')}" for reason, files in why.items())


def some(items: list[str], noun: str, n: int = 3) -> str:
    """The first `n` items and how many more: a simple page lists ~30 files per release and ~150 releases."""
    more = len(items) - n
    return ", ".join(items) if more <= 1 else f"{', '.join(items[:n])} and {more} more {noun}s"
