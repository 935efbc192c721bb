"""The snapshot model (`doctor.snapshot/1` and `doctor.cluster/1`), with a strict-but-forgiving loader.

Contract (docs/schemas/snapshot.md): a missing key means *unknown* (the `UNKNOWN` sentinel), `null` means
*probed and absent* (None); that distinction keeps checks silent about facts nobody gathered. Unknown keys
are kept in `extra` and written back, so a hand-written snapshot survives a load/dump round trip. Wrongly
typed values are refused with the file, the path inside it and the reason (exit 2 via InputError): that
loader is doctor.snapshot.loader.
"""

# No `from __future__ import annotations` here nor in npu_net.py: the loader validates every value against its
# field's type (typing.get_type_hints), which compiles each string annotation (115 in a live check), and
# @dataclass matches each one (178) against ClassVar/InitVar; annotations written as objects are evaluated
# once, as the class is created: ~2 ms less of every `doctor check`. A type named here is defined above its use.
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from doctor.snapshot._base import UNKNOWN, _Model, _uk, known, normalize_name  # noqa: F401 - re-exported
from doctor.snapshot.npu_net import Hccn

SNAPSHOT_SCHEMA = "doctor.snapshot/1"
CLUSTER_SCHEMA = "doctor.cluster/1"


@dataclass
class Limits(_Model):
    """`host.limits`: the resource limits the collecting shell hands on to what it starts (Ray, verl). `null` is
    unlimited (RLIM_INFINITY, or "max" in pids.max); a missing key was not read. Older snapshots lack it."""

    nofile_soft: int | None = _uk()
    nofile_hard: int | None = _uk()
    nproc_soft: int | None = _uk()
    nproc_hard: int | None = _uk()
    pids_max: int | None = _uk()  # the container's cgroup pids limit (Docker --pids-limit)


@dataclass
class Disk(_Model):
    """One filesystem of `host.disks`: the paths measured on it, what they are for (`ray_temp`, `ray_spill`, `tmp`,
    `cwd`) and its space; `used_fraction` = 1 - free / total, as Ray's FileSystemMonitor computes it."""

    path: str = _uk()
    paths: list[str] = _uk()
    roles: list[str] = _uk()
    total_gb: float = _uk()
    free_gb: float = _uk()
    used_fraction: float = _uk()


@dataclass
class RayTemp(_Model):
    """`host.ray_temp`: whether the collecting user may create entries in Ray's temp dir (`path`), or in `checked`,
    the nearest existing directory above it while it does not exist; the kernel's answer on the live host only."""

    path: str = _uk()
    checked: str = _uk()
    uid: int = _uk()
    owner_uid: int = _uk()
    mode: str = _uk()
    writable: bool = _uk()


@dataclass
class Preload(_Model):
    """One item of `host.preload`: an `entry` of LD_PRELOAD or /etc/ld.so.preload (`source`), and for an absolute path
    whether the file `exists`, the `machine` its ELF header names (null: not an ELF file) and, when it is missing,
    the files of the same name in the library directories (`alternatives`). Unknown for other entries."""

    entry: str = _uk()
    source: str = _uk()
    exists: bool = _uk()
    machine: str | None = _uk()
    alternatives: list[str] = _uk()


@dataclass
class Dmi(_Model):
    """`host.dmi`: the machine's product identity as its firmware names it (the world-readable strings of
    /sys/class/dmi/id); a field left out could not be read. Never the serial or UUID. Older snapshots lack it."""

    sys_vendor: str = _uk()
    product_name: str = _uk()
    board_name: str = _uk()
    product_version: str = _uk()


@dataclass
class Host(_Model):
    """`host`: the machine the snapshot was taken on (OS, kernel, arch, libc, CPUs, memory, /dev/shm, container,
    resource limits, free disk space)."""

    hostname: str = _uk()
    # the addresses /etc/hosts gives the hostname, in file order, when glibc answers from that file (nsswitch.conf's
    # `hosts:` starts with `files`); [] it names it nowhere; live host only
    hostname_addresses: list[str] = _uk()
    os: str = _uk()
    kernel: str = _uk()
    arch: str = _uk()
    libc: str = _uk()
    cpu_count: int = _uk()
    memory_gb: float = _uk()
    shm_gb: float | None = _uk()
    cwd: str = _uk()
    in_container: bool | None = _uk()
    limits: Limits = _uk()
    disks: list[Disk] = _uk()
    ray_temp: RayTemp = _uk()
    # what the loader is asked to preload into every process (LD_PRELOAD, /etc/ld.so.preload); [] nothing
    preload: list[Preload] = _uk()
    # the server model (DMI); null: the machine has no /sys/class/dmi/id (no SMBIOS)
    dmi: Dmi | None = _uk()


@dataclass
class CxxRuntimeFile(_Model):
    """A libstdc++.so.6 file and the newest version nodes it defines: `glibcxx` "3.4.30" (GLIBCXX_3.4.30),
    `cxxabi` "1.3.13" (CXXABI_1.3.13); null: it defines none (or they could not be read)."""

    path: str = _uk()
    glibcxx: str | None = _uk()
    cxxabi: str | None = _uk()


@dataclass
class CxxRuntime(CxxRuntimeFile):
    """`python.libstdcxx` (rule 10): the libstdc++.so.6 the target interpreter's dynamic loader maps, and `system`,
    the one the ld.so cache lists for its machine (null: none listed). Older snapshots lack it (unknown)."""

    system: CxxRuntimeFile | None = _uk()


@dataclass
class SharedFiles(_Model):
    """`python.shared_files` (rule 11): two distributions in one site directory whose RECORDs list some path with
    different content."""

    dists: list[str] = _uk()  # the two distributions' names
    top_level: str = _uk()  # the top-level name both claim
    location: str = _uk()  # the site directory
    files: int = _uk()  # paths both RECORDs list
    differ: int = _uk()  # of those, with different content (digests compared; two algorithms: via the file)
    examples: list[str] = _uk()  # up to three of the differing paths
    on_disk: str | None = _uk()  # whose digest the smallest differing file has now (null: neither's)


@dataclass
class MissingFiles(_Model):
    """`python.missing_files` (rule 12): a distribution whose RECORD lists files under one of its top-level names
    that are gone from disk."""

    dist: str = _uk()  # the distribution's name
    version: str | None = _uk()  # its version, as its metadata in `location` says
    top_level: str = _uk()  # the top-level name whose files are gone
    location: str = _uk()  # the site directory
    files: int = _uk()  # paths its RECORD lists under that name
    missing: int = _uk()  # of those, not on disk
    examples: list[str] = _uk()  # up to three of the missing paths
    imports_from: str = _uk()  # the other copy `import <top_level>` finds (later on sys.path); absent: none


@dataclass
class ModifiedFile(_Model):
    """A file whose size or digest is not what its distribution's RECORD says (rule 14)."""

    path: str = _uk()  # relative to the site directory
    size: int = _uk()  # on disk now
    expected_size: int | None = _uk()  # what RECORD says (null: RECORD gives none)
    kind: str = _uk()  # "binary" (a shared library, an extension module), "source" (.py) or "file"
    also: list[str] = _uk()  # other distributions here whose RECORD lists the path with other content (rule 11)


@dataclass
class VerifiedDist(_Model):
    """One distribution whose installed files `check --deep` compared with its RECORD (rule 14)."""

    dist: str = _uk()  # its name as its metadata spells it
    version: str | None = _uk()
    location: str = _uk()  # the site directory
    files: int = _uk()  # RECORD rows with a digest inside the site directory (compiled files left out)
    bytes: int = _uk()  # bytes hashed
    modified: int = _uk()  # files whose size or digest differs
    shared: int = _uk()  # of those, another distribution's RECORD here lists with other content (rule 11)
    binary: int = _uk()  # of the others (not shared), shared libraries / extension modules
    missing: int = _uk()  # files not on disk
    unverified: int = _uk()  # files not compared (the time bound hit, unreadable, unknown algorithm)
    unverified_bytes: int = _uk()
    unreadable: int = _uk()  # of the unverified, files this user may not read or stat (EACCES): no timeout helps
    outside: int = _uk()  # rows with a digest outside the site directory (scripts, headers): not compared
    examples: list[ModifiedFile] = _uk()  # up to five modified files, edits before another's copies
    missing_examples: list[str] = _uk()  # up to three missing paths


@dataclass
class SkippedDist(_Model):
    """A distribution `check --deep` asked for whose files were not compared, and why (rule 14)."""

    dist: str = _uk()
    version: str | None = _uk()
    why: str = _uk()  # "editable", "no_digests" (an egg-info install), "no RECORD", ...


@dataclass
class VerifiedFiles(_Model):
    """`python.verified_files` (rule 14, `check --deep` only): installed files compared with their RECORD."""

    seconds: float = _uk()
    budget: float = _uk()  # the bound on hashing, in seconds
    dists: list[VerifiedDist] = _uk()
    skipped: list[SkippedDist] = _uk()
    error: str = _uk()  # the probe gave no answer (then nothing else is known)


@dataclass
class PythonInfo(_Model):
    """`python`: the target interpreter, which is not necessarily the doctor's own."""

    version: str = _uk()
    executable: str = _uk()
    implementation: str = _uk()
    prefix: str = _uk()
    site_packages: list[str] = _uk()
    libstdcxx: CxxRuntime | None = _uk()  # null: the loader finds no libstdc++.so.6
    shared_files: list[SharedFiles] = _uk()  # rule 11: [] when no two distributions overwrote each other's files
    missing_files: list[MissingFiles] = _uk()  # rule 12: [] when no checked file is gone
    # rule 13, how a fix's `pip ...` can run here (older snapshots lack them: fixes print `<exe> -m pip`)
    pip: bool = _uk()  # a distribution named pip is installed (`-m pip` imports it)
    ensurepip: bool = _uk()  # recorded without pip only: `-m ensurepip` can install it
    externally_managed: bool = _uk()  # PEP 668: not a venv, EXTERNALLY-MANAGED in its stdlib; pip refuses
    uv_venv: str | None = _uk()  # the uv version pyvenv.cfg names (`uv venv` made it); null: none / not a venv
    # rule 15, an externally managed interpreter only: {"install"/"uninstall": what turns pip's PEP 668 guard off
    # for that command (`PIP_BREAK_SYSTEM_PACKAGES=1`, a pip.conf)}; {}: nothing does (older snapshots: unknown)
    break_system_packages: dict[str, str] = _uk()
    verified_files: VerifiedFiles = _uk()  # rule 14: `check --deep` / `collect --deep` only
    # --python named this interpreter (false: the doctor's own, examined by default); older snapshots lack it
    named: bool = _uk()


@dataclass
class Package(_Model):
    """One entry of `packages`: an installed distribution as importlib.metadata sees it."""

    version: str | None = None
    location: str | None = _uk()
    editable: bool | None = _uk()
    url: str | None = _uk()
    commit: str | None = _uk()
    installer: str | None = _uk()
    # What the distribution declares (its METADATA); older snapshots lack them.
    requires_python: str | None = _uk()  # Requires-Python; null: the METADATA has none
    requires_dist: list[str] = _uk()  # Requires-Dist lines, exactly as written (markers and extras included)
    top_level: list[str] = _uk()  # importable top-level names (top_level.txt, else derived from RECORD); absent: neither
    metadata: str | None = _uk()  # path of the METADATA file read (the source a finding cites)
    wheel_tags: list[str] = _uk()  # the Tag lines of its WHEEL file; absent: not installed from a wheel, or not read


@dataclass
class GitInfo(_Model):
    """Where a module imported from a git checkout stands (commit, branch, tag, dirty), and for a vllm-ascend
    checkout the vLLM refs its tree names (`.github/vllm-release-tag.commit`, `.github/vllm-main-verified.commit`,
    in every tree since v0.21.0rc1): the vLLM it pairs with, stated by the source itself. Missing when the file is
    absent or its content is not a tag / commit (older snapshots lack them)."""

    commit: str | None = _uk()
    branch: str | None = _uk()
    tag: str | None = _uk()
    dirty: bool | None = _uk()
    vllm_release_tag: str = _uk()  # e.g. "v0.23.0"
    vllm_main_verified: str = _uk()  # a vLLM main commit, 7-40 hex


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

    @property
    def env_is_full(self) -> bool:
        """Does `env` hold every relevant variable that is set (rule 3)? On a complete snapshot, yes; on a
        hand-written one only when it is a capture of a real environment, which always has PATH."""
        return known(self.env) and (self.is_complete or "PATH" in self.env)

    def getenv(self, name: str) -> str | None | Any:
        """Value; None when a full env does not list it (unset); else UNKNOWN (as rule 6 says for packages)."""
        if known(self.env) and name in self.env:
            return self.env[name]
        return None if self.env_is_full else UNKNOWN

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


# -- dumping ---------------------------------------------------------------------------------------------


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


# The loader (type validation of a JSON document against these dataclasses) lives in doctor.snapshot.loader;
# its entry points are re-exported here, where every caller has always found them.
from doctor.snapshot.loader import (  # noqa: E402, F401  (re-exported; after the classes it builds)
    cluster_from_dict,
    load_document,
    parse_document,
    snapshot_from_dict,
)
