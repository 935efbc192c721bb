"""Cross-node checks of the NPUs' RoCE ports: duplicate addresses, subnets no configured route joins, speed,
port-count and port-state skew, and the `--deep` reachability matrix (`ascend.hccn.reach`).

Findings about one node name it (`node`); the relation is in `evidence.nodes`. Pairing follows HCCL's
inter-server plane: device i of one node talks to device i of the others (the A2 layout puts device i of
every server in one subnet, e.g. 192.168.10i.0/24), so addresses and routes are compared device by device.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctor.checks.cluster_facts import Value, collect, describe_groups, odd_ones
from doctor.checks.npu_net_facts import (
    SRC_HCCN_CMD,
    VLLM_ASCEND_MULTINODE,
    addressed,
    conf_routes,
    fact,
    hccn,
    ports,
    ports_up_value,
    reachable_static,
    speed_value,
)
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding, short_name
from doctor.snapshot.model import Snapshot, known

AREA = "cluster"
COMPONENTS = ("network", "hccl", "cluster")


def _alive(ctx: CheckContext) -> list[tuple[str, Snapshot]]:
    return [(n, s) for n, s, _e in ctx.nodes if s is not None]


def duplicate_addresses(nodes: list[tuple[str, Snapshot]]) -> dict[str, list[tuple[str, int]]]:
    """address -> [(node, device)] for every NPU address used more than once in the cluster."""
    seen: dict[str, list[tuple[str, int]]] = {}
    for name, snap in nodes:
        for p in addressed(snap):
            seen.setdefault(p.address, []).append((name, fact(p, "id")))
    return {a: users for a, users in seen.items() if len(users) > 1}


@check("cluster-npu-addresses", AREA, cluster=True, findings=("npu-address-duplicate",))
def npu_addresses(ctx: CheckContext) -> Iterator[Finding]:
    """No NPU address is used twice in the cluster."""
    dups = duplicate_addresses(_alive(ctx))
    for node in sorted({n for users in dups.values() for n, _d in users}):
        mine = {a: users for a, users in dups.items() if any(n == node for n, _d in users)}
        parts = []
        for addr, users in sorted(mine.items()):
            here = [d for n, d in users if n == node]
            others = [f"{short_name(n)} NPU {d}" for n, d in users if n != node] or [f"NPU {d}" for d in here[1:]]
            parts.append(f"{addr} (NPU {here[0]}) is also on {', '.join(others)}")
        yield finding(
            "npu-address-duplicate", "error", COMPONENTS,
            f"Duplicate NPU address on node {short_name(node)}: " + "; ".join(parts),
            detail="Two RoCE ports answer for one address: HCCL links to the wrong NPU or ARP flips between them, "
                   "so collectives hang or fail with error CQEs. Every device_ip in the rank table must be unique.",
            evidence={"nodes": sorted({n for users in mine.values() for n, _d in users}),
                      "addresses": {a: [f"{n}:{d}" for n, d in users] for a, users in mine.items()}},
            node=node,
            fix="Give one of the ports another address: hccn_tool -i N -ip -s address <unused A> netmask <M>.",
            source=SRC_HCCN_CMD)


@check("cluster-npu-routes", AREA, cluster=True, findings=("npu-subnet-unroutable",))
def npu_routes(ctx: CheckContext) -> Iterator[Finding]:
    """Device i of every node can reach device i of every other node by subnet, gateway or static route."""
    alive = _alive(ctx)
    for name, snap in alive:
        bad: dict[str, list[str]] = {}
        for p in addressed(snap):
            dev = fact(p, "id")
            for other, osnap in alive:
                if other == name:
                    continue
                peer = next((q for q in addressed(osnap) if fact(q, "id") == dev), None)
                if peer is None:
                    continue
                if reachable_static(p, peer.address, conf_routes(snap, dev)) is False:
                    bad.setdefault(short_name(other), []).append(f"NPU {dev} {p.address} -> {peer.address}")
        if not bad:
            continue
        yield finding(
            "npu-subnet-unroutable", "error", COMPONENTS,
            f"NPUs of node {short_name(name)} have no route to " + ", ".join(sorted(bad)),
            detail="These ports are in other subnets than their peers on the other nodes and have neither a "
                   "default gateway nor a static route to them, so HCCL's cross-node links cannot be built.",
            evidence={"nodes": [name, *sorted(bad)], "unroutable": bad},
            node=name,
            fix="Put device i of every node in one subnet, or set a gateway on each port (hccn_tool -i N -gateway "
                "-s gateway G) or a route (hccn_tool -i N -route -s address A netmask M gateway G).",
            source=VLLM_ASCEND_MULTINODE)


@check("cluster-npu-ports", AREA, cluster=True,
       findings=("cluster-npu-port-count-skew", "cluster-npu-ports-up-skew", "cluster-npu-speed-skew"))
def npu_port_skew(ctx: CheckContext) -> Iterator[Finding]:
    """Every node has the same number of RoCE ports, all UP, at the same speed."""
    alive = _alive(ctx)
    counts = collect(alive, _port_count)
    for label, values, fid, sev in (
        ("number of NPU RoCE ports", counts, "cluster-npu-port-count-skew", "warning"),
        ("RoCE ports up", collect(alive, ports_up_value), "cluster-npu-ports-up-skew", "warning"),
        ("RoCE port speed", collect(alive, speed_value), "cluster-npu-speed-skew", "warning"),
    ):
        odd, groups = odd_ones(values)
        if not odd:
            continue
        yield finding(
            fid, sev, COMPONENTS, f"{label[0].upper()}{label[1:]} differs between nodes: {describe_groups(values, groups)}",
            detail="Collectives run at the pace of the slowest link, and a node with fewer or down ports cannot "
                   "host the same ranks as the others.",
            evidence={"nodes": odd, "values": {n: v.text for n, v in values.items()}},
            fix="Bring every node to the majority's ports and speed (hccn_tool -i N -link -g / -speed -g).",
            source=VLLM_ASCEND_MULTINODE)


def _port_count(snap: Snapshot) -> Any:
    ps = ports(snap)
    return Value(str(len(ps)), ("n", len(ps))) if isinstance(ps, list) and ps else None


@check("cluster-npu-reach", AREA, cluster=True, findings=("npu-reach-not-run", "npu-unreachable"))
def npu_reach(ctx: CheckContext) -> Iterator[Finding]:
    """`--deep`: every node's RoCE ping to one NPU address of every other node got an answer."""
    matrix = reach_matrix(_alive(ctx))
    if not matrix:
        skip("no RoCE ping round in the snapshots (`doctor check --ray --deep`)")
    for name, row in matrix.items():
        failed = {peer: r for peer, r in row.items() if r.get("ok") is False}
        unknown = {peer: r for peer, r in row.items() if r.get("ok") is None}
        if failed:
            yield finding(
                "npu-unreachable", "error", COMPONENTS,
                f"Node {short_name(name)} cannot reach " + "; ".join(
                    f"{short_name(p)} ({r.get('address')} from NPU {r.get('device')})" for p, r in sorted(failed.items())),
                detail="A RoCE ping from this node's NPU got no answer from the other node's NPU: HCCL links "
                       "between them will time out (EI0006 / EI0002 / EI0013).",
                evidence={"nodes": [name, *sorted(failed)], "failed": failed, "matrix": _cells(matrix)},
                node=name,
                fix="Check both ports (-link -g, -net_health -g), the subnets/gateways/routes, and the switch "
                    "between them; repeat with hccn_tool -i D -ping -g address X.",
                commands=tuple(f"hccn_tool -i {r.get('device')} -ping -g address {r.get('address')}"
                               for r in list(failed.values())[:4]),
                source=VLLM_ASCEND_MULTINODE)
        if unknown:
            yield finding(
                "npu-reach-not-run", "info", COMPONENTS,
                f"Reachability from node {short_name(name)} to {', '.join(map(short_name, sorted(unknown)))} "
                "could not be tested",
                evidence={"nodes": [name, *sorted(unknown)], "why": {p: r.get("error") for p, r in unknown.items()}},
                node=name, source=VLLM_ASCEND_MULTINODE)


def reach_matrix(nodes: list[tuple[str, Snapshot]]) -> dict[str, dict[str, dict[str, Any]]]:
    """{source node: {target node: ping result}} from every node's `ascend.hccn.reach`; a node whose round
    failed has every peer unknown with its `reach_error`."""
    names = [n for n, _s in nodes]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, snap in nodes:
        h = hccn(snap)
        if not known(h) or h is None:
            continue
        err = fact(h, "reach_error")
        reach = fact(h, "reach")
        if isinstance(reach, list):
            row = {fact(r, "node"): {k: fact(r, k) for k in ("device", "address", "target_device", "ok", "loss_pct",
                                                            "error") if known(fact(r, k))} for r in reach}
            out[name] = {p: row[p] for p in names if p in row}
        elif isinstance(err, str):
            out[name] = {p: {"ok": None, "error": err} for p in names if p != name}
    return out


def _cells(matrix: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, str]]:
    return {src: {dst: "ok" if r.get("ok") else "FAIL" if r.get("ok") is False else "?" for dst, r in row.items()}
            for src, row in matrix.items()}


def cross_node_columns(nodes: list[tuple[str, Snapshot]]) -> list[tuple[str, dict[str, Value], set[str]]]:
    """Node-table columns that need every node at once: duplicate NPU addresses (shown only when there are
    some) and, after `--deep`, how many other nodes each node reached."""
    cols: list[tuple[str, dict[str, Value], set[str]]] = []
    dups = duplicate_addresses(nodes)
    if dups:
        mine = {n: sorted({a for a, users in dups.items() if any(u == n for u, _d in users)}) for n, _s in nodes}
        cols.append(("roce dup addr", {n: Value(",".join(a) or "-", ("dup", tuple(a))) for n, a in mine.items()},
                     {n for n, a in mine.items() if a}))
    matrix = reach_matrix(nodes)
    if matrix:
        cells = {n: Value(f"{sum(1 for r in row.values() if r.get('ok'))}/{len(row)}", ("reach", n))
                 for n, row in matrix.items()}
        cols.append(("roce reach", cells, {n for n, row in matrix.items() if any(r.get("ok") is not True
                                                                             for r in row.values())}))
    return cols
