"""Network facts: interfaces with their addresses and state, and listening TCP ports.

HCCL, Gloo and Ray pick interfaces and ports (HCCL's default base port 60000, Ray's 6379); a check needs
to know what exists and what is taken. Interfaces and addresses come from psutil; listening ports come from
/proc/net/tcp{,6} read through the root prefix, so a test (or `--root` on an image) sees that machine's
table, not this host's.
"""

from __future__ import annotations

from typing import Any

from doctor.probes._fs import FsError, RootFS

_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's st column


def parse_proc_net_tcp(text: str | None) -> list[int]:
    """Listening ports from /proc/net/tcp or tcp6 text (pure; junk lines ignored)."""
    ports: set[int] = set()
    if not isinstance(text, str):
        return []
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 4 or cols[3].upper() != _LISTEN:
            continue
        _, _, port_hex = cols[1].rpartition(":")
        try:
            port = int(port_hex, 16)
        except ValueError:
            continue
        if 0 < port < 65536:
            ports.add(port)
    return sorted(ports)


def _interfaces(errors: list[str]) -> list[dict[str, Any]]:
    """Interfaces, their IPv4/IPv6 addresses and up state, from psutil (getifaddrs + the link flags)."""
    try:
        import socket

        import psutil

        addrs = psutil.net_if_addrs()
        stats = psutil.net_if_stats()
    except (ImportError, OSError, RuntimeError) as e:
        errors.append(f"interfaces: {e}")
        return []
    out = []
    for name in sorted(addrs):
        ips = [a.address.split("%")[0] for a in addrs[name] if a.family in (socket.AF_INET, socket.AF_INET6)]
        st = stats.get(name)
        out.append({"name": name, "addresses": ips, "up": st.isup if st is not None else None})
    return out


def listening_ports(fs: RootFS, errors: list[str]) -> list[int] | None:
    """TCP ports in LISTEN state (IPv4 and IPv6), or None when neither table could be read (unknown,
    not "nothing listens")."""
    found: set[int] = set()
    read_any = False
    for p in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            text = fs.read_text(p, limit=16 * 1024 * 1024)
        except FsError as fe:
            errors.append(str(fe))
            continue
        if text is not None:
            read_any = True
            found.update(parse_proc_net_tcp(text))
    return sorted(found) if read_any else None


def probe_network(fs: RootFS) -> tuple[dict[str, Any], list[str]]:
    errors: list[str] = []
    out: dict[str, Any] = {"interfaces": _interfaces(errors)}
    ports = listening_ports(fs, errors)
    if ports is not None:
        out["listening_ports"] = ports
    return out, errors
