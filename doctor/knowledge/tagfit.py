"""Whether a wheel fits a target whose facts may be partly unknown: the one judge of wheel tags, for `doctor check`
(the release table's `Declared.installable` and the rules that read it; an installed wheel's WHEEL tags,
doctor/checks/wheel_tags.py) and for `doctor install` (the files a wheelhouse, a local index or PyPI's release
table offer, installers/wheelfit.py; the platforms a wheelhouse download asks for, installers/wheelhouse.py).

pip installs a wheel only when one of its tags (the python-abi-platform sets of its file name, PEP 425 / PEP 427)
is one the interpreter supports, `packaging.tags.sys_tags`. That function reads the running interpreter and host;
the target here is another machine's, known from its facts, so the same lists are built from them: `cpython_tags`
and `compatible_tags` take the Python version, ABI and platforms as arguments, and `platform_tags` below lists the
Linux platforms as packaging's `_linux_platforms` does for a host (linux_<machine>; manylinux_2_N for every N from
the glibc down to 2.5 on x86_64 and i686, 2.17 on the other machines, each legacy manylinux1 / 2010 / 2014 name
after its level, PEP 513 / 571 / 599 / 600; or musllinux_1_N down to 1_0 on musl, PEP 656). A glibc host takes
no musllinux wheel (pip: "No matching distribution found" for orjson 3.9.3 on CPython 3.12 aarch64, whose only
aarch64 wheel for it is musllinux_1_1); a free-threaded python3.13t takes cp313t and no cp313 or abi3 wheel.

A fact that is not known (a bug report's snapshot states few) is not held against a tag: it is taken to be the
tag's own (an unknown machine is the tag's machine, an unknown glibc the tag's manylinux level, an unknown Python
the tag's interpreter version, an unknown C library the tag's), and a build not known to be free-threaded or not
may be either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

GLIBC, MUSL = "glibc", "musl"
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
_LEGACY_NAME = {v: k for k, v in LEGACY_MANYLINUX.items()}
# the machines packaging's _manylinux.platform_tags lists manylinux tags for (i686 and armv7l: a 32-bit build on them)
_MANYLINUX_MACHINES = {"x86_64", "aarch64", "ppc64", "ppc64le", "s390x", "loongarch64", "riscv64", "i686", "armv7l"}
_LAST_GLIBC_MINOR = 50  # packaging's guess for a glibc major before the current one (glibc has had no 3.x)
_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(.+)|(manylinux1|manylinux2010|manylinux2014)_(.+)")
_MUSLLINUX = re.compile(r"musllinux_(\d+)_(\d+)_(.+)")
_PLACE = "linux_place"  # a stand-in platform: the interpreter / abi pairs pip supports on any Linux platform


@dataclass(frozen=True)
class Host:
    """What a tag is held against, each fact None when not known: CPython `python` (major, minor), the machine
    (`uname -m`), the C library (`GLIBC` or `MUSL`) and its version (major, minor; read only when the library is
    known), and whether the interpreter is the free-threaded build."""

    python: tuple[int, int] | None = None
    arch: str | None = None
    libc: str | None = GLIBC
    libc_version: tuple[int, int] | None = None
    free_threaded: bool | None = False


def host_libc(text: str | None) -> tuple[str | None, tuple[int, int] | None]:
    """("glibc", (2, 35)) from a snapshot's "glibc 2.35" (`os.confstr`), ("musl", (1, 2)) from "musl 1.2.4";
    (None, None) for no text or another library."""
    low = (text or "").lower()
    kind = GLIBC if "glibc" in low else MUSL if "musl" in low else None
    return kind, (_version(low) if kind else None)


def platform_tags(arch: str, libc: str | None = GLIBC, version: tuple[int, int] | None = None) -> Iterator[str]:
    """The Linux platform tags pip supports on machine `arch` with C library `libc` at `version`, best first, as
    packaging's `_linux_platforms` lists them for the running host: linux_<arch>, then the manylinux levels (with
    the legacy names) or the musllinux ones down to the oldest. No C library version: linux_<arch> alone."""
    yield f"linux_{arch}"
    if version is None:
        return
    if libc == MUSL:
        for minor in range(version[1], -1, -1):
            yield f"musllinux_{version[0]}_{minor}_{arch}"
        return
    if libc != GLIBC or arch not in _MANYLINUX_MACHINES:
        return
    oldest = (2, 5) if arch in ("x86_64", "i686") else (2, 17)
    for major in range(version[0], 1, -1):
        top = version[1] if major == version[0] else _LAST_GLIBC_MINOR
        low = oldest[1] if major == oldest[0] else 0
        for minor in range(top, low - 1, -1):
            yield f"manylinux_{major}_{minor}_{arch}"
            if legacy := _LEGACY_NAME.get((major, minor)):
                yield f"{legacy}_{arch}"


def supports(host: Host, t: Tag) -> bool:
    """Whether a CPython on Linux with the facts `host` supports tag `t`, as `sys_tags` there would list it; an
    unknown fact taken to be the tag's own (the module's docstring)."""
    if t.platform != "any":
        kind, version, machine = _platform_facts(t.platform)
        if machine is None:
            return False  # another OS, or not a platform tag
        arch = host.arch or machine
        libc = host.libc or kind or GLIBC
        have = host.libc_version if host.libc else None
        if t.platform not in _platforms(arch, libc, have or (version if kind == libc else None)):
            return False
    python = host.python or _python_of(t.interpreter)
    if python is None:
        return False
    builds = (False, True) if host.free_threaded is None else (host.free_threaded,)
    return any((t.interpreter, t.abi) in _supported(python, ft)[t.platform == "any"] for ft in builds)


def manylinux_level(platform: str) -> tuple[tuple[int, int], str] | None:
    """`manylinux_2_28_aarch64` -> ((2, 28), "aarch64"), `manylinux2014_x86_64` -> ((2, 17), "x86_64"); None for
    any other platform."""
    m = _MANYLINUX.fullmatch(platform)
    if m is None:
        return None
    if m.group(4):
        return LEGACY_MANYLINUX[m.group(4)], m.group(5)
    return (int(m.group(1)), int(m.group(2))), m.group(3)


def wheel_tags(filename: str | None) -> frozenset[Tag] | None:
    """The tags a wheel's file name states (`parse_wheel_filename`, as pip reads it); None when it is not one."""
    if not filename:
        return None
    try:
        return parse_wheel_filename(filename)[3]
    except InvalidWheelFilename:
        return None


def fits(tags: Iterable[Tag], python: str | None, arch: str | None, glibc: str | None = None, *,
         any_libc: bool = False) -> bool:
    """Whether one of a wheel's `tags` is supported by the default CPython build `python` (X.Y[.Z]) on Linux `arch`
    with glibc `glibc` (X.Y), each None when not known (not held against a tag). `any_libc`: the C library is not
    held against the tag either (a musllinux wheel of that Python and machine counts too); for whether the METADATA
    read from a wheel speaks for the target (the release's musl and glibc builds of one Python and machine are built
    from one source), not for whether pip installs it."""
    host = target(python, arch, glibc, any_libc=any_libc)
    return host is not None and any(supports(host, t) for t in tags)


def tag_fits(t: Tag, python: str | None, arch: str | None, glibc: str | None = None, *,
             any_libc: bool = False) -> bool:
    """One tag against the target's facts (`fits`)."""
    return fits((t,), python, arch, glibc, any_libc=any_libc)


def target(python: str | None, arch: str | None, glibc: str | None = None, *, any_libc: bool = False) -> Host | None:
    """The `Host` of `fits`'s facts; None when `python` is stated but not read as X.Y (no tag fits it)."""
    py = None
    if python is not None:
        m = re.match(r"(\d+)\.(\d+)", python)
        if m is None:
            return None
        py = (int(m.group(1)), int(m.group(2)))
    return Host(py, arch or None, None if any_libc else GLIBC, None if any_libc else _version(glibc))


def _version(text: str | None) -> tuple[int, int] | None:
    m = re.search(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _platform_facts(platform: str) -> tuple[str | None, tuple[int, int] | None, str | None]:
    """(C library, its version, machine) a Linux platform tag names; (None, None, machine) for linux_<machine>,
    all None for any other platform."""
    if (level := manylinux_level(platform)) is not None:
        return GLIBC, level[0], level[1]
    if m := _MUSLLINUX.fullmatch(platform):
        return MUSL, (int(m.group(1)), int(m.group(2))), m.group(3)
    if platform.startswith("linux_"):
        return None, None, platform[len("linux_"):]
    return None, None, None


@lru_cache(maxsize=256)
def _platforms(arch: str, libc: str, version: tuple[int, int] | None) -> frozenset[str]:
    return frozenset(platform_tags(arch, libc, version))


def _python_of(interpreter: str) -> tuple[int, int] | None:
    """The Python a cpXY / pyXY / pyX interpreter tag names (pyX: X.0, which every pyX and pyX0 tag fits)."""
    m = re.fullmatch(r"(?:cp|py)(\d)(\d*)", interpreter)
    if m is None or (interpreter.startswith("cp") and not m.group(2)):
        return None
    return int(m.group(1)), int(m.group(2) or 0)


@lru_cache(maxsize=64)
def _supported(py: tuple[int, int], free_threaded: bool) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """The (interpreter, abi) pairs pip supports for CPython `py` (its default or free-threaded build) with a
    platform tag, and with `any`. The abi is given (cpXY, cpXYm below 3.8, cpXYt): `cpython_tags` would otherwise
    read it from the running interpreter's build. A free-threaded build takes no abi3 wheel (PEP 703), which
    packaging before 24.1 did not know."""
    major, minor = py
    if free_threaded and py < (3, 13):
        return frozenset(), frozenset()  # no such build
    abi = f"cp{major}{minor}" + ("t" if free_threaded else "m" if py < (3, 8) else "")
    tags = [*cpython_tags(py, [abi], [_PLACE]), *compatible_tags(py, f"cp{major}{minor}", [_PLACE])]
    pairs = {(t.interpreter, t.abi, t.platform) for t in tags if not (free_threaded and t.abi == "abi3")}
    return (frozenset((i, a) for i, a, p in pairs if p == _PLACE), frozenset((i, a) for i, a, p in pairs if p == "any"))
