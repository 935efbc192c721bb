"""The C++ runtime the target interpreter loads (`python.libstdcxx`, snapshot rule 10), judged by class rules with
their upstream source: against the GLIBCXX / CXXABI versions the manylinux tag of the stack's wheels allows them to
need (auditwheel's policy), and against the host's own libstdc++ (a conda environment's older copy shadowing the
system's, the classic "version `GLIBCXX_3.4.30' not found"), and its absence where the wheels may link it (a minimal
image). An unknown fact keeps each rule silent.

The facts are version nodes a libstdc++.so.6 defines (GLIBCXX_3.4.N, CXXABI_1.3.N): a binary that references a node
the loaded library lacks fails to load with "version `GLIBCXX_3.4.N' not found" (glibc's ld.so checks every
versioned reference at load time).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from doctor.checks.facts import env, val
from doctor.checks.host_facts import least_glibc, stated_wheels
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import UNKNOWN, known

# -- what a manylinux tag allows a wheel to need ---------------------------------------------------------------

# The newest GLIBCXX_3.4.N and CXXABI_1.3.N (as N) each manylinux policy lets a wheel reference, per machine:
# derived from auditwheel's policy file ("symbol_versions": the GLIBCXX and CXXABI lists of each policy, maxima
# taken; FLOAT128 and the other non-numbered nodes left out). Only x86_64 and aarch64, the machines the stack runs on.
MANYLINUX_CXX: dict[tuple[int, int], dict[str, tuple[int, int]]] = {
    (2, 5): {"x86_64": (8, 1)},
    (2, 12): {"x86_64": (13, 3)},
    (2, 17): {"x86_64": (19, 7), "aarch64": (19, 7)},
    (2, 24): {"x86_64": (22, 10), "aarch64": (22, 10)},
    (2, 26): {"x86_64": (22, 10), "aarch64": (24, 11)},
    (2, 27): {"x86_64": (24, 11), "aarch64": (24, 11)},
    (2, 28): {"x86_64": (24, 11), "aarch64": (24, 11)},
    (2, 31): {"x86_64": (28, 12), "aarch64": (28, 12)},
    (2, 34): {"x86_64": (29, 13), "aarch64": (29, 13)},
    (2, 35): {"x86_64": (30, 13), "aarch64": (30, 13)},
    (2, 36): {"x86_64": (30, 13), "aarch64": (30, 13)},
    (2, 37): {"x86_64": (30, 13), "aarch64": (30, 13)},
    (2, 38): {"x86_64": (30, 13), "aarch64": (30, 13)},
    (2, 39): {"x86_64": (33, 15), "aarch64": (33, 15)},
    (2, 40): {"x86_64": (33, 15), "aarch64": (33, 15)},
    (2, 41): {"x86_64": (33, 15), "aarch64": (33, 15)},
}
MANYLINUX_CXX_SOURCE = ("https://github.com/pypa/auditwheel/blob/957233d809749db2163f9f6ab0c300125b2e51a2/"
                        "src/auditwheel/policy/manylinux-policy.json")

# The first GCC release whose libstdc++ defines GLIBCXX_3.4.N (GCC's libstdc++ ABI policy, "Symbol versioning on
# the libstdc++.so binary"): what a conda environment's libstdcxx-ng (versioned as the GCC it comes from) must be.
GCC_OF_GLIBCXX = {21: "5.1", 22: "6.1", 23: "7.1", 24: "7.2", 25: "8.1", 26: "9.1", 27: "9.2", 28: "9.3", 29: "11.1",
                  30: "12.1", 31: "13.1", 32: "13.2", 33: "14.1"}
LIBSTDCXX_ABI_SOURCE = "https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html"
# conda-forge builds libstdcxx-ng (a conda environment's lib/libstdc++.so.6) from GCC's sources, versioned as that GCC
CONDA_LIBSTDCXX_SOURCE = ("https://github.com/conda-forge/ctng-compilers-feedstock/blob/"
                          "a8ea589759f50ad94e98e891afa63fca9b0e8406/recipe/meta.yaml")


def node_minor(version: Any, major: tuple[int, int]) -> int | None:
    """"3.4.30" with major (3, 4) -> 30; "3.4" -> 0; None for anything else (unknown, another series)."""
    if not isinstance(version, str):
        return None
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not m or (int(m[1]), int(m[2])) != major:
        return None
    return int(m[3] or 0)


def policy_cxx(glibc: tuple[int, int], arch: str | None) -> tuple[int, int] | None:
    """The (GLIBCXX, CXXABI) minors the manylinux_<glibc> policy allows on `arch` (every machine's lowest when it
    is not known); a tag between two policies takes the older one's (never more than auditwheel allows)."""
    keys = [k for k in MANYLINUX_CXX if k <= glibc]
    if not keys:
        return None
    row = MANYLINUX_CXX[max(keys)]
    if arch is not None:
        return row.get(arch)
    return min(row.values()) if row else None


def _loaded(snap: Any) -> Any:
    cxx = val(snap.python, "libstdcxx")
    if cxx is None:
        skip("the libstdc++ the target interpreter loads is not known (python.libstdcxx)")
    return cxx


@check("libstdcxx-wheel-policy", "system", findings=("libstdcxx-older-than-wheel-policy",))
def libstdcxx_wheel_policy(ctx: CheckContext) -> Iterator[Finding]:
    """The libstdc++ the target interpreter loads defines every GLIBCXX / CXXABI version the manylinux tag of the
    installed (or stated) torch / torch-npu / vllm / vllm-ascend / triton-ascend release's wheels allows them to
    reference (auditwheel's policy)."""
    snap = ctx.snapshot
    cxx = _loaded(snap)
    has = (node_minor(val(cxx, "glibcxx"), (3, 4)), node_minor(val(cxx, "cxxabi"), (1, 3)))
    if has[0] is None:
        skip("the GLIBCXX versions of the loaded libstdc++ are not known")
    arch = val(snap.host, "arch")
    arch = arch if isinstance(arch, str) else None
    python = val(snap.python, "version")
    python = python if isinstance(python, str) and python else None
    stated = stated_wheels(snap)
    if not stated:
        return
    from doctor.knowledge.requirements import declared  # only when there is something to judge

    short: list[tuple[tuple[int, int], str, str, tuple[int, int], str]] = []
    for name, v in stated:
        d = declared(name, v)
        tag = least_glibc(d, arch, python) if d is not None else None
        need = policy_cxx(tag, arch) if tag is not None else None
        if need is None or tag is None or d is None:
            continue
        if has[0] < need[0] or (has[1] is not None and has[1] < need[1]):
            short.append((need, name, v, tag, d.source))
    if not short:
        return
    need, name, v, tag, wheel = max(short)
    lacks = [f"GLIBCXX_3.4.{need[0]}" if has[0] < need[0] else None,
             f"CXXABI_1.3.{need[1]}" if has[1] is not None and has[1] < need[1] else None]
    lacking = " and ".join(x for x in lacks if x)
    path = val(cxx, "path")
    names = sorted({s[1] for s in short})
    evidence: dict[str, Any] = {"libstdcxx": path, "glibcxx": val(cxx, "glibcxx"), "cxxabi": val(cxx, "cxxabi"),
                                "package": name, name: v, "manylinux": f"{tag[0]}_{tag[1]}",
                                "policy_allows": f"GLIBCXX_3.4.{need[0]}, CXXABI_1.3.{need[1]}", "wheel": wheel}
    if len(names) > 1:
        evidence["packages"] = names
    if arch is None:
        evidence["machine"] = "not stated: the lowest policy of every Linux wheel read"
    gcc = GCC_OF_GLIBCXX.get(need[0])
    system = val(cxx, "system")
    sys_path = val(system, "path")
    sys_has = node_minor(val(system, "glibcxx"), (3, 4))
    preload = sys_path if isinstance(sys_path, str) and sys_path != path and sys_has is not None and sys_has >= need[0] \
        else None
    yield finding(
        "libstdcxx-older-than-wheel-policy", "warning", ("system", *names),
        f"the libstdc++ this Python loads ({_short(path)}, GLIBCXX_3.4.{has[0]}) lacks {lacking}, which "
        f"{name} {v}'s manylinux_{tag[0]}_{tag[1]} wheels may reference",
        detail=(f"A wheel tagged manylinux_{tag[0]}_{tag[1]} may reference libstdc++ symbols up to "
                f"GLIBCXX_3.4.{need[0]} / CXXABI_1.3.{need[1]} (auditwheel's policy for that tag); it fails to import "
                f"with `version `GLIBCXX_3.4.N' not found` when one it references is missing. Whether {name}'s "
                "binaries reference one of the missing versions is not read here: that is why this is a warning."),
        evidence=evidence,
        fix=_fix_text(snap, path, need[0], gcc),
        commands=_fix_commands(snap, path, gcc, preload),
        source=f"{MANYLINUX_CXX_SOURCE}; {wheel}" + (f"; {CONDA_LIBSTDCXX_SOURCE}" if _in_env(snap, path) else ""))


@check("libstdcxx-system", "system", findings=("libstdcxx-older-than-system",))
def libstdcxx_system(ctx: CheckContext) -> Iterator[Finding]:
    """The libstdc++ the target interpreter loads is not older than the host's own (the ld.so cache's): a conda
    environment's or an LD_LIBRARY_PATH copy that is older shadows it for every C++ extension the process loads."""
    snap = ctx.snapshot
    cxx = _loaded(snap)
    system = val(cxx, "system")
    if system is None:
        skip("the host's own libstdc++ is not known (python.libstdcxx.system)")
    here, there = node_minor(val(cxx, "glibcxx"), (3, 4)), node_minor(val(system, "glibcxx"), (3, 4))
    path, sys_path = val(cxx, "path"), val(system, "path")
    if here is None or there is None or not isinstance(path, str) or not isinstance(sys_path, str):
        skip("the GLIBCXX versions of the loaded or the system libstdc++ are not known")
    if path == sys_path or here >= there:
        return
    gcc = GCC_OF_GLIBCXX.get(there)
    evidence: dict[str, Any] = {"libstdcxx": path, "glibcxx": val(cxx, "glibcxx"), "system_libstdcxx": sys_path,
                                "system_glibcxx": val(system, "glibcxx")}
    ld = env(snap, "LD_LIBRARY_PATH")
    if ld and os.path.dirname(path) in ld.split(":"):
        evidence["LD_LIBRARY_PATH"] = ld
    yield finding(
        "libstdcxx-older-than-system", "warning", ("system", "python"),
        f"this Python loads {_short(path)} (GLIBCXX_3.4.{here}), older than the host's {_short(sys_path)} "
        f"(GLIBCXX_3.4.{there})",
        detail=("Every C++ extension the process loads gets this older copy (one libstdc++.so.6 per process): native "
                "code compiled against the host's own libstdc++ (torch C++ extensions and custom ops, CANN's compiled "
                f"operators, source builds of apex or MindSpeed's kernels) may reference GLIBCXX_3.4.{there} and fails to "
                f"import with `version `GLIBCXX_3.4.{there}' not found`."),
        evidence=evidence,
        fix=_fix_text(snap, path, there, gcc),
        commands=_fix_commands(snap, path, gcc, sys_path),
        source=LIBSTDCXX_ABI_SOURCE if not _in_env(snap, path) else f"{LIBSTDCXX_ABI_SOURCE}; {CONDA_LIBSTDCXX_SOURCE}")


# Every manylinux policy lists libstdc++.so.6 among the libraries a wheel may link without carrying them
# ("lib_whitelist"): auditwheel repair never bundles it, so the host (or a conda environment) must provide it.
MANYLINUX_LIBS_SOURCE = MANYLINUX_CXX_SOURCE


@check("libstdcxx-present", "system", findings=("libstdcxx-missing",))
def libstdcxx_present(ctx: CheckContext) -> Iterator[Finding]:
    """The target interpreter's loader finds a libstdc++.so.6 when the stack's manylinux wheels are installed: the
    policy lets them link it without carrying it."""
    snap = ctx.snapshot
    found = getattr(snap.python, "libstdcxx", UNKNOWN) if known(snap.python) else UNKNOWN
    if not known(found):
        skip("the libstdc++ the target interpreter loads is not known (python.libstdcxx)")
    if found is not None:
        return  # the loader found one
    names = [n for n, _ in stated_wheels(snap)]
    if not names:
        return
    yield finding(
        "libstdcxx-missing", "warning", ("system", *names),
        f"the dynamic loader of this Python finds no libstdc++.so.6, which {', '.join(names)}'s manylinux wheels may link",
        detail=("A manylinux wheel may link libstdc++.so.6 without carrying it (every manylinux policy lists it among the "
                "libraries the host provides), and torch's C++ core does: the import then fails with `libstdc++.so.6: "
                "cannot open shared object file: No such file or directory`."),
        evidence={"libstdcxx": None, "packages": names, "prefix": val(snap.python, "prefix")},
        fix="Install the OS's C++ runtime (Debian / Ubuntu: libstdc++6; openEuler / RHEL: libstdc++), or libstdcxx-ng in "
            "a conda environment.",
        commands=("apt-get install -y libstdc++6  # Debian / Ubuntu", "dnf install -y libstdc++  # openEuler / RHEL",
                  "conda install -c conda-forge libstdcxx-ng  # a conda environment"),
        source=MANYLINUX_LIBS_SOURCE)


def _short(path: Any) -> str:
    return path if isinstance(path, str) else "an unknown file"


def _in_env(snap: Any, path: Any) -> bool:
    """Is the library the Python environment's own (a conda env's lib/), not the system's or LD_LIBRARY_PATH's?"""
    prefix = val(snap.python, "prefix")
    return isinstance(path, str) and isinstance(prefix, str) and path.startswith(prefix.rstrip("/") + "/")


def _fix_text(snap: Any, path: Any, minor: int, gcc: str | None) -> str:
    node = f"GLIBCXX_3.4.{minor}"
    if _in_env(snap, path):
        return (f"Upgrade the environment's C++ runtime to one that defines {node}"
                + (f" (GCC {gcc}'s, libstdcxx-ng >= {gcc})" if gcc else "")
                + ", or preload the host's libstdc++ when it is new enough.")
    return (f"Load a libstdc++ that defines {node}: take {os.path.dirname(_short(path))} out of LD_LIBRARY_PATH when the "
            "host's own is new enough, or install a newer libstdc++ (GCC"
            + (f" {gcc}" if gcc else "") + "'s runtime).")


def _fix_commands(snap: Any, path: Any, gcc: str | None, sys_path: str | None) -> tuple[str, ...]:
    cmds = []
    if _in_env(snap, path):
        cmds.append("conda install -c conda-forge " + (f"'libstdcxx-ng>={gcc}'" if gcc else "libstdcxx-ng"))
    if sys_path:
        cmds.append(f"export LD_PRELOAD={sys_path}")
    return tuple(cmds)
