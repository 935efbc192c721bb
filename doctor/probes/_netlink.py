"""Network interfaces, their flags and addresses from the kernel over rtnetlink (Linux), stdlib only.

This is what `getifaddrs(3)` (and so `psutil.net_if_addrs`/`net_if_stats`) does underneath: one
RTM_GETLINK dump for every interface with its flags, one RTM_GETADDR dump for every IPv4/IPv6 address,
including secondary ones that the SIOCGIFADDR ioctl would miss. Importing psutil for this cost a live
`doctor check` ~25 ms of its ~0.25 s; these two round trips take well under a millisecond.
Raises OSError when netlink is unavailable (not Linux, a seccomp filter): the caller falls back to psutil.
"""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass, field

_NLMSG = struct.Struct("=IHHII")  # nlmsghdr: len, type, flags, seq, pid
_IFINFO = struct.Struct("=BxHiII")  # ifinfomsg: family, type, index, flags, change
_IFADDR = struct.Struct("=BBBBI")  # ifaddrmsg: family, prefixlen, flags, scope, index
_RTA = struct.Struct("=HH")  # rtattr: len, type

NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWLINK, RTM_GETLINK, RTM_NEWADDR, RTM_GETADDR = 16, 18, 20, 22
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
IFLA_IFNAME = 3
IFA_ADDRESS, IFA_LOCAL = 1, 2
IFF_UP, IFF_RUNNING = 0x1, 0x40
_TIMEOUT = 2.0


@dataclass
class Interface:
    """One interface as the kernel reports it over rtnetlink."""

    name: str
    flags: int
    addresses: list[str] = field(default_factory=list)

    @property
    def up(self) -> bool:
        """Administratively up and running (carrier present), what psutil's `isup` reports."""
        return bool(self.flags & IFF_UP) and bool(self.flags & IFF_RUNNING)


def _attrs(data: bytes, offset: int, end: int) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    while offset + _RTA.size <= end:
        length, kind = _RTA.unpack_from(data, offset)
        if length < _RTA.size or offset + length > end:
            break
        out.setdefault(kind, data[offset + _RTA.size:offset + length])
        offset += (length + 3) & ~3
    return out


def parse_messages(data: bytes) -> list[tuple[int, bytes]]:
    """(type, payload) of each netlink message in one recv buffer; ends at NLMSG_DONE.
    An NLMSG_ERROR with a non-zero code raises OSError with that errno."""
    out: list[tuple[int, bytes]] = []
    offset = 0
    while offset + _NLMSG.size <= len(data):
        length, kind, _flags, _seq, _pid = _NLMSG.unpack_from(data, offset)
        if length < _NLMSG.size or offset + length > len(data):
            raise OSError("truncated netlink message")
        payload = data[offset + _NLMSG.size:offset + length]
        if kind == NLMSG_ERROR:
            code = struct.unpack_from("=i", payload)[0] if len(payload) >= 4 else -1
            if code:
                raise OSError(-code, os.strerror(-code))
        elif kind == NLMSG_DONE:
            out.append((kind, b""))
            return out
        else:
            out.append((kind, payload))
        offset += (length + 3) & ~3
    return out


def parse_link(payload: bytes) -> tuple[int, str, int] | None:
    """(index, name, flags) of an RTM_NEWLINK payload."""
    if len(payload) < _IFINFO.size:
        return None
    _family, _type, index, flags, _change = _IFINFO.unpack_from(payload)
    name = _attrs(payload, _IFINFO.size, len(payload)).get(IFLA_IFNAME)
    if name is None:
        return None
    return index, name.split(b"\0", 1)[0].decode("utf-8", "replace"), flags


def parse_addr(payload: bytes) -> tuple[int, str] | None:
    """(interface index, address text) of an RTM_NEWADDR payload. For IPv4 the local address (IFA_LOCAL)
    is the interface's own; IFA_ADDRESS is the peer on point-to-point links (getifaddrs does the same)."""
    if len(payload) < _IFADDR.size:
        return None
    family, _plen, _flags, _scope, index = _IFADDR.unpack_from(payload)
    attrs = _attrs(payload, _IFADDR.size, len(payload))
    raw = attrs.get(IFA_LOCAL) if family == socket.AF_INET else None
    raw = raw or attrs.get(IFA_ADDRESS)
    want = {socket.AF_INET: 4, socket.AF_INET6: 16}.get(family)
    if raw is None or want is None or len(raw) != want:
        return None
    return index, socket.inet_ntop(family, raw)


def _dump(sock: socket.socket, kind: int, body: bytes, seq: int) -> list[tuple[int, bytes]]:
    sock.send(_NLMSG.pack(_NLMSG.size + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body)
    out: list[tuple[int, bytes]] = []
    while True:
        msgs = parse_messages(sock.recv(65536))
        if not msgs:
            raise OSError("empty netlink reply")
        for k, payload in msgs:
            if k == NLMSG_DONE:
                return out
            out.append((k, payload))


def interfaces() -> list[Interface]:
    """Every interface (sorted by name) with its flags and IPv4/IPv6 addresses."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as sock:
        sock.settimeout(_TIMEOUT)
        sock.bind((0, 0))
        links: dict[int, Interface] = {}
        for kind, payload in _dump(sock, RTM_GETLINK, _IFINFO.pack(socket.AF_UNSPEC, 0, 0, 0, 0), 1):
            link = parse_link(payload) if kind == RTM_NEWLINK else None
            if link is not None:
                links[link[0]] = Interface(name=link[1], flags=link[2])
        for kind, payload in _dump(sock, RTM_GETADDR, _IFADDR.pack(socket.AF_UNSPEC, 0, 0, 0, 0), 2):
            addr = parse_addr(payload) if kind == RTM_NEWADDR else None
            if addr is not None and addr[0] in links:
                links[addr[0]].addresses.append(addr[1])
    return sorted(links.values(), key=lambda i: i.name)
