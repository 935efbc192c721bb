"""Small, pure accessors checks share, each answering "don't know" (None) instead of guessing.

The snapshot model keeps UNKNOWN (not probed) apart from None (probed, absent); most rules only care
whether a fact is *usable*, so these helpers collapse both to None where that is the right reading and
keep them apart (`absent`) where "not installed" matters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from packaging.version import Version

from doctor.knowledge import chips
from doctor.knowledge.versions import CannVersion, DriverVersion, parse_pkg_version, untagged_build
from doctor.snapshot.model import UNKNOWN, Snapshot, known


def val(obj: Any, attr: str) -> Any:
    """obj.attr when both are known and not None, else None."""
    if obj is None or not known(obj):
        return None
    v = getattr(obj, attr, UNKNOWN)
    return v if known(v) else None


def ver(snap: Snapshot, name: str) -> str | None:
    """Installed version string, or None (not installed, not recorded, or unknown: also a build from a clone without
    tags, whose 0.1.devN+g<sha> names no release; doctor.knowledge.versions.untagged_build)."""
    v = snap.version(name)
    if not (isinstance(v, str) and v.strip()) or untagged_build(parse_pkg_version(v)):
        return None
    return v


def pver(snap: Snapshot, name: str) -> Version | None:
    """Installed version parsed by PEP 440 (local label kept), or None."""
    return parse_pkg_version(ver(snap, name))


def public(v: Version) -> Version:
    return Version(v.public)


def installed(snap: Snapshot, name: str) -> bool | None:
    return snap.has_package(name)


def absent(snap: Snapshot, name: str) -> bool:
    """True only when a complete snapshot says the package is not installed."""
    return snap.has_package(name) is False


def installed_from(snap: Snapshot, name: str) -> str | None:
    """Where a distribution was installed from when pip did not take it from an index: direct_url.json's URL (PEP 610:
    a checkout, a local directory or archive, a VCS URL), with " (editable)" for an editable install. None for an
    index install or when the snapshot does not say."""
    p = snap.package(name)
    url, editable = val(p, "url"), val(p, "editable") is True
    if isinstance(url, str) and url:
        return url + (" (editable)" if editable else "")
    return "an editable install" if editable else None


# The directories an OS package manager installs Python distributions into, which pip never writes to (PEP 668:
# pip installs into /usr/local, the distributor's packages into its own directory): Debian's and Ubuntu's
# /usr/lib/python3/dist-packages (https://www.debian.org/doc/packaging-manuals/python-policy/ch-python.html), Fedora's
# and RHEL's /usr/lib{,64}/python3.N/site-packages (https://peps.python.org/pep-0668/#writing-to-only-the-target-sysconfig-scheme).
_OS_SITE = re.compile(r"/usr/lib(?:64)?/python3(?:\.\d+)?/(?:dist|site)-packages/?")


def os_package(snap: Snapshot, name: str) -> str | None:
    """The directory of a distribution the OS package manager installed (apt's python3-gi, dnf's python3-dbus), None
    when not known to be one: the interpreter is externally managed (PEP 668), the distribution lies in the
    distributor's own directory, and no wheel installer recorded it. Its dependencies are what the OS package
    declares, which splits optional parts into other packages (Debian's python3-gi leaves pycairo to
    python3-gi-cairo), not what its upstream Requires-Dist lists."""
    py = snap.python if known(snap.python) else None
    if val(py, "externally_managed") is not True:
        return None
    p = snap.packages.get(name) if known(snap.packages) else None
    where, by = val(p, "location"), val(p, "installer")
    if not isinstance(where, str) or not _OS_SITE.fullmatch(where):
        return None
    from doctor.probes._target_probe import WHEEL_INSTALLERS  # what they write to INSTALLER (PEP 376, 627)

    return None if isinstance(by, str) and by.strip().lower() in WHEEL_INSTALLERS else where


def env(snap: Snapshot, name: str) -> str | None:
    """The variable's value when the snapshot lists it, else None (unset, or not known: see `env_unset`)."""
    v = snap.getenv(name)
    return v if isinstance(v, str) else None


def env_unset(snap: Snapshot, name: str) -> bool:
    """True only when the snapshot knows the variable is unset or empty: listed as "", or absent from a
    complete snapshot's env. A partial snapshot that does not list it never says "not set"."""
    v = snap.getenv(name)
    return v is None or v == ""


def env_known(snap: Snapshot) -> bool:
    return known(snap.env)


def cann(snap: Snapshot) -> tuple[str, CannVersion] | None:
    tk = snap.ascend_part("toolkit")
    s = val(tk, "version")
    if not isinstance(s, str):
        return None
    c = CannVersion.try_parse(s)
    return (s, c) if c is not None else None


def driver(snap: Snapshot) -> tuple[str, DriverVersion] | None:
    d = snap.ascend_part("driver")
    s = val(d, "version")
    if not isinstance(s, str):
        npu = snap.ascend_part("npu_smi")
        s = val(npu, "version")
    if not isinstance(s, str):
        return None
    dv = DriverVersion.try_parse(s)
    return (s, dv) if dv is not None else None


def family(snap: Snapshot) -> str | None:
    f = chips.family(snap)
    return f if isinstance(f, str) else None


def devices(snap: Snapshot) -> list[Any] | None:
    d = snap.ascend_part("devices")
    return d if isinstance(d, list) else None


def npu_host(snap: Snapshot) -> bool:
    """Evidence that this host is meant to run on Ascend: a known chip, devices, CANN, or torch-npu."""
    if family(snap):
        return True
    devs = devices(snap)
    if devs:
        return True
    if cann(snap) is not None:
        return True
    return bool(installed(snap, "torch-npu"))


def npu_runtime(snap: Snapshot) -> bool | None:
    """Whether code that asks `import torch_npu` and torch.npu.is_available() finds an NPU: True when torch-npu is
    listed and the snapshot does not show a host without NPUs; False when torch-npu is absent from a complete list,
    the host has no Ascend software (`ascend` null) or npu-smi listed no device; None when it cannot be told
    (torch-npu not in a partial list). A package list alone with torch-npu in it counts as True: torch-npu is
    installed for an Ascend host, and a report that lists it comes from one."""
    has = installed(snap, "torch-npu")
    if not has:
        return None if has is None else False
    return not (snap.ascend is None or devices(snap) == [])


def arch(snap: Snapshot) -> str | None:
    return val(snap.host, "arch")


def py_version(snap: Snapshot) -> Version | None:
    return parse_pkg_version(val(snap.python, "version"))


# The git sources the stacks install (a checkout: `pip install -e`, PYTHONPATH) and the module whose git facts say the
# commit it stands at. A checkout reports a version a release may not have (verl main: 0.10.0.devN); the tables read
# at the commits the stacks pin (profiles/requirements-git.toml, the import-surface table's source builds) are found
# by that commit. Without one it is not judged by them.
_CHECKOUT_MODULES = {"verl": "verl", "mindspeed": "mindspeed", "megatron-core": "megatron"}


def git_commit(snap: Snapshot, project: str) -> str | None:
    """The commit of the checkout `project` is imported from (its module's git facts); None when it is not a
    checkout the probe read, or not one of the stacks' git sources."""
    mod = _CHECKOUT_MODULES.get(project)
    c = val(val(snap.module(mod), "git"), "commit") if mod else None
    return c if isinstance(c, str) and c else None


def vcs_commit(snap: Snapshot, project: str) -> str | None:
    """The commit a VCS install recorded (`pip install git+...@<commit>`: direct_url.json's vcs_info, PEP 610)."""
    c = val(snap.package(project), "commit")
    return c if isinstance(c, str) and c else None


def checkout_commit(snap: Snapshot, project: str) -> str | None:
    """The commit `project` was installed from: its checkout's git facts, else the commit pip recorded."""
    return git_commit(snap, project) or vcs_commit(snap, project)


def module(snap: Snapshot, name: str) -> Any:
    """The Module record, None when probed and not importable, UNKNOWN when not probed."""
    return snap.module(name)


def origins(snap: Snapshot, name: str) -> list[str]:
    m = snap.module(name)
    o = val(m, "origins")
    return list(o) if isinstance(o, list) else []


def unlisted_path_dirs(snap: Snapshot, modules: Iterable[str] = (),
                       held: Mapping[str, frozenset[str]] | None = None) -> list[str]:
    """PYTHONPATH directories whose modules no distribution in the snapshot lists: a plain directory of modules
    (vendored code, a copy of a package without its dist-info) that `import` finds but `packages` cannot show, so
    "no distribution installs X" does not mean "import X fails" there. Not counted: a site-packages / dist-packages
    directory (CANN's python/site-packages, a --target tree: their distributions are listed), a directory some listed
    distribution is installed in, and the checkout a probed module resolves to (Megatron-LM holding `megatron`).
    `held` (a snapshot probed on this host: what each of these directories holds, looked at before the checks ran,
    doctor.probes.path_entries) with `modules`: only the directories that hold one of them, so a project directory
    or a checkout on PYTHONPATH that does not hold the module changes nothing."""
    import os
    import re

    value = env(snap, "PYTHONPATH")
    if not value:
        return []
    # the distinct locations first: a host's ~100-300 distributions sit in a few site directories, and the checks
    # ask this several times per run
    listed = {os.path.normpath(loc) for loc in {val(p, "location") for p in (snap.packages.values()
                                                                             if known(snap.packages) else ())}
              if isinstance(loc, str) and loc}
    mods = snap.modules if known(snap.modules) and isinstance(snap.modules, dict) else {}
    checkouts = {os.path.dirname(os.path.normpath(o)) for m in mods.values()
                 for o in (val(m, "origins") if isinstance(val(m, "origins"), list) else ()) if isinstance(o, str)}
    out = []
    for entry in value.split(os.pathsep):
        d = os.path.normpath(entry) if entry else ""
        if not d or d in listed or d in checkouts or re.search(r"/(?:site|dist)-packages$", d):
            continue
        out.append(entry)
    out = list(dict.fromkeys(out))
    if held is not None and modules:
        out = [d for d in out if d not in held or any(m in held[d] for m in modules)]
    return out
