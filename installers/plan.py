"""The install plan as data: frozen, ordered steps that `doctor install --dry-run` prints and the executor runs.

A plan is computed from facts + profile + user pins (installers.resolve) and never changes while it runs;
the executor only decides, per step, whether the target already satisfies it. Keeping the plan as plain
frozen data is what makes `--dry-run`, `--json`, `--download-only` and the bench all use the same steps
(pip-audit's frozen `ResolvedFixVersion` and uv's `--dry-run` are the models).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Step kinds, in the order they usually appear.
UNINSTALL = "uninstall"  # pip uninstall -y <packages> (only the named ones, only if present)
INSTALL = "install"  # pip/uv install <exact pins> with index options
CLONE = "clone"  # git clone <source> at ref, commit verified (no install)
EDITABLE = "editable"  # pip/uv install -e <clone dir> (optionally --no-deps, with env such as VLLM_TARGET_DEVICE)
ENVFILE = "envfile"  # write doctor-env.sh
# pip uninstall -y of what the run installed that nothing requires any more: decided when it runs (installers.orphans)
PRUNE = "prune"
KINDS = (UNINSTALL, INSTALL, CLONE, EDITABLE, ENVFILE, PRUNE)



@dataclass(frozen=True)
class GitSource:
    """A repository at an exact ref. `commit` (full or abbreviated sha) is verified after checkout."""

    name: str  # directory name of the clone, e.g. "Megatron-LM"
    url: str
    ref: str  # branch, tag or commit
    commit: str | None = None
    submodules: bool = False
    module: str | None = None  # the top-level import it provides (snapshot `modules` key), e.g. "megatron"
    version_from: str | None = None  # where the clone keeps its version (installers.versionfile kinds)
    tags: bool = False  # the version comes from git tags (setuptools-scm): clone history and tags, bundle them

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "ref": self.ref, "commit": self.commit,
                "submodules": self.submodules, "module": self.module, "version_from": self.version_from,
                "tags": self.tags}


@dataclass(frozen=True)
class IndexOptions:
    """Where packages come from. `extra_index_urls` keep their order (pip and uv treat the first as primary
    only for `index_url`); `trusted_hosts` mirrors what the upstream scripts pass for http mirrors."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    trusted_hosts: tuple[str, ...] = ()

    def merged(self, other: IndexOptions) -> IndexOptions:
        return IndexOptions(
            index_url=other.index_url or self.index_url,
            extra_index_urls=tuple(dict.fromkeys((*self.extra_index_urls, *other.extra_index_urls))),
            trusted_hosts=tuple(dict.fromkeys((*self.trusted_hosts, *other.trusted_hosts))),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"index_url": self.index_url, "extra_index_urls": list(self.extra_index_urls), "trusted_hosts": list(self.trusted_hosts)}


@dataclass(frozen=True)
class Step:
    """One thing to do. Only the fields of its kind are used; `expect` says how to tell it is already done
    (distribution -> PEP 440 specifier, or None for "must be absent")."""

    id: str
    kind: str
    title: str
    requirements: tuple[str, ...] = ()  # INSTALL: exact pins ("torch==2.7.1+cpu")
    packages: tuple[str, ...] = ()  # UNINSTALL: distribution names
    source: GitSource | None = None  # CLONE / EDITABLE: the repository (EDITABLE installs its clone)
    index: IndexOptions = field(default_factory=IndexOptions)
    no_deps: bool = False
    no_build_isolation: bool = False
    env: tuple[tuple[str, str], ...] = ()  # extra environment for the installer (VLLM_TARGET_DEVICE=empty)
    expect: tuple[tuple[str, str | None], ...] = ()
    editable_dist: str | None = None  # EDITABLE: the distribution the clone installs as
    verify: bool = True  # re-check `expect` after the step ran (off when `expect` names a later step's result)
    reason: str = ""  # why this step exists
    source_ref: str = ""  # the upstream doc/script the step mirrors (a URL at a tag or commit)
    # INSTALL: requirements read at run time from the clone the named EDITABLE step installs: its pyproject
    # [build-system].requires and these files (relative to the clone); done when that step is done
    build_for: str | None = None
    requirement_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"step {self.id}: unknown kind {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "kind": self.kind, "title": self.title}
        if self.requirements:
            d["requirements"] = list(self.requirements)
        if self.packages:
            d["packages"] = list(self.packages)
        if self.source is not None:
            d["source"] = self.source.to_dict()
        if self.kind in (INSTALL, EDITABLE):
            d["index"] = self.index.to_dict()
            d["no_deps"] = self.no_deps
        if self.no_build_isolation:
            d["no_build_isolation"] = True
        if self.env:
            d["env"] = dict(self.env)
        if self.editable_dist:
            d["editable_dist"] = self.editable_dist
        if self.build_for:
            d["build_for"] = self.build_for
            d["requirement_files"] = list(self.requirement_files)
        if self.expect:
            d["expect"] = dict(self.expect)
        if self.reason:
            d["reason"] = self.reason
        if self.source_ref:
            d["source_ref"] = self.source_ref
        return d


@dataclass(frozen=True)
class SystemRequirement:
    """A system package the doctor never installs (CANN toolkit, kernels, NNAL, driver): what is needed,
    what is there, and whether that is enough."""

    component: str  # cann | kernels | nnal | driver
    package: str  # the Huawei package name, e.g. "Ascend-cann-toolkit"
    need: str  # e.g. ">=8.5.0,<9.0.0" or "8.5.0"
    found: str | None
    ok: bool | None  # None = not probed

    def to_dict(self) -> dict[str, Any]:
        return {"component": self.component, "package": self.package, "need": self.need, "found": self.found, "ok": self.ok}


@dataclass(frozen=True)
class Target:
    """The environment a plan is for: where it installs and which wheels fit it."""

    python: str | None  # interpreter path (None when planning from a snapshot for another host)
    python_version: str  # "3.11"
    arch: str  # uname -m: x86_64 | aarch64
    glibc: str | None  # "2.35"
    src_dir: str | None = None  # where git sources are cloned
    prefix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"python": self.python, "python_version": self.python_version, "arch": self.arch, "glibc": self.glibc,
                "src_dir": self.src_dir, "prefix": self.prefix}


@dataclass(frozen=True)
class EnvSpec:
    """What doctor-env.sh holds: set_env.sh files to source, PYTHONPATH entries, exports."""

    path: str
    set_env_files: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = ()
    exports: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "set_env_files": list(self.set_env_files), "pythonpath": list(self.pythonpath),
                "exports": dict(self.exports)}


@dataclass(frozen=True)
class Plan:
    profile: str
    reason: str
    target: Target
    steps: tuple[Step, ...]
    env: EnvSpec | None = None
    system: tuple[SystemRequirement, ...] = ()
    pins: tuple[tuple[str, str], ...] = ()  # the resolved exact pins, after --set overrides
    notes: tuple[str, ...] = ()

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def sources(self) -> list[GitSource]:
        seen: dict[str, GitSource] = {}
        for s in self.steps:
            if s.kind == CLONE and s.source is not None:
                seen.setdefault(s.source.name, s.source)
        return list(seen.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "reason": self.reason,
            "target": self.target.to_dict(),
            "pins": dict(self.pins),
            "steps": [s.to_dict() for s in self.steps],
            "env": self.env.to_dict() if self.env else None,
            "system": [r.to_dict() for r in self.system],
            "notes": list(self.notes),
        }
