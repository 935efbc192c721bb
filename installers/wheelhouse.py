"""Air-gapped installs: a wheelhouse directory with a manifest (sha256 of every artifact) and git bundles
(one per git source, plus one per submodule of a source that has them, listed under `git.<name>.submodules`).

`doctor install --download-only DIR` fills DIR/wheels (pip download for the *target's* platform tags) and
DIR/git (bundles of the plan's git sources) and writes DIR/manifest.json last, atomically. `--wheelhouse DIR
--offline` verifies every hash before anything is installed; a file that is not in the manifest, a missing
file, a changed byte or a path that points outside DIR refuses the run (exit 2) before the first change.

The manylinux tags follow from the target's glibc (PEP 600: manylinux_2_N runs on glibc >= 2.N); e.g. recent
vllm-ascend wheels are manylinux_2_34 only (https://pypi.org/project/vllm-ascend/0.23.0/#files).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from doctor.errors import InputError, RefusedError

MANIFEST = "manifest.json"
SCHEMA = "doctor.wheelhouse/1"
WHEELS = "wheels"
GIT = "git"


def manylinux_platforms(arch: str, glibc: str | None) -> list[str]:
    """Platform tags pip may download for a Linux target, best first: the ones pip on the target supports, as
    doctor/knowledge/tagfit.py lists them from its machine and glibc (linux_<arch>, every manylinux_2_N level down
    to 2_5 on x86_64 and 2_17 elsewhere, each legacy manylinux1 / 2010 / 2014 name after its level; `pip download
    --platform` does not widen a manylinux_2_N name to the older levels). Unknown glibc -> 2.17 (manylinux2014)."""
    from doctor.knowledge.tagfit import GLIBC, platform_tags

    version = (2, 17)
    if glibc:
        try:
            major, minor = (int(x) for x in glibc.split(".")[:2])
        except ValueError:
            raise InputError(f"not a glibc version: {glibc!r}", source="--glibc") from None
        version = (major, minor)
    return list(platform_tags(arch, GLIBC, version))


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def safe_path(root: str | Path, rel: str) -> Path:
    """Resolve a manifest path inside root; refuse absolute paths, '..', backslashes and symlink escapes."""
    p = PurePosixPath(rel)
    if not rel or p.is_absolute() or "\\" in rel or any(part in ("..", "") for part in rel.split("/")):
        raise RefusedError(f"artifact path {rel!r} is not a plain relative path", source=str(Path(root) / MANIFEST))
    base = Path(root).resolve()
    full = (base / p).resolve()
    if os.path.commonpath([str(base), str(full)]) != str(base):
        raise RefusedError(f"artifact path {rel!r} points outside the wheelhouse", source=str(Path(root) / MANIFEST))
    return full


@dataclass(frozen=True)
class Artifact:
    path: str  # relative, posix
    sha256: str
    size: int
    kind: str  # wheel | bundle | sdist

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size": self.size, "kind": self.kind}


@dataclass
class Manifest:
    profile: str
    target: dict[str, Any]
    artifacts: list[Artifact] = field(default_factory=list)
    git: dict[str, dict[str, Any]] = field(default_factory=dict)  # source name -> {url, ref, commit, bundle}
    created: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "created": self.created, "profile": self.profile, "target": self.target,
                "artifacts": [a.to_dict() for a in sorted(self.artifacts, key=lambda a: a.path)], "git": self.git}


def scan(root: str | Path, manifest: Manifest) -> Manifest:
    """Hash everything under wheels/ and git/ into the manifest (called after downloading)."""
    root = Path(root)
    arts = []
    for sub in (WHEELS, GIT):
        d = root / sub
        if not d.is_dir():
            continue
        for p in sorted(d.rglob("*")):
            if p.is_file():
                rel = p.relative_to(root).as_posix()
                kind = "bundle" if p.suffix == ".bundle" else "wheel" if p.suffix == ".whl" else "sdist"
                arts.append(Artifact(rel, sha256_file(p), p.stat().st_size, kind))
    manifest.artifacts = arts
    return manifest


def write(root: str | Path, manifest: Manifest) -> Path:
    from doctor.atomic import write_text_atomic

    path = Path(root) / MANIFEST
    write_text_atomic(str(path), json.dumps(manifest.to_dict(), indent=2) + "\n")
    return path


def load(root: str | Path) -> Manifest:
    path = Path(root) / MANIFEST
    src = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no manifest.json: not a wheelhouse made by `doctor install --download-only`", source=src) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read: {e}", source=src) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise InputError(f"schema must be {SCHEMA!r}", source=src, path="schema")
    arts = []
    for i, a in enumerate(data.get("artifacts") or []):
        try:
            arts.append(Artifact(str(a["path"]), str(a["sha256"]).lower(), int(a["size"]), str(a.get("kind", "wheel"))))
        except (KeyError, TypeError, ValueError):
            raise InputError("needs path, sha256 and size", source=src, path=f"artifacts[{i}]") from None
    git = data.get("git") or {}
    if not isinstance(git, dict):
        raise InputError("must be an object", source=src, path="git")
    for name, g in git.items():
        subs = g.get("submodules", []) if isinstance(g, dict) else []
        if not isinstance(subs, list):
            raise InputError("must be an array", source=src, path=f"git.{name}.submodules")
        for i, sm in enumerate(subs):
            if not (isinstance(sm, dict) and all(isinstance(sm.get(k), str) for k in ("path", "commit", "bundle"))):
                raise InputError("needs path, commit and bundle (strings)", source=src, path=f"git.{name}.submodules[{i}]")
    return Manifest(profile=str(data.get("profile", "")), target=dict(data.get("target") or {}), artifacts=arts,
                    git=git, created=str(data.get("created", "")))


def held(manifest: Manifest, root: str | Path) -> list[str]:
    """The paths of the wheels and sdists the manifest of the wheelhouse at `root` lists: what an --offline install
    can install and nothing else (setcheck reads their names, and a wheel's METADATA, when the plan is made)."""
    return [str(safe_path(root, a.path)) for a in manifest.artifacts if a.kind in ("wheel", "sdist")]


def verify(root: str | Path) -> Manifest:
    """Check every artifact's path and sha256, and that nothing unlisted sits in wheels/ or git/ (pip would
    install it from --find-links). Raises RefusedError naming the first bad file."""
    root = Path(root)
    m = load(root)
    src = str(root / MANIFEST)
    listed = set()
    for a in m.artifacts:
        full = safe_path(root, a.path)
        listed.add(full)
        if not full.is_file():
            raise RefusedError(f"{a.path} is listed but missing", source=src)
        got = sha256_file(full)
        if got != a.sha256:
            raise RefusedError(f"{a.path}: sha256 mismatch (manifest {a.sha256}, file {got}); the wheelhouse was "
                               "changed after it was made — rebuild it with --download-only", source=src)
    for sub in (WHEELS, GIT):
        d = root / sub
        if d.is_dir():
            for p in d.rglob("*"):
                if (p.is_file() or p.is_symlink()) and p.resolve() not in listed:
                    raise RefusedError(f"{p.relative_to(root).as_posix()} is not in the manifest", source=src)
    for name, g in m.git.items():
        if not isinstance(g, dict) or "bundle" not in g or "commit" not in g:
            raise InputError("needs bundle and commit", source=src, path=f"git.{name}")
        for b in [str(g["bundle"])] + [sm["bundle"] for sm in g.get("submodules", [])]:
            if safe_path(root, b) not in listed:
                raise RefusedError(f"git bundle {b} is not in the artifact list", source=src)
    return m
