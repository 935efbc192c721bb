"""Network facts: interfaces and addresses from psutil, listening ports from /proc/net/tcp through the root."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from doctor.probes._fs import RootFS
from doctor.probes.network import hostname_addresses, parse_proc_net_tcp, probe_network, probe_ray_files
from tests.fakes import write

TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:EA60 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0100007F:8AE2 0100007F:18EB 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0
"""
TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue rx_queue
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000
"""


def test_parse_proc_net_tcp() -> None:
    assert parse_proc_net_tcp(TCP) == [6379, 60000]
    assert parse_proc_net_tcp(TCP6) == [22]


def test_live_interfaces_list_loopback_up_with_its_address() -> None:
    net, errors = probe_network(RootFS("/"))
    assert errors == []
    names = [i["name"] for i in net["interfaces"]]
    assert names == sorted(names) and len(names) == len(set(names))
    assert all(":" in a or a.count(".") == 3 for i in net["interfaces"] for a in i["addresses"])  # IPv4/IPv6 only
    assert any(i["name"] == "lo" and "127.0.0.1" in i["addresses"] and i["up"] for i in net["interfaces"])


def test_a_port_this_test_listens_on_is_listed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        port = srv.getsockname()[1]
        net, _ = probe_network(RootFS("/"))
        assert port in net["listening_ports"]
    net, _ = probe_network(RootFS("/"))
    assert port not in net["listening_ports"]


def test_ports_come_through_the_root_prefix(tmp_path: Path) -> None:
    write(tmp_path / "proc/net/tcp", TCP)
    write(tmp_path / "proc/net/tcp6", TCP6)
    net, errors = probe_network(RootFS(str(tmp_path)))
    assert net["listening_ports"] == [22, 6379, 60000] and errors == []
    empty = tmp_path / "empty"
    empty.mkdir()
    net, _ = probe_network(RootFS(str(empty)))
    assert "listening_ports" not in net  # unknown, not "nothing listens"


def test_interfaces_are_kept_when_psutil_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A psutil error is recorded, never raised: the snapshot says interfaces are unknown-empty, with why."""
    def refused() -> dict:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(psutil, "net_if_addrs", refused)
    net, errors = probe_network(RootFS("/"))
    assert net["interfaces"] == [] and any("interfaces" in e and "not permitted" in e for e in errors)


@given(st.text())
def test_parse_never_raises(s: str) -> None:
    assert all(0 < p < 65536 for p in parse_proc_net_tcp(s))


def test_the_cluster_ray_start_recorded_is_read_through_the_root(tmp_path: Path) -> None:
    """`ray start` writes its GCS address to <ray temp dir>/ray_current_cluster; ray.init() without an address joins
    it. The probe reads that file where Ray would ($RAY_TMPDIR, else $TMPDIR, else /tmp; plus /ray), through the root."""
    write(tmp_path / "tmp/ray/ray_current_cluster", "10.1.2.3:6379\n")
    ray, errors = probe_ray_files(RootFS(str(tmp_path)), {})
    assert ray == {"current_cluster": "10.1.2.3:6379", "current_cluster_file": "/tmp/ray/ray_current_cluster",
                   "current_cluster_uid": os.geteuid(), "current_cluster_mine": True}
    assert errors == []
    if os.geteuid() == 0:  # another user's file (Ray's temp dir is world-writable)
        os.chown(tmp_path / "tmp/ray/ray_current_cluster", 1001, 1001)
        ray, _ = probe_ray_files(RootFS(str(tmp_path)), {})
        assert ray["current_cluster_uid"] == 1001 and ray["current_cluster_mine"] is False
    write(tmp_path / "scratch/ray/ray_current_cluster", "10.1.2.4:6380")
    ray, _ = probe_ray_files(RootFS(str(tmp_path)), {"TMPDIR": "/scratch"})
    assert ray["current_cluster"] == "10.1.2.4:6380"
    ray, _ = probe_ray_files(RootFS(str(tmp_path)), {"TMPDIR": "/scratch", "RAY_TMPDIR": "/elsewhere/"})
    assert ray == {"current_cluster": None, "current_cluster_file": "/elsewhere/ray/ray_current_cluster"}  # no file


def test_an_unreadable_cluster_file_is_unknown_with_the_reason(tmp_path: Path) -> None:
    write(tmp_path / "tmp/ray/ray_current_cluster/oops", "a directory where the file should be")
    ray, errors = probe_ray_files(RootFS(str(tmp_path)), {})
    assert "current_cluster" not in ray and errors and "directory" in errors[0]


def test_collect_records_the_cluster_file_in_the_ray_section(tmp_path: Path) -> None:
    from doctor.probes.host import CollectOptions, probe_net

    write(tmp_path / "proc/net/tcp", TCP)
    write(tmp_path / "tmp/ray/ray_current_cluster", "10.1.2.3:6379")
    out = probe_net(CollectOptions(root=str(tmp_path), environ={}))
    assert out.part["ray"]["current_cluster"] == "10.1.2.3:6379" and out.part["network"]["listening_ports"] == [6379, 60000]


def test_what_etc_hosts_gives_the_hostname(tmp_path: Path) -> None:
    """Gloo (no GLOO_SOCKET_IFNAME) binds what the hostname resolves to; glibc answers from /etc/hosts when
    nsswitch.conf's hosts: line starts with files. Read through the root prefix, never the network."""
    fs, errors = RootFS(str(tmp_path)), list[str]()
    assert hostname_addresses(fs, "node-0", errors) is None  # no nsswitch.conf: not decided by the file
    write(tmp_path / "etc/nsswitch.conf", "passwd: files\nhosts:          files mdns4_minimal [NOTFOUND=return] dns\n")
    write(tmp_path / "etc/hosts", "127.0.0.1\tlocalhost\n127.0.1.1\tNode-0.example node-0  # installer\n"
                                  "::1 localhost ip6-localhost\n# 10.0.0.5 node-0\n")
    assert hostname_addresses(fs, "node-0", errors) == ["127.0.1.1"]
    assert hostname_addresses(fs, "NODE-0.example", errors) == ["127.0.1.1"]  # names match in any case
    assert hostname_addresses(fs, "node-1", errors) == []  # named nowhere: DNS or another source decides
    write(tmp_path / "etc/hosts", "10.0.0.5 node-0\n127.0.1.1 node-0\n")
    assert hostname_addresses(fs, "node-0", errors) == ["10.0.0.5", "127.0.1.1"]
    write(tmp_path / "etc/nsswitch.conf", "hosts: dns files\n")  # DNS answers first: the file decides nothing
    assert hostname_addresses(fs, "node-0", errors) is None
    assert errors == []
    from doctor.probes.system import probe_system

    write(tmp_path / "etc/nsswitch.conf", "hosts: files dns\n")
    write(tmp_path / "etc/hosts", f"127.0.1.1 {os.uname().nodename}\n")
    host, _ = probe_system(RootFS(str(tmp_path)), {}, "/")  # a root prefix is another machine: its hostname is not ours
    assert "hostname_addresses" not in host


def test_the_bundle_keeps_etc_hosts_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host probe reads /etc/hosts for the hostname's lines; the file itself, which can list a site's every
    machine, is not copied into `collect --bundle`, unlike the other /etc files it reads."""
    import doctor.probes.system as system
    from doctor.probes.host import CollectOptions, probe_host

    write(tmp_path / "etc/hosts", "10.0.0.5 node-0\n10.0.0.6 node-1\n")
    write(tmp_path / "etc/nsswitch.conf", "hosts: files dns\n")

    def read_both(fs: RootFS, environ: object, cwd: str) -> tuple[dict[str, object], list[str]]:
        return {"hostname_addresses": hostname_addresses(fs, "node-0", [])}, []

    monkeypatch.setattr(system, "probe_system", read_both)
    out = probe_host(CollectOptions(root=str(tmp_path), environ={}))
    assert out.part["host"]["hostname_addresses"] == ["10.0.0.5"]
    assert not any("hosts" in name and "nsswitch" not in name for name in out.raw), list(out.raw)
    assert any("nsswitch" in name for name in out.raw), list(out.raw)
