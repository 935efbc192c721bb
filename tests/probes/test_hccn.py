"""hccn_tool parsers against the recorded outputs (tests/fixtures/hccn, SOURCES.md), and the bounded probe
against a fake hccn_tool: up, down, no address, unhealthy, a hang, exit 1, garbage, no tool at all."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from doctor.probes import hccn_parse as P
from doctor.probes.hccn import find_hccn_tool, probe_hccn
from tests.fake_hccn import (
    FIXTURES,
    eight_ports,
    fixture,
    hccn_conf,
    install_hccn_conf,
    install_hccn_tool,
    roce_port,
)
from tests.fakes import make_ascend_root
from tests.probes.test_npu_smi import _alive

CASES = [
    ("link-up.txt", P.parse_link, {"link": "UP"}),
    ("link-down.txt", P.parse_link, {"link": "DOWN"}),
    ("ip-10.10.0.10.txt", P.parse_ip, {"address": "10.10.0.10", "netmask": "255.255.255.0"}),
    ("ip-29.1.112.213.txt", P.parse_ip, {"address": "29.1.112.213", "netmask": "255.255.0.0"}),
    ("ip-none.txt", P.parse_ip, {"address": None, "netmask": None}),
    ("net-health-success.txt", P.parse_net_health, {"health": "Success"}),
    ("net-health-fault.txt", P.parse_net_health, {"health": "Fault"}),
    ("net-health-init.txt", P.parse_net_health, {"health": "Init"}),
    ("net-health-socket-failed.txt", P.parse_net_health, {"health": "Socket failed"}),
    ("speed-100000.txt", P.parse_speed, {"speed_mbps": 100000}),
    ("speed-unknown.txt", P.parse_speed, {"speed_mbps": None}),
    ("optical-not-present.txt", P.parse_optical, {"optical_present": False}),
    ("optical-present.txt", P.parse_optical, {"optical_present": True}),
    ("gateway.txt", P.parse_gateway, {"gateway": "29.1.0.1"}),
    ("gateway-none.txt", P.parse_gateway, {"gateway": None}),
]


@pytest.mark.parametrize(("name", "parse", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_recorded_output_parses_to_its_facts(name, parse, expected):
    assert parse(fixture(name)) == expected


def test_every_fixture_has_a_source_and_a_test():
    sources = (FIXTURES / "SOURCES.md").read_text()
    files = sorted(p.name for p in FIXTURES.iterdir() if p.name != "SOURCES.md")
    assert all(f"| {f} |" in sources for f in files)
    tested = {c[0] for c in CASES} | {"link-stat-devid.txt", "link-stat-device.txt", "ping-ok.txt", "ping-timeout.txt",
                                       "hccn-a2.conf", "optical-control-link-unreachable.txt"}
    assert set(files) == tested


@pytest.mark.parametrize("name", ["link-stat-devid.txt", "link-stat-device.txt"])
def test_link_stat_in_both_prefix_styles(name):
    got = P.parse_link_stat(fixture(name))
    assert got["link_up_count"] == 2 and got["link_down_count"] is None
    assert [r["link"] for r in got["records"]] == ["UP", "DOWN", "UP"]


def test_link_stat_with_the_newer_down_count_line():
    text = fixture("link-stat-devid.txt").replace("[devid 0]link change", "[devid 0]link down count     : 7\n[devid 0]link change")
    assert P.parse_link_stat(text)["link_down_count"] == 7


def test_ping_answers():
    assert P.parse_ping(fixture("ping-ok.txt"), 0) == {"ok": True, "loss_pct": 0.0}
    bad = P.parse_ping(fixture("ping-timeout.txt"), 1)
    assert bad["ok"] is False and "recv time out" in bad["error"]
    assert P.parse_ping("3 packets transmitted, 0 received, 100.00% packet loss", 0)["ok"] is False
    assert P.parse_ping("", None)["ok"] is None


def test_optical_control_link_unreachable_is_no_answer():
    assert "control link unreachable" in P.parse_optical(fixture("optical-control-link-unreachable.txt"))["error"]


def test_real_hccn_conf_and_routes():
    conf = P.parse_hccn_conf(fixture("hccn-a2.conf"))
    assert conf["devices"][0] == {"address": "29.1.137.205", "netmask": "255.255.0.0", "netdetect": "29.1.0.1",
                                  "gateway": "29.1.0.1", "send_arp_status": "1"}
    assert conf["devices"][7]["address"] == "29.1.170.143" and conf["ignored"] == 1  # the post's "..." line
    routed = P.parse_hccn_conf("address_3=10.0.3.11\nroute_address_10.1.0.0_netmask_255.255.0.0_3=gateway_10.0.3.1\n")
    assert routed["devices"][3]["routes"] == [{"address": "10.1.0.0", "netmask": "255.255.0.0", "gateway": "10.0.3.1"}]


@pytest.mark.parametrize("junk", ["", "garbage", "\x00\xff", "link status:", "ipaddr:999", b"\xff\xfe"])
def test_unrecognised_output_is_an_error_not_an_exception(junk):
    for parse in (P.parse_link, P.parse_ip, P.parse_net_health, P.parse_speed, P.parse_link_stat, P.parse_optical,
                  P.parse_gateway):
        out = parse(junk)
        assert "error" in out or out.get("address") is None


# -- the probe -------------------------------------------------------------------------------------------


@pytest.fixture
def a2(tmp_path: Path) -> Path:
    return make_ascend_root(tmp_path, "a2-cann8.3rc1-old-layout")


def test_eight_ports_one_down_one_without_address(a2: Path):
    ports = eight_ports()
    ports[3] = roce_port("10.0.3.11", link="DOWN")
    ports[5] = roce_port(None)
    install_hccn_tool(a2, ports)
    install_hccn_conf(a2, hccn_conf({i: f"10.0.{i}.11" for i in range(8)}))
    facts, runs, fs = probe_hccn(10, root=str(a2), path="")
    assert facts["status"] == "ok" and len(runs) == 8 * 7
    devs = {d["id"]: d for d in facts["devices"]}
    assert devs[0] == {"id": 0, "link": "UP", "address": "10.0.0.11", "netmask": "255.255.255.0", "health": "Success",
                       "speed_mbps": 200000, "link_up_count": 2, "optical_present": True, "gateway": None, "errors": {}}
    assert devs[3]["link"] == "DOWN" and devs[3]["health"] == "Fault" and devs[3]["speed_mbps"] is None
    assert devs[5]["address"] is None and devs[5]["netmask"] is None
    assert facts["conf"]["devices"][5]["address"] == "10.0.5.11"
    assert "/etc/hccn.conf" in fs.files_read


def test_a_hung_hccn_tool_costs_at_most_its_budget_and_leaves_nothing(a2: Path):
    exe = install_hccn_tool(a2, "hang")
    t0 = time.monotonic()
    facts, runs, _fs = probe_hccn(1.5, root=str(a2), path="")
    took = time.monotonic() - t0
    assert took < 60, took  # the fake sleeps 600 s: the budget ended it (how soon is the machine's load, not asserted)
    assert facts["status"] == "timeout" and "no answer within" in facts["error"]
    assert all(not d.get("link") for d in facts["devices"]) and all("link" in d["errors"] for d in facts["devices"])
    pids = [int(x) for x in (exe.parent / ".hccn-fake" / "pids").read_text().split()]
    assert len(pids) == 16  # 8 devices x (the tool + the child it started)
    for pid in pids:
        for _ in range(50):
            if not _alive(pid):
                break
            time.sleep(0.02)
        assert not _alive(pid), pid


@pytest.mark.parametrize("mode", ["exit1", "garbage"])
def test_failing_or_garbage_tool_gives_errors_not_facts(a2: Path, mode: str):
    install_hccn_tool(a2, mode)
    facts, _runs, _fs = probe_hccn(10, root=str(a2), path="")
    assert facts["status"] == "ok"  # it ran: each port's facts are unknown, with the reason
    for d in facts["devices"]:
        assert set(d) == {"id", "errors"} and len(d["errors"]) == 7
    if mode == "exit1":
        assert "exit 1" in facts["devices"][0]["errors"]["link"]


def test_no_hccn_tool_runs_nothing_and_says_missing(a2: Path):
    facts, runs, _fs = probe_hccn(10, root=str(a2), path="")
    assert facts["status"] == "missing" and runs == [] and facts["conf"] is None  # no process was started


def test_tool_on_path_is_used_when_the_driver_has_none(tmp_path: Path, a2: Path):
    exe = install_hccn_tool(a2, eight_ports(), path=tmp_path / "bin" / "hccn_tool")
    assert find_hccn_tool(str(a2), str(tmp_path / "bin")) == str(exe)
    facts, _runs, _fs = probe_hccn(10, root=str(a2), path=str(tmp_path / "bin"))
    assert facts["path"] == str(exe) and len(facts["devices"]) == 8


def test_unhealthy_states_are_recorded_as_printed(a2: Path):
    install_hccn_tool(a2, {0: roce_port("10.0.0.11", health="Receive timeout"), 1: roce_port("10.0.1.11", health="Init")})
    facts, _runs, _fs = probe_hccn(10, root=str(a2), path="")
    assert [d["health"] for d in facts["devices"][:2]] == ["Receive timeout", "Init"]
    # davinci2..7 exist but the fake knows no such device: "The device is not exist!" for each command
    assert facts["devices"][2]["errors"]["link"].startswith("exit 1")


# -- in the whole collection -------------------------------------------------------------------------------


def test_collection_records_ports_and_bundles_the_raw_outputs(a2: Path, tmp_path: Path):
    import json
    import tarfile

    import jsonschema

    from doctor.probes.host import CollectOptions, collect
    from doctor.snapshot.bundle import write_bundle
    from tests.conftest import SCHEMAS

    install_hccn_tool(a2, eight_ports())
    install_hccn_conf(a2, hccn_conf({i: f"10.0.{i}.11" for i in range(8)}))
    col = collect(CollectOptions(root=str(a2), path="", environ={"PATH": "/usr/bin:/bin"}))
    doc = col.snapshot.to_dict()
    jsonschema.validate(doc, json.loads((SCHEMAS / "snapshot.schema.json").read_text()))
    assert doc["ascend"]["hccn"]["status"] == "ok" and len(doc["ascend"]["hccn"]["devices"]) == 8
    assert col.probes["hccn"].status == "ok"
    names = write_bundle(str(tmp_path / "b.tar.gz"), col, col.snapshot.to_json())
    assert any(n.endswith("hccn/commands.txt") for n in names) and any(n.endswith("files/etc/hccn.conf") for n in names)
    with tarfile.open(tmp_path / "b.tar.gz") as t:
        link = next(m for m in t.getnames() if "hccn/0-i_0_link_g.stdout" in m)
        assert t.extractfile(link).read() == b"link status: UP\n"


def test_hung_hccn_tool_does_not_hold_up_the_collection(a2: Path):
    from doctor.probes.host import CollectOptions, collect

    install_hccn_tool(a2, "hang")
    t0 = time.monotonic()
    col = collect(CollectOptions(root=str(a2), path="", environ={"PATH": "/usr/bin:/bin"}, hccn_timeout=1.0))
    assert time.monotonic() - t0 < 60  # the fake sleeps 600 s: ended at its timeout, not waited for
    assert col.snapshot.ascend.hccn.status == "timeout"


def test_a_driver_installed_under_another_path_has_its_hccn_tool_found(tmp_path: Path, a2: Path):
    # `Ascend-hdk-...-npu-driver_*.run --full --install-path=/opt/Ascend` records the path in /etc/ascend_install.info;
    # the driver (and its tools/hccn_tool) then live there, not under /usr/local/Ascend
    import shutil

    (a2 / "opt/Ascend").mkdir(parents=True)
    shutil.move(str(a2 / "usr/local/Ascend/driver"), str(a2 / "opt/Ascend/driver"))
    info = a2 / "etc/ascend_install.info"
    info.write_text(info.read_text().replace("Driver_Install_Path_Param=/usr/local/Ascend",
                                             "Driver_Install_Path_Param=/opt/Ascend"))
    exe = install_hccn_tool(a2, eight_ports(), path=a2 / "opt/Ascend/driver/tools/hccn_tool")
    facts, _runs, _fs = probe_hccn(10, root=str(a2), path="")
    assert facts["status"] == "ok" and facts["path"] == str(exe) and len(facts["devices"]) == 8
    install_hccn_tool(a2, eight_ports())  # the default path too: the recorded install is the one used
    assert probe_hccn(10, root=str(a2), path="")[0]["path"] == str(exe)


def test_a_missing_tool_names_the_driver_path_it_looked_in(a2: Path):
    info = a2 / "etc/ascend_install.info"
    info.write_text(info.read_text().replace("Driver_Install_Path_Param=/usr/local/Ascend",
                                             "Driver_Install_Path_Param=/opt/Ascend"))
    facts, _runs, _fs = probe_hccn(10, root=str(a2), path="")
    assert facts["status"] == "missing" and "/opt/Ascend/driver/tools/hccn_tool" in facts["error"]
