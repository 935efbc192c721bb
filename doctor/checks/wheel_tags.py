"""Installed wheels built for another interpreter or machine: what `pip check` (pip 23.3 and later) prints as
"X 1.0 is not supported on this platform".

A wheel names what it runs on in its WHEEL file's `Tag:` lines (`cp311-cp311-manylinux_2_17_aarch64`,
`py3-none-any`; the platform compatibility tags specification). pip installs only a wheel one of whose tags the
interpreter supports, so a wheel whose tags all name another machine, another CPython or a newer glibc got there
some other way: a virtual environment or a conda-pack archive copied from an x86_64 build host to an aarch64 Ascend
node, `pip install --target --platform ...` into site-packages, a wheelhouse for the wrong machine unpacked by hand.
Its compiled modules then fail to load (`invalid ELF header`, `undefined symbol`); its pure-Python parts may import.

The tags are recorded by the probe (snapshot rule 7, `wheel_tags`) and judged here against the snapshot's Python
version, machine and C library, conservatively: a tag this module does not know how to read counts as fitting, and
nothing is said for an interpreter other than CPython or a target whose Python version or machine is not stated.
Severity as for a declared requirement: an error on verl's import path (the stack, and what verl requires), a
warning for any other distribution. Pure: it reads the snapshot."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.report import Finding, finding
from doctor.snapshot.model import known

TAGS_SPEC = "https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/"


# the tags the judge reads; another form (`strange`, `xx1-yy-zz`, an ABI like `cp311-foo`) is not judged
_OTHER_PYTHON = re.compile(r"(pp|ip|jy)\d*")
_CPYTHON = re.compile(r"(cp|py)\d+")
_ABI = re.compile(r"none|abi3t?|cp\d+[dmut]*")
_PLATFORM = re.compile(r"any|(linux|manylinux|musllinux|macosx|win|ios|android)[0-9_].*|win32")


class Target:
    """What a tag is held against: CPython X.Y, the machine (`uname -m`) and the C library ("glibc 2.36", "musl
    1.2.4"), judged by doctor/knowledge/tagfit.py, the judge of `doctor install` and of the release table too.
    Whether the interpreter is the free-threaded build, the snapshot does not say: either may be."""

    def __init__(self, python: tuple[int, int], arch: str, libc: str | None) -> None:
        from doctor.knowledge.tagfit import Host, host_libc

        self.python, self.arch, self.libc = python, arch, (libc or "").lower()
        kind, version = host_libc(self.libc)
        self.host = Host(python, arch, kind, version, free_threaded=None)

    def fits(self, tag: str) -> bool:
        """Whether one tag (`cp311-cp311-manylinux_2_17_x86_64`, compressed sets `py2.py3-none-any` expanded) can
        run here; a tag not read counts as fitting."""
        from packaging.tags import parse_tag

        from doctor.knowledge.tagfit import supports

        if len(tag.split("-")) != 3:
            return True
        return any(not _read(t) or supports(self.host, t) for t in parse_tag(tag))


def _read(t: Any) -> bool:
    return bool(_PLATFORM.fullmatch(t.platform) and (
        _OTHER_PYTHON.fullmatch(t.interpreter) or _CPYTHON.fullmatch(t.interpreter) and _ABI.fullmatch(t.abi)))


def target_of(snap: Any) -> Target | None:
    """The snapshot's CPython X.Y, machine and C library; None when it does not state them, is not CPython or runs on
    another OS than Linux (the stack's)."""
    py = snap.python if known(snap.python) else None
    host = snap.host if known(snap.host) else None
    version = getattr(py, "version", None)
    impl = getattr(py, "implementation", None)
    arch = getattr(host, "arch", None)
    if not isinstance(version, str) or not isinstance(arch, str) or not arch:
        return None
    if isinstance(impl, str) and impl and impl.lower() != "cpython":
        return None
    system = getattr(host, "os", None)
    if isinstance(system, str) and re.search(r"darwin|mac ?os|windows", system, re.I):
        return None  # the platform tags are read as Linux's
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None:
        return None
    libc = getattr(host, "libc", None)
    return Target((int(m.group(1)), int(m.group(2))), arch, libc if isinstance(libc, str) else None)


@check("wheel-tags", "packages", findings=("wheel-not-for-this-platform",))
def wheel_tags(ctx: CheckContext) -> Iterator[Finding]:
    """No installed wheel is for another interpreter or machine (pip check's "is not supported on this platform")."""
    snap = ctx.snapshot
    pkgs = snap.packages if known(snap.packages) else {}
    tagged = {n: p for n, p in pkgs.items() if known(p.wheel_tags) and p.wheel_tags}
    if not tagged:
        skip("the snapshot does not record the installed wheels' tags (`doctor collect` records them)")
    target = target_of(snap)
    if target is None:
        skip("the snapshot does not state a CPython version and machine to hold the wheels' tags against")
    on_path: set[str] | None = None
    for name, pkg in sorted(tagged.items()):
        tags = [t for t in pkg.wheel_tags if isinstance(t, str)]
        if not tags or any(target.fits(t) for t in tags):
            continue
        if on_path is None:
            from doctor.checks.declared import STACK
            from doctor.knowledge.pipcheck import requirement_names

            on_path = set(STACK) | set(requirement_names(snap, "verl", None))
        yield _finding(name, pkg, tags, target, name in on_path)


def _finding(name: str, pkg: Any, tags: list[str], target: Target, on_path: bool) -> Finding:
    version = pkg.version or "?"
    major, minor = target.python
    here = f"CPython {major}.{minor} on {target.arch}" + (f" ({target.libc})" if target.libc else "")
    where = pkg.metadata.rsplit("/", 1)[0] + "/WHEEL" if known(pkg.metadata) and pkg.metadata else f"{name}'s WHEEL"
    return finding(
        "wheel-not-for-this-platform", "error" if on_path else "warning",
        (component_of_distribution(name) or "python",),
        f"{name} {version} is not supported on this platform: its wheel is for {', '.join(tags)}; the interpreter is "
        f"{here}",
        detail=f"pip check says \"{name} {version} is not supported on this platform\": none of the compatibility "
               f"tags in {where} is one this interpreter supports, so pip would not have installed this file here. "
               f"It came some other way (an environment or conda-pack archive copied from another machine, `pip "
               f"install --target --platform`, a wheel unpacked by hand); its compiled modules fail to load here "
               f"(invalid ELF header, undefined symbols)."
               + (" It is on verl's import path." if on_path else ""),
        evidence={"package": name, "version": pkg.version, "wheel_tags": tags, "python": f"{major}.{minor}",
                  "arch": target.arch, **({"libc": target.libc} if target.libc else {})},
        fix="Reinstall it with this interpreter's pip, which picks this platform's wheel (or builds the sdist). If "
            "the whole environment was copied from another machine, rebuild it here instead.",
        commands=[f"pip install --force-reinstall --no-deps '{name}=={version}'"] if pkg.version else [],
        key=name, source=TAGS_SPEC)
