"""The NPUs' own RoCE ports on one host (`ascend.hccn`): up, addressed, healthy, configured as hccn.conf
says, in consistent subnets, not flapping.

A single-host job does not use these ports (NPUs of one server talk over HCCS), so on one host every
problem is a warning that says multi-node jobs will fail; in a cluster check (`--ray`, several `--from`)
it is an error. Checks stay silent on unknown facts: no hccn facts, or a port whose command gave no answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctor.checks.npu_net_facts import (
    FLAP_THRESHOLD,
    HEALTHY,
    NOT_PROBED,
    SRC_EXPORTER_HCCN,
    SRC_FAULTDIAG_LOGS,
    SRC_HCCN_CFG,
    SRC_HCCN_CMD,
    SRC_HCCN_TOOL_OPS,
    VLLM_ASCEND_MULTINODE,
    describe,
    fact,
    flaps,
    has_npus,
    hccn,
    port_network,
    ports,
    severity,
    why,
)
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import known

AREA = "npu_network"
COMPONENTS = ("network", "hccl", "npu")
SRC_MOUNT = VLLM_ASCEND_MULTINODE  # docker run -v .../driver/tools/hccn_tool -v /etc/hccn.conf


def _in_container(ctx: CheckContext) -> bool:
    h = ctx.snapshot.host
    return known(h) and fact(h, "in_container") is True


@check("roce-tool", AREA,
       findings=("hccn-conf-missing", "hccn-tool-failed", "hccn-tool-missing", "hccn-tool-timeout"))
def roce_tool(ctx: CheckContext) -> Iterator[Finding]:
    """hccn_tool ran on this NPU host (mounted into the container), and /etc/hccn.conf is there."""
    h = hccn(ctx.snapshot)
    if not known(h) or h is None:
        skip("the snapshot has no hccn_tool facts")
    if has_npus(ctx.snapshot) is not True:
        skip("no NPU is known on this host")
    inside = _in_container(ctx)
    where = "mounted into this container" if inside else "installed on this host"
    cluster = bool(ctx.options.get("multi_node"))
    status = fact(h, "status")
    if status == "missing":
        yield finding(
            "hccn-tool-missing", "warning" if cluster else "info", COMPONENTS,
            f"hccn_tool is not {where}: the NPUs' RoCE ports cannot be checked",
            detail="The doctor reads each NPU's link, address and health with the driver's hccn_tool; without it "
                   "a down port or a missing address shows up only as an HCCL timeout in a multi-node job.",
            evidence={"error": fact(h, "error"), "in_container": inside},
            fix=("Mount it: docker run ... -v /usr/local/Ascend/driver/tools/hccn_tool:"
                 "/usr/local/Ascend/driver/tools/hccn_tool (it is part of the Ascend driver package)." if inside else
                 "hccn_tool is part of the Ascend driver package (<driver install path>/driver/tools/hccn_tool, "
                 "the path /etc/ascend_install.info records): install the driver's full package on this host, or "
                 "put the driver's hccn_tool on PATH."),
            source=SRC_MOUNT)
    elif status in ("timeout", "error"):
        yield finding(
            f"hccn-tool-{'timeout' if status == 'timeout' else 'failed'}", "warning", COMPONENTS,
            f"hccn_tool {'did not answer in time' if status == 'timeout' else 'failed'}: "
            f"{str(fact(h, 'error'))[:160]}",
            detail="Facts of the ports it did not answer for are unknown. A hung hccn_tool usually means a sick "
                   "device or driver; other jobs on the host can also hold it busy.",
            evidence={"error": fact(h, "error"), "path": fact(h, "path")},
            fix="Run `hccn_tool -i 0 -link -g` by hand; check `npu-smi info` and the driver log (/var/log/npu).",
            source=SRC_HCCN_CMD)
    if fact(h, "conf") is None:
        yield finding(
            "hccn-conf-missing", "info", COMPONENTS,
            f"/etc/hccn.conf is not {'mounted into this container' if inside else 'present on this host'}",
            detail="hccn_tool writes every NPU address it sets to /etc/hccn.conf; rank-table generators and "
                   "Mooncake/LLM-DataDist read it. Inside a container it must be mounted from the host.",
            evidence={"in_container": inside},
            fix=("docker run ... -v /etc/hccn.conf:/etc/hccn.conf (or configure the NPU addresses with "
                 "`hccn_tool -i N -ip -s address A netmask M` on the host)." if inside else
                 "Configure the NPU addresses with `hccn_tool -i N -ip -s address A netmask M` (one per NPU): "
                 "hccn_tool records them in /etc/hccn.conf."),
            source=SRC_MOUNT)


def _group(ps: list[Any], test: Any) -> list[int]:
    return [fact(p, "id") for p in ps if test(p)]


@check("roce-ports", AREA, findings=("npu-link-flapping", "npu-net-detect-off", "npu-net-unhealthy",
                                     "npu-no-address", "npu-port-down"))
def roce_ports(ctx: CheckContext) -> Iterator[Finding]:
    """Every NPU's RoCE port is UP, has an address, a healthy `net health` and no repeated link drops."""
    ps = ports(ctx.snapshot)
    if not isinstance(ps, list):
        skip("the snapshot has no NPU RoCE ports")
    cluster = bool(ctx.options.get("multi_node"))
    sev = severity(cluster)
    down = _group(ps, lambda p: fact(p, "link") == "DOWN")
    if down:
        no_optic = _group([p for p in ps if fact(p, "id") in down], lambda p: fact(p, "optical_present") is False)
        yield finding(
            "npu-port-down", sev, COMPONENTS, f"RoCE port down on {describe(down)}",
            detail=why(cluster) + (f" No optical module is present on {describe(no_optic)}." if no_optic else ""),
            evidence={"devices": down, "optical_absent": no_optic},
            fix="Check the cable/optical module and the switch port of each device; `hccn_tool -i N -link -g` must "
                "say UP. `hccn_tool -i N -cfg recovery` restores a port taken down by software.",
            commands=tuple(f"hccn_tool -i {d} -link -g" for d in down[:4]),
            source=VLLM_ASCEND_MULTINODE)
    no_addr = _group(ps, lambda p: fact(p, "address") is None)
    if no_addr:
        yield finding(
            "npu-no-address", sev, COMPONENTS, f"No IP address on the RoCE port of {describe(no_addr)}",
            detail=why(cluster) + " HCCL needs every device's RoCE address (the rank table's device_ip).",
            evidence={"devices": no_addr},
            fix="Set each address on the host: hccn_tool -i N -ip -s address <A> netmask <M> (it is saved to "
                "/etc/hccn.conf and restored at boot).",
            commands=tuple(f"hccn_tool -i {d} -ip -g" for d in no_addr[:4]),
            source=SRC_HCCN_CMD)
    yield from _health(ps, cluster)
    flapping: dict[Any, int] = {}
    for p in ps:
        drops = flaps(p)
        if drops is not None and drops >= FLAP_THRESHOLD:
            flapping[fact(p, "id")] = drops
    if flapping:
        yield finding(
            "npu-link-flapping", sev, COMPONENTS,
            f"RoCE link dropped {max(flapping.values())} times since boot on {describe(flapping)}",
            detail=why(cluster) + f" More than {FLAP_THRESHOLD - 1} link drops since the driver started (a healthy "
                   "port shows one, at bring-up): a flapping link aborts collectives mid-job with error CQEs (EI0013).",
            evidence={"link_drops": flapping, "threshold": FLAP_THRESHOLD},
            fix="Replace or re-seat the optical module/cable and check the switch port's error counters; "
                "`hccn_tool -i N -link_stat -g` lists the last changes.",
            commands=tuple(f"hccn_tool -i {d} -link_stat -g" for d in list(flapping)[:4]),
            source=SRC_FAULTDIAG_LOGS)


def _health(ps: list[Any], cluster: bool) -> Iterator[Finding]:
    # a port that is DOWN always reports Fault: npu-port-down already says so
    health = {fact(p, "id"): fact(p, "health") for p in ps
              if isinstance(fact(p, "health"), str) and fact(p, "link") != "DOWN"}
    bad = {d: h for d, h in health.items() if h.lower() not in HEALTHY | NOT_PROBED}
    if bad:
        yield finding(
            "npu-net-unhealthy", severity(cluster), COMPONENTS,
            f"RoCE network health is not Success on {describe(bad)}: "
            + ", ".join(sorted({h for h in bad.values()})),
            detail=why(cluster) + " The device probes its netdetect address over the port; Fault, Socket fail, "
                   "Receive timeout, Unreachable or Detect ip set mean that probe fails.",
            evidence={"health": bad, "healthy_states": sorted(HEALTHY)},
            fix="Check the link (`-link -g`), the address (`-ip -g`) and the netdetect address "
                "(`-netdetect -g`, usually the gateway) of each device.",
            commands=tuple(f"hccn_tool -i {d} -net_health -g" for d in list(bad)[:4]),
            source=SRC_HCCN_TOOL_OPS)
    init = [d for d, h in health.items() if h.lower() in NOT_PROBED]
    if init:
        yield finding(
            "npu-net-detect-off", "info", COMPONENTS, f"RoCE health detection has not run on {describe(init)} (Init)",
            detail="`net health status: Init` means no netdetect address is set, so the port's reachability is "
                   "never probed; npu-exporter counts it as normal.",
            evidence={"devices": init},
            fix="Optionally set one: hccn_tool -i N -netdetect -s address <gateway or a peer NPU address>.",
            source=SRC_EXPORTER_HCCN)


@check("roce-config", AREA, findings=("hccn-conf-mismatch", "npu-subnet-inconsistent"))
def roce_config(ctx: CheckContext) -> Iterator[Finding]:
    """/etc/hccn.conf matches what the devices report, and the host's NPUs use one netmask."""
    ps = ports(ctx.snapshot)
    if not isinstance(ps, list):
        skip("the snapshot has no NPU RoCE ports")
    cluster = bool(ctx.options.get("multi_node"))
    yield from _conf_mismatch(ctx, ps, cluster)
    masks: dict[str, list[int]] = {}
    for p in ps:
        if port_network(p) is not None:
            masks.setdefault(fact(p, "netmask"), []).append(fact(p, "id"))
    if len(masks) > 1:
        yield finding(
            "npu-subnet-inconsistent", severity(cluster), COMPONENTS,
            "The NPUs of this host use different netmasks: " + "; ".join(
                f"{m} on {describe(ds)}" for m, ds in sorted(masks.items(), key=lambda kv: -len(kv[1]))),
            detail=why(cluster) + " HCCL connects device i of one server with the devices of the others; ports "
                   "configured with different masks end up in subnets that overlap or do not match.",
            evidence={"netmasks": masks},
            fix="Give every NPU of every node the same netmask (hccn_tool -i N -ip -s address A netmask M).",
            source=VLLM_ASCEND_MULTINODE)


def _conf_mismatch(ctx: CheckContext, ps: list[Any], cluster: bool) -> Iterator[Finding]:
    h = hccn(ctx.snapshot)
    conf = fact(h, "conf")
    if not known(conf) or conf is None or not isinstance(fact(conf, "devices"), list):
        return
    by_id = {fact(d, "id"): d for d in conf.devices}
    diffs: dict[int, dict[str, Any]] = {}
    for p in ps:
        c = by_id.get(fact(p, "id"))
        for key in ("address", "netmask"):
            dev_v = fact(p, key)
            if not known(dev_v) or (c is None and dev_v is None):
                continue
            conf_v = fact(c, key) if c is not None else None
            conf_v = None if not known(conf_v) else conf_v
            if conf_v != dev_v:
                diffs.setdefault(fact(p, "id"), {})[key] = {"device": dev_v, "hccn.conf": conf_v}
    if diffs:
        yield finding(
            "hccn-conf-mismatch", severity(cluster), COMPONENTS,
            f"/etc/hccn.conf differs from what {describe(diffs)} report",
            detail=why(cluster) + " hccn_tool restores /etc/hccn.conf at boot, and rank-table generators read the "
                   "file: the address other ranks are told is not the one the port has.",
            evidence={"differences": diffs},
            fix="Set the addresses again with hccn_tool -i N -ip -s address A netmask M (it rewrites the file), or "
                "mount the host's /etc/hccn.conf into the container.",
            source=SRC_HCCN_CFG)
