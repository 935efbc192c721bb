"""rtnetlink parsing: real kernel replies, hand-built messages, and any bytes at all (data or OSError)."""

from __future__ import annotations

import socket
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doctor.probes import _netlink as nl


def _rta(kind: int, data: bytes) -> bytes:
    raw = struct.pack("=HH", 4 + len(data), kind) + data
    return raw + b"\0" * (-len(raw) % 4)


def _msg(kind: int, payload: bytes) -> bytes:
    raw = struct.pack("=IHHII", 16 + len(payload), kind, 2, 1, 0) + payload
    return raw + b"\0" * (-len(raw) % 4)


def test_link_and_address_messages() -> None:
    link = struct.pack("=BxHiII", socket.AF_UNSPEC, 1, 7, nl.IFF_UP | nl.IFF_RUNNING, 0) + _rta(nl.IFLA_IFNAME, b"hccl0\0")
    addr4 = struct.pack("=BBBBI", socket.AF_INET, 24, 0, 0, 7) + _rta(nl.IFA_ADDRESS, bytes([10, 0, 0, 9])) \
        + _rta(nl.IFA_LOCAL, bytes([10, 0, 0, 1]))
    addr6 = struct.pack("=BBBBI", socket.AF_INET6, 64, 0, 0, 7) + _rta(nl.IFA_ADDRESS, socket.inet_pton(socket.AF_INET6, "fe80::1"))
    data = _msg(nl.RTM_NEWLINK, link) + _msg(nl.RTM_NEWADDR, addr4) + _msg(nl.RTM_NEWADDR, addr6) + _msg(nl.NLMSG_DONE, b"\0" * 4)
    msgs = nl.parse_messages(data)
    assert [k for k, _ in msgs] == [nl.RTM_NEWLINK, nl.RTM_NEWADDR, nl.RTM_NEWADDR, nl.NLMSG_DONE]
    assert nl.parse_link(msgs[0][1]) == (7, "hccl0", nl.IFF_UP | nl.IFF_RUNNING)
    # IPv4: the local address is the interface's own (IFA_ADDRESS is the peer on a point-to-point link)
    assert nl.parse_addr(msgs[1][1]) == (7, "10.0.0.1")
    assert nl.parse_addr(msgs[2][1]) == (7, "fe80::1")


def test_up_means_up_and_running() -> None:
    assert nl.Interface("a", nl.IFF_UP | nl.IFF_RUNNING).up
    assert not nl.Interface("b", nl.IFF_UP).up  # no carrier
    assert not nl.Interface("c", 0).up


def test_kernel_error_is_an_oserror() -> None:
    err = _msg(nl.NLMSG_ERROR, struct.pack("=i", -1) + b"\0" * 16)
    with pytest.raises(OSError) as e:
        nl.parse_messages(err)
    assert e.value.errno == 1


def test_live_interfaces_include_loopback() -> None:
    names = {i.name: i for i in nl.interfaces()}
    assert "lo" in names and "127.0.0.1" in names["lo"].addresses


@given(st.binary(max_size=400))
def test_any_bytes_parse_to_data_or_oserror(data: bytes) -> None:
    try:
        msgs = nl.parse_messages(data)
    except OSError:
        return
    for _kind, payload in msgs:
        assert nl.parse_link(payload) is None or isinstance(nl.parse_link(payload)[1], str)
        got = nl.parse_addr(payload)
        assert got is None or isinstance(got[1], str)
