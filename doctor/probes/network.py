"""Network facts: interfaces with their addresses and state, and listening TCP ports.

HCCL, Gloo and Ray pick interfaces and ports (HCCL's default base port 60000, Ray's 6379); a check needs
to know what exists and what is taken. psutil gives both; listing sockets can be refused
(psutil.AccessDenied on some platforms), in which case /proc/net/tcp{,6} is parsed directly.
"""

from __future__ import annotations

import socket
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


def probe_network(fs: RootFS) -> tuple[dict[str, Any], list[str]]:
    import psutil

    errors: list[str] = []
    interfaces = []
    try:
        addrs = psutil.net_if_addrs()
        stats = psutil.net_if_stats()
    except (OSError, RuntimeError) as e:
        addrs, stats = {}, {}
        errors.append(f"interfaces: {e}")
    for name in sorted(addrs):
        ips = [a.address.split("%")[0] for a in addrs[name] if a.family in (socket.AF_INET, socket.AF_INET6)]
        st = stats.get(name)
        interfaces.append({"name": name, "addresses": ips, "up": st.isup if st is not None else None})
    ports: list[int] | None = None
    try:
        ports = sorted({c.laddr.port for c in psutil.net_connections(kind="tcp")
                        if c.status == psutil.CONN_LISTEN and c.laddr})
    except (psutil.AccessDenied, PermissionError, OSError, RuntimeError) as e:
        errors.append(f"listening ports via psutil: {type(e).__name__}; read /proc/net/tcp instead")
        found: set[int] = set()
        read_any = False
        for p in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                text = fs.read_text(p, limit=4 * 1024 * 1024)
            except FsError as fe:
                errors.append(str(fe))
                continue
            if text is not None:
                read_any = True
                found.update(parse_proc_net_tcp(text))
        ports = sorted(found) if read_any else None
    out: dict[str, Any] = {"interfaces": interfaces}
    if ports is not None:
        out["listening_ports"] = ports
    return out, errors
