"""The target interpreter's installed set, as the installer needs it (a `TargetEnv`).

The doctor may live in another venv, so the *target* is asked itself: this runs the same in-target probe as
`doctor check` (`doctor/probes/_target_probe.py`, importlib.metadata inside the target), isolated (`-I`: the
installed set, not what the cwd shadows) and without module facts. Check and install therefore cannot disagree
about what is installed. `files=True` also returns each distribution's RECORD paths (what the journal keeps).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from doctor.errors import InputError
from doctor.snapshot.model import normalize_name


@dataclass(frozen=True)
class Dist:
    name: str  # normalised (PEP 503)
    version: str
    dist_info: str
    editable: bool = False
    url: str | None = None  # direct_url.json url (file:///path for editable clones)
    site: str | None = None
    files: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()  # its Requires-Dist lines as written (what installers.orphans reads)


@dataclass
class TargetEnv:
    python: str
    version: str
    prefix: str
    base_prefix: str
    arch: str
    glibc: str | None
    purelib: str
    dists: dict[str, Dist] = field(default_factory=dict)
    platlib: str | None = None
    externally_managed: bool = False  # PEP 668 (snapshot rule 13): pip and uv refuse to install here
    # rule 15: {"install"/"uninstall": what turns pip's guard off for that command}, managed interpreters only
    break_system_packages: dict[str, str] = field(default_factory=dict)
    stdlib: str | None = None  # sysconfig's stdlib directory (ensurepip's bundled wheels: installers.venvpip)
    wheel_pkg_dir: str | None = None  # the build's WHEEL_PKG_DIR, where a distributor's ensurepip takes them from

    @property
    def pip_override(self) -> str | None:
        """What turns pip's PEP 668 guard off for both commands a plan runs (install, uninstall), else None."""
        return overridden(self.break_system_packages)

    @property
    def python_version(self) -> str:
        return ".".join(self.version.split(".")[:2])

    def versions(self) -> dict[str, str]:
        return {k: d.version for k, d in self.dists.items()}


def probe(python: str, *, files: bool = False, timeout: float = 60) -> TargetEnv:
    """Ask `python` for its installed set with the doctor's one in-target probe (isolated, distributions only;
    `files` adds RECORD paths). InputError (exit 2) when it is not a working interpreter."""
    from doctor.probes.pyenv import run_target_probe

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    args = ["--dists-only", *(["--files"] if files else [])]
    doc, error, _run = run_target_probe(python, timeout=timeout, environ=env, isolated=True, args=args)
    if doc is None or error:
        raise InputError(error or f"target Python {python}: the probe printed no result")
    return _target_env(python, doc)


def _target_env(python: str, doc: dict[str, Any]) -> TargetEnv:
    py = doc.get("python") or {}
    libc = (py.get("libc") or "").split()
    paths = py.get("install_paths") or {}
    t = TargetEnv(python=py.get("executable") or python, version=py.get("version") or "", prefix=py.get("prefix") or "",
                  base_prefix=py.get("base_prefix") or "", arch=py.get("arch") or "",
                  glibc=libc[1] if len(libc) == 2 and libc[0] == "glibc" else None,
                  purelib=paths.get("purelib") or "", platlib=paths.get("platlib"),
                  stdlib=paths.get("stdlib"), wheel_pkg_dir=paths.get("wheel_pkg_dir"),
                  externally_managed=py.get("externally_managed") is True,
                  break_system_packages={k: v for k, v in (py.get("break_system_packages") or {}).items()
                                         if isinstance(v, str)})
    for item in doc.get("distributions") or []:
        name = normalize_name(item["name"])
        t.dists[name] = Dist(name=name, version=item.get("version") or "", dist_info=item.get("dist_info") or "",
                             editable=bool(item.get("editable")), url=item.get("url"), site=item.get("location"),
                             files=tuple(item.get("files") or ()),
                             requires=tuple(str(r) for r in item.get("requires_dist") or ()))
    return t


def overridden(bsp: Any) -> str | None:
    """What turns pip's PEP 668 guard off (snapshot rule 15) for both `pip install` and `pip uninstall`, which a
    plan runs, or None (neither, only one, or not recorded)."""
    if not isinstance(bsp, dict) or not all(isinstance(bsp.get(c), str) for c in ("install", "uninstall")):
        return None
    return " and ".join(dict.fromkeys((bsp["install"], bsp["uninstall"])))


def freeze(env: TargetEnv) -> list[str]:
    """`pip freeze`-like lines, sorted: what tests and the journal compare before and after."""
    return sorted(f"{d.name}=={d.version}" + (f" @ {d.url}" if d.editable and d.url else "") for d in env.dists.values())
