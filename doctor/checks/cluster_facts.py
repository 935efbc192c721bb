"""Per-node facts compared across a cluster, and the rule for which nodes are the odd ones.

Shared by the cross-node checks (`doctor.checks.cluster`) and the node × component table
(`doctor.cluster.table`), so the table highlights exactly the cells the findings talk about.
Pure functions over snapshots; versions are compared as parsed versions, never as strings.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from doctor.knowledge.versions import CannVersion, DriverVersion, parse_pkg_version
from doctor.report import short_name
from doctor.snapshot.model import UNKNOWN, Snapshot, known

NOT_INSTALLED = "not installed"
UNSET = "unset"


class Value(NamedTuple):
    """A fact as shown (`text`) and as compared (`key`): `2.5.1` and `2.5.1.0` are one value."""

    text: str
    key: Any

    def __str__(self) -> str:
        return self.text


def pkg_value(text: str | None) -> Value:
    if text is None:
        return Value(NOT_INSTALLED, ("absent",))
    v = parse_pkg_version(text)
    return Value(text, ("v", v) if v is not None else ("raw", text))


def ascend_value(text: str | None, kind: Any = CannVersion) -> Value:
    if text is None:
        return Value(NOT_INSTALLED, ("absent",))
    v = kind.try_parse(text)
    return Value(text, ("v", v) if v is not None else ("raw", text.strip().lower()))


def text_value(text: str | None, absent: str = UNSET) -> Value:
    return Value(absent if text is None else text, ("absent",) if text is None else ("raw", text))


# -- facts of one snapshot ------------------------------------------------------------------------------

# Distributions whose version must agree across nodes; (distribution, component of the vocabulary).
STACK_PACKAGES: tuple[tuple[str, str], ...] = (
    ("torch", "torch"),
    ("torch-npu", "torch-npu"),
    ("torchvision", "torchvision"),
    ("vllm", "vllm"),
    ("vllm-ascend", "vllm-ascend"),
    ("triton", "triton"),
    ("triton-ascend", "triton-ascend"),
    ("mindspeed", "mindspeed"),
    ("megatron-core", "megatron"),
    ("mbridge", "mbridge"),
    ("transformer-engine", "transformer-engine"),
    ("verl", "verl"),
    ("transformers", "transformers"),
    ("numpy", "numpy"),
)

# Source trees (often on PYTHONPATH, not installed) whose git commit matters as much as a version.
SOURCE_MODULES: tuple[tuple[str, str], ...] = (("mindspeed", "mindspeed"), ("megatron", "megatron"))


def package_fact(snap: Snapshot, dist: str) -> Value | Any:
    """The installed version, "not installed" (complete snapshot), or UNKNOWN."""
    v = snap.version(dist)
    if v is UNKNOWN:
        return UNKNOWN
    if v is None and snap.package(dist) is not None:
        return UNKNOWN  # listed without a version: cannot compare
    return pkg_value(v)


def source_fact(snap: Snapshot, module: str) -> Value | Any:
    """`<version>@<commit12>` of a module's first origin when it is a git checkout, else UNKNOWN."""
    m = snap.module(module)
    if not known(m) or m is None or not known(m.git) or m.git is None:
        return UNKNOWN
    commit = m.git.commit if known(m.git.commit) else None
    if not commit:
        return UNKNOWN
    ver = m.version if known(m.version) and m.version else "?"
    dirty = "+dirty" if known(m.git.dirty) and m.git.dirty else ""
    return Value(f"{ver}@{commit[:12]}{dirty}", ("raw", commit, bool(dirty)))


ASCEND_PARTS: tuple[tuple[str, str, type], ...] = (
    # (ascend.<part>, component, version type)
    ("toolkit", "cann", CannVersion),
    ("kernels", "kernels", CannVersion),
    ("nnal", "nnal", CannVersion),
    ("driver", "driver", DriverVersion),
    ("firmware", "firmware", DriverVersion),
)


def ascend_fact(snap: Snapshot, part: str, kind: Any = CannVersion) -> Value | Any:
    comp = snap.ascend_part(part)
    if comp is UNKNOWN:
        return UNKNOWN
    if comp is None:
        return ascend_value(None, kind)
    if not known(comp.version):
        return UNKNOWN
    return ascend_value(comp.version, kind)


def python_minor(snap: Snapshot) -> Value | Any:
    if not known(snap.python) or not known(snap.python.version) or not snap.python.version:
        return UNKNOWN
    parts = snap.python.version.split(".")
    minor = ".".join(parts[:2])
    return Value(snap.python.version, ("raw", minor))


def ray_info(snap: Snapshot) -> dict[str, Any]:
    return snap.ray if known(snap.ray) and isinstance(snap.ray, dict) else {}


def ray_version(snap: Snapshot) -> Value | Any:
    """The Ray version the node's worker runs (from the Ray task), else the installed `ray` package."""
    v = ray_info(snap).get("version")
    if isinstance(v, str) and v:
        return pkg_value(v)
    return package_fact(snap, "ray")


def ray_npu(snap: Snapshot) -> float | None | Any:
    """The node's Ray `NPU` resource: a number, None when Ray advertises none, UNKNOWN without Ray facts."""
    res = ray_info(snap).get("resources")
    if not isinstance(res, dict):
        return UNKNOWN
    v = res.get("NPU")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def is_head(snap: Snapshot) -> bool:
    return bool(ray_info(snap).get("is_head"))


def device_count(snap: Snapshot) -> int | Any:
    """NPU chips the node has: npu-smi's device list, else the /dev/davinciN files; UNKNOWN otherwise."""
    devices = snap.ascend_part("devices")
    if snap.ascend is None:
        return 0
    if known(devices) and isinstance(devices, list):
        smi = snap.ascend_part("npu_smi")
        if devices or (known(smi) and smi is not None and smi.status == "ok"):
            return len(devices)
    files = snap.ascend_part("device_files")
    if known(files) and isinstance(files, list):
        import re

        return sum(1 for f in files if re.search(r"/davinci\d+$", f))
    return UNKNOWN


def npu_less(snap: Snapshot) -> bool:
    """A Ray node with no NPU (npu-smi lists none, no /dev/davinciN, no Huawei accelerator on PCI) to which Ray gives
    no `NPU` resource: verl places no NPU worker there (a CPU head). False when either is not known."""
    if ray_npu(snap) is not None or device_count(snap) != 0:
        return False
    pci = snap.ascend_part("pci")
    return known(pci) and not pci


def left_out_of_skew(snap: Snapshot, part: str) -> bool:
    """Whether a node's value of `part` (an ascend.<part>, "torch-npu" or "npus") is left out of the skew findings
    and the table's odd marks: an NPU-less node needs no Ascend software, torch-npu or NPUs (cluster-head-torch-npu
    asks for torch-npu to stay off such a head), so their absence there is no skew."""
    if not npu_less(snap):
        return False
    if part == "npus":
        return True
    if part == "torch-npu":
        return snap.has_package(part) is False
    return part in {p for p, _label, _kind in ASCEND_PARTS} and snap.ascend_part(part) is None


RUNS_NOTHING = "a Ray node without NPUs that offers no NPU or CPU (ray start --num-cpus=0): nothing of verl runs here"


def runs_nothing(snap: Snapshot) -> bool:
    """An NPU-less Ray node that also offers no CPU (`ray start --num-cpus=0`, the head cluster-head-torch-npu asks
    for): no verl actor or task is scheduled there, so it needs neither CANN nor an NPU."""
    res = ray_info(snap).get("resources")
    return npu_less(snap) and isinstance(res, dict) and not res.get("CPU")


CPU_WORK = ("a Ray node without NPUs: verl places no NPU worker here, and what its CPUs may take (verl's TaskRunner) "
            "is judged by cluster-npu-less-node")


def npu_less_skip(snap: Snapshot) -> str | None:
    """Why a node's CANN and NPU checks do not apply, or None: an NPU-less Ray node runs no NPU worker; with no CPU
    (`ray start --num-cpus=0`) it runs nothing of verl, with CPUs the cluster check says what can land there."""
    if runs_nothing(snap):
        return RUNS_NOTHING
    return CPU_WORK if npu_less(snap) else None


def visible_devices(snap: Snapshot) -> list[str] | None | Any:
    """ASCEND_RT_VISIBLE_DEVICES as a list of ids, None when unset, UNKNOWN when env was not collected."""
    v = snap.getenv("ASCEND_RT_VISIBLE_DEVICES")
    if v is UNKNOWN or v is None:
        return v
    return [p.strip() for p in v.split(",") if p.strip()]


def expected_npus(snap: Snapshot) -> int | Any:
    """NPUs Ray should advertise on this node: its chips, limited by ASCEND_RT_VISIBLE_DEVICES (Ray's NPU
    detection honours that variable: ray/_private/accelerators/npu.py)."""
    n = device_count(snap)
    if n is UNKNOWN:
        return UNKNOWN
    vis = visible_devices(snap)
    if isinstance(vis, list):
        return min(n, len(vis))
    return n


def interfaces(snap: Snapshot) -> list[str] | Any:
    if not known(snap.network) or not known(snap.network.interfaces):
        return UNKNOWN
    return [i.name for i in snap.network.interfaces if known(i.name)]


# -- comparing ------------------------------------------------------------------------------------------


def odd_ones(values: Mapping[str, Value]) -> tuple[list[str], dict[Any, list[str]]]:
    """Group nodes by value; the odd nodes are those outside the largest group (all but the first-seen
    group on a tie). Returns ([odd nodes], {key: [nodes]}); no odd nodes when all agree."""
    groups: dict[Any, list[str]] = {}
    for node, v in values.items():
        groups.setdefault(v.key, []).append(node)
    if len(groups) <= 1:
        return [], groups
    majority = max(groups, key=lambda k: len(groups[k]))  # max keeps the first on ties
    odd = [n for k, ns in groups.items() if k != majority for n in ns]
    return odd, groups


def describe_groups(values: Mapping[str, Value], groups: Mapping[Any, Sequence[str]]) -> str:
    """`8.3.RC1 on a, b; 8.5.0 on c` (largest group first)."""
    parts = []
    for _key, nodes in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        text = values[nodes[0]].text
        parts.append(f"{text} on {', '.join(short_name(n) for n in nodes)}")
    return "; ".join(parts)


def collect(nodes: Iterable[tuple[str, Snapshot]], fact: Callable[[Snapshot], Any]) -> dict[str, Value]:
    """{node: value} for the nodes where the fact is known."""
    out: dict[str, Value] = {}
    for name, snap in nodes:
        v = fact(snap)
        if v is not UNKNOWN and isinstance(v, Value):
            out[name] = v
    return out


# Columns of the node × component table: (header, fact).
def table_columns() -> list[tuple[str, Callable[[Snapshot], Any]]]:
    cols: list[tuple[str, Callable[[Snapshot], Any]]] = [
        (label, functools.partial(ascend_fact, part=part, kind=kind)) for part, label, kind in ASCEND_PARTS
    ]
    cols.append(("npus", lambda s: _count_value(device_count(s))))
    cols.append(("ray NPU", lambda s: _npu_value(ray_npu(s))))
    cols.append(("python", python_minor))
    cols.append(("ray", ray_version))
    for dist, _comp in STACK_PACKAGES:
        cols.append((dist, functools.partial(package_fact, dist=dist)))
    from doctor.checks.npu_net_facts import ports_up_value, speed_value, subnet_value

    cols += [("roce up", ports_up_value), ("roce speed", speed_value), ("roce subnets", subnet_value)]
    return cols


def _count_value(n: Any) -> Any:
    return UNKNOWN if n is UNKNOWN else Value(str(n), ("n", n))


def _npu_value(n: Any) -> Any:
    if n is UNKNOWN:
        return UNKNOWN
    if n is None:
        return Value("none", ("n", 0))
    return Value(f"{n:g}", ("n", n))
