"""Host facts that bug reports name, judged by class rules with their upstream source: the C
library against the wheels' manylinux tags, /dev/shm against Ray's object store (network.py's shm check cites
vLLM's container guidance), and CANN's Python-side
dependencies in the target interpreter. An unknown fact keeps each rule silent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from doctor.checks.facts import absent, installed, val, ver
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import known

if TYPE_CHECKING:
    from doctor.knowledge.requirements import Declared

# -- glibc against the manylinux tag of a release's wheels ---------------------------------------------------

# PEP 600: manylinux_X_Y needs glibc >= X.Y; the legacy aliases (PEP 513/571/599/600) name glibc 2.5/2.12/2.17
# (doctor/knowledge/tagfit.py reads both).
MANYLINUX_SOURCE = "https://peps.python.org/pep-0600/"
# Packages of the stack whose Linux releases are manylinux wheels (the table's source names one); a local build
# (`2.7.0+cpu`, `0.9.1+empty`: another index or a source build) is not judged.
_WHEEL_PACKAGES = ("torch", "torch-npu", "vllm", "vllm-ascend", "triton-ascend")


def stated_wheels(snap: Any) -> list[tuple[str, str]]:
    """(name, version) of the stack's packages whose Linux releases are manylinux wheels, as installed or stated; a
    local build is left out. The glibc and libstdc++ rules judge the same set."""
    return [(n, v) for n in _WHEEL_PACKAGES if (v := ver(snap, n)) and "+" not in v]


def glibc_of(libc: str | None) -> tuple[int, int] | None:
    """`glibc 2.35` (what the probe records) -> (2, 35); None for another C library or an unreadable string. Read by
    the wheel-tag judge's own reader (`tagfit.host_libc`), so check's glibc rules and its wheel tags agree."""
    from doctor.knowledge.tagfit import GLIBC, host_libc

    kind, version = host_libc(libc if isinstance(libc, str) else None)
    return version if kind == GLIBC else None


# The glibc an enterprise Linux release ships, for a report that names its OS but not its C library: PEP 513 and
# PEP 571 give CentOS 5.11's glibc 2.5 and CentOS 6's 2.12, PEP 599 CentOS 7's 2.17; CentOS N is built from Red Hat
# Enterprise Linux N's sources (CentOS Product Specifications, cited by PEP 571), so RHEL N has the same glibc.
OS_GLIBC = {5: (2, 5), 6: (2, 12), 7: (2, 17)}
OS_GLIBC_SOURCE = ("https://peps.python.org/pep-0571/; https://peps.python.org/pep-0599/; "
                   "https://web.archive.org/web/20180108090257/https://wiki.centos.org/About/Product")
_ENTERPRISE = r"(?i)\b(?:centos|red\s*hat\s+enterprise\s+linux|rhel)\b\D*?(\d+)(?:\.\d+)?\b"  # compiled on first use

# PyTorch's Linux binaries (pip and conda), whatever the manylinux tag on the wheel says (torch's x86_64 wheels are
# tagged manylinux1 through 2.6): "PyTorch is supported on Linux distributions that use glibc >= v2.17" (its
# get-started page from the 0.4.1 release on; older binaries are not judged).
TORCH_GLIBC = ("0.4.1", (2, 17))
TORCH_GLIBC_SOURCE = ("https://github.com/pytorch/pytorch.github.io/blob/0aa4d37f4d54c563c00c6c77b7dfbf28b34b6daa/"
                      "_get_started/installation/linux.md")


def os_glibc(os_name: str | None) -> tuple[int, int] | None:
    """'CentOS release 6.8 (Final)', 'Red Hat Enterprise Linux Workstation release 6.4 (Santiago)' -> (2, 12);
    None for any other OS (its glibc is not inferred)."""
    if not isinstance(os_name, str):
        return None
    m = re.search(_ENTERPRISE, os_name)
    return OS_GLIBC.get(int(m.group(1))) if m else None


def host_glibc(snap: Any) -> tuple[tuple[int, int], bool] | None:
    """The host's glibc and whether it was inferred from the OS release (a report that states only the OS)."""
    libc = val(snap.host, "libc")
    if isinstance(libc, str):
        g = glibc_of(libc)
        return (g, False) if g is not None else None  # another C library (musl): nothing inferred
    g = os_glibc(val(snap.host, "os"))
    return (g, True) if g is not None else None


def documented_glibc(name: str, version: str) -> tuple[tuple[int, int], str] | None:
    """The glibc a package's own install docs require of its Linux binaries, beyond the wheel tag: torch only."""
    floor, need = TORCH_GLIBC
    if name != "torch":
        return None
    try:
        ok = Version(version) >= Version(floor)
    except InvalidVersion:
        return None
    return (need, TORCH_GLIBC_SOURCE) if ok else None


def wheel_glibc(filename: str, arch: str | None) -> tuple[int, int] | None:
    """The oldest glibc a wheel file (or a `files` tag triple) installs on: the lowest of its compressed manylinux
    tags for `arch` (for x86_64 or aarch64 when it is None)."""
    from doctor.knowledge.tagfit import manylinux_level

    plats = filename.removesuffix(".whl").rpartition("-")[2].split(".")
    found = [need for p in plats if (level := manylinux_level(p)) is not None
             for need, machine in [level] if machine == arch or arch is None and machine in ("x86_64", "aarch64")]
    return min(found) if found else None


@check("wheel-glibc", "system", findings=("glibc-older-than-wheel",))
def wheel_glibc_check(ctx: CheckContext) -> Iterator[Finding]:
    """The host's glibc is new enough for the manylinux wheels of the installed (or stated) releases, and for what
    the package's install docs require (torch's Linux binaries: glibc >= 2.17). A release that also publishes an
    sdist is a warning: pip builds that on an older glibc, and a copy built on the host loads."""
    snap = ctx.snapshot
    host = host_glibc(snap)
    arch = val(snap.host, "arch")
    if host is None:
        skip("the host's glibc version is not known")
    libc, inferred = host
    if not isinstance(arch, str):
        arch = None  # a bug report names its OS, rarely its machine: then every Linux wheel must be too new
    python = val(snap.python, "version")
    python = python if isinstance(python, str) and python else None
    stated = stated_wheels(snap)
    if not stated:
        return
    # the table loads only when this rule has facts to judge
    from doctor.knowledge.requirements import SDIST, declared

    for name, v in stated:
        d = declared(name, v)
        least = least_wheel(d, arch, python) if d is not None else None
        tagged, page = least if least else (None, None)
        doc = documented_glibc(name, v)
        needs = [(n, w) for n, w in ((tagged, "wheel"), (doc[0] if doc else None, "docs")) if n is not None]
        if not needs:
            continue
        need, why = max(needs)
        if libc >= need:
            continue
        lib = f"glibc {libc[0]}.{libc[1]}"
        os_name = val(snap.host, "os")
        evidence: dict[str, Any] = {"package": name, name: v, "glibc": f"{libc[0]}.{libc[1]}",
                                    "needs": f"{need[0]}.{need[1]}"}
        if page is not None:
            evidence["wheel"] = page
        if arch is None and why == "wheel":
            evidence["machine"] = "not stated: the lowest over its x86_64 and aarch64 wheels"
        if inferred:
            evidence["glibc_from_os"] = os_name
        if why == "docs" and doc is not None:
            detail = (f"{name}'s install guide: it is supported on Linux distributions with glibc >= {need[0]}.{need[1]}; "
                      "its binaries (pip and conda) fail to load on an older one (`version GLIBC_2.x' not found`), "
                      "whatever the wheel's manylinux tag says.")
            source = doc[1]
        else:
            assert d is not None and page is not None
            detail = (f"{name} {v} is published as manylinux wheels ({page.rsplit('#', 1)[-1]}): pip does not "
                      f"install them on an older glibc, and a copy installed anyway fails to load with "
                      f"`version GLIBC_{need[0]}.{need[1]}' not found`.")
            source = f"{page}; {MANYLINUX_SOURCE}"
        # PyPI's files include an sdist: pip builds it on an older glibc, and a copy built here loads
        built = why == "wheel" and d is not None and SDIST in d.files
        if built:
            detail += (f" {name} {v} also publishes an sdist, which pip builds on an older glibc instead: a copy built "
                       "on this host is not concerned.")
        if inferred:
            detail += f" The glibc is {os_name}'s (the OS release ships glibc {libc[0]}.{libc[1]})."
            source += f"; {OS_GLIBC_SOURCE}"
        yield finding(
            "glibc-older-than-wheel", "warning" if built else "error", ("system", name),
            f"{lib}{f' ({os_name})' if inferred else ''} is older than {name} {v}'s binaries need "
            f"({'manylinux ' if why == 'wheel' else ''}glibc >= {need[0]}.{need[1]})",
            detail=detail, evidence=evidence,
            fix=f"Run on an OS with glibc >= {need[0]}.{need[1]} (e.g. the stack's container image), or use a {name} "
                "release built for this glibc" + (" (or build it from source on this host)." if why == "docs" else "."),
            source=source)


def least_glibc(d: Declared, arch: str | None, python: str | None = None) -> tuple[int, int] | None:
    """The oldest glibc a release installs on from PyPI's wheels (`least_wheel`)."""
    found = least_wheel(d, arch, python)
    return found[0] if found else None


def least_wheel(d: Declared, arch: str | None, python: str | None = None) -> tuple[tuple[int, int], str] | None:
    """The oldest glibc a release installs on from PyPI's wheels, and the page of the wheel that says so. Where the
    table records the release's files (PyPI's wheel tags): the lowest manylinux level of its wheels for the
    snapshot's Python and machine (an unstated one rules none out; with the machine unknown, those for x86_64 and
    aarch64, the machines the stack runs on), None when one of them is not a manylinux wheel (pure, `linux_x86_64`)
    or none is for them (release-has-no-wheel-for-target says that). torch-npu 2.8.0.post2's source wheel is an
    aarch64 one, and its x86_64 wheels are manylinux_2_28 too: only the files say so. Without them: the source
    wheel's tag for `arch`; with the machine unknown, the lowest over every Linux wheel read (the source and its
    siblings), and None unless each of them is manylinux."""
    if d.files:
        ours = [f for f in d.wheel_files(python, arch) if arch is not None or f.endswith(("_x86_64", "_aarch64", "-any"))]
        levels = [(n, f) for f in ours if (n := wheel_glibc(f, arch)) is not None]
        if not levels or len(levels) < len(ours):
            return None
        need, entry = min(levels)
        return need, d.file_page(entry)
    source = d.source.rsplit("#", 1)[-1]
    if arch is not None:
        n = wheel_glibc(source, arch)
        return (n, d.source) if n is not None else None
    needs = [n for w in (source, *d.wheels) if (n := wheel_glibc(w, None)) is not None]
    return (min(needs), d.source) if len(needs) == 1 + len(d.wheels) else None


# -- /dev/shm against Ray's object store and vLLM's container guidance ---------------------------------------

RAY_SHM_SOURCE = "https://github.com/ray-project/ray/blob/ad047a724cc854c52c8441a35a01f909ff5d2fec/python/ray/_private/services.py"
RAY_OBJECT_STORE_SHARE = 0.3  # Ray's default object store size: 30% of memory ("more than 30% of available RAM")


@check("shm-ray-object-store", "system", findings=("shm-below-ray-object-store",))
def shm_ray_object_store(ctx: CheckContext) -> Iterator[Finding]:
    """/dev/shm holds Ray's object store (30% of memory by default)."""
    snap = ctx.snapshot
    shm, mem = val(snap.host, "shm_gb"), val(snap.host, "memory_gb")
    if not isinstance(shm, (int, float)):
        skip("the size of /dev/shm is not known")
    in_container = val(snap.host, "in_container")
    if not isinstance(mem, (int, float)) or mem <= 0 or shm < 1.0:
        return  # below 1 GB: shm-too-small (network area) already says it
    if installed(snap, "ray") is False:
        return
    want = RAY_OBJECT_STORE_SHARE * mem
    if shm < want:
        yield finding(
            "shm-below-ray-object-store", "warning", ("system", "ray"),
            f"/dev/shm ({shm:.1f} GB) is smaller than Ray's default object store (30% of {mem:.0f} GB = {want:.0f} GB)",
            detail="Ray then puts its object store in /tmp instead of /dev/shm (`The object store is using /tmp instead of "
                   "/dev/shm ... This will harm performance!`): rollouts and weights passed through Ray slow down.",
            evidence={"shm_gb": shm, "memory_gb": mem, "ray_object_store_gb": round(want, 1),
                      "in_container": in_container},
            fix=f"Give /dev/shm more than 30% of RAM (docker run --shm-size={int(want) + 1}g, or --ipc=host), or set "
                "ray.init(object_store_memory=...) below the /dev/shm size.",
            source=RAY_SHM_SOURCE)


# -- CANN's Python-side dependencies in the target interpreter -------------------------------------------------

# What CANN's operator compiler (te / tbe, run inside the training process) imports, as the CANN install steps
# list them: `pip3 install attrs 'numpy<2.0.0' decorator sympy cffi pyyaml pathlib2 psutil protobuf scipy requests
# absl-py wheel typing_extensions` (vllm-ascend's "Install CANN manually"). The ones the issue reports name.
CANN_PYTHON_DEPS = ("attrs", "decorator", "sympy", "cffi", "psutil", "scipy", "numpy", "pyyaml", "protobuf")
CANN_DEPS_SOURCE = "https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md"


@check("cann-python-deps", "cann", findings=("cann-python-deps-missing",))
def cann_python_deps(ctx: CheckContext) -> Iterator[Finding]:
    """The Python packages CANN's runtime imports are installed in the interpreter that runs torch_npu."""
    snap = ctx.snapshot
    tk = snap.ascend_part("toolkit")
    if not tk or not known(snap.packages) or not snap.is_complete:
        skip("no CANN toolkit, or the snapshot does not list every installed package")
    if installed(snap, "torch-npu") is False:
        skip("torch_npu is not installed: nothing in this interpreter runs CANN's operator compiler")
    missing = [n for n in CANN_PYTHON_DEPS if absent(snap, n)]
    if missing:
        yield finding(
            "cann-python-deps-missing", "error", ("python", "cann"),
            f"CANN's Python dependencies are missing from this interpreter: {', '.join(missing)}",
            detail="CANN's operator compiler (te / tbe) runs inside the training process and imports them; without them "
                   "operator compilation fails at the first NPU op (`EH9999 ... init env failed`, `No module named "
                   "'decorator'`).",
            evidence={"missing": missing, "cann": val(tk, "version")},
            fix="Install them into the interpreter that runs torch_npu.",
            commands=("pip install attrs 'numpy<2.0.0' decorator sympy cffi pyyaml pathlib2 psutil protobuf scipy requests "
                      "absl-py",),
            source=CANN_DEPS_SOURCE)


# -- LD_PRELOAD entries the dynamic loader ignores ---------------------------------------------------------------

LD_SO_SOURCE = "https://man7.org/linux/man-pages/man8/ld.so.8.html"
# vllm-ascend's images preload jemalloc where each distribution installs it: Ubuntu's libjemalloc2 under
# /usr/lib/$(uname -m)-linux-gnu, openEuler's jemalloc under /usr/lib64
JEMALLOC_SOURCE = "https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/Dockerfile.openEuler#L83"
_RPM_FAMILY = ("openeuler", "euleros", "centos", "red hat", "rhel", "kylin", "rocky", "alma", "fedora", "anolis", "ctyunos")
_DEB_FAMILY = ("ubuntu", "debian")


@check("ld-preload", "system", findings=("ld-preload-not-loaded",))
def ld_preload(ctx: CheckContext) -> Iterator[Finding]:
    """An LD_PRELOAD (or /etc/ld.so.preload) entry the loader cannot open, or one built for another machine, is
    skipped with `ERROR: ld.so: object ... cannot be preloaded: ignored.` in every process: the allocator or
    library it was meant to put first (jemalloc, tcmalloc, libgomp) is not there."""
    snap = ctx.snapshot
    items = val(snap.host, "preload")
    if not isinstance(items, list):
        skip("what the loader preloads is not known")
    host_arch = val(snap.host, "arch")
    for item in items:
        entry, source = val(item, "entry"), val(item, "source")
        exists, machine = val(item, "exists"), val(item, "machine")
        if not isinstance(entry, str):
            continue
        if exists is False:
            why = "no such file on this host"
        elif exists is True and getattr(item, "machine", None) is None:  # read, and null: no ELF header
            why = "not an ELF shared object"
        elif exists is True and isinstance(machine, str) and isinstance(host_arch, str) and machine != host_arch:
            why = f"built for {machine}, this host is {host_arch}"
        else:
            continue
        alternatives = val(item, "alternatives")
        alternatives = alternatives if isinstance(alternatives, list) else []
        where = source if isinstance(source, str) else "LD_PRELOAD"
        yield finding(
            "ld-preload-not-loaded", "warning", ("env", "system"),
            f"{where} names {entry}, which the dynamic loader cannot load ({why}): every process runs without it",
            detail=f"ld.so prints `ERROR: ld.so: object '{entry}' from {where} cannot be preloaded ...: ignored.` in "
                   "each process it starts (Ray workers, vLLM and every rank included) and goes on without the library, "
                   "so the allocator or runtime it was meant to put first is not in use."
                   + (" Preload paths differ between distributions: Ubuntu's libjemalloc2 is under "
                      "/usr/lib/<arch>-linux-gnu, openEuler's jemalloc under /usr/lib64." if "jemalloc" in entry else ""),
            evidence={"entry": entry, "source": where, "exists": exists, "machine": machine, "host_arch": host_arch,
                      "alternatives": alternatives},
            fix=_preload_fix(entry, where, alternatives, val(snap.host, "os")),
            key=entry,
            source=JEMALLOC_SOURCE if "jemalloc" in entry else LD_SO_SOURCE)


def _preload_fix(entry: str, where: str, alternatives: list[str], os_name: Any) -> str:
    if where != "LD_PRELOAD":
        return f"Correct or remove the line {entry} in {where} (it applies to every process on the host)."
    if alternatives:
        return (f"Preload the file this host has instead: replace {entry} with {alternatives[0]} in LD_PRELOAD (in the "
                "script or image that sets it, on every node).")
    family = _os_family(os_name) if "jemalloc" in entry else None
    if family == "rpm":
        return (f"Install jemalloc (yum install -y jemalloc) and preload /usr/lib64/libjemalloc.so.2, or drop {entry} "
                "from LD_PRELOAD.")
    if family == "deb":
        return (f"Install jemalloc (apt-get install -y libjemalloc2) and preload "
                f"/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2, or drop {entry} from LD_PRELOAD.")
    return f"Install the library at that path, point LD_PRELOAD at the file this host has, or drop {entry} from it."


def _os_family(os_name: Any) -> str | None:
    """"rpm" / "deb" for the distributions whose jemalloc package and path vllm-ascend's images name; else None."""
    low = os_name.lower() if isinstance(os_name, str) else ""
    return "rpm" if any(f in low for f in _RPM_FAMILY) else "deb" if any(f in low for f in _DEB_FAMILY) else None
