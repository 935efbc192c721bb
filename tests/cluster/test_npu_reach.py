"""The `--ray --deep` ping plan (pure) and the node-side round against a fake hccn_tool, without Ray."""

from __future__ import annotations

from pathlib import Path

from doctor.cluster.npu_reach import node_reach, plan
from tests.fake_hccn import eight_ports, install_hccn_tool


def facts(host: int, down: tuple[int, ...] = (), n: int = 8) -> dict:
    return {"devices": [{"id": i, "address": f"10.0.{i}.{host}", "link": "DOWN" if i in down else "UP"}
                        for i in range(n)]}


def test_one_ping_per_other_node_spread_over_the_local_devices():
    peers = {"a": facts(11), "b": facts(12), "c": facts(13), "d": facts(14)}
    stubs, pings = plan("a", peers)
    assert [s["node"] for s in stubs] == ["b", "c", "d"]
    assert pings == [(0, "10.0.0.12"), (1, "10.0.1.13"), (2, "10.0.2.14")]  # device k -> the peer's device k


def test_down_ports_are_not_used_and_missing_addresses_are_explained():
    peers = {"a": facts(11, down=(0,)), "b": facts(12, down=(1,)), "c": {"devices": [{"id": 0, "address": None}]}}
    stubs, pings = plan("a", peers)
    # a's device 0 is down, so it pings from device 1; b's device 1 is down, so it is pinged on device 0
    assert pings == [(1, "10.0.0.12")]
    b = next(s for s in stubs if s["node"] == "b")
    assert (b["device"], b["target_device"]) == (1, 0)
    assert next(s for s in stubs if s["node"] == "c")["ok"] is None
    lonely, no_pings = plan("x", {"x": {"devices": []}, "b": facts(12)})
    assert no_pings == [] and "no local NPU port" in lonely[0]["error"]


def test_node_round_against_the_fake_tool(tmp_path: Path, monkeypatch):
    install_hccn_tool(tmp_path, eight_ports(), reachable={"10.0.0.12"})
    monkeypatch.delenv("DOCTOR_ROOT", raising=False)
    out = node_reach("a", {"a": facts(11), "b": facts(12), "c": facts(13)}, root=str(tmp_path), budget=10)
    by = {r["node"]: r for r in out["reach"]}
    assert by["b"]["ok"] is True and by["b"]["loss_pct"] == 0.0
    assert by["c"]["ok"] is False and "recv time out" in by["c"]["error"]
    assert node_reach("a", {}, root=str(tmp_path / "none"))["reach_error"].startswith("hccn_tool not found")
