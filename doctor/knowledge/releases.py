"""The verl release table (profiles/releases.toml): one row per verl release with what that release itself
requires (Python, numpy, transformers), its launch key schema and era gates, and its installer era gates.

Checks, launch, the installer and noxfile.py read these rows instead of keeping their own copies, so a new
verl release is one row here plus its profiles. The file is parsed once per process, on first use.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

from packaging.version import Version

from doctor.knowledge.validate import Validator
from doctor.knowledge.versions import parse_pkg_version, release
from doctor.tomlfile import read_toml

REFRESH_COMMAND = ("python -m tools.refresh_knowledge --write-requirements --verl VERL_GIT "
                   "--vllm-ascend VLLM_ASCEND_GIT --torch-npu TORCH_NPU_GIT --mindspeed MINDSPEED_GIT "
                   "--mindspeed-llm MINDSPEED_LLM_GIT")

LAUNCH_FLAGS = ("use_mbridge_default", "vanilla_mbridge_default", "megatron_bridge_default", "ref_inherits_parallel",
                "engine_defaults_fa", "mbridge_required", "trainer_device_required", "cp_needs_override_key",
                "model_engine_key")
INSTALL_FLAGS = ("vllm_ascend_submodules", "vllm_ascend_no_build_isolation", "mbridge", "verl_before_requirements")
_MEGATRON_INSTALL = ("pythonpath", "editable")


class _Flags:
    """Era flags read as attributes: `era.mbridge_required`."""

    flags: Mapping[str, bool]

    def __getattr__(self, name: str) -> bool:
        flags = self.__dict__.get("flags")
        if flags is not None and name in flags:
            return bool(flags[name])
        raise AttributeError(name)


@dataclass(frozen=True)
class LaunchEra(_Flags):
    """verl's megatron key schema changes and the launch-relevant defaults of one release."""

    source: str
    megatron_keys: tuple[str, ...]
    megatron_keys_removed: tuple[str, ...]
    override_keys: tuple[str, ...]
    flags: Mapping[str, bool]
    # What this release's NPU install and NPU examples do (optional; rows before 0.9.0 leave them out):
    npu_megatron_bridge: bool = False  # its Ascend images install Megatron-Bridge
    npu_megatron_bridge_source: str | None = None
    npu_rollout: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # engine -> overrides its example sets
    npu_rollout_source: str | None = None


@dataclass(frozen=True)
class InstallEra(_Flags):
    """How this release's Ascend docs install the stack (the installer's era gates)."""

    source: str
    megatron_install: str
    flags: Mapping[str, bool]


class Release(NamedTuple):
    """One verl release (or dated main snapshot) and the facts read from it."""

    verl: str
    date: str
    source: str
    python: str
    python_source: str
    tag: str | None = None
    commit: str | None = None
    snapshot: bool = False
    numpy: str | None = None
    numpy_source: str | None = None
    transformers: str | None = None
    transformers_source: str | None = None
    transformers_on: str | None = None  # "npu": the window comes from code verl runs only on an Ascend NPU
    no_profile: str | None = None
    inferred: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    launch: LaunchEra | None = None
    install: InstallEra | None = None

    @property
    def version(self) -> Version:
        return Version(self.verl)

    @property
    def release(self) -> tuple[int, int, int]:
        r = release(self.version)
        return (r[0], r[1], r[2])


@dataclass(frozen=True)
class ReleaseTable:
    knowledge_date: str
    profiles_from: str
    rows: tuple[Release, ...]  # oldest first
    path: str = ""
    by_version: Mapping[str, Release] = field(default_factory=dict)

    @property
    def newest(self) -> Release:
        return self.rows[-1]

    def row(self, verl: str | None) -> Release | None:
        """The row for an installed verl: the same major.minor.micro (0.8.0.dev -> 0.8.0, 0.10.0.dev -> the
        0.10.0.dev snapshot), else the newest row of the same major.minor below it (0.9.2 -> 0.9.1).
        None for a verl newer than every row of its line, or older than the table."""
        v = parse_pkg_version(verl)
        if v is None:
            return None
        rel = list(release(v))
        # a final release never takes a snapshot row of main before it (0.10.0 is newer than 0.10.0.dev20260822)
        same = [r for r in self.rows if list(r.release) == rel and (v.is_prerelease or not r.snapshot)]
        if same:
            exact = [r for r in same if r.version == Version(v.public)]
            return (exact or sorted(same, key=lambda r: (not r.snapshot, r.version)))[-1]
        below = [r for r in self.rows if r.release[:2] == tuple(rel[:2]) and r.release < tuple(rel)]
        return below[-1] if below else None

    def newer_than_known(self, verl: str | None) -> bool:
        """True when `verl` is newer than every row (a release the table has not seen yet)."""
        v = parse_pkg_version(verl)
        if v is None:
            return False
        return Version(v.public) > self.newest.version and self.row(verl) is None

    def era(self, verl: str | None) -> Release | None:
        """The row whose launch/install eras apply to `verl`: its own row, else the newest row below it
        (a verl newer than the table gets the newest row's rules)."""
        r = self.row(verl)
        if r is not None:
            return r
        v = parse_pkg_version(verl)
        if v is None:
            return None
        older = [x for x in self.rows if x.version <= Version(v.public)]
        return older[-1] if older else None

    def launch_rows(self) -> tuple[Release, ...]:
        return tuple(r for r in self.rows if r.launch is not None)

    def key_history(self, block: str = "megatron") -> dict[str, tuple[str, str | None]]:
        """key -> (first release that has it, first release that dropped it or None), in version order;
        `block` is "megatron" (actor_rollout_ref.actor.megatron.*) or "override" (its override_transformer_config).
        Dated main snapshots are left out: they sit between releases by date, not by version."""
        out: dict[str, tuple[str, str | None]] = {}
        for r in self.launch_rows():
            assert r.launch is not None
            if r.snapshot:
                continue
            for k in (r.launch.megatron_keys if block == "megatron" else r.launch.override_keys):
                out.setdefault(k, (r.verl, None))
            if block == "megatron":
                for k in r.launch.megatron_keys_removed:
                    if k in out and out[k][1] is None:
                        out[k] = (out[k][0], r.verl)
        return out

    def megatron_keys_at(self, verl: str | None) -> frozenset[str] | None:
        """The actor_rollout_ref.actor.megatron keys of the row that applies to `verl` (None without one): the
        launch rows' additions and removals accumulated in release-date order, so a dated main snapshot has the
        keys main had on its date (0.10.0.dev20260822 still has grad_offload, which 0.9.1 dropped a month later)."""
        row = self.era(verl)
        if row is None or row.launch is None:
            return None
        keys: set[str] = set()
        for r in sorted(self.launch_rows(), key=lambda x: (x.date, x.version)):
            assert r.launch is not None
            keys |= set(r.launch.megatron_keys)
            keys -= set(r.launch.megatron_keys_removed)
            if r is row:
                break
        return frozenset(keys)


def parse_releases(data: Any, source: str) -> ReleaseTable:
    """Validate the parsed releases.toml; InputError names the file and key on any problem."""
    v = Validator(source)
    t = v.keys(data, {"schema", "knowledge_date", "profiles_from", "release"}, "",
               required=("schema", "knowledge_date", "profiles_from", "release"))
    v.schema(t["schema"], 1)
    rows_raw = t["release"]
    if not isinstance(rows_raw, list) or not rows_raw:
        raise v.fail("release", "must be a non-empty array of tables ([[release]])")
    rows = [_row(v, r, f"release[{i}]") for i, r in enumerate(rows_raw)]
    seen: dict[str, int] = {}
    for i, r in enumerate(rows):
        if r.verl in seen:
            raise v.fail(f"release[{i}].verl", f"duplicate release {r.verl!r} (also release[{seen[r.verl]}])")
        seen[r.verl] = i
    rows.sort(key=lambda r: r.version)
    with_launch = [i for i, r in enumerate(rows) if r.launch is not None]
    gap = next((r for r in rows[with_launch[0]:] if r.launch is None), None) if with_launch else None
    if gap is not None:
        raise v.fail(f"release[{seen[gap.verl]}].launch", "every release after the first with a launch table needs one")
    return ReleaseTable(knowledge_date=v.date(t["knowledge_date"], "knowledge_date"),
                        profiles_from=v.version(t["profiles_from"], "profiles_from"), rows=tuple(rows), path=source,
                        by_version=MappingProxyType({r.verl: r for r in rows}))


_ROW = {"verl", "date", "source", "tag", "commit", "snapshot", "python", "python_source", "numpy", "numpy_source",
        "transformers", "transformers_source", "transformers_on", "no_profile", "inferred", "notes", "launch", "install"}


def _row(v: Validator, r: Any, p: str) -> Release:
    t = v.keys(r, _ROW, p, required=("verl", "date", "source", "python", "python_source"))
    verl = v.version(t["verl"], f"{p}.verl")
    snapshot = v.boolean(t.get("snapshot"), f"{p}.snapshot", default=False)
    pv = parse_pkg_version(verl)
    assert pv is not None
    if snapshot != pv.is_devrelease:
        raise v.fail(f"{p}.verl", "a snapshot row needs a .devYYYYMMDD version, a release row a release version")
    if snapshot and not t.get("commit"):
        raise v.fail(f"{p}.commit", "a snapshot row must name the commit it was read at")
    opt: dict[str, Any] = {}
    for key in ("numpy", "transformers"):
        if key in t:
            opt[key] = v.spec(t[key], f"{p}.{key}")
            opt[f"{key}_source"] = v.urls(t.get(f"{key}_source"), f"{p}.{key}_source")
    if "transformers_on" in t:
        opt["transformers_on"] = v.s(t["transformers_on"], f"{p}.transformers_on")
        if opt["transformers_on"] != "npu" or "transformers" not in t:
            raise v.fail(f"{p}.transformers_on", "must be \"npu\", beside a transformers window")
    inferred = v.strs(t.get("inferred"), f"{p}.inferred")
    return Release(
        verl=verl, date=v.date(t["date"], f"{p}.date"), source=v.url(t["source"], f"{p}.source"),
        python=v.spec(t["python"], f"{p}.python"), python_source=v.url(t["python_source"], f"{p}.python_source"),
        tag=v.s(t.get("tag"), f"{p}.tag", optional=True), commit=v.s(t.get("commit"), f"{p}.commit", optional=True),
        snapshot=snapshot, no_profile=v.s(t.get("no_profile"), f"{p}.no_profile", optional=True),
        inferred=inferred, notes=v.strs(t.get("notes"), f"{p}.notes"),
        launch=_launch(v, t["launch"], f"{p}.launch") if "launch" in t else None,
        install=_install(v, t["install"], f"{p}.install") if "install" in t else None, **opt)


def _flags(v: Validator, t: dict[str, Any], names: tuple[str, ...], p: str) -> Mapping[str, bool]:
    return MappingProxyType({n: v.boolean(t[n], f"{p}.{n}") for n in names})


def _launch(v: Validator, raw: Any, p: str) -> LaunchEra:
    lists = ("megatron_keys", "megatron_keys_removed", "override_keys")
    npu = ("npu_megatron_bridge", "npu_megatron_bridge_source", "npu_rollout_vllm", "npu_rollout_sglang",
           "npu_rollout_source")
    t = v.keys(raw, {"source", *lists, *LAUNCH_FLAGS, *npu}, p, required=("source", "megatron_keys", *LAUNCH_FLAGS))
    bridge = "npu_megatron_bridge" in t
    rollout = {e: v.strs(t[f"npu_rollout_{e}"], f"{p}.npu_rollout_{e}") for e in ("vllm", "sglang")
               if f"npu_rollout_{e}" in t}
    if bridge != ("npu_megatron_bridge_source" in t) or bool(rollout) != ("npu_rollout_source" in t):
        raise v.fail(p, "npu_megatron_bridge and npu_rollout_* each need their *_source")
    return LaunchEra(source=v.url(t["source"], f"{p}.source"), megatron_keys=v.strs(t["megatron_keys"], f"{p}.megatron_keys"),
                     megatron_keys_removed=v.strs(t.get("megatron_keys_removed"), f"{p}.megatron_keys_removed"),
                     override_keys=v.strs(t.get("override_keys"), f"{p}.override_keys"),
                     flags=_flags(v, t, LAUNCH_FLAGS, p),
                     npu_megatron_bridge=v.boolean(t["npu_megatron_bridge"], f"{p}.npu_megatron_bridge") if bridge
                     else False,
                     npu_megatron_bridge_source=v.url(t["npu_megatron_bridge_source"], f"{p}.npu_megatron_bridge_source")
                     if bridge else None,
                     npu_rollout=MappingProxyType(rollout),
                     npu_rollout_source=v.url(t["npu_rollout_source"], f"{p}.npu_rollout_source") if rollout else None)


def _install(v: Validator, raw: Any, p: str) -> InstallEra:
    t = v.keys(raw, {"source", "megatron_install", *INSTALL_FLAGS}, p, required=("source", "megatron_install", *INSTALL_FLAGS))
    mi = v.req(t["megatron_install"], f"{p}.megatron_install")
    if mi not in _MEGATRON_INSTALL:
        raise v.fail(f"{p}.megatron_install", f"must be one of {', '.join(_MEGATRON_INSTALL)}")
    return InstallEra(source=v.url(t["source"], f"{p}.source"), megatron_install=mi, flags=_flags(v, t, INSTALL_FLAGS, p))


def releases_path() -> str:
    """`releases.toml` of the knowledge in use: the packaged `profiles/releases.toml`, or DOCTOR_KNOWLEDGE's."""
    from doctor.knowledge.location import knowledge_file

    return knowledge_file("releases.toml")


_TABLE: ReleaseTable | None = None


def load_releases(path: str | os.PathLike[str] | None = None) -> ReleaseTable:
    """The release table; the installed one is parsed once per process (it cannot change under a running doctor)."""
    global _TABLE
    if path is None and _TABLE is not None:
        return _TABLE
    p = releases_path() if path is None else os.fspath(path)
    table = parse_releases(read_toml(p, "release table"), p)
    if path is None:
        _TABLE = table
    return table


def release_for(verl: str | None) -> Release | None:
    return load_releases().row(verl)


def knowledge_date() -> str:
    return load_releases().knowledge_date


def knowledge_fix() -> str:
    """The fix line of every 'newer than the doctor knows' finding."""
    return (f"Update verl-ascend-doctor: its knowledge is from {knowledge_date()}. Maintainers refresh it from the upstream "
            f"repositories with `{REFRESH_COMMAND}` (README: Updating the knowledge).")


def knowledge_summary() -> dict[str, Any]:
    """What `doctor check` reports about its own knowledge: which copy (the packaged one, or the one `--knowledge`
    or DOCTOR_KNOWLEDGE names: `copy` says which the user used),
    its date, the day PyPI was read, and the newest release each table knows."""
    from doctor.knowledge import matrix
    from doctor.knowledge.location import knowledge_dir, override_named_by
    from doctor.knowledge.requirements import load_requirements

    t = load_releases()
    req = load_requirements()
    released = [r for r in t.rows if not r.snapshot]
    return {
        "date": t.knowledge_date,
        "copy": override_named_by() or "packaged",
        "dir": knowledge_dir(),
        "pypi_read": req.read,
        "newest": {
            "verl": released[-1].verl if released else None,
            "verl_snapshot": next((r.verl for r in reversed(t.rows) if r.snapshot), None),
            "vllm": req.newest("vllm"),  # the index's line: the 6.5 MB of project files stay unread
            "vllm-ascend": str(max(Version(r.version) for r in matrix.VLLM_ASCEND if r.branch is None)),
            "torch-npu": str(max(Version(r.version) for r in matrix.TORCH_NPU)),
            "cann": matrix.newest_known_cann(),
        },
        "refresh": REFRESH_COMMAND,
    }


def megatron_keys_at(verl: str | None) -> frozenset[str] | None:
    return load_releases().megatron_keys_at(verl)
