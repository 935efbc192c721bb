"""Facts about the NPUs' RoCE ports (`ascend.hccn`) that the NPU-network checks, the cross-node checks and the
node table share. Pure functions of a snapshot; an unknown fact is UNKNOWN, never a guess."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

from doctor.checks.cluster_facts import Value, device_count
from doctor.snapshot.model import UNKNOWN, Snapshot, known

HCCN_SRC = ("https://github.com/verylucky01/driver/blob/e29d066fd6ee84cae705e2000a0387d721d3aaa0/"
            "src/custom/network/hccn/ascend910B/")
MIND_CLUSTER = "https://github.com/Ascend/mind-cluster/blob/v26.1.0/"
VLLM_ASCEND_MULTINODE = "https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/installation.md"
SRC_HCCN_CMD = ("https://github.com/verylucky01/driver/blob/e29d066fd6ee84cae"
                "705e2000a0387d721d3aaa0/src/custom/network/hccn/ascend910B/hccn_tool/cmd.c")
SRC_HCCN_TOOL_OPS = ("https://github.com/verylucky01/driver/blob/e29d066fd6ee84cae"
                "705e2000a0387d721d3aaa0/src/custom/network/hccn/ascend910B/hccn_tool/tool_ops.c")
SRC_HCCN_CFG = ("https://github.com/verylucky01/driver/blob/e29d066fd6ee84cae"
                "705e2000a0387d721d3aaa0/src/custom/network/hccn/ascend910B/hccn_tool/cfg.c")
SRC_FAULTDIAG_LOGS = "https://github.com/Ascend/mind-cluster/blob/v26.1.0/docs/en/faultdiag/user_guide/03_collecting_logs.md"
SRC_EXPORTER_HCCN = ("https://github.com/Ascend/mind-cluster/blob/v26.1.0/"
                     "component/ascend-common/devmanager/hccn/hccn_tool.go")

# `net health status` values that mean the port's health probe passed. hccn_tool's own table
# (g_net_health_status in HCCN_SRC hccn_tool/tool_ops.c) has Success, Socket fail, Receive timeout,
# Unreachable, Time exceeded, Fault, Init, Thread error, Detect ip set, Unknown. Only Success is healthy:
# ascend-faultdiag's threshold (MIND_CLUSTER component/ascend-faultdiag/toolkit_src/ascend_fd_tk/core/config/
# threshold_config.py, NET_HEALTH_THRESHOLD) and vllm-ascend's multi-node check ("the results must all be
# success") say so. `Init` means the probe has not run yet (no netdetect address set); npu-exporter counts it
# as normal (GetNetworkHealthy: NetworkInit or NetworkSuccess), so it is reported as info only.
HEALTHY = frozenset({"success"})
NOT_PROBED = frozenset({"init"})

# Link drops since the driver started above which a port counts as flapping. hccn_tool counts link-up events
# and keeps the last 10 changes (LINK_STAT_MAX_IDX, HCCN_SRC hccn_tool/tool.c). Every healthy port in Huawei's
# own recorded dumps and docs shows "link up count : 2" with one DOWN between the two UPs: the negotiation at
# bring-up (MIND_CLUSTER ascend-faultdiag test data npu_info_before.txt, docs/en/faultdiag/user_guide/
# 03_collecting_logs.md). So one drop is the baseline, a second may be a cable re-seat or switch reboot, and
# three or more drops mean the link keeps failing; HCCL then aborts with error CQEs (EI0013) mid-job.
FLAP_THRESHOLD = 3


def hccn(snap: Snapshot) -> Any:
    """`ascend.hccn`, None when the host has no Ascend software, UNKNOWN when not probed."""
    return snap.ascend_part("hccn")


def ports(snap: Snapshot) -> list[Any] | Any:
    """The probed RoCE ports (HccnDevice list), UNKNOWN when hccn_tool did not run or gave nothing."""
    h = hccn(snap)
    if not known(h) or h is None or not known(h.devices) or not isinstance(h.devices, list):
        return UNKNOWN
    return h.devices


def has_npus(snap: Snapshot) -> bool | None:
    n = device_count(snap)
    return None if n is UNKNOWN else n > 0


def fact(obj: Any, name: str) -> Any:
    """obj.name, UNKNOWN when obj lacks it; unlike checks.facts.val it keeps UNKNOWN (not probed) apart from
    None (probed, absent), which these checks need (`"address": null` is a finding, a missing key is not)."""
    return getattr(obj, name, UNKNOWN)


def network(address: Any, netmask: Any) -> ipaddress.IPv4Network | None:
    if not isinstance(address, str) or not isinstance(netmask, str):
        return None
    try:
        return ipaddress.IPv4Interface(f"{address}/{netmask}").network
    except ValueError:
        return None


def port_network(p: Any) -> ipaddress.IPv4Network | None:
    return network(fact(p, "address"), fact(p, "netmask"))


def flaps(p: Any) -> int | None:
    """Link drops since the driver started: the printed down count, else up count - 1."""
    down, up = fact(p, "link_down_count"), fact(p, "link_up_count")
    if isinstance(down, int):
        return down
    return max(up - 1, 0) if isinstance(up, int) else None


def addressed(snap: Snapshot) -> list[Any]:
    """Ports with a known address (empty when unknown)."""
    ps = ports(snap)
    return [p for p in ps if isinstance(fact(p, "address"), str)] if isinstance(ps, list) else []


def describe(devs: Iterable[int]) -> str:
    ids = sorted(set(devs))
    return ("NPU " if len(ids) == 1 else "NPUs ") + ", ".join(str(i) for i in ids)


def severity(cluster: bool) -> str:
    """On one host these only break multi-node jobs (intra-node traffic goes over HCCS): warning; in a
    cluster check they break the job: error."""
    return "error" if cluster else "warning"


def why(cluster: bool) -> str:
    if cluster:
        return "This node's NPUs cannot exchange HCCL traffic with the other nodes: the multi-node job will fail."
    return ("A single-host job does not need it (NPUs of one server talk over HCCS), but a multi-node job "
            "will fail: HCCL sends every cross-node collective through these RoCE ports.")


def reachable_static(src: Any, dst_address: str, routes: Sequence[Any] = ()) -> bool | None:
    """Can port `src` reach `dst_address` by its configuration: same subnet, a default gateway, or a
    static route covering it? None when the source's subnet is unknown."""
    net = port_network(src)
    if net is None:
        return None
    try:
        dst = ipaddress.IPv4Address(dst_address)
    except ValueError:
        return None
    if dst in net or isinstance(fact(src, "gateway"), str):
        return True
    for r in routes:
        rnet = network(fact(r, "address"), fact(r, "netmask"))
        if rnet is not None and dst in rnet:
            return True
    return False


def conf_routes(snap: Snapshot, dev: int) -> list[Any]:
    h = hccn(snap)
    conf = fact(h, "conf") if known(h) and h is not None else UNKNOWN
    if not known(conf) or conf is None or not isinstance(fact(conf, "devices"), list):
        return []
    for d in conf.devices:
        if fact(d, "id") == dev:
            return list(fact(d, "routes")) if isinstance(fact(d, "routes"), list) else []
    return []


# -- the node table's columns -----------------------------------------------------------------------------


def ports_up_value(snap: Snapshot) -> Any:
    """`7/8`: RoCE ports UP out of those probed."""
    ps = ports(snap)
    if not isinstance(ps, list) or not ps:
        return UNKNOWN
    links = [fact(p, "link") for p in ps]
    if not all(isinstance(x, str) for x in links):
        return UNKNOWN
    up = sum(1 for x in links if x == "UP")
    return Value(f"{up}/{len(ps)}", ("n", up, len(ps)))


def speed_value(snap: Snapshot) -> Any:
    """The ports' speed (`200G`), or the distinct speeds when they differ (`100G,200G`)."""
    ps = ports(snap)
    if not isinstance(ps, list):
        return UNKNOWN
    speeds = sorted({s for p in ps if isinstance(s := fact(p, "speed_mbps"), int)})
    if not speeds:
        return UNKNOWN
    return Value(",".join(f"{s // 1000}G" if s % 1000 == 0 else f"{s}M" for s in speeds), ("speeds", tuple(speeds)))


def subnet_value(snap: Snapshot) -> Any:
    """The NPU subnets (`10.0.0.0/24 +7` when there are several)."""
    nets = sorted({str(n) for p in addressed(snap) if (n := port_network(p)) is not None})
    if not nets:
        return UNKNOWN
    text = nets[0] + (f" +{len(nets) - 1}" if len(nets) > 1 else "")
    return Value(text, ("nets", tuple(nets)))
