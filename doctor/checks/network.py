"""Distributed set-up: HCCL timeouts and ports, socket interface names, /dev/shm."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Any

from packaging.version import Version

from doctor.checks.cluster_facts import npu_less_skip
from doctor.checks.facts import absent, cann, env, env_known, env_unset, installed, public, pver, val
from doctor.checks.runner import CheckContext, check, skip
from doctor.knowledge import chips
from doctor.knowledge.hccl_env import (
    CONNECT_TIMEOUT,
    CONNECT_TIMEOUT_RANGE,
    CONNECT_TIMEOUT_SOURCE,
    socket_port_ranges,
)
from doctor.knowledge.versions import CannVersion
from doctor.report import Finding, finding
from doctor.snapshot.model import known

HCCL_DEFAULT_BASE_PORT = 60000
HCCL_PORTS_PER_HOST = 16  # one listen port per device: base .. base+15 (A3 nodes have 16 chips)
# From CANN 9.1.0 HCCL's own documentation says it takes 32 ports from the base ("默认占用以该端口起始的32个端口",
# 60000-60031 by default) when a communicator is created from root info; no earlier tag of hicann/hccl documents it.
HCCL_PORTS_FROM_9_1 = 32
# From CANN 9.1.0 (hcomm's ParseLinkConnTimeOut; the range hicann/hccl documents from that tag) a value outside
# 120-7200 or not all digits fails communicator init with EI0001; before it the documented range is all that is known.
HCCL_STRICT_FROM = CannVersion("9.1.0")
_SRC_HCCL_91 = "https://github.com/hicann/hccl/blob/c02011ed6610d56ea4d830ec61347de78aa3010d/docs/zh/user_guide/hccl_env/{}.md"
# HCCL_CONNECT_TIMEOUT defaults to 120 s; valid values are 120-7200.
SRC_HCCL_TIMEOUT = "https://github.com/modelscope/ms-swift/pull/8281"


def _hccl_91(snap: Any) -> str | None:
    """The toolkit's CANN version when it is 9.1.0 or newer (HCCL's documented 32 host ports, strict
    HCCL_CONNECT_TIMEOUT); None for an older or unknown one."""
    c = cann(snap)
    return c[0] if c is not None and not c[1] < HCCL_STRICT_FROM else None


def _multi_node(ctx: CheckContext) -> bool | None:
    snap = ctx.snapshot
    if ctx.options.get("multi_node"):
        return True
    ray = snap.ray
    if known(ray) and isinstance(ray, dict):
        nodes = ray.get("nodes")
        if isinstance(nodes, list):
            alive = [n for n in nodes if isinstance(n, dict) and n.get("alive", True)]
            return len(alive) > 1
    return None


@check("hccl-timeout", "network", findings=("hccl-connect-timeout-invalid", "hccl-connect-timeout-short"))
def hccl_timeout(ctx: CheckContext) -> Iterator[Finding]:
    """HCCL_CONNECT_TIMEOUT long enough for multi-node start-up skew."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    raw = env(snap, "HCCL_CONNECT_TIMEOUT")
    if raw is None and not env_unset(snap, "HCCL_CONNECT_TIMEOUT"):
        skip("HCCL_CONNECT_TIMEOUT is not in the snapshot")
    strict = _hccl_91(snap)
    if raw is not None:
        try:
            secs = int(raw)
            if strict and not raw.isdigit():  # hcomm takes digits only; " 200" and "+200" are Python ints
                raise ValueError(raw)
        except ValueError:
            yield finding(
                "hccl-connect-timeout-invalid", "error", ("hccl", "env"),
                f"HCCL_CONNECT_TIMEOUT={raw!r} is not " + (f"all digits, which CANN {strict} requires" if strict else "a number"),
                evidence={"HCCL_CONNECT_TIMEOUT": raw}, fix=f"export HCCL_CONNECT_TIMEOUT={CONNECT_TIMEOUT} (verl's NPU scripts: {CONNECT_TIMEOUT_SOURCE})", source=SRC_HCCL_TIMEOUT)
            return
        if not CONNECT_TIMEOUT_RANGE[0] <= secs <= CONNECT_TIMEOUT_RANGE[1]:
            yield finding(
                "hccl-connect-timeout-invalid", "error" if strict else "warning", ("hccl", "env"),
                f"HCCL_CONNECT_TIMEOUT={secs} is outside the valid range 120-7200 s",
                detail=(f"CANN {strict} refuses it: communicator init fails with EI0001 (the variable's value is "
                        "invalid)." if strict else "HCCL documents 120-7200 s; what an older CANN does with another "
                        "value is not documented."),
                evidence={"HCCL_CONNECT_TIMEOUT": raw, "cann": strict},
                fix=f"export HCCL_CONNECT_TIMEOUT={CONNECT_TIMEOUT} (verl's NPU scripts: {CONNECT_TIMEOUT_SOURCE})",
                source=(_SRC_HCCL_91.format("HCCL_CONNECT_TIMEOUT") + "; " + SRC_HCCL_TIMEOUT) if strict else SRC_HCCL_TIMEOUT)
            return
    if not _multi_node(ctx) or (ctx.node and npu_less_skip(snap)):
        return  # a node without NPUs runs no HCCL rank, and its shell's variable reaches no other node's workers
    secs = int(raw) if raw is not None else 120
    if secs < 600:
        yield finding(
            "hccl-connect-timeout-short", "warning", ("hccl", "env"),
            "HCCL_CONNECT_TIMEOUT is " + (f"only {secs} s" if raw is not None else "unset (default 120 s)") + " on a multi-node job",
            detail="Ranks on several nodes start with seconds-to-minutes of skew (model loading, Ray scheduling); HCCL "
                   "gives up on link establishment after this timeout.",
            evidence={"HCCL_CONNECT_TIMEOUT": raw}, fix=f"export HCCL_CONNECT_TIMEOUT={CONNECT_TIMEOUT} on every node (verl's NPU scripts: {CONNECT_TIMEOUT_SOURCE}).",
            source=SRC_HCCL_TIMEOUT)


# CANN's HCCL_EXEC_TIMEOUT (A2 / A3): seconds, [0, 2147483647], default 1836, 0 = never; with the algorithm expanded
# on AIV (HCCL_OP_EXPANSION_MODE=AIV) the range is [0, 1091], default 1091, "若设置为0或超出最大值1091，将按照1091处理".
SRC_HCCL_EXEC_TIMEOUT = "https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/900beta1/maintenref/envvar/envref_07_0078.html"
AIV_EXEC_TIMEOUT_MAX = 1091
EXEC_TIMEOUT_MAX = 2147483647
# HCCL takes digits with at most two decimals: hicann/hccl src/common/alg_env_config.cc ParseExecTimeout() /
# IsValidNumberFormat() at v9.1.0 and v9.2.0-beta.1 ("a non-negative number with up to 2 decimals", EI0001) and hcomm's
# IsValidExecTimeOutMs() (^\d+(\.\d{1,2})?$); 1e3, +60 or 1836.125 make the collective fail.
_EXEC_TIMEOUT_FORMAT = re.compile(r"[0-9]+(?:\.[0-9]{1,2})?")


def _set_value(snap: Any, name: str) -> str:
    """The variable's value; the check skips when the environment is unknown or the variable is not set."""
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    raw = env(snap, name)
    if not raw:
        skip(f"{name} is not set")
    return raw


@check("hccl-exec-timeout", "network", findings=("hccl-exec-timeout-invalid", "hccl-exec-timeout-capped"))
def hccl_exec_timeout(ctx: CheckContext) -> Iterator[Finding]:
    """HCCL_EXEC_TIMEOUT is a number of seconds HCCL actually applies (AIV expansion caps it at 1091 s)."""
    snap = ctx.snapshot
    raw = _set_value(snap, "HCCL_EXEC_TIMEOUT")
    secs = float(raw) if _EXEC_TIMEOUT_FORMAT.fullmatch(raw) else -1.0
    if secs < 0 or secs > EXEC_TIMEOUT_MAX:
        yield finding(
            "hccl-exec-timeout-invalid", "error", ("hccl", "env"), f"HCCL_EXEC_TIMEOUT={raw!r} is not a number of seconds",
            detail=f"HCCL_EXEC_TIMEOUT takes seconds, 0 (never) to {EXEC_TIMEOUT_MAX} on Atlas A2 / A3 (default 1836), "
                   "written as digits with at most two decimals.",
            evidence={"HCCL_EXEC_TIMEOUT": raw}, fix="export HCCL_EXEC_TIMEOUT=1836 (CANN's default), or unset it",
            source=SRC_HCCL_EXEC_TIMEOUT)
        return
    mode = (env(snap, "HCCL_OP_EXPANSION_MODE") or "").strip().upper()
    if mode == "AIV" and (secs == 0 or secs > AIV_EXEC_TIMEOUT_MAX):
        yield finding(
            "hccl-exec-timeout-capped", "warning", ("hccl", "env"),
            f"HCCL_EXEC_TIMEOUT={raw} is applied as {AIV_EXEC_TIMEOUT_MAX} s under HCCL_OP_EXPANSION_MODE=AIV",
            detail=f"With the algorithm expanded on AIV, HCCL's range is 0-{AIV_EXEC_TIMEOUT_MAX} s and 0 or a larger value "
                   f"is treated as {AIV_EXEC_TIMEOUT_MAX} s: ranks that wait longer than that for a slow peer (a checkpoint "
                   "save, a long rollout) still time out.",
            evidence={"HCCL_EXEC_TIMEOUT": raw, "HCCL_OP_EXPANSION_MODE": env(snap, "HCCL_OP_EXPANSION_MODE")},
            fix=f"Keep the slowest step under {AIV_EXEC_TIMEOUT_MAX} s, or unset HCCL_OP_EXPANSION_MODE=AIV where a longer "
                "wait is needed.",
            source=SRC_HCCL_EXEC_TIMEOUT)


# torch_npu's HCCL_EVENT_TIMEOUT (seconds, [0, 2147483647], 0 = never): "该环境变量被配置时，配置值需要大于HCCL_EXEC_TIMEOUT的
# 配置值" (its page's constraint). ProcessGroupHCCL's constructor reads both with strtol (OptionsManager
# GetHCCLEventTimeout / GetHCCLExecTimeout; a negative value or none is the default, HCCL_EXEC_TIMEOUT's 1836 s) and a
# positive HCCL_EVENT_TIMEOUT becomes the process's op wait timeout (aclrtSetOpWaitTimeout) as it is, with only a
# TORCH_NPU_WARN_ONCE when it is <= HCCL_EXEC_TIMEOUT or HCCL_EXEC_TIMEOUT is 0; unset, the wait is HCCL_EXEC_TIMEOUT
# + 30 s (0: never). Read at v6.0.rc2 (2.1.0.post6, 2.2.0.post2, 2.3.1: the first tags that read the variable),
# v7.1.0 / v7.3.0 (the warnings) and v26.0.1 (master 9e73e708, the same code).
SRC_HCCL_EVENT_TIMEOUT = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/docs/zh/api/"
                          "environment_variable/collective_communication/HCCL_EVENT_TIMEOUT.md; "
                          "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/"
                          "csrc/distributed/ProcessGroupHCCL.cpp")
TORCH_NPU_EXEC_TIMEOUT_DEFAULT = 1836


def _strtol(text: str) -> int:
    """C strtol base 10 as torch_npu reads these variables: leading blanks and sign, then digits; none is 0."""
    m = re.match(r"\s*([+-]?[0-9]+)", text)
    return int(m.group(1)) if m else 0


def _reads_event_timeout(snap: Any) -> bool:
    """Whether the installed torch-npu reads HCCL_EVENT_TIMEOUT: from 2.1.0.post6 / 2.2.0.post2 / 2.3.1 (Ascend/pytorch
    v6.0.rc2); an unknown version is taken to."""
    v = pver(snap, "torch-npu")
    if v is None:
        return True
    pub = public(v)
    if pub < Version("2.1.0.post6"):
        return False
    return not Version("2.2") <= pub < Version("2.2.0.post2")


@check("hccl-event-timeout", "network", findings=("hccl-event-timeout-not-above-exec",))
def hccl_event_timeout(ctx: CheckContext) -> Iterator[Finding]:
    """HCCL_EVENT_TIMEOUT, when set, is above HCCL_EXEC_TIMEOUT, as torch_npu documents."""
    snap = ctx.snapshot
    raw = _set_value(snap, "HCCL_EVENT_TIMEOUT")
    if absent(snap, "torch-npu") or not _reads_event_timeout(snap):
        skip("no torch-npu that reads HCCL_EVENT_TIMEOUT is installed")
    event = _strtol(raw)
    if event <= 0:
        return  # 0: never times out; negative: torch_npu's default (the exec timeout + 30 s)
    exec_raw = env(snap, "HCCL_EXEC_TIMEOUT")
    if exec_raw is None and not env_unset(snap, "HCCL_EXEC_TIMEOUT"):
        skip("HCCL_EXEC_TIMEOUT is not in the snapshot")
    exec_secs = _strtol(exec_raw) if exec_raw else -1
    if exec_secs < 0:
        exec_secs = TORCH_NPU_EXEC_TIMEOUT_DEFAULT
    if exec_secs != 0 and event > exec_secs:
        return
    said = (f"HCCL_EXEC_TIMEOUT={exec_raw}" if exec_raw else
            f"HCCL_EXEC_TIMEOUT (unset: {TORCH_NPU_EXEC_TIMEOUT_DEFAULT} s)")
    yield finding(
        "hccl-event-timeout-not-above-exec", "warning", ("hccl", "torch-npu", "env"),
        f"HCCL_EVENT_TIMEOUT={raw} is not above {said}" + (" (never)" if exec_secs == 0 else ""),
        detail=f"torch_npu makes HCCL_EVENT_TIMEOUT the NPU's wait on every collective's event "
               f"(aclrtSetOpWaitTimeout), and documents it must be greater than HCCL_EXEC_TIMEOUT. Here the wait "
               f"gives up after {event} s, "
               + ("while HCCL itself never times out" if exec_secs == 0 else
                  f"before HCCL's own {exec_secs} s")
               + ": a collective held up by a slow rank (a checkpoint save, a long rollout or generation on other "
                 "ranks) fails with a stream-wait timeout instead of completing or getting HCCL's timeout report.",
        evidence={"HCCL_EVENT_TIMEOUT": raw, "HCCL_EXEC_TIMEOUT": exec_raw, "exec_timeout_applied": exec_secs},
        fix="unset HCCL_EVENT_TIMEOUT (torch_npu then waits HCCL_EXEC_TIMEOUT + 30 s)"
            + ("" if exec_secs == 0 else f", or export HCCL_EVENT_TIMEOUT={exec_secs + 30}"),
        source=SRC_HCCL_EVENT_TIMEOUT)


def _listening_ports(snap: Any) -> list[int]:
    """The TCP ports listening on the host (network.listening_ports); the check skips when they were not collected."""
    ports = val(snap.network, "listening_ports")
    if not isinstance(ports, list):
        skip("the listening ports are not in the snapshot")
    return ports


# HCCL_HOST_SOCKET_PORT_RANGE ("60000-60050", "56000,56005", or "auto": the OS picks) sets the host ports of a
# communicator created from root info (torch_npu's), and overrides HCCL_IF_BASE_PORT ("此环境变量优先级高于
# HCCL_IF_BASE_PORT"). CANN documents it from 8.1.RC1 on, for Atlas A3 (and 950 from 9.0.0) and, of the Atlas A2
# series, only the training servers (800T A2, 900 A2 PoD, 200T A2 Box16: the chip family alone does not tell them from
# an 800I A2), not for the first-generation training series nor the inference (310P) series. It is what CANN advises
# when several processes share one NPU, whose default ports otherwise collide.
HOST_PORT_RANGE = "HCCL_HOST_SOCKET_PORT_RANGE"
HOST_PORT_RANGE_FROM = CannVersion("8.1.RC1")
HOST_PORT_RANGE_CHIPS = frozenset({chips.A3, chips.A5})  # read there; on A2 it depends on the server model
SRC_HOST_PORT_RANGE = ("https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/81RC1beta1/maintenref/envvar/"
                       "envref_07_0143.html; https://github.com/hicann/hccl/blob/v9.1.0/docs/zh/user_guide/hccl_env/"
                       "HCCL_HOST_SOCKET_PORT_RANGE.md")


def _host_range_read(snap: Any) -> bool | None:
    """Whether HCCL here takes its host ports from HCCL_HOST_SOCKET_PORT_RANGE: False on a CANN before 8.1.RC1 or a
    chip family CANN does not list for it, True on A3 / 950 with CANN 8.1.RC1 or newer, None when unknown (the CANN,
    the chip, or on A2 the server model)."""
    c = cann(snap)
    fam = chips.family(snap)
    if (c is not None and c[1] < HOST_PORT_RANGE_FROM) or fam in (chips.GEN1, chips.P310, chips.P310B):
        return False
    return True if c is not None and fam in HOST_PORT_RANGE_CHIPS else None


def _host_range_busy(snap: Any, ports: list[int], raw: str) -> Iterator[Finding]:
    """The listening ports inside HCCL_HOST_SOCKET_PORT_RANGE (nothing for "auto", nor for a value HCCL refuses)."""
    ranges = socket_port_ranges(raw)
    if not isinstance(ranges, list):
        return
    busy = sorted(p for p in set(ports) if any(a <= p <= b for a, b in ranges) and p not in own_ray_ports(snap))
    if busy:
        yield finding(
            "hccl-port-in-use", "warning", ("hccl", "network", "env"),
            f"Ports of {HOST_PORT_RANGE}={raw} are already in use ({', '.join(map(str, busy))})",
            detail=f"{HOST_PORT_RANGE} overrides HCCL_IF_BASE_PORT: HCCL listens only on the ports it lists, and "
                   "another job on this host (or a leftover process) holds some of them; HCCL asks that the listed "
                   "ports be free and at least as many as the HCCL processes per NPU.",
            evidence={"listening": busy, HOST_PORT_RANGE: raw},
            fix=f"List ports nothing else holds in {HOST_PORT_RANGE}, or export {HOST_PORT_RANGE}=auto (the OS "
                "picks free ports).",
            source=SRC_HOST_PORT_RANGE)


@check("hccl-ports", "network", findings=("hccl-port-in-use",))
def hccl_ports(ctx: CheckContext) -> Iterator[Finding]:
    """Nothing else listens on HCCL's host ports (HCCL_IF_BASE_PORT .. +15, +31 from CANN 9.1.0; default 60000), or on
    the ports HCCL_HOST_SOCKET_PORT_RANGE lists where HCCL reads it instead."""
    snap = ctx.snapshot
    ports = _listening_ports(snap)
    ranged = env(snap, HOST_PORT_RANGE)
    if ranged and ranged.strip():
        reads = _host_range_read(snap)
        if reads is None:
            skip(f"{HOST_PORT_RANGE} is set; whether this CANN and server read it (CANN 8.1.RC1+, A3 or an A2 training server) is not known")
        if reads:
            yield from _host_range_busy(snap, ports, ranged)
            return
    raw = env(snap, "HCCL_IF_BASE_PORT")
    if raw is None and not env_unset(snap, "HCCL_IF_BASE_PORT"):
        skip("HCCL_IF_BASE_PORT is not in the snapshot, so HCCL's port range is not known")
    try:
        base = int(raw) if raw else HCCL_DEFAULT_BASE_PORT
    except ValueError:
        base = HCCL_DEFAULT_BASE_PORT
    width = HCCL_PORTS_FROM_9_1 if _hccl_91(snap) else HCCL_PORTS_PER_HOST
    busy = sorted(p for p in set(ports) if base <= p < base + width and p not in own_ray_ports(snap))
    if busy:
        yield finding(
            "hccl-port-in-use", "warning", ("hccl", "network", "env"),
            f"HCCL's host port range {base}-{base + width - 1} is already in use ({', '.join(map(str, busy))})",
            detail="Another job on this host (or a leftover process) holds HCCL's listen ports: "
                   "`Communication_Error_Bind_IP_Port(EI0019)`, then NPU timeouts.",
            evidence={"listening": busy, "HCCL_IF_BASE_PORT": raw, "ports": width},
            fix=f"Give each job its own range: export HCCL_IF_BASE_PORT={base + 100 * (1 + len(busy) // 16)}",
            source="https://github.com/vllm-project/vllm-ascend/pull/16205; https://github.com/vllm-project/vllm-ascend/issues/405; "
                   "https://www.hiascend.com/document/detail/en/canncommercial/800/apiref/envvar/envref_07_0074.html"
                   + (f"; {_SRC_HCCL_91.format('HCCL_IF_BASE_PORT')}" if width == HCCL_PORTS_FROM_9_1 else ""))


_IFNAME_VARS = ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME")


def _address(text: str) -> str | None:
    """`text` as an IP address (10.0.0.5, fe80::1), None when it is not one (an interface name such as eth0)."""
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


def _ips(iface: Any) -> list[str]:
    """The IP addresses an interface of the snapshot carries (its `10.0.0.5/24` entries without the prefix length)."""
    addrs = iface.addresses if known(iface.addresses) and isinstance(iface.addresses, list) else []
    return [ip for a in addrs if (ip := _address(str(a).split("/")[0]))]


def _holder(ifaces: Any, address: str) -> str | None:
    """The interface of this host that carries `address`, None when unknown or none does."""
    for i in ifaces if isinstance(ifaces, list) else ():
        if known(i.name) and address in _ips(i):
            return str(i.name)
    return None


# Gloo looks an interface up by name (gloo/transport/tcp/device.cc lookupAddrForIface: "Unable to find address
# for: X"); PyTorch documents GLOO_SOCKET_IFNAME / TP_SOCKET_IFNAME as interface names (export GLOO_SOCKET_IFNAME=eth0),
# and HCCL takes the host NIC's name in HCCL_SOCKET_IFNAME, its address in HCCL_IF_IP.
SRC_IFNAME_IS_NAME = ("https://docs.pytorch.org/docs/2.7/distributed.html; "
                      "https://github.com/pytorch/gloo/blob/aeaea26ca72896ac85e04b7678e5835a903f1e1f/gloo/transport/tcp/device.cc; "
                      "https://www.hiascend.com/document/detail/en/canncommercial/800/apiref/envvar/envref_07_0075.html")


@check("socket-ifname", "network",
       findings=("socket-ifname-missing", "socket-ifname-not-single", "socket-ifname-syntax", "socket-ifname-is-address"))
def socket_ifname(ctx: CheckContext) -> Iterator[Finding]:
    """*_SOCKET_IFNAME name existing interfaces, in the syntax each library accepts."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    ifaces = val(snap.network, "interfaces")
    names = [i.name for i in ifaces if known(i.name)] if isinstance(ifaces, list) else None
    for var in _IFNAME_VARS:
        raw = env(snap, var)
        if not raw:
            continue
        value = raw.strip()
        if var != "HCCL_SOCKET_IFNAME" and (value.startswith("^") or value.startswith("=")):
            yield finding(
                "socket-ifname-syntax", "error", ("network", "env"), f"{var}={raw!r} uses NCCL exclusion syntax",
                detail=f"{var} takes concrete interface names; Gloo fails with `Unable to find address for: {value.split(',')[0]}`.",
                evidence={var: raw, "interfaces": names},
                fix=f"export {var}=<the interface that routes to the head node, e.g. from `ip -4 route get $MASTER_ADDR`>",
                source="https://github.com/aws-samples/aws-do-eks/pull/51; https://github.com/pytorch/gloo/blob/aeaea26ca72896ac85e04b7678e5835a903f1e1f/gloo/transport/tcp/device.cc")
            continue
        body = value.lstrip("^=") if var == "HCCL_SOCKET_IFNAME" else value
        items = [x.strip() for x in body.split(",") if x.strip()]
        addresses = [a for a in (_address(x) for x in items) if a]
        if addresses:
            holder = _holder(ifaces, addresses[0])
            name = holder or f"<the interface that carries {addresses[0]}: `ip -o addr | grep -F {addresses[0]}`>"
            yield finding(
                "socket-ifname-is-address", "error", ("network", "env"),
                f"{var}={raw!r} is an IP address, not an interface name",
                detail=f"{var} names network interfaces (eth0, enp189s0f0); no interface is called {addresses[0]}, so "
                       + ("HCCL finds no host NIC to bind." if var == "HCCL_SOCKET_IFNAME" else
                          f"every rank dies in Gloo with `Unable to find address for: {addresses[0]}`."),
                evidence={var: raw, "interfaces": names, "carried_by": holder},
                fix=f"export {var}={name}" + (f"; the address itself goes in HCCL_IF_IP={addresses[0]}"
                                              if var == "HCCL_SOCKET_IFNAME" else ""),
                source=SRC_IFNAME_IS_NAME)
            continue
        if var == "TP_SOCKET_IFNAME" and len(items) > 1:
            yield finding(
                "socket-ifname-not-single", "error", ("network", "env"), f"{var}={raw!r} is not a single interface name",
                evidence={var: raw}, fix=f"export {var}={items[0]}",
                source="https://github.com/pytorch/pytorch/blob/420a5e3d97dc7e8f2d66fec9f00c8019057df052/torch/csrc/distributed/rpc/tensorpipe_agent.cpp")
        elif var == "GLOO_SOCKET_IFNAME" and len(items) > 1:
            yield finding(
                "socket-ifname-not-single", "warning", ("network", "env"), f"{var}={raw!r} lists several interfaces",
                detail="Gloo then uses all of them round-robin; every one must reach every other node.",
                evidence={var: raw}, fix=f"export {var}=<one interface>, e.g. {items[0]}",
                source="https://docs.pytorch.org/docs/2.7/distributed.html")
        if names is None or value.startswith("^"):
            continue
        exact = var != "HCCL_SOCKET_IFNAME" or value.startswith("=")
        missing = [x for x in items if not (x in names if exact else any(n.startswith(x) for n in names))]
        if missing:
            yield finding(
                "socket-ifname-missing", "error", ("network", "env"),
                f"{var} names interface(s) that do not exist here: {', '.join(missing)}",
                evidence={var: raw, "interfaces": names},
                fix=f"export {var}=<one of: {', '.join(names[:8])}>",
                source="https://github.com/pytorch/gloo/blob/aeaea26ca72896ac85e04b7678e5835a903f1e1f/gloo/transport/tcp/device.cc; "
                       "https://www.hiascend.com/document/detail/en/canncommercial/800/apiref/envvar/envref_07_0075.html")


def _host_addresses(ifaces: Any) -> set[str] | None:
    """Every address of this host's interfaces, None when the interfaces are not in the snapshot."""
    if not isinstance(ifaces, list):
        return None
    return {ip for i in ifaces for ip in _ips(i)}


def _ray_ips_here(ray: Any, here: set[str] | None) -> set[str]:
    """The addresses the snapshot's Ray cluster knows this host's node by: nodes (and the head's address) that are
    addresses of this host's interfaces; with the interfaces unknown, the one node of a one-node cluster."""
    if not (known(ray) and isinstance(ray, dict)):
        return set()
    nodes = [n for n in ray.get("nodes") or [] if isinstance(n, dict) and n.get("alive", True)]
    ips = {ip for n in nodes if (ip := _address(str(n.get("address") or "")))}
    head = ray.get("address")
    if isinstance(head, str) and head:
        hip = _address(head.rsplit(":", 1)[0] if head.count(":") == 1 else head)
        if hip:
            ips.add(hip)
    if here is not None:
        return ips & here
    return ips if len(nodes) == 1 and len(ips) == 1 else set()


# vLLM's distributed troubleshooting: nodes with several IP addresses make vLLM and Ray pick different ones ("No
# available node types can fulfill resource request"); set VLLM_HOST_IP and make Ray use the same address (ray start
# --node-ip-address), then check with `ray list nodes` (github.com/vllm-project/vllm/issues/7815).
SRC_VLLM_HOST_IP = ("https://docs.vllm.ai/en/latest/serving/distributed_troubleshooting/; "
                    "https://github.com/vllm-project/vllm/issues/7815")


@check("vllm-host-ip", "network", findings=("vllm-host-ip-not-on-host", "vllm-host-ip-not-ray-node-ip"))
def vllm_host_ip(ctx: CheckContext) -> Iterator[Finding]:
    """VLLM_HOST_IP is an address of this host and the one Ray knows this node by (vLLM's distributed
    troubleshooting; its run_cluster.sh: each node its own VLLM_HOST_IP)."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    raw = env(snap, "VLLM_HOST_IP")
    if not raw or not _address(raw):
        skip("VLLM_HOST_IP is not set to an address")
    want = _address(raw)
    here = _host_addresses(val(snap.network, "interfaces"))
    if here and want not in here:
        yield finding(
            "vllm-host-ip-not-on-host", "error", ("network", "vllm", "env"),
            f"VLLM_HOST_IP={raw} is not an address of this host",
            detail="Every node needs its own VLLM_HOST_IP (vLLM's run_cluster.sh: each worker a unique value, reachable "
                   "at that address); the head's address exported on every node makes vLLM place and dial workers at "
                   "the wrong machine.",
            evidence={"VLLM_HOST_IP": raw, "host_addresses": sorted(here)},
            fix="export VLLM_HOST_IP=<this node's own address on the cluster network> (one of: "
                f"{', '.join(sorted(a for a in here if not a.startswith('127.'))[:6])})",
            source=SRC_VLLM_HOST_IP + "; https://docs.vllm.ai/en/v0.11.2/examples/online_serving/run_cluster/")
        return
    ray_ips = _ray_ips_here(snap.ray, here)
    if not ray_ips:
        skip("the snapshot does not say which address Ray knows this node by")
    if want in ray_ips or (here is not None and want not in here):
        return
    got = sorted(ray_ips)
    yield finding(
        "vllm-host-ip-not-ray-node-ip", "error", ("network", "ray", "vllm"),
        f"Ray knows this node as {', '.join(got)}, but VLLM_HOST_IP={raw}",
        detail="This host has several addresses and Ray picked another one than vLLM's: vLLM places its workers by the "
               "node IP it computes (VLLM_HOST_IP) and Ray reports the node under its own choice, so the placement "
               "fails (`No available node types can fulfill resource request`) or workers dial the wrong network.",
        evidence={"VLLM_HOST_IP": raw, "ray_node_ip": got, "host_addresses": sorted(here) if here is not None else None},
        fix=f"Restart Ray on this node with `ray start ... --node-ip-address={want}` (the same address as VLLM_HOST_IP), "
            "and check with `ray list nodes`.",
        source=SRC_VLLM_HOST_IP)


# CANN's HCCL_IF_IP: "a character string in IPv4 or IPv6 format. Currently, only the host NIC is supported, and only
# one IP address can be configured"; without HCCL_IF_IP / HCCL_SOCKET_IFNAME HCCL takes "NICs other than Docker or local
# NICs (NIC names in ascending lexicographical order) > Docker NICs > local NICs", and "if the NIC specified for the
# current node is disconnected from that for the root node, the HCCL link establishment will fail".
SRC_HCCL_IF_IP = "https://www.hiascend.com/document/detail/en/canncommercial/850/commlib/hcclug/hcclug_000088.html"


def _routable(ifaces: Any) -> list[Any]:
    """Up interfaces with an IPv4 address that are neither loopback nor Docker/virtual bridges (HCCL's own ranking
    puts those last), in HCCL's order: by name, ascending."""
    out = []
    for i in ifaces if isinstance(ifaces, list) else ():
        name = str(i.name) if known(i.name) else ""
        v4 = [ip for a in _ips(i) if (ip := ipaddress.ip_address(a)).version == 4 and not ip.is_loopback]
        if name and i.up is not False and v4 and name != "lo" and not name.startswith(("docker", "veth", "br-", "virbr")):
            out.append(i)
    return sorted(out, key=lambda i: str(i.name))


@check("host-nic", "network", findings=("hccl-if-ip-invalid", "hccl-if-ip-not-on-host", "host-nic-not-chosen"))
def host_nic(ctx: CheckContext) -> Iterator[Finding]:
    """The host NIC HCCL and Gloo bootstrap over: HCCL_IF_IP is one address of this host; on a multi-node job with
    several NICs, the choice is not left to the default order."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    ifaces = val(snap.network, "interfaces")
    here = _host_addresses(ifaces)
    raw = env(snap, "HCCL_IF_IP")
    if raw:
        ip = _address(raw)
        if ip is None:
            yield finding(
                "hccl-if-ip-invalid", "error", ("network", "hccl", "env"),
                f"HCCL_IF_IP={raw!r} is not one IPv4 or IPv6 address",
                detail="HCCL_IF_IP takes the host NIC's address (one address); an interface name goes in "
                       "HCCL_SOCKET_IFNAME.",
                evidence={"HCCL_IF_IP": raw}, fix="export HCCL_IF_IP=<this node's address on the network that reaches "
                                                  "the root node>, e.g. from `ip -4 route get $MASTER_ADDR`",
                source=SRC_HCCL_IF_IP)
        elif here is not None and ip not in here:
            yield finding(
                "hccl-if-ip-not-on-host", "error", ("network", "hccl", "env"),
                f"HCCL_IF_IP={raw} is not an address of this host",
                detail="HCCL binds its host NIC to this address to reach the root node; another node's address "
                       "(a script that exports the head's IP on every node) fails HCCL's link set-up.",
                evidence={"HCCL_IF_IP": raw, "host_addresses": sorted(here)},
                fix="export HCCL_IF_IP=<this node's own address> on every node (one of: "
                    f"{', '.join(sorted(a for a in here if not a.startswith('127.'))[:6])})",
                source=SRC_HCCL_IF_IP)
        return
    if not _multi_node(ctx):
        return
    if not (env_unset(snap, "HCCL_IF_IP") and env_unset(snap, "HCCL_SOCKET_IFNAME")
            and env_unset(snap, "GLOO_SOCKET_IFNAME")):
        return
    nics = _routable(ifaces)
    if len(nics) < 2:
        return
    names = [str(i.name) for i in nics]
    yield finding(
        "host-nic-not-chosen", "warning", ("network", "hccl", "env"),
        f"A multi-node job on a host with {len(nics)} NICs ({', '.join(names[:6])}) sets neither HCCL_IF_IP / "
        "HCCL_SOCKET_IFNAME nor GLOO_SOCKET_IFNAME",
        detail=f"HCCL then takes the first NIC by name ({names[0]}) and Gloo the address the hostname resolves to; if "
               "that NIC does not reach the root node, HCCL's link set-up and Gloo's connectFullMesh fail.",
        evidence={"nics": {str(i.name): list(i.addresses) for i in nics}},
        fix="On every node: export HCCL_IF_IP=<its address on the cluster network> GLOO_SOCKET_IFNAME=<that NIC> "
            "TP_SOCKET_IFNAME=<that NIC> (vllm-ascend's multi-node tutorial sets all three).",
        source=SRC_HCCL_IF_IP + "; https://docs.vllm.ai/en/latest/serving/distributed_troubleshooting/")


# Without GLOO_SOCKET_IFNAME, torch's ProcessGroupGloo::createDefaultDevice resolves the hostname (getaddrinfo) and binds
# the first address that binds; gloo's tcp device (lookupAddrForHostname) listens there and publishes that address in
# the store for every peer. An /etc/hosts that maps the hostname to loopback only (Debian / Ubuntu's `127.0.1.1 <host>`,
# copied into --network=host containers) makes it 127.0.1.1: ranks on other nodes dial their own loopback and the
# group's connectFullMesh fails. verl's workers create that group at init (backend "cpu:gloo,npu:hccl"), vLLM one per
# parallel group (its CPU groups); verl's Ascend multi-node examples export GLOO_SOCKET_IFNAME on every node.
SRC_GLOO_HOSTNAME = ("https://github.com/pytorch/pytorch/blob/0069b72918a505a148894d7d0fdce733c87b06fa/torch/csrc/distributed/c10d/ProcessGroupGloo.cpp; "
                     "https://github.com/pytorch/gloo/blob/3bdfabf273aed0d29e1ec73af8d67571ff0c6eb8/gloo/transport/tcp/device.cc; "
                     "https://github.com/verl-project/verl/blob/bec9ef74768dd201881cd4e54cd0385e87caae27/verl/workers/fsdp_workers.py; "
                     "https://github.com/verl-project/verl/blob/638b8ff84f279e054982f1f4633a546f3c6ced68/docs/ascend_tutorial/"
                     "model_support/examples/ascend_vllm_best_practices.rst")


def _joins_remote_head(snap: Any) -> bool:
    """This node joins a Ray head on another host: RAY_ADDRESS, or the cluster `ray start --address` recorded, names one."""
    for text in (env(snap, "RAY_ADDRESS"), _ray(snap).get("current_cluster")):
        ep = ray_endpoint(text)
        if ep is not None and _on_this_host(snap, ep[0]) is False:
            return True
    return False


@check("gloo-hostname", "network", findings=("gloo-hostname-loopback",))
def gloo_hostname(ctx: CheckContext) -> Iterator[Finding]:
    """On a multi-node job without GLOO_SOCKET_IFNAME, the hostname Gloo binds resolves to a routable address."""
    snap = ctx.snapshot
    addrs = val(snap.host, "hostname_addresses")
    if not addrs or not isinstance(addrs, list):
        skip("what /etc/hosts maps the hostname to is not in the snapshot")
    if absent(snap, "torch"):
        skip("torch is not installed")
    ips = [_address(str(a)) for a in addrs]
    if not all(ip and ipaddress.ip_address(ip).is_loopback for ip in ips):
        return
    if not env_known(snap) or not env_unset(snap, "GLOO_SOCKET_IFNAME"):
        return
    if not (_multi_node(ctx) or _joins_remote_head(snap)):
        return
    hostname = val(snap.host, "hostname")
    nics = [str(i.name) for i in _routable(val(snap.network, "interfaces"))]
    nic = nics[0] if len(nics) == 1 else "<the NIC on the cluster network>"
    yield finding(
        "gloo-hostname-loopback", "error", ("network", "torch", "env"),
        f"This node's hostname{f' {hostname}' if hostname else ''} resolves to loopback only ({', '.join(map(str, addrs))} "
        "in /etc/hosts) and GLOO_SOCKET_IFNAME is unset, on a multi-node job",
        detail="Without GLOO_SOCKET_IFNAME, torch's Gloo process group binds the address the hostname resolves to and "
               "hands it to every other rank; ranks on the other nodes then dial their own loopback, and the group "
               "(verl's workers create it at init with backend cpu:gloo,npu:hccl; vLLM one per parallel group) fails "
               "in `Gloo connectFullMesh failed` or times out.",
        evidence={"hostname": hostname, "hostname_addresses": addrs, "GLOO_SOCKET_IFNAME": None},
        fix=f"export GLOO_SOCKET_IFNAME={nic} on every node before `ray start` (verl's Ascend multi-node examples do), "
            "or map the hostname to the node's cluster address in /etc/hosts instead of 127.0.1.1.",
        source=SRC_GLOO_HOSTNAME)


# torchrun's --master-addr (env MASTER_ADDR, or PET_MASTER_ADDR, its `env` action): "the IP address or the hostname of
# rank 0 ... For single node multi-proc training the --master-addr can simply be 127.0.0.1" (the argument's own help);
# every node's agents dial it for the rendezvous store, so on a node of a multi-node job a loopback address sends it to
# itself (`The client socket has timed out after ... while trying to connect to (127.0.0.1, 29500)`).
SRC_MASTER_ADDR = ("https://github.com/pytorch/pytorch/blob/v2.5.1/torch/distributed/run.py; "
                   "https://docs.pytorch.org/docs/stable/elastic/run.html")
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def loopback_host(addr: str) -> str | None:
    """The host `addr` names when it is a loopback address (127.x, ::1 also as `[::1]`, localhost), else None."""
    host = addr.strip().strip("[]").lower()
    ip = _address(host)
    return host if host in _LOOPBACK_NAMES or (ip and ipaddress.ip_address(ip).is_loopback) else None


def node_count(raw: str) -> int | None:
    """A node count as torchrun takes it (`2`, or `1:4` for min:max: the max), None when it is not one."""
    m = re.fullmatch(r"\s*(?:\d+\s*:\s*)?(\d+)\s*", raw)
    return int(m.group(1)) if m else None


def master_addr_loopback(name: str, addr: str, host: str, why: str, evidence: dict[str, Any], where: str = "",
                         fix: str | None = None, severity: str = "error") -> Finding:
    """The finding for a loopback rendezvous address (`name`=`addr`, `host` its loopback host) on a job that `why`
    says spans several nodes: one text for `doctor check` (an environment) and `doctor lint` (a script's launcher)."""
    return finding(
        "master-addr-loopback", severity, ("env", "network"),
        f"{name}={addr}{where} is a loopback address on a multi-node job ({why})",
        detail=f"torchrun's agents on every node dial {name} (the rendezvous store of rank 0's node); a loopback address "
               "sends each node to itself, so the nodes never meet: the job hangs in rendezvous and fails with `The "
               f"client socket has timed out ... while trying to connect to ({host}, <port>)`. torchrun's own help: "
               "127.0.0.1 is for single-node training.",
        evidence=evidence,
        fix=fix or f"Set {name} to rank 0's node address on the cluster network (the same value on every node), e.g. "
                   "its `hostname -I` address; not 127.0.0.1 or localhost.",
        source=SRC_MASTER_ADDR)


def _int_env(snap: Any, *names: str) -> tuple[str, int] | None:
    """The first of `names` set to an integer (NNODES as torchrun takes it: `2`, or `1:4` for min:max, the max)."""
    for name in names:
        raw = env(snap, name)
        if raw is None:
            continue
        n = node_count(raw)
        if n is not None:
            return name, n
    return None


@check("master-addr", "network", findings=("master-addr-loopback",))
def master_addr(ctx: CheckContext) -> Iterator[Finding]:
    """On a node of a multi-node torchrun job (MindSpeed, ms-swift, LLaMA-Factory launch scripts), MASTER_ADDR names
    rank 0's node, not this one's loopback."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    var, addr = next(((n, v) for n in ("MASTER_ADDR", "PET_MASTER_ADDR") if (v := env(snap, n))), (None, None))
    if var is None or addr is None:
        skip("MASTER_ADDR is not set in the snapshot")
    host = loopback_host(addr)
    if host is None:
        return
    rank, nodes = _int_env(snap, "NODE_RANK", "PET_NODE_RANK"), _int_env(snap, "NNODES", "PET_NNODES")
    # several Ray nodes say a job spans nodes only when it is not verl's: verl's RayWorkerGroup hands every worker the
    # rank-0 worker's node address as MASTER_ADDR (its runtime env), whatever the node exported
    why = (f"{rank[0]}={rank[1]}: this is not rank 0's node" if rank and rank[1] >= 1 else
           f"{nodes[0]}={nodes[1]}" if nodes and nodes[1] > 1 else
           "the job spans several nodes" if _multi_node(ctx) and installed(snap, "verl") is False else None)
    if why is None:
        return  # one node, or nothing says otherwise: 127.0.0.1 is what torchrun's help offers for a single node
    yield master_addr_loopback(
        var, addr, host, why,
        {var: addr, **({rank[0]: rank[1]} if rank else {}), **({nodes[0]: nodes[1]} if nodes else {})})


# The address Ray knows a node by (NodeManagerAddress, `ray start --node-ip-address`, else Ray's guess: the source address
# of a UDP socket towards 8.8.8.8, and with no route there the hostname's resolution, 127.0.0.1 when that fails too:
# services.py node_ip_address_from_perspective) is where every other node dials it; verl's worker groups also make the
# rank-0 worker's node IP (ray.util.get_node_ip_address()) every rank's MASTER_ADDR. A loopback node IP, or two nodes
# under one address (containers on Docker's default bridge each take 172.17.0.2), sends the other nodes to themselves.
SRC_RAY_NODE_IP = ("https://github.com/ray-project/ray/blob/003280cbe0d09f1c4cd6a482363fbefff4f613c5/python/ray/_private/services.py; "
                   "https://github.com/verl-project/verl/blob/bec9ef74768dd201881cd4e54cd0385e87caae27/verl/single_controller/ray/base.py")
_RAY_NODE_IP_FIX = ("On that node: `ray stop`, then `ray start --address=<head ip>:<port> --node-ip-address=<its own address on "
                    "the cluster network>` (the head: `ray start --head --node-ip-address=...`), as verl's Ascend multi-node "
                    "examples do; containers need --network=host.")


def ray_node_ip_findings(ips: dict[str, str]) -> Iterator[Finding]:
    """`ray-node-address-loopback` / `-duplicate` for a Ray cluster of two or more live nodes, given each node's name and
    the address Ray knows it by."""
    if len(ips) < 2:
        return
    loop = sorted(n for n, ip in ips.items() if (a := _address(ip)) and ipaddress.ip_address(a).is_loopback)
    if loop:
        yield finding(
            "ray-node-address-loopback", "error", ("ray", "network"),
            f"Ray knows {', '.join(loop)} by a loopback address ({', '.join(sorted({ips[n] for n in loop}))}) in a "
            f"{len(ips)}-node cluster",
            detail="Every other node dials a node at the address Ray registered for it; a loopback one sends them to "
                   "themselves: objects and actor calls on that node cannot be reached, and a verl worker group whose "
                   "rank 0 lands there hands 127.x to every rank as MASTER_ADDR (`The client socket has timed out "
                   "... while trying to connect to (127.0.0.1, ...)`). Ray falls back to the hostname's address, or "
                   "127.0.0.1, when the node has no route towards 8.8.8.8 and no --node-ip-address.",
            evidence={"nodes": loop, "addresses": {n: ips[n] for n in loop}}, fix=_RAY_NODE_IP_FIX, source=SRC_RAY_NODE_IP)
    shared = {ip: sorted(n for n in ips if ips[n] == ip) for ip in set(ips.values())}
    for ip, names in sorted(shared.items()):
        if len(names) < 2 or any(n in loop for n in names):
            continue
        yield finding(
            "ray-node-address-duplicate", "error", ("ray", "network"),
            f"Ray knows {len(names)} nodes ({', '.join(names)}) by the same address {ip}",
            detail="Each node must register its own reachable address: with one address for several nodes, the other "
                   "nodes reach only one of them (containers on Docker's default bridge network each get 172.17.0.2), "
                   "and a verl worker group's MASTER_ADDR names whichever answers.",
            evidence={"nodes": names, "address": ip}, key=ip, fix=_RAY_NODE_IP_FIX, source=SRC_RAY_NODE_IP)


@check("ray-node-addresses", "network", findings=("ray-node-address-loopback", "ray-node-address-duplicate"))
def ray_node_addresses(ctx: CheckContext) -> Iterator[Finding]:
    """Every live node of the snapshot's Ray cluster is known by its own, non-loopback address."""
    nodes = _ray(ctx.snapshot).get("nodes")
    if not isinstance(nodes, list):
        skip("the snapshot does not list the Ray cluster's nodes")
    ips: dict[str, str] = {}
    for i, n in enumerate(x for x in nodes if isinstance(x, dict) and x.get("alive", True)):
        if isinstance(n.get("address"), str):
            name = str(n.get("node_name") or n.get("node") or f"node {i + 1}")
            ips[name if name not in ips else f"{name} #{i + 1}"] = n["address"]
    yield from ray_node_ip_findings(ips)


@check("shm-size", "network", findings=("shm-too-small",))
def shm_size(ctx: CheckContext) -> Iterator[Finding]:
    """/dev/shm large enough for Ray's object store and dataloader workers."""
    snap = ctx.snapshot
    shm = val(snap.host, "shm_gb")
    if not isinstance(shm, (int, float)):
        skip("the size of /dev/shm is not known")
    if shm < 1.0:
        vllm = bool(installed(snap, "vllm") or installed(snap, "vllm-ascend"))
        yield finding(
            "shm-too-small", "warning", ("system", "ray", *(("vllm",) if vllm else ())), f"/dev/shm is only {shm:.2f} GB",
            detail="Docker's default is 64 MB; Ray's object store and torch dataloader workers then fail with bus errors "
                   "or fall back to slow disk spilling."
                   + (" vLLM's container guidance asks for --ipc=host or --shm-size too: vLLM and PyTorch share tensors "
                      "between its worker processes through /dev/shm (tensor parallelism)." if vllm else ""),
            evidence={"shm_gb": shm, "in_container": val(snap.host, "in_container")},
            fix="Start the container with --ipc=host (as verl's template does) or --shm-size=64g.",
            source="https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/dockerfile_build_guidance.rst"
                   + ("; https://docs.vllm.ai/en/stable/deployment/docker.html" if vllm else ""))


# -- Ray's head port and the cluster `ray start` recorded --------------------------------------------------------------
# Read in Ray's source at ray-2.10.0, ray-2.46.0, ray-2.58.0 and 2.60.0 (the same at all four):
# - `ray start --head` binds the GCS to --port, default ray_constants.DEFAULT_PORT = 6379 (scripts.py `start`); its
#   dashboard defaults to 8265 (DEFAULT_DASHBOARD_PORT) and its Ray Client server to 10001. A port another process
#   holds fails the start: "RuntimeError: Failed to start GCS ... Failed to start the grpc server. The specified port
#   is 6379 ... Address already in use" (Ray 2.60.0, run here). ray.init() starting a local instance takes free ports
#   (node.py: the GCS port is picked unused, or bound at 0), so a held 6379 does not stop it.
# - Every `ray start` writes the GCS address to <ray temp dir>/ray_current_cluster (`write_ray_address`), `ray stop`
#   removes it (`reset_ray_address`). ray.init() with no address uses RAY_ADDRESS when set and non-empty, else that
#   file's address (services.py get_ray_address_from_environment), else starts a new local instance. A file whose
#   cluster died is not skipped: ray.init() retries the address (NUM_REDIS_GET_RETRIES = 20 attempts; each took
#   ~40 s on Ray 2.60.0 here, still retrying after 5 min) and raises ConnectionError (worker.py: "Failed to connect to
#   the default Ray cluster address at ... This is most likely due to a previous Ray instance that has since crashed.
#   To reset the default address to connect to, run `ray stop` or restart Ray with `ray start`.").
SRC_RAY_HEAD_PORT = ("https://github.com/ray-project/ray/blob/ray-2.46.0/python/ray/scripts/scripts.py; "
                     "https://github.com/ray-project/ray/blob/ray-2.46.0/python/ray/_private/ray_constants.py")
SRC_RAY_INIT_ADDRESS = ("https://github.com/ray-project/ray/blob/ray-2.46.0/python/ray/_private/services.py; "
                        "https://github.com/ray-project/ray/blob/ray-2.46.0/python/ray/_private/worker.py")
RAY_DEFAULT_PORT = 6379
RAY_DASHBOARD_PORT = 8265
RAY_CLIENT_PORT = 10001
DEFAULT_RAY_CLUSTER_FILE = "/tmp/ray/ray_current_cluster"  # the default, when the snapshot does not say which file was read


def _ray(snap: Any) -> dict[str, Any]:
    return snap.ray if known(snap.ray) and isinstance(snap.ray, dict) else {}


def ray_endpoint(text: Any) -> tuple[str, int] | None:
    """(host, port) of a Ray address as ray.init() takes it (`10.0.0.5:6379`, `[fe80::1]:6379`, `ray://h:10001`);
    None for `auto`, `local`, a dashboard URL (http://) or anything without a port."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    if t.startswith("ray://"):
        t = t[len("ray://"):]
    if "://" in t or ":" not in t:
        return None
    host, _, port = t.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def _on_this_host(snap: Any, host: str) -> bool | None:
    """Whether a Ray address's host is this machine: loopback and `localhost` are (Ray resolves them to the node's
    own address), an address of its interfaces is, another address is not; a name other than the host's own, or
    interfaces not known, is None."""
    if host == "localhost":
        return True
    ip = _address(host)
    if ip is None:
        hostname = val(snap.host, "hostname")
        return True if hostname and host == hostname else None
    if ipaddress.ip_address(ip).is_loopback:
        return True
    here = _host_addresses(val(snap.network, "interfaces"))
    return ip in here if here else None


def _own_heads(snap: Any) -> set[int]:
    """GCS ports of the Ray heads the snapshot places on this host: the cluster it was collected through
    (`ray.address`) and the one `ray start` recorded here (`ray.current_cluster`), unless known to be another host's."""
    ray = _ray(snap)
    heads = set()
    for key in ("address", "current_cluster"):
        ep = ray_endpoint(ray.get(key))
        if ep is not None and _on_this_host(snap, ep[0]) is not False:
            heads.add(ep[1])
    return heads


def own_ray_ports(snap: Any) -> set[int]:
    """Ports this host's own Ray listens on, as far as the snapshot tells: its heads' GCS ports and, with a head here,
    the dashboard's and the Ray Client server's defaults. Ports held by anything else are someone else's."""
    heads = _own_heads(snap)
    return heads | {RAY_DASHBOARD_PORT, RAY_CLIENT_PORT} if heads else heads


def _free_port(ports: list[int], start: int) -> int:
    busy = set(ports)
    return next(p for p in range(start, 65536) if p not in busy)


@check("ray-head-port", "network", findings=("ray-head-port-in-use",))
def ray_head_port(ctx: CheckContext) -> Iterator[Finding]:
    """Ray's default head port (6379) is free for `ray start --head`, unless this host's own Ray head holds it."""
    snap = ctx.snapshot
    ports = _listening_ports(snap)
    if absent(snap, "ray"):
        skip("ray is not installed")
    ray = _ray(snap)
    if "current_cluster" not in ray:
        skip("the snapshot does not say whether `ray start` recorded a cluster on this host")
    if RAY_DEFAULT_PORT not in ports or _own_heads(snap) & set(ports):
        return
    recorded = ray_endpoint(ray.get("current_cluster"))
    if recorded is not None and _on_this_host(snap, recorded[0]) is False:
        return  # a worker of a head elsewhere: no head is started here
    path = ray.get("current_cluster_file") or DEFAULT_RAY_CLUSTER_FILE
    free = _free_port(ports, RAY_DEFAULT_PORT + 1)
    yield finding(
        "ray-head-port-in-use", "warning", ("ray", "network"),
        f"Port {RAY_DEFAULT_PORT}, where `ray start --head` puts Ray's head by default, is already held, and no Ray "
        "cluster of this host holds it",
        detail=f"Another process listens on {RAY_DEFAULT_PORT} (a redis-server, another user's or container's Ray, a "
               f"leftover process) while `ray start` recorded no running cluster here ({path}). `ray start --head` "
               "without --port then fails: `RuntimeError: Failed to start GCS ... Failed to start the grpc server. The "
               f"specified port is {RAY_DEFAULT_PORT} ... Address already in use`. That is how a multi-node job starts its "
               "head; a single-node run whose ray.init() has no address is not affected (it starts its own instance on "
               "free ports), so this is a warning.",
        evidence={"listening": RAY_DEFAULT_PORT, "current_cluster": ray.get("current_cluster"),
                  "current_cluster_file": path},
        fix=f"See what holds it: `ss -ltnp 'sport = :{RAY_DEFAULT_PORT}'`. A leftover Ray of yours: `ray stop`. "
            f"Anything else: start the head on a free port, `ray start --head --port={free}`, and join the other "
            f"nodes with `ray start --address=<head ip>:{free}`.",
        source=SRC_RAY_HEAD_PORT)


@check("ray-cluster-file", "network",
       findings=("ray-stale-cluster-file", "ray-cluster-file-remote", "ray-cluster-file-other-user"))
def ray_cluster_file(ctx: CheckContext) -> Iterator[Finding]:
    """The cluster `ray start` recorded in ray_current_cluster, which ray.init() without an address joins, is alive
    when it is on this host."""
    snap = ctx.snapshot
    ray = _ray(snap)
    if "current_cluster" not in ray:
        skip("the snapshot does not say whether `ray start` recorded a cluster on this host")
    recorded = ray.get("current_cluster")
    if recorded is None:
        return
    ep = ray_endpoint(recorded)
    if ep is None:
        skip(f"the recorded cluster {recorded!r} is not a host:port address")
    if not env_known(snap) or (env(snap, "RAY_ADDRESS") is None and not env_unset(snap, "RAY_ADDRESS")):
        skip("RAY_ADDRESS is not in the snapshot, so whether ray.init() reads the file is not known")
    if env(snap, "RAY_ADDRESS"):
        return  # ray.init() takes RAY_ADDRESS and never reads the file (the ray-address check)
    here = _on_this_host(snap, ep[0])
    path = ray.get("current_cluster_file") or DEFAULT_RAY_CLUSTER_FILE
    if here is False:
        yield finding(
            "ray-cluster-file-remote", "info", ("ray", "network"),
            f"ray.init() here joins the Ray cluster at {recorded}, on another host ({path})",
            detail="`ray start --address=...` recorded that head on this node; verl's ray.init() (no address, no "
                   "RAY_ADDRESS) attaches to it rather than starting its own instance.",
            evidence={"current_cluster": recorded, "current_cluster_file": path},
            fix=f"Nothing if that is your cluster; else `ray stop` (removes {path}) or `export RAY_ADDRESS=<your head>`.",
            source=SRC_RAY_INIT_ADDRESS)
        return
    ports = val(snap.network, "listening_ports")
    if here is None or not isinstance(ports, list):
        return
    uid = ray.get("current_cluster_uid")
    if ep[1] in ports:
        if ray.get("current_cluster_mine") is False:
            yield finding(
                "ray-cluster-file-other-user", "warning", ("ray", "network"),
                f"ray.init() here joins the Ray cluster at {recorded}, which another user (uid {uid}) started",
                detail=f"{path} was written by another user's `ray start` (Ray makes its temp dir writable for every "
                       "user of the machine). verl's ray.init() (no address, no RAY_ADDRESS) attaches to that cluster "
                       "instead of starting its own: the job runs in their workers, as their user, competing for "
                       "their NPUs and memory.",
                evidence={"current_cluster": recorded, "current_cluster_file": path, "owner_uid": uid},
                fix="Start your own: `ray start --head --port=<free port> --temp-dir=<your dir>` and `export "
                    "RAY_ADDRESS=<this host>:<that port>`, or `export RAY_ADDRESS=local` for a private instance per run.",
                source=SRC_RAY_INIT_ADDRESS)
        return
    yield finding(
        "ray-stale-cluster-file", "error", ("ray", "network"),
        f"{path} names the Ray cluster {recorded} on this host, but nothing listens on port {ep[1]}",
        detail="The cluster `ray start` recorded has died without `ray stop`. ray.init() without an address and "
               "without RAY_ADDRESS (verl's main_ppo) does not start a fresh instance: it keeps retrying that address "
               "(`Failed to connect to GCS at address ...`, 20 attempts, many minutes) and then fails with "
               f"`ConnectionError: Failed to connect to Ray cluster at {recorded}` (\"This is most likely due to a "
               "previous Ray instance that has since crashed\").",
        evidence={"current_cluster": recorded, "current_cluster_file": path, "listening": False,
                  "owner_uid": uid, "written_by_collecting_user": ray.get("current_cluster_mine")},
        fix=f"`ray stop` (it removes the file) or `rm {path}`; or start the head again (`ray start --head "
            f"--port={ep[1]}`) before the run.",
        source=SRC_RAY_INIT_ADDRESS)


@check("ray-address", "network", findings=("ray-address-not-listening",))
def ray_address(ctx: CheckContext) -> Iterator[Finding]:
    """RAY_ADDRESS, which ray.init() joins instead of starting its own instance, names a listening port when it is on
    this host."""
    snap = ctx.snapshot
    raw = _set_value(snap, "RAY_ADDRESS")
    ep = ray_endpoint(raw)
    if ep is None or _on_this_host(snap, ep[0]) is not True:
        return  # auto / local / a dashboard URL, or a head elsewhere this host cannot see
    ports = _listening_ports(snap)
    if ep[1] in ports:
        return
    recorded = _ray(snap).get("current_cluster")
    yield finding(
        "ray-address-not-listening", "error", ("ray", "env", "network"),
        f"RAY_ADDRESS={raw} names this host, but nothing listens on port {ep[1]}",
        detail="With RAY_ADDRESS set, ray.init() (verl's main_ppo) joins that address and never starts its own "
               "instance; with nothing listening there it fails with ConnectionError"
               + (" once the Ray Client's connection retries run out." if raw.strip().startswith("ray://") else
                  ", after retrying for minutes (`Failed to connect to GCS at address ...`): `Failed to connect to "
                  "Ray cluster at ...`."),
        evidence={"RAY_ADDRESS": raw, "listening": False, "current_cluster": recorded},
        fix="`unset RAY_ADDRESS` (ray.init() then starts its own instance, or joins the cluster `ray start` recorded"
            + (f", {recorded}" if isinstance(recorded, str) and recorded else "") + f"), or start the head first: "
            f"`ray start --head --port={ep[1]}`.",
        source=SRC_RAY_INIT_ADDRESS)
