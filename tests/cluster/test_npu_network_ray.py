"""The NPU network across a REAL (simulated, tests/ray_sim.py) 3-node Ray cluster, each node with its own fake
Ascend root and fake hccn_tool (tests/fake_hccn.py):

  head     NPU i at 10.0.i.11, all UP
  w-down   NPU i at 10.0.i.12, port 2 DOWN
  w-dup    NPU i at 10.0.i.13, but NPU 5 at 10.0.5.12: w-down's address
The fakes answer every RoCE ping except head -> 10.0.1.13 (head's NPU 1 cannot reach w-dup's NPU 1).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from tests.fake_hccn import install_hccn_tool, roce_port  # noqa: E402
from tests.fakes import make_ascend_root  # noqa: E402
from tests.ray_sim import SimCluster  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ADDRS = {"head": [f"10.0.{i}.11" for i in range(8)], "w-down": [f"10.0.{i}.12" for i in range(8)],
         "w-dup": [f"10.0.{i}.13" if i != 5 else "10.0.5.12" for i in range(8)]}
EVERY = {a for addrs in ADDRS.values() for a in addrs}


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("roce")
    envs = {}
    for name, addrs in ADDRS.items():
        root = make_ascend_root(base / name, "a2-cann8.3rc1-old-layout")
        ports = {i: roce_port(a, link="DOWN" if (name, i) == ("w-down", 2) else "UP") for i, a in enumerate(addrs)}
        install_hccn_tool(root, ports, reachable=EVERY - ({"10.0.1.13"} if name == "head" else set()))
        envs[name] = {"DOCTOR_ROOT": str(root)}
    c = SimCluster()
    try:
        c.start([(n, envs[n], {"NPU": 8}) for n in ADDRS])
        yield c
    finally:
        c.stop()


def _full(sim: SimCluster, name: str) -> str:
    return next(n.full_name for n in sim.nodes if n.name == name)


def _check(sim: SimCluster, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "doctor", "check", "--ray", "--address", sim.address,
                           "--ray-timeout", "60", "--only", "npu_network", "--only", "cluster", *extra],
                          capture_output=True, text=True, timeout=240, cwd=str(REPO))


def test_check_ray_json_names_the_down_port_and_the_duplicate_address(sim: SimCluster):
    p = _check(sim, "--json")
    assert p.returncode == 1, p.stderr
    findings = json.loads(p.stdout)["findings"]
    down = [f for f in findings if f["id"] == "npu-port-down"]
    assert [(f["node"], f["severity"], f["evidence"]["devices"]) for f in down] == [(_full(sim, "w-down"), "error", [2])]
    dup = sorted((f["node"], f["severity"]) for f in findings if f["id"] == "npu-address-duplicate")
    assert dup == sorted([(_full(sim, "w-down"), "error"), (_full(sim, "w-dup"), "error")])
    assert all("10.0.5.12" in f["title"] for f in findings if f["id"] == "npu-address-duplicate")
    assert not [f for f in findings if f["id"] == "npu-unreachable"]  # no --deep: no pings


def test_deep_reports_the_unreachable_pair_within_its_bound(sim: SimCluster):
    t0 = time.monotonic()
    p = _check(sim, "--deep", "--deep-timeout", "20", "--json")
    assert time.monotonic() - t0 < 120
    assert p.returncode == 1, p.stderr
    findings = json.loads(p.stdout)["findings"]
    [bad] = [f for f in findings if f["id"] == "npu-unreachable"]
    head, dup = _full(sim, "head"), _full(sim, "w-dup")
    assert bad["node"] == head and bad["evidence"]["nodes"] == [head, dup]
    assert "10.0.1.13 from NPU 1" in bad["title"]
    matrix = bad["evidence"]["matrix"]
    assert matrix[head] == {_full(sim, "w-down"): "ok", dup: "FAIL"}
    assert all(v == "ok" for src, row in matrix.items() if src != head for v in row.values())
    assert len(matrix) == 3 and all(len(row) == 2 for row in matrix.values())  # one ping per other node


def test_human_output_has_the_roce_columns_and_the_matrix(sim: SimCluster):
    p = _check(sim, "--deep", "--deep-timeout", "20")
    out = p.stdout + p.stderr
    assert "roce up" in out and "7/8*" in out and "roce dup addr" in out
    assert "RoCE reachability" in out and "FAIL" in out
    assert "unreachable: head/" in out and "10.0.1.13" in out
