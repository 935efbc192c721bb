"""NPU RoCE checks on snapshots: one host (warnings naming the devices), a cluster (errors on the right
nodes), cross-node relations (duplicates, routes, skew, the --deep matrix), and silence on unknowns."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from doctor.checks.diagnose import diagnose
from doctor.cluster.table import table_rows
from doctor.snapshot.model import snapshot_from_dict


def port(i: int, address: str | None = "auto", **kw: Any) -> dict[str, Any]:
    d = {"id": i, "link": "UP", "address": f"10.0.{i}.11" if address == "auto" else address,
         "netmask": "255.255.255.0", "health": "Success", "speed_mbps": 200000, "link_up_count": 2,
         "optical_present": True, "gateway": None, "errors": {}}
    d.update(kw)
    return d


def snap(ports: list[dict[str, Any]] | None = None, *, status: str = "ok", conf: Any = "auto",
         in_container: bool = False, **hccn: Any) -> dict[str, Any]:
    ports = [port(i) for i in range(8)] if ports is None else ports
    h: dict[str, Any] = {"status": status, "path": "/usr/local/Ascend/driver/tools/hccn_tool", **hccn}
    if status != "missing":
        h["devices"] = ports
    if conf == "auto":
        conf = {"path": "/etc/hccn.conf", "devices": [{"id": p["id"], "address": p["address"], "netmask": p["netmask"]}
                                                      for p in ports if p.get("address")]}
    h["conf"] = conf
    return {"schema": "doctor.snapshot/1", "host": {"in_container": in_container},
            "ascend": {"device_files": [f"/dev/davinci{i}" for i in range(8)], "hccn": h}}


def run(*docs: dict[str, Any], names: list[str] | None = None, only=("npu_network", "cluster")):
    snaps = [snapshot_from_dict(copy.deepcopy(d)) for d in docs]
    if len(snaps) == 1:
        nodes = [(None, snaps[0], None)]
    else:
        nodes = [(n, s, None) for n, s in zip(names or [f"node-{c}" for c in "abcdefgh"], snaps, strict=False)]
    return diagnose(nodes, profiles=[], only=list(only), cluster=len(snaps) > 1).findings


def ids(findings) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for f in findings:
        out.setdefault(f.id, []).append(f)
    return out


def test_healthy_host_has_no_findings():
    assert run(snap()) == []


def test_one_port_down_on_an_eight_npu_host_warns_naming_the_device():
    ports = [port(i) for i in range(8)]
    ports[3] = port(3, link="DOWN", health="Fault", speed_mbps=None, optical_present=False)
    found = ids(run(snap(ports)))
    assert list(found) == ["npu-port-down"]  # the Fault health of a down port is not reported twice
    f = found["npu-port-down"][0]
    assert f.severity.value == "warning" and "NPU 3" in f.title and "multi-node job will fail" in f.detail
    assert f.evidence["devices"] == [3] and "No optical module" in f.detail


def test_no_address_unhealthy_and_init():
    ports = [port(i) for i in range(8)]
    ports[1] = port(1, address=None, netmask=None)
    ports[2] = port(2, health="Receive timeout")
    ports[4] = port(4, health="Init")
    found = ids(run(snap(ports, conf=None)))
    assert found["npu-no-address"][0].evidence["devices"] == [1]
    assert found["npu-net-unhealthy"][0].evidence["health"] == {2: "Receive timeout"}
    assert found["npu-net-detect-off"][0].severity.value == "info"
    assert found["hccn-conf-missing"][0].severity.value == "info"


@pytest.mark.parametrize(("ups", "downs", "flagged"), [(2, None, False), (3, None, False), (4, None, True),
                                                        (2, 3, True), (9, 2, False)])
def test_flap_threshold(ups, downs, flagged):
    ports = [port(i) for i in range(8)]
    ports[6] = port(6, link_up_count=ups, **({"link_down_count": downs} if downs is not None else {}))
    assert ("npu-link-flapping" in ids(run(snap(ports)))) is flagged


def test_hccn_conf_differing_from_the_device_and_mixed_netmasks():
    ports = [port(i) for i in range(8)]
    ports[7] = port(7, netmask="255.255.0.0")
    conf = {"path": "/etc/hccn.conf", "devices": [{"id": i, "address": f"10.0.{i}.11", "netmask": "255.255.255.0"}
                                                  for i in range(8)]}
    conf["devices"][2]["address"] = "10.0.2.99"
    found = ids(run(snap(ports, conf=conf)))
    mism = found["hccn-conf-mismatch"][0]
    assert set(mism.evidence["differences"]) == {2, 7}
    assert mism.evidence["differences"][2]["address"] == {"device": "10.0.2.11", "hccn.conf": "10.0.2.99"}
    assert "255.255.0.0 on NPU 7" in found["npu-subnet-inconsistent"][0].title


def test_missing_tool_in_a_container_says_not_mounted():
    found = ids(run(snap(status="missing", conf=None, in_container=True)))
    assert "not mounted into this container" in found["hccn-tool-missing"][0].title
    assert "not mounted into this container" in found["hccn-conf-missing"][0].title


def test_missing_tool_on_a_host_names_the_driver_package_not_a_docker_mount():
    found = ids(run(snap(status="missing", conf=None)))
    f = found["hccn-tool-missing"][0]
    assert "not installed on this host" in f.title
    assert "docker" not in f.fix.text and "driver" in f.fix.text
    c = found["hccn-conf-missing"][0]
    assert "docker" not in c.fix.text and "hccn_tool -i N -ip -s address" in c.fix.text
    # inside a container the mount stays the fix
    inside = ids(run(snap(status="missing", conf=None, in_container=True)))
    assert "docker run" in inside["hccn-tool-missing"][0].fix.text
    assert "docker run" in inside["hccn-conf-missing"][0].fix.text


def test_unknown_facts_are_silent():
    assert run({"schema": "doctor.snapshot/1"}) == []
    bare = snap([{"id": i, "errors": {"link": "timeout"}} for i in range(8)])
    assert [f.id for f in run(bare)] == []
    no_npu = snap(status="missing", conf=None)
    no_npu["ascend"]["device_files"] = []
    assert run(no_npu) == []


def test_hung_tool_is_a_warning_with_its_error():
    f = ids(run(snap(status="timeout", error="-i 0 -link -g: no answer within 10.0 s; killed")))
    assert "did not answer in time" in f["hccn-tool-timeout"][0].title


# -- a cluster -------------------------------------------------------------------------------------------


def three_nodes() -> list[dict[str, Any]]:
    """node-a 10.0.i.11, node-b with a down port 2, node-c sharing node-b's address on device 5."""
    a = snap([port(i, f"10.0.{i}.11") for i in range(8)])
    b_ports = [port(i, f"10.0.{i}.12") for i in range(8)]
    b_ports[2] = port(2, "10.0.2.12", link="DOWN", health="Fault", speed_mbps=None)
    c_ports = [port(i, f"10.0.{i}.13") for i in range(8)]
    c_ports[5] = port(5, "10.0.5.12")
    return [a, snap(b_ports), snap(c_ports)]


def test_cluster_errors_land_on_the_right_nodes():
    found = ids(run(*three_nodes()))
    down = found["npu-port-down"]
    assert [(f.node, f.severity.value, f.evidence["devices"]) for f in down] == [("node-b", "error", [2])]
    dup = found["npu-address-duplicate"]
    assert sorted(f.node for f in dup) == ["node-b", "node-c"] and all(f.severity.value == "error" for f in dup)
    assert "10.0.5.12" in dup[0].title and "node-c NPU 5" in next(f for f in dup if f.node == "node-b").title
    assert found["cluster-npu-ports-up-skew"][0].evidence["nodes"] == ["node-b"]


def test_subnets_without_route_between_nodes():
    a = snap([port(i, f"10.0.{i}.11") for i in range(8)])
    b = snap([port(i, f"10.1.{i}.12") for i in range(8)])
    found = ids(run(a, b))
    assert sorted(f.node for f in found["npu-subnet-unroutable"]) == ["node-a", "node-b"]
    # a gateway on every port of both nodes makes them routable
    gw = [snap([port(i, f"10.{n}.{i}.1{n}", gateway=f"10.{n}.{i}.1") for i in range(8)]) for n in (0, 1)]
    assert "npu-subnet-unroutable" not in ids(run(*gw))
    # a static route in hccn.conf too
    routed = copy.deepcopy(a)
    for d in routed["ascend"]["hccn"]["conf"]["devices"]:
        d["routes"] = [{"address": f"10.1.{d['id']}.0", "netmask": "255.255.255.0", "gateway": f"10.0.{d['id']}.1"}]
    assert [f.node for f in ids(run(routed, b))["npu-subnet-unroutable"]] == ["node-b"]


def test_speed_and_port_count_skew():
    a, b, c = snap(), snap(), snap([port(i, f"10.0.{i}.13", speed_mbps=100000) for i in range(4)])
    found = ids(run(a, b, c))
    assert found["cluster-npu-speed-skew"][0].evidence["nodes"] == ["node-c"]
    assert found["cluster-npu-port-count-skew"][0].evidence["nodes"] == ["node-c"]


def test_table_shows_ports_speed_and_duplicates():
    nodes = [(n, snapshot_from_dict(d), None) for n, d in zip(["node-a", "node-b", "node-c"], three_nodes(), strict=True)]
    headers, rows = table_rows(nodes)
    up, dup = headers.index("roce up"), headers.index("roce dup addr")
    assert [r[up] for r in rows] == [("8/8", False), ("7/8", True), ("8/8", False)]
    assert [r[dup] for r in rows] == [("-", False), ("10.0.5.12", True), ("10.0.5.12", True)]


def test_reach_matrix_names_the_failures():
    docs = three_nodes()
    reach = {
        "node-a": [{"node": "node-b", "device": 0, "address": "10.0.0.12", "ok": True},
                   {"node": "node-c", "device": 1, "address": "10.0.1.13", "ok": False, "error": "recv time out seq"}],
        "node-b": [{"node": "node-a", "device": 0, "address": "10.0.0.11", "ok": True},
                   {"node": "node-c", "device": 1, "address": "10.0.1.13", "ok": True}],
    }
    for name, d in zip(["node-a", "node-b"], docs, strict=False):
        d["ascend"]["hccn"]["reach"] = reach[name]
    docs[2]["ascend"]["hccn"]["reach_error"] = "timeout: no answer within 30 s"
    found = ids(run(*docs))
    bad = found["npu-unreachable"]
    assert [(f.node, f.evidence["nodes"]) for f in bad] == [("node-a", ["node-a", "node-c"])]
    assert "10.0.1.13 from NPU 1" in bad[0].title
    assert bad[0].evidence["matrix"]["node-a"] == {"node-b": "ok", "node-c": "FAIL"}
    assert [f.node for f in found["npu-reach-not-run"]] == ["node-c"]


def test_the_same_port_problems_are_errors_in_a_cluster_and_warnings_alone():
    ports = [port(i) for i in range(8)]
    ports[1] = port(1, address=None, netmask=None)
    ports[6] = port(6, link_up_count=9)
    alone = {f.id: f.severity.value for f in run(snap(ports, conf=None)) if f.id.startswith("npu-")}
    assert alone == {"npu-no-address": "warning", "npu-link-flapping": "warning"}
    both = run(snap(ports, conf=None), snap([port(i, f"10.0.{i}.12") for i in range(8)]))
    cluster = {(f.id, f.node): f.severity.value for f in both if f.id.startswith("npu-")}
    assert cluster == {("npu-no-address", "node-a"): "error", ("npu-link-flapping", "node-a"): "error"}
