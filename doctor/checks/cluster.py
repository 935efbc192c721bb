"""Cross-node checks: what only shows when several nodes are looked at together.

They run once over `CheckContext.nodes` ([(node, snapshot or None, error)]) — a Ray collection, a
cluster file, or several `--from` snapshots. A finding about the relation between nodes has `node=None`
and lists the nodes involved in `evidence.nodes`; a finding about one node's Ray setup names that node.
Skew is reported against the majority: the odd nodes are the ones to change (`doctor.checks.cluster_facts`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from packaging.version import InvalidVersion, Version

from doctor.checks.cluster_facts import (
    ASCEND_PARTS,
    SOURCE_MODULES,
    STACK_PACKAGES,
    Value,
    ascend_fact,
    collect,
    describe_groups,
    device_count,
    expected_npus,
    interfaces,
    is_head,
    left_out_of_skew,
    npu_less,
    odd_ones,
    package_fact,
    python_minor,
    ray_info,
    ray_npu,
    ray_version,
    source_fact,
    text_value,
    visible_devices,
)
from doctor.checks.network import ray_node_ip_findings
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding, short_name
from doctor.snapshot.model import UNKNOWN, Snapshot, known

AREA = "cluster"

# Version skew between nodes: Ascend's msprechecker compares per-node dumps; Ray itself refuses a Ray or
# Python mismatch (node.py check_version_info).
SRC_SKEW = "https://github.com/Ascend/msit/blob/743bc29c4b1165ebbf7357a3f9c4abc4fbc16f6c/msprechecker/README_EN.md"
SRC_RAY_VERSION = "https://github.com/ray-project/ray/blob/db0751709c198542103f931604b2293c0e99256c/python/ray/_private/node.py"
# RayResourcePool.get_placement_groups asks for an `NPU` bundle per worker on Ascend;
# ResourcePoolManager._check_resource_available counts each node's `NPU` resource.
SRC_VERL_NPU = "https://github.com/verl-project/verl/blob/v0.9.0/verl/single_controller/ray/base.py"
# Ray's NPU detection and the ASCEND_RT_VISIBLE_DEVICES it sets per worker.
SRC_RAY_NPU = "https://github.com/ray-project/ray/blob/ad047a724cc854c52c8441a35a01f909ff5d2fec/python/ray/_private/accelerators/npu.py"
# TaskRunner is `ray.remote(num_cpus=1)` and may land on the head ("please make sure main_task is not
# scheduled on head"); verl/utils/device.py decides the device from torch.npu.is_available() in that process.
SRC_HEAD = ("https://github.com/verl-project/verl/blob/v0.7.1/verl/trainer/main_ppo.py; "
            "https://github.com/verl-project/verl/blob/v0.9.0/verl/utils/device.py; "
            "https://github.com/verl-project/verl/blob/v0.9.0/verl/plugin/platform/platform_npu.py")
# HCCL_SOCKET_IFNAME takes prefixes, '=' for exact names and '^' to exclude (HCCL_IF_IP wins); Gloo's
# GLOO_SOCKET_IFNAME and tensorpipe's TP_SOCKET_IFNAME take exact interface names.
SRC_IFNAME = ("https://www.hiascend.com/document/detail/en/canncommercial/800/apiref/envvar/envref_07_0075.html; "
              "https://github.com/pytorch/gloo/blob/aeaea26ca72896ac85e04b7678e5835a903f1e1f/gloo/transport/tcp/device.cc; "
              "https://github.com/pytorch/pytorch/blob/420a5e3d97dc7e8f2d66fec9f00c8019057df052/torch/csrc/distributed/rpc/tensorpipe_agent.cpp")


def _alive(ctx: CheckContext) -> list[tuple[str, Snapshot]]:
    return [(n, s) for n, s, _e in ctx.nodes if s is not None]


def _two_nodes(ctx: CheckContext) -> None:
    """Skew needs two nodes that answered; with fewer there is nothing to compare."""
    if len(_alive(ctx)) < 2:
        skip("fewer than two nodes have a snapshot")


def _skew(ctx: CheckContext, fact: Any, *, id: str, severity: str, components: tuple[str, ...], what: str,
          fix: str, source: str, detail: str = "", commands: tuple[str, ...] = (),
          nodes: list[tuple[str, Snapshot]] | None = None) -> Iterator[Finding]:
    values = collect(_alive(ctx) if nodes is None else nodes, fact)
    odd, groups = odd_ones(values)
    if not odd:
        return
    yield finding(
        id, severity, components,
        f"{what} differs between nodes: {describe_groups(values, groups)}",
        detail=detail,
        evidence={"nodes": odd, "values": {n: v.text for n, v in values.items()}},
        fix=fix, commands=commands, source=source,
    )


# -- reachability ---------------------------------------------------------------------------------------


@check("cluster-nodes-reachable", AREA, cluster=True,
       findings=("cluster-node-timeout", "cluster-node-unreachable"))
def nodes_reachable(ctx: CheckContext) -> Iterator[Finding]:
    """Every node must answer the probe: a node Ray cannot run a task on cannot run verl workers either."""
    for name, snap, err in ctx.nodes:
        if snap is not None:
            continue
        err = err or "no snapshot"
        if err.startswith("timeout"):
            yield finding(
                "cluster-node-timeout", "warning", ("cluster", "ray"),
                f"node {short_name(name)} did not answer the probe in time",
                detail="The probe task was force-cancelled. A node that cannot run a tiny task in time is "
                       "overloaded or hung (sick card, stuck mount); verl workers placed there will stall.",
                evidence={"nodes": [name], "error": err}, node=name,
                fix="Check the node (`ray status -v`, `npu-smi info` on it) and re-run with a larger --ray-timeout.",
            )
        else:
            yield finding(
                "cluster-node-unreachable", "error", ("cluster", "ray"),
                f"node {short_name(name)} could not be probed: {err.splitlines()[0][:200]}",
                detail="Ray could not run a task on this node (it died, its worker crashed, or the task could "
                       "not be scheduled there). verl's workers on it would fail the same way.",
                evidence={"nodes": [name], "error": err}, node=name,
                fix="Restart Ray on that node (`ray stop` then `ray start --address=<head>`) and check its "
                    "raylet log under /tmp/ray/session_latest/logs.",
            )


# -- versions -------------------------------------------------------------------------------------------


@check("cluster-ray-version", AREA, cluster=True,
       findings=("cluster-python-skew", "cluster-ray-version-skew"))
def ray_version_skew(ctx: CheckContext) -> Iterator[Finding]:
    """Ray and the Python minor version must be the same on every node."""
    _two_nodes(ctx)
    yield from _skew(
        ctx, ray_version, id="cluster-ray-version-skew", severity="error", components=("ray", "cluster"),
        what="Ray version", source=SRC_RAY_VERSION,
        detail="Ray refuses processes whose Ray version differs from the cluster's; nodes on another Ray "
               "cannot host verl workers.",
        fix="Install the same Ray version on every node (the head's), then restart Ray on the odd nodes.",
    )
    yield from _skew(
        ctx, python_minor_value, id="cluster-python-skew", severity="error", components=("python", "cluster"),
        what="Python minor version", source=SRC_RAY_VERSION,
        detail="Ray requires the same Python major.minor on the driver and all workers.",
        fix="Use one training environment (same Python minor) on every node.",
    )


def python_minor_value(snap: Snapshot) -> Any:
    v = python_minor(snap)
    if v is UNKNOWN:
        return UNKNOWN
    return Value(str(v.key[1]), v.key)


@check("ray-cluster-version", AREA, findings=("ray-version-differs-from-cluster",))
def ray_cluster_version(ctx: CheckContext) -> Iterator[Finding]:
    """The target interpreter's ray is the release the running Ray cluster was started with (one node: the Ray its
    probe task ran on, or the cluster version a report states, against the `ray` package of the environment)."""
    snap = ctx.snapshot
    cluster = ray_info(snap).get("version")
    mine = snap.version("ray") if known(snap.packages) else None
    if not isinstance(cluster, str) or not cluster or not isinstance(mine, str) or not mine:
        skip("the running Ray cluster's version or this environment's ray is not known")
    try:
        same = Version(cluster) == Version(mine)
    except InvalidVersion:
        same = cluster.strip() == mine.strip()
    if same:
        return
    yield finding(
        "ray-version-differs-from-cluster", "error", ("ray", "cluster"),
        f"this environment's ray {mine} is not the Ray {cluster} the running cluster was started with",
        detail="Ray compares a connecting process's Ray (and Python) version with the cluster's and refuses a mismatch "
               "(`RuntimeError: Version mismatch: The cluster was started with: Ray: ...`): a driver or worker started "
               "from this environment cannot join that cluster.",
        evidence={"ray": mine, "cluster_ray": cluster},
        fix=f"Install ray=={cluster} in this environment, or restart the cluster (`ray stop`, `ray start`) from this "
            f"environment's ray {mine}.",
        source=SRC_RAY_VERSION)


@check("cluster-package-versions", AREA, cluster=True,
       findings=("cluster-package-skew", "cluster-source-skew"))
def package_skew(ctx: CheckContext) -> Iterator[Finding]:
    """Each stack package (and MindSpeed/Megatron source commits) must be the same on every node."""
    _two_nodes(ctx)
    for dist, comp in STACK_PACKAGES:
        nodes = [(n, s) for n, s in _alive(ctx) if not left_out_of_skew(s, dist)]
        yield from _skew(
            ctx, lambda s, d=dist: package_fact(s, d), id="cluster-package-skew", severity="warning",
            components=(comp, "cluster"), what=dist, source=SRC_SKEW, nodes=nodes,
            detail="Workers of one job run the same code on every node; a different version on some nodes "
                   "gives different kernels, numerics or APIs inside one collective.",
            fix=f"Install the same {dist} version on every node (usually the majority's).",
        )
    for module, comp in SOURCE_MODULES:
        yield from _skew(
            ctx, lambda s, m=module: source_fact(s, m), id="cluster-source-skew", severity="warning",
            components=(comp, "cluster"), what=f"{module} source checkout", source=SRC_SKEW,
            detail="The source tree imported on each node is at a different commit (or dirty).",
            fix=f"Check out the same {module} commit on every node (or install it the same way everywhere).",
        )


@check("cluster-ascend-versions", AREA, cluster=True,
       findings=("cluster-cann-skew", "cluster-driver-skew", "cluster-firmware-skew", "cluster-kernels-skew", "cluster-nnal-skew"))
def ascend_skew(ctx: CheckContext) -> Iterator[Finding]:
    """CANN toolkit, kernels, NNAL, driver and firmware must match across nodes."""
    _two_nodes(ctx)
    labels = {"toolkit": "CANN toolkit", "kernels": "CANN kernels (ops) package", "nnal": "NNAL/ATB",
              "driver": "Ascend driver", "firmware": "Ascend firmware"}
    for part, comp, kind in ASCEND_PARTS:
        nodes = [(n, s) for n, s in _alive(ctx) if not left_out_of_skew(s, part)]
        yield from _skew(
            ctx, lambda s, p=part, k=kind: ascend_fact(s, p, k), id=f"cluster-{comp}-skew", severity="warning",
            components=(comp, "cluster"), what=labels[part], source=SRC_SKEW, nodes=nodes,
            detail="HCCL collectives and the torch_npu build expect the same Ascend software on every rank; "
                   "nodes that differ are off the matrix the others were verified on.",
            fix=f"Install the same {labels[part]} version on every node (usually the majority's).",
        )


# -- Ray resources --------------------------------------------------------------------------------------


@check("cluster-ray-npu-resource", AREA, cluster=True,
       findings=("cluster-npu-resource-high", "cluster-npu-resource-low", "cluster-npu-resource-missing"))
def npu_resource(ctx: CheckContext) -> Iterator[Finding]:
    """Each node's Ray `NPU` resource must match the NPUs it has (limited by ASCEND_RT_VISIBLE_DEVICES)."""
    looked = False
    for name, snap in _alive(ctx):
        have = device_count(snap)
        want = expected_npus(snap)
        ray_n = ray_npu(snap)
        if want is UNKNOWN or ray_n is UNKNOWN or want == 0:
            continue
        looked = True
        vis = visible_devices(snap)
        ev = {"nodes": [name], "npus": have, "expected_ray_npu": want, "ray_npu": ray_n}
        if isinstance(vis, list):
            ev["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(vis)
        start = f"ray start --address=<head> --resources='{{\"NPU\": {want}}}'"
        if ray_n is None:
            yield finding(
                "cluster-npu-resource-missing", "error", ("ray", "npu", "cluster"),
                f"Ray advertises no NPU resource on node {short_name(name)}, which has {want} NPU(s)",
                detail="verl asks Ray for `NPU` resources for every worker; this node will get none and the "
                       "job waits for resources (or fails 'Total available GPUs ... is less than total desired').",
                evidence=ev, node=name, source=SRC_VERL_NPU,
                fix=f"Restart Ray on this node advertising its NPUs: `ray stop`, then `{start}` (Ray counts "
                    "NPUs itself only when AscendCL or /dev/davinci* is visible to `ray start`, e.g. not in a "
                    "container without the devices).",
            )
        elif ray_n < want:
            yield finding(
                "cluster-npu-resource-low", "warning", ("ray", "npu", "cluster"),
                f"Ray advertises {ray_n:g} NPU(s) on node {short_name(name)}, which has {want}",
                detail="Only that many verl workers can be placed on this node; the rest of its NPUs idle and a "
                       "layout that assumes n_gpus_per_node NPUs per node will not be scheduled.",
                evidence=ev, node=name, source=SRC_VERL_NPU,
                fix=f"Restart Ray on this node with `{start}`, or set trainer.n_gpus_per_node to {ray_n:g}.",
            )
        elif ray_n > want:
            yield finding(
                "cluster-npu-resource-high", "warning", ("ray", "npu", "cluster"),
                f"Ray advertises {ray_n:g} NPU(s) on node {short_name(name)}, which has only {want}",
                detail="Ray will hand out NPU slots that do not exist; workers placed on them fail to open "
                       "their device.",
                evidence=ev, node=name, source=SRC_RAY_NPU,
                fix=f"Restart Ray on this node with `{start}` (or fix ASCEND_RT_VISIBLE_DEVICES there).",
            )
    if not looked:
        skip("no node records both its NPUs and its Ray NPU resource")


@check("cluster-head-torch-npu", AREA, cluster=True, findings=("cluster-head-torch-npu-without-npu",))
def head_without_npu(ctx: CheckContext) -> Iterator[Finding]:
    """A head node without NPUs should not carry torch_npu: verl's TaskRunner may land there."""
    if not any(is_head(s) for _, s in _alive(ctx)):
        skip("no node is known to be the Ray head")
    for name, snap in _alive(ctx):
        if not is_head(snap) or snap.has_package("torch-npu") is not True:
            continue
        n = device_count(snap)
        ray_n = ray_npu(snap)
        if n is UNKNOWN:
            if ray_n is UNKNOWN or ray_n is not None:
                continue
        elif n != 0:
            continue
        yield finding(
            "cluster-head-torch-npu-without-npu", "warning", ("torch-npu", "cluster"),
            f"head node {short_name(name)} has torch_npu installed but no NPU",
            detail="verl's TaskRunner (the driver of the training loop) can be scheduled on the head; there "
                   "`import torch_npu` needs the Ascend driver libraries and torch.npu.is_available() is False, "
                   "so device detection in that process differs from the workers' (verl before 0.9 decides by "
                   "torch.npu.is_available(); 0.9 takes the NPU platform when torch_npu imports and falls back to "
                   "'nvidia' when it does not, so removing torch_npu from the head is no fix).",
            evidence={"nodes": [name], "torch-npu": snap.version("torch-npu"), "npus": 0 if n is UNKNOWN else n},
            node=name, source=SRC_HEAD,
            fix="Start the head with --num-cpus=0 so no verl actor runs there (`ray start --head --num-cpus=0 ...`), "
                "or run the head on an NPU node.",
        )


# verl 0.9.1's TaskRunner is a plain `@ray.remote` actor, which Ray schedules only on a node with a free CPU (actors
# take 1 CPU to be placed). In that process verl picks its platform on its own: NPU only when torch_npu imports, else
# the 'nvidia' fallback, and RayResourcePool.get_placement_groups asks every worker bundle for that platform's Ray
# resource ("GPU"), which no node of an Ascend cluster offers. The worker groups never get placed.
SRC_CPU_NODE = ("https://github.com/verl-project/verl/blob/483b8a009ba3a97563edee3a19887e4862b8094a/verl/plugin/platform/platform_manager.py; "
                "https://github.com/verl-project/verl/blob/483b8a009ba3a97563edee3a19887e4862b8094a/verl/single_controller/ray/base.py; "
                "https://docs.ray.io/en/releases-2.47.1/ray-core/scheduling/resources.html")


@check("cluster-npu-less-node", AREA, cluster=True, findings=("cluster-npu-less-node-takes-taskrunner",))
def npu_less_node_cpus(ctx: CheckContext) -> Iterator[Finding]:
    """A node without NPUs that offers CPUs in a cluster with NPU nodes, where torch_npu cannot be imported: verl's
    TaskRunner may be placed there and then asks Ray for GPUs."""
    alive = _alive(ctx)
    if not any(ray_npu(s) for _, s in alive):
        skip("no node offers Ray an NPU resource")
    for name, snap in alive:
        res = ray_info(snap).get("resources")
        cpus = res.get("CPU") if isinstance(res, dict) else None
        if not npu_less(snap) or not isinstance(cpus, (int, float)) or not cpus:
            continue
        if snap.has_package("torch-npu") is True and snap.ascend_part("toolkit") is not None:
            continue  # torch_npu imports there: verl takes the NPU platform
        role = "head node" if is_head(snap) else "node"
        yield finding(
            "cluster-npu-less-node-takes-taskrunner", "error", ("cluster", "ray"),
            f"{role} {short_name(name)} has no NPU but offers Ray {cpus:g} CPU(s): verl's TaskRunner can be placed "
            "there and would ask for GPUs",
            detail="verl's TaskRunner, the driver of the training loop, is a Ray actor that needs one free CPU and no "
                   "accelerator, so Ray may place it on this node. In that process verl chooses its platform itself: "
                   "NPU only when torch_npu imports (it needs CANN), otherwise it falls back to 'nvidia', and the "
                   "worker groups' placement groups then ask for a `GPU` in every bundle, which no node offers: "
                   "the workers are never placed. Installing CANN here is not the fix; keeping verl off this node is.",
            evidence={"nodes": [name], "CPU": cpus, "torch-npu": snap.version("torch-npu") if
                      snap.has_package("torch-npu") else None},
            node=name, source=SRC_CPU_NODE,
            fix="Restart Ray on this node with --num-cpus=0 (the head: `ray start --head --num-cpus=0 ...`) so no "
                "verl actor is placed there, or run the head on an NPU node.",
        )


# -- environment and network ----------------------------------------------------------------------------

ENV_PREFIXES = ("ASCEND_", "HCCL_", "GLOO_")
ENV_NAMES = ("LD_LIBRARY_PATH", "PYTHONPATH")
# Differ per node by design: each node's own address, and interface names (checked against the node's NICs).
ENV_PER_NODE = re.compile(r"^(HCCL_IF_IP|.*_SOCKET_IFNAME)$")


def _relevant(name: str) -> bool:
    return (name.startswith(ENV_PREFIXES) or name in ENV_NAMES) and not ENV_PER_NODE.match(name)


@check("cluster-env", AREA, cluster=True, findings=("cluster-env-skew",))
def env_skew(ctx: CheckContext) -> Iterator[Finding]:
    """Ascend/HCCL/Gloo variables, LD_LIBRARY_PATH and PYTHONPATH should be the same on every node."""
    nodes = [(n, s) for n, s in _alive(ctx) if known(s.env)]
    if len(nodes) < 2:
        skip("fewer than two nodes have their environment in the snapshot")
    names = sorted({k for _n, s in nodes for k in s.env if _relevant(k)})
    for var in names:
        # a partial snapshot that does not list the variable does not say it is unset: leave that node out
        values = {n: text_value(s.getenv(var)) for n, s in nodes if s.getenv(var) is not UNKNOWN}
        odd, groups = odd_ones(values)
        if not odd:
            continue
        yield finding(
            "cluster-env-skew", "warning", ("env", "cluster"),
            f"{var} differs between nodes: {describe_groups(values, groups)}",
            detail="Ray workers inherit the environment of the raylet that started them; a node where "
                   "set_env.sh was not sourced (or sourced for another CANN) gives its workers different "
                   "libraries or HCCL settings.",
            evidence={"nodes": odd, "variable": var, "values": {n: v.text for n, v in values.items()}},
            key=var, source=SRC_SKEW,
            fix=f"Set {var} the same way on every node before `ray start` (source the same set_env.sh), "
                "then restart Ray on the odd nodes.",
        )


@check("cluster-ray-node-ips", AREA, cluster=True, findings=("ray-node-address-loopback", "ray-node-address-duplicate"))
def ray_node_ips(ctx: CheckContext) -> Iterator[Finding]:
    """Every node is known to Ray by its own, non-loopback address (the node IP the collector recorded)."""
    ips = {n: ip for n, s in _alive(ctx) if known(s.ray) and isinstance(s.ray, dict)
           and isinstance(ip := s.ray.get("node_ip"), str)}
    if len(ips) < 2:
        skip("fewer than two nodes have the address Ray knows them by in the snapshot")
    yield from ray_node_ip_findings(ips)


IFNAME_VARS = ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")


def ifname_matches(var: str, value: str, names: list[str]) -> bool | None:
    """Would `var=value` select an interface among `names`? None when the value only excludes."""
    v = value.strip()
    if not v:
        return None
    if v.startswith("^"):
        return None  # an exclude list selects "anything else": nothing to verify
    exact = var in ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME")
    if v.startswith("="):
        exact, v = True, v[1:]
    wanted = [p.strip() for p in v.split(",") if p.strip()]
    if exact:
        return any(w in names for w in wanted)
    return any(n.startswith(w) for w in wanted for n in names)


@check("cluster-socket-ifname", AREA, cluster=True,
       findings=("cluster-socket-ifname-absent-elsewhere", "cluster-socket-ifname-missing"))
def socket_ifname(ctx: CheckContext) -> Iterator[Finding]:
    """A *_SOCKET_IFNAME value that matches interfaces on some nodes but not on others (the per-node
    check `socket-ifname-missing` covers a node on its own; this one names the nodes where it breaks)."""
    nodes = [(n, s) for n, s in _alive(ctx) if known(s.env)]
    if not nodes:
        skip("no node has its environment in the snapshot")
    for var in IFNAME_VARS:
        settings = {n: s.env[var] for n, s in nodes if s.env.get(var)}
        if not settings:
            continue
        for value in sorted(set(settings.values())):
            missing_set: list[str] = []
            missing_other: list[str] = []
            present: list[str] = []
            for n, s in _alive(ctx):
                names = interfaces(s)
                if names is UNKNOWN:
                    continue
                if var == "HCCL_SOCKET_IFNAME" and known(s.env) and s.env.get("HCCL_IF_IP"):
                    continue  # HCCL_IF_IP takes precedence on that node
                own = s.env.get(var) if known(s.env) else UNKNOWN
                if own is not None and own is not UNKNOWN and own != value:
                    continue  # that node uses its own value; checked in its own round
                match = ifname_matches(var, value, names)
                if match is False:
                    (missing_set if own == value else missing_other).append(n)
                elif match:
                    present.append(n)
            if not present:
                continue  # absent everywhere: the per-node check (socket-ifname-missing) reports each node
            if missing_set:
                yield finding(
                    "cluster-socket-ifname-missing", "error", ("network", "hccl", "cluster"),
                    f"{var}={value} names an interface that exists on {', '.join(map(short_name, present))} "
                    f"but not on {', '.join(map(short_name, missing_set))}",
                    detail="The interface exists on some nodes but not on these, so the setting was copied "
                           "from a node with other NIC names; the collective library will not find the interface "
                           "there and the communicator cannot be created (HCCL/Gloo init fails or hangs).",
                    evidence={"nodes": missing_set, "variable": var, "value": value, "present_on": present,
                              "set_on": sorted(n for n, v in settings.items() if v == value),
                              "interfaces": {n: interfaces(s) for n, s in _alive(ctx) if n in missing_set}},
                    key=var, source=SRC_IFNAME,
                    fix=f"On those nodes set {var} to an interface they have (see evidence.interfaces), or use "
                        "a prefix that matches the NIC names on every node.",
                )
            if missing_other:
                yield finding(
                    "cluster-socket-ifname-absent-elsewhere", "warning", ("network", "hccl", "cluster"),
                    f"{var}={value} (set on {', '.join(sorted(short_name(n) for n, v in settings.items() if v == value))}) "
                    f"names no interface on {', '.join(map(short_name, missing_other))}",
                    detail="If this value reaches the other nodes' workers (a runtime_env, a launcher that "
                           "exports it everywhere), their collectives cannot find the interface.",
                    evidence={"nodes": missing_other, "variable": var, "value": value, "present_on": present,
                              "interfaces": {n: interfaces(s) for n, s in _alive(ctx) if n in missing_other}},
                    key=var, source=SRC_IFNAME,
                    fix=f"Use a {var} value that matches an interface on every node (a common prefix), or set "
                        "it per node.",
                )
