"""Network facts: interfaces and listening ports, with the /proc/net/tcp fallback when psutil is refused."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from doctor.probes._fs import RootFS
from doctor.probes.network import parse_proc_net_tcp, probe_network
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


def test_live_network_shape(tmp_path: Path) -> None:
    net, _ = probe_network(RootFS("/"))
    assert all(isinstance(i["name"], str) and isinstance(i["addresses"], list) for i in net["interfaces"])
    assert any(i["name"] == "lo" for i in net["interfaces"])
    assert all(isinstance(p, int) for p in net.get("listening_ports", []))


def test_access_denied_falls_back_to_proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(*a, **k):
        raise psutil.AccessDenied()

    monkeypatch.setattr(psutil, "net_connections", denied)
    write(tmp_path / "proc/net/tcp", TCP)
    write(tmp_path / "proc/net/tcp6", TCP6)
    net, errors = probe_network(RootFS(str(tmp_path)))
    assert net["listening_ports"] == [22, 6379, 60000]
    assert any("AccessDenied" in e for e in errors)
    empty = tmp_path / "empty"
    empty.mkdir()
    net, _ = probe_network(RootFS(str(empty)))
    assert "listening_ports" not in net  # unknown, not "nothing listens"


@given(st.text())
def test_parse_never_raises(s: str) -> None:
    assert all(0 < p < 65536 for p in parse_proc_net_tcp(s))
