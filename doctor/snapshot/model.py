"""The snapshot model (`doctor.snapshot/1` and `doctor.cluster/1`), with a strict-but-forgiving loader.

Contract (docs/schemas/snapshot.md): a missing key means *unknown* (the `UNKNOWN` sentinel), `null` means
*probed and absent* (None); that distinction keeps checks silent about facts nobody gathered. Unknown keys
are kept in `extra` and written back, so a hand-written snapshot survives a load/dump round trip. Wrongly
typed values are refused with the file, the path inside it and the reason (exit 2 via InputError).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Union

from doctor.errors import InputError
from doctor.snapshot._base import UNKNOWN, _Model, _uk, known, normalize_name  # noqa: F401 - re-exported
from doctor.snapshot.npu_net import Hccn

SNAPSHOT_SCHEMA = "doctor.snapshot/1"
CLUSTER_SCHEMA = "doctor.cluster/1"


@dataclass
class Host(_Model):
    """`host`: the machine the snapshot was taken on (OS, kernel, arch, libc, CPUs, memory, /dev/shm, container)."""

    hostname: str = _uk()
    os: str = _uk()
    kernel: str = _uk()
    arch: str = _uk()
    libc: str = _uk()
    cpu_count: int = _uk()
    memory_gb: float = _uk()
    shm_gb: float | None = _uk()
    cwd: str = _uk()
    in_container: bool | None = _uk()


@dataclass
class PythonInfo(_Model):
    """`python`: the target interpreter, which is not necessarily the doctor's own."""

    version: str = _uk()
    executable: str = _uk()
    implementation: str = _uk()
    prefix: str = _uk()
    site_packages: list[str] = _uk()


@dataclass
class Package(_Model):
    """One entry of `packages`: an installed distribution as importlib.metadata sees it."""

    version: str | None = None
    location: str | None = _uk()
    editable: bool | None = _uk()
    url: str | None = _uk()
    commit: str | None = _uk()
    installer: str | None = _uk()


@dataclass
class GitInfo(_Model):
    """Where a module imported from a git checkout stands (commit, branch, tag, dirty)."""

    commit: str | None = _uk()
    branch: str | None = _uk()
    tag: str | None = _uk()
    dirty: bool | None = _uk()


@dataclass
class Module(_Model):
    """One entry of `modules`: where an import name resolves from (which may differ from its package)."""

    origins: list[str] = _uk()
    version: str | None = _uk()
    git: GitInfo | None = _uk()
    features: dict[str, bool] = _uk()
    build: dict[str, Any] = _uk()


@dataclass
class Component(_Model):
    """A versioned Ascend component (toolkit, kernels, NNAL, driver, firmware)."""

    version: str | None = _uk()
    path: str | None = _uk()
    arch: str | None = _uk()
    soc: str | None = _uk()


@dataclass
class NpuSmi(_Model):
    """How the `npu-smi` run went; `missing` is a fact about the host, not a probe failure."""

    status: str = _uk()  # ok | missing | timeout | error
    version: str | None = _uk()
    error: str | None = _uk()


@dataclass
class Process(_Model):
    """A process holding NPU memory, as `npu-smi info` lists it."""

    pid: int = _uk()
    name: str | None = _uk()
    hbm_mb: int | None = _uk()


@dataclass
class Device(_Model):
    """One NPU as `npu-smi` reports it (ids, chip, health, HBM, processes)."""

    id: int = _uk()
    chip_index: int | None = _uk()
    phy_id: int | None = _uk()
    chip: str | None = _uk()
    soc: str | None = _uk()
    health: str | None = _uk()
    hbm_total_mb: int | None = _uk()
    hbm_used_mb: int | None = _uk()
    processes: list[Process] = _uk()


@dataclass
class PciDevice(_Model):
    """A Huawei accelerator on the PCI bus (seen even when the driver is not loaded)."""

    address: str = _uk()
    device_id: str = _uk()


@dataclass
class ToolkitEntry(_Model):
    """One CANN toolkit install found under the Ascend root, and whether it is the active one."""

    version: str | None = _uk()
    path: str = _uk()
    active: bool = _uk()


@dataclass
class Ascend(_Model):
    """`ascend`: the CANN stack and the NPUs; null when the host has no Ascend software at all."""

    root: str | None = _uk()
    toolkit: Component | None = _uk()
    kernels: Component | None = _uk()
    nnal: Component | None = _uk()
    driver: Component | None = _uk()
    firmware: Component | None = _uk()
    npu_smi: NpuSmi | None = _uk()
    devices: list[Device] = _uk()
    pci: list[PciDevice] = _uk()
    device_files: list[str] = _uk()
    toolkits: list[ToolkitEntry] = _uk()
    hccn: Hccn | None = _uk()  # the NPUs' RoCE ports (hccn_tool, /etc/hccn.conf): see npu_net.py


@dataclass
class ImportResult(_Model):
    """One `--deep` import (torch_npu, mindspeed.megatron_adaptor, vllm_ascend) in a subprocess."""

    ok: bool = False
    error: str | None = _uk()
    seconds: float | None = _uk()
    detail: dict[str, Any] = _uk()


@dataclass
class Interface(_Model):
    """A network interface with its addresses; HCCL/Gloo *_SOCKET_IFNAME must name one of these."""

    name: str = _uk()
    addresses: list[str] = _uk()
    up: bool | None = _uk()


@dataclass
class Network(_Model):
    """`network`: interfaces and listening TCP ports (HCCL's and Ray's ports must be free)."""

    interfaces: list[Interface] = _uk()
    listening_ports: list[int] = _uk()


@dataclass
class Snapshot(_Model):
    """`doctor.snapshot/1`: everything checks need about one node. Missing = unknown, null = absent."""

    schema: str = SNAPSHOT_SCHEMA
    collected_at: str = _uk()
    tool: dict[str, Any] = _uk()
    complete: bool = _uk()
    host: Host = _uk()
    python: PythonInfo = _uk()
    packages: dict[str, Package] = _uk()
    modules: dict[str, Module | None] = _uk()
    ascend: Ascend | None = _uk()
    env: dict[str, str] = _uk()
    imports: dict[str, ImportResult] = _uk()
    network: Network = _uk()
    ray: dict[str, Any] | None = _uk()

    # -- questions checks ask; each answers UNKNOWN rather than guessing -------------------------------
    @property
    def is_complete(self) -> bool:
        return self.complete is True

    def package(self, name: str) -> Package | None | Any:
        """The installed package, None when a complete snapshot says it is not installed, else UNKNOWN."""
        key = normalize_name(name)
        if known(self.packages) and key in self.packages:
            return self.packages[key]
        return None if self.is_complete and known(self.packages) else UNKNOWN

    def version(self, name: str) -> str | None | Any:
        """Installed version string; None if not installed (complete snapshot) or version not recorded."""
        p = self.package(name)
        if p is UNKNOWN:
            return UNKNOWN
        return p.version if p is not None else None

    def has_package(self, name: str) -> bool | None:
        """True / False, or None when the snapshot cannot tell."""
        p = self.package(name)
        if p is UNKNOWN:
            return None
        return p is not None

    def module(self, name: str) -> Module | None | Any:
        if known(self.modules) and name in self.modules:
            return self.modules[name]
        return None if self.is_complete and known(self.modules) else UNKNOWN

    def getenv(self, name: str) -> str | None | Any:
        """Value, None when unset (env was collected), UNKNOWN when env was not collected."""
        if not known(self.env):
            return UNKNOWN
        return self.env.get(name)

    def ascend_part(self, name: str) -> Any:
        """ascend.<name>, with UNKNOWN when `ascend` itself is unknown and None when it is null."""
        if self.ascend is UNKNOWN:
            return UNKNOWN
        if self.ascend is None:
            return None
        return getattr(self.ascend, name)

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


@dataclass
class ClusterNode(_Model):
    """One node of a `doctor.cluster/1` file: its snapshot, or why it could not be taken."""

    node: str = ""
    snapshot: Snapshot | None = None
    error: str | None = None


@dataclass
class Cluster(_Model):
    """`doctor.cluster/1`: the snapshots of every node of a Ray cluster."""

    schema: str = CLUSTER_SCHEMA
    nodes: list[ClusterNode] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)


# -- generic conversion --------------------------------------------------------------------------------

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "null"
    if origin is list:
        return "array"
    if origin is dict or (isinstance(tp, type) and issubclass(tp, _Model)):
        return "object"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, str(tp))


def _convert(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise _TypeErr(path, f"must be {_type_name(tp)}, not null")
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(a, value, path)
            except _TypeErr as e:
                errors.append(e)
        raise errors[0] if len(errors) == 1 else _TypeErr(path, f"must be {_type_name(tp)}, got {_json_type(value)}")
    if value is None:
        raise _TypeErr(path, f"must be {_type_name(tp)}, not null")
    if origin is list:
        if not isinstance(value, list):
            raise _TypeErr(path, f"must be an array, got {_json_type(value)}")
        (item,) = typing.get_args(tp)
        return [_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise _TypeErr(path, f"must be an object, got {_json_type(value)}")
        _, vt = typing.get_args(tp)
        return {k: _convert(vt, v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, _Model):
        if not isinstance(value, dict):
            raise _TypeErr(path, f"must be an object, got {_json_type(value)}")
        return _from_dict(tp, value, path)
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    raise _TypeErr(path, f"must be {_type_name(tp)}, got {_json_type(value)}")


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return f"string {v!r}" if len(v) < 40 else "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null" if v is None else type(v).__name__


class _TypeErr(Exception):
    def __init__(self, path: str, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def _from_dict(cls: type, data: dict[str, Any], path: str) -> Any:
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
    for k, v in data.items():
        if k in names:
            sub = f"{path}.{k}" if path else k
            kwargs[k] = _convert(hints[k], v, sub)
        else:
            extra[k] = v
    obj = cls(**kwargs)
    obj.extra = extra
    return obj


def to_dict(obj: Any) -> Any:
    """Dataclass -> JSON-able dict, omitting UNKNOWN fields and keeping `extra` keys."""
    if isinstance(obj, _Model):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            if f.name == "extra":
                continue
            v = getattr(obj, f.name)
            if v is UNKNOWN:
                continue
            out[f.name] = to_dict(v)
        for k, v in obj.extra.items():
            out.setdefault(k, v)
        return out
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items() if v is not UNKNOWN}
    if isinstance(obj, list):
        return [to_dict(v) for v in obj]
    return obj


# -- loading -------------------------------------------------------------------------------------------


def snapshot_from_dict(data: Any, source: str = "<snapshot>", path: str = "") -> Snapshot:
    if not isinstance(data, dict):
        raise InputError(f"a snapshot must be a JSON object, got {_json_type(data)}", source=source, path=path or None)
    schema = data.get("schema")
    if schema != SNAPSHOT_SCHEMA:
        raise InputError(
            f"schema must be {SNAPSHOT_SCHEMA!r}, got {schema!r}" if "schema" in data else f"missing 'schema' (expected {SNAPSHOT_SCHEMA!r})",
            source=source,
            path=(f"{path}.schema" if path else "schema"),
        )
    try:
        snap: Snapshot = _from_dict(Snapshot, data, path)
    except _TypeErr as e:
        raise InputError(e.reason, source=source, path=e.path) from None
    if known(snap.packages):
        normalized: dict[str, Package] = {}
        for name, pkg in snap.packages.items():
            key = normalize_name(name)
            if key in normalized and normalized[key].version != pkg.version:
                raise InputError(
                    f"package listed twice with different versions ({normalized[key].version!r} and {pkg.version!r})",
                    source=source,
                    path=f"{path + '.' if path else ''}packages.{name}",
                )
            normalized[key] = pkg
        snap.packages = normalized
    return snap


def cluster_from_dict(data: Any, source: str = "<cluster>") -> Cluster:
    if not isinstance(data, dict) or data.get("schema") != CLUSTER_SCHEMA:
        raise InputError(f"schema must be {CLUSTER_SCHEMA!r}", source=source, path="schema")
    nodes_raw = data.get("nodes")
    if not isinstance(nodes_raw, list):
        raise InputError("must be an array of {node, snapshot, error}", source=source, path="nodes")
    nodes: list[ClusterNode] = []
    for i, n in enumerate(nodes_raw):
        p = f"nodes[{i}]"
        if not isinstance(n, dict):
            raise InputError(f"must be an object, got {_json_type(n)}", source=source, path=p)
        name = n.get("node")
        if not isinstance(name, str) or not name:
            raise InputError("'node' must be a non-empty string", source=source, path=f"{p}.node")
        err = n.get("error")
        if err is not None and not isinstance(err, str):
            raise InputError(f"must be a string or null, got {_json_type(err)}", source=source, path=f"{p}.error")
        snap_raw = n.get("snapshot")
        snap = None if snap_raw is None else snapshot_from_dict(snap_raw, source, f"{p}.snapshot")
        nodes.append(ClusterNode(node=name, snapshot=snap, error=err))
    c = Cluster(nodes=nodes)
    c.extra = {k: v for k, v in data.items() if k not in ("schema", "nodes")}
    return c


def parse_document(text: str | bytes, source: str) -> Snapshot | Cluster:
    """Parse JSON text into a Snapshot or a Cluster, whichever its `schema` says."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text ({e.reason} at byte {e.start})", source=source) from None
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})", source=source) from None
    except RecursionError:
        raise InputError("not valid JSON: nested too deeply", source=source) from None
    if isinstance(data, dict) and data.get("schema") == CLUSTER_SCHEMA:
        return cluster_from_dict(data, source)
    return snapshot_from_dict(data, source)


def load_document(path: str) -> Snapshot | Cluster:
    """Read a snapshot or cluster file ("-" for stdin); any failure is an InputError naming the file."""
    import sys

    try:
        if path == "-":
            raw: bytes = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                raw = fh.read()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", source=path) from None
    return parse_document(raw, path)
