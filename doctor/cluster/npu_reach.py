"""`doctor check --ray --deep`: from every node, a RoCE ping to one NPU address of every other node.

Why a second round inside the same Ray session rather than passing addresses up front: a node's NPU
addresses are only known once its own probe has run (hccn_tool on that node), and the nodes cannot see
each other's results. So the driver runs the normal probe on every node, collects each node's
`ascend.hccn` facts, then starts one more task per node (pinned, in parallel) that receives all nodes'
facts and pings one address per other node: O(nodes) pings per node, all nodes at once, each round
bounded by its own budget, no second `ray.init` and no second upload of the package.

Pairing: HCCL's inter-server plane joins device i of each node, so the k-th other node is pinged from
local device (k mod number of usable local devices) to that node's device with the same id when it has
an address (else its first addressed port). One device sends one ping at a time, the devices in parallel
(`doctor.probes.hccn.ping`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def _usable(h: Any) -> list[dict[str, Any]]:
    devs = h.get("devices") if isinstance(h, dict) else None
    if not isinstance(devs, list):
        return []
    ok = [d for d in devs if isinstance(d, dict) and isinstance(d.get("address"), str) and isinstance(d.get("id"), int)]
    return sorted(ok, key=lambda d: (d.get("link") == "DOWN", d["id"]))


def plan(me: str, hccn_by_node: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """(one result stub per other node, the pings to run as (local device, address)). Pure."""
    mine = [d for d in _usable(hccn_by_node.get(me)) if d.get("link") != "DOWN"]
    stubs: list[dict[str, Any]] = []
    pings: list[tuple[int, str]] = []
    for k, peer in enumerate(sorted(n for n in hccn_by_node if n != me)):
        theirs = _usable(hccn_by_node[peer])
        stub: dict[str, Any] = {"node": peer}
        if not mine:
            stub.update(ok=None, error="no local NPU port with an address and link UP to ping from")
        elif not theirs:
            stub.update(ok=None, error="that node reports no NPU address")
        else:
            src = mine[k % len(mine)]["id"]
            dst = next((d for d in theirs if d["id"] == src and d.get("link") != "DOWN"), theirs[0])
            stub.update(device=src, target_device=dst["id"], address=dst["address"])
            pings.append((src, dst["address"]))
        stubs.append(stub)
    return stubs, pings


def node_reach(me: str, peers: Mapping[str, Any], root: str = "/", budget: float = 20.0) -> dict[str, Any]:
    """Runs in a Ray task on node `me`: -> {"reach": [HccnPing dicts]} or {"reach_error": why}."""
    from doctor.cluster.collect_ray import node_root
    from doctor.probes.hccn import find_hccn_tool, ping

    exe = find_hccn_tool(node_root(root), os.environ.get("PATH"))
    if exe is None:
        return {"reach_error": "hccn_tool not found on this node"}
    stubs, pings = plan(me, peers)
    results = iter(ping(exe, pings, budget))
    for stub in stubs:
        if "address" in stub:
            r = next(results)
            stub.update(ok=r["ok"], loss_pct=r.get("loss_pct"), seconds=r.get("seconds"), error=r.get("error"))
    return {"reach": stubs}
