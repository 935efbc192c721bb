"""Facts about the target interpreter, asked from the interpreter itself (importlib.metadata in a subprocess).

The doctor may live in another venv (DESIGN principle 3), so the installed set of the *target* is read by
running a small script with the target's Python. The script must stay Python 3.8 compatible and import
nothing heavy. `files=True` also returns each distribution's RECORD paths (what the journal keeps).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

from doctor.errors import InputError
from doctor.snapshot.model import normalize_name

_SCRIPT = r"""
import json, os, platform, sys, sysconfig
try:
    from importlib import metadata as md
except ImportError:  # pragma: no cover
    md = None
want_files = sys.argv[1] == "1"
out = {"python": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3], "prefix": sys.prefix,
       "base_prefix": getattr(sys, "base_prefix", sys.prefix), "arch": platform.machine(),
       "libc": list(platform.libc_ver()), "purelib": sysconfig.get_paths()["purelib"],
       "platlib": sysconfig.get_paths()["platlib"], "dists": []}
seen = set()
for d in (md.distributions() if md else []):
    try:
        name = d.metadata["Name"]
    except Exception:
        continue
    if not name:
        continue
    key = name.lower().replace("_", "-").replace(".", "-")
    if key in seen:
        continue
    seen.add(key)
    path = str(getattr(d, "_path", "") or "")
    item = {"name": name, "version": d.version, "dist_info": path, "direct_url": None}
    try:
        du = d.read_text("direct_url.json")
        item["direct_url"] = json.loads(du) if du else None
    except Exception:
        pass
    if want_files:
        try:
            item["site"] = str(d.locate_file(""))
            item["files"] = [str(f) for f in (d.files or [])]
        except Exception:
            item["files"] = []
    out["dists"].append(item)
sys.stdout.write(json.dumps(out))
"""


@dataclass(frozen=True)
class Dist:
    name: str  # normalised (PEP 503)
    version: str
    dist_info: str
    editable: bool = False
    url: str | None = None  # direct_url.json url (file:///path for editable clones)
    site: str | None = None
    files: tuple[str, ...] = ()


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

    @property
    def python_version(self) -> str:
        return ".".join(self.version.split(".")[:2])

    def versions(self) -> dict[str, str]:
        return {k: d.version for k, d in self.dists.items()}


def probe(python: str, *, files: bool = False, timeout: float = 60) -> TargetEnv:
    """Run the probe script with `python`; InputError (exit 2) when it is not a working interpreter."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONNOUSERSITE"] = env.get("PYTHONNOUSERSITE", "")
    try:
        cp = subprocess.run([python, "-I", "-c", _SCRIPT, "1" if files else "0"], capture_output=True, text=True,
                            timeout=timeout, env=env)
    except FileNotFoundError:
        raise InputError("no such interpreter", source=python) from None
    except PermissionError:
        raise InputError("not executable", source=python) from None
    except subprocess.TimeoutExpired:
        raise InputError(f"the interpreter did not answer within {timeout:.0f} s", source=python) from None
    if cp.returncode != 0:
        tail = (cp.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise InputError(f"cannot run the probe script: {tail[0]}", source=python)
    try:
        data: dict[str, Any] = json.loads(cp.stdout)
    except json.JSONDecodeError:
        raise InputError("the probe script printed something that is not JSON", source=python) from None
    libc = data.get("libc") or []
    glibc = libc[1] if len(libc) == 2 and libc[0] == "glibc" and libc[1] else None
    t = TargetEnv(python=data["python"] or python, version=data["version"], prefix=data["prefix"],
                  base_prefix=data["base_prefix"], arch=data["arch"], glibc=glibc, purelib=data["purelib"],
                  platlib=data.get("platlib"))
    for item in data["dists"]:
        du = item.get("direct_url") or {}
        editable = bool(isinstance(du, dict) and (du.get("dir_info") or {}).get("editable"))
        name = normalize_name(item["name"])
        t.dists[name] = Dist(name=name, version=item["version"], dist_info=item["dist_info"], editable=editable,
                             url=du.get("url") if isinstance(du, dict) else None, site=item.get("site"),
                             files=tuple(item.get("files") or ()))
    return t


def freeze(env: TargetEnv) -> list[str]:
    """`pip freeze`-like lines, sorted: what tests and the journal compare before and after."""
    return sorted(f"{d.name}=={d.version}" + (f" @ {d.url}" if d.editable and d.url else "") for d in env.dists.values())
