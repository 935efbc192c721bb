"""Whether a wheel fits a target whose facts may be partly unknown: the one judge of wheel tags for `doctor check`
(the release table's `Declared.installable` and the rules that read it) and for `doctor install --set` (the files
a wheelhouse, a local index or PyPI's release table offer, installers/wheelfit.py).

pip installs a wheel only when one of its tags (the python-abi-platform sets of its file name, PEP 425 / PEP 427)
is one the interpreter supports, `packaging.tags.sys_tags`. For CPython X.Y on Linux that is `cpython_tags`
(cpXY-cpXY, cpXY-abi3 down to cp32, cpXY-none) and `compatible_tags` (pyXY down to py30 and py3 with abi none,
cpXY-none-any, py3…-none-any) over the machine's platforms: manylinux_2_N for every N up to the host's glibc
(PEP 600; from glibc 2.5 on x86_64 and i686, from 2.17 on the other machines), the legacy manylinux1 / 2010 / 2014
names of 2.5 / 2.12 / 2.17 (PEP 513, 571, 599) and linux_<machine>. The interpreter is the default CPython build
(a free-threaded python3.13t supports cp313t and no cp313: not modelled) on glibc: a musllinux wheel never fits
(pip on a glibc host: "No matching distribution found" for orjson 3.9.3 on CPython 3.12 aarch64, whose only
aarch64 wheel for it is musllinux_1_1).

A fact that is not known (a bug report's snapshot states few) is not held against a tag: an unknown Python
admits any cpXY / pyX[Y] interpreter, an unknown machine any Linux platform of glibc, an unknown glibc any
manylinux level.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from doctor.knowledge.versions import parse_pkg_version

LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(.+)|(manylinux1|manylinux2010|manylinux2014)_(.+)")
_MUSLLINUX = re.compile(r"musllinux_\d+_\d+_(.+)")
_PLACE = "linux_place"  # a stand-in platform: the interpreter / abi pairs pip supports on any Linux platform


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
    """Whether one of a wheel's `tags` is supported by CPython `python` (X.Y[.Z]) on Linux `arch` with glibc
    `glibc` (X.Y), each None when not known (not held against a tag). `any_libc`: a musllinux wheel of that Python
    and machine counts too; for whether the METADATA read from a wheel speaks for the target (the release's musl and
    glibc builds of one Python and machine are built from one source), not for whether pip installs it."""
    return any(tag_fits(t, python, arch, glibc, any_libc=any_libc) for t in tags)


def tag_fits(t: Tag, python: str | None, arch: str | None, glibc: str | None = None, *,
             any_libc: bool = False) -> bool:
    """One tag against the target's facts (`fits`)."""
    plat = t.platform
    if any_libc and (m := _MUSLLINUX.fullmatch(plat)):
        plat = f"linux_{m.group(1)}"  # the machine alone
    if plat != "any" and not _platform_fits(plat, arch, _glibc(glibc)):
        return False
    if python is None:
        return re.fullmatch(r"(cp|py)\d+", t.interpreter) is not None
    v = parse_pkg_version(python)
    if v is None or len(v.release) < 2:
        return False
    on_platform, on_any = _supported(v.release[0], v.release[1])
    return (t.interpreter, t.abi) in (on_any if t.platform == "any" else on_platform)


def _glibc(glibc: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", glibc or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _platform_fits(platform: str, arch: str | None, glibc: tuple[int, int] | None) -> bool:
    if platform.startswith("linux_"):
        return arch is None or platform == f"linux_{arch}"
    level = manylinux_level(platform)
    if level is None:
        return False  # musllinux, another OS
    need, machine = level
    oldest = (2, 5) if machine in ("x86_64", "i686") else (2, 17)  # packaging's _manylinux.platform_tags
    return (arch is None or machine == arch) and need >= oldest and (glibc is None or need <= glibc)


@lru_cache(maxsize=32)
def _supported(major: int, minor: int) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """The (interpreter, abi) pairs pip supports for CPython major.minor with a platform tag, and with `any`.
    The abi is given: `cpython_tags` would otherwise read it from the running interpreter's build."""
    py = (major, minor)
    abi = f"cp{major}{minor}" + ("m" if py < (3, 8) else "")
    tags = [*cpython_tags(py, [abi], [_PLACE]), *compatible_tags(py, f"cp{major}{minor}", [_PLACE])]
    return (frozenset((t.interpreter, t.abi) for t in tags if t.platform == _PLACE),
            frozenset((t.interpreter, t.abi) for t in tags if t.platform == "any"))
