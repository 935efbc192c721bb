"""Network facts: interfaces with their addresses and state, and listening TCP ports; and the Ray cluster
`ray start` recorded on this host.

HCCL, Gloo and Ray pick interfaces and ports (HCCL's default base port 60000, Ray's 6379); a check needs
to know what exists and what is taken. Interfaces and addresses come from psutil; listening ports come from
/proc/net/tcp{,6} read through the root prefix, so a test (or `--root` on an image) sees that machine's
table, not this host's.

Which process holds a port is not recorded: psutil.net_connections maps sockets to processes by walking every
process's /proc/PID/fd (all of them as root, only the user's own otherwise): 15 ms on a 79-process machine with one
socket, more on a busy node, over the 1 ms a new fact may cost `doctor check`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
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


RAY_CLUSTER_FILE = "ray_current_cluster"


def ray_temp_dir(environ: Mapping[str, str]) -> str:
    """Ray's default temp dir on Linux, as ray.init() and `ray start` compute it when given none:
    $RAY_TMPDIR, else $TMPDIR, else /tmp, plus `ray` (ray `_private/utils.py` get_user_temp_dir /
    get_ray_temp_dir at 2.10.0 and 2.46.0; `_common/utils.py` get_default_system_temp_dir at 2.60.0)."""
    base = environ.get("RAY_TMPDIR") or environ.get("TMPDIR") or "/tmp"
    return base.rstrip("/") + "/ray"


def probe_ray_files(fs: RootFS, environ: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """`ray.current_cluster`: the address the last `ray start` on this host recorded in
    `<ray temp dir>/ray_current_cluster` (ray.init() without an address and without RAY_ADDRESS joins it), null when
    there is no such file, absent when it could not be read; `ray.current_cluster_file`: the path looked at;
    `ray.current_cluster_uid` / `current_cluster_mine`: who wrote it, and whether that is the collecting user (Ray
    makes its temp dir world-writable for several users of one machine, so the file can be another user's)."""
    path = f"{ray_temp_dir(environ)}/{RAY_CLUSTER_FILE}"
    out: dict[str, Any] = {"current_cluster_file": path}
    try:
        text = fs.read_text(path, limit=4096)
    except FsError as fe:
        return out, [str(fe)]
    out["current_cluster"] = text.strip() if text is not None else None
    st = fs.stat(path) if text is not None else None
    if st is not None:
        out["current_cluster_uid"] = st.st_uid
        out["current_cluster_mine"] = st.st_uid == os.geteuid()
    return out, []


# -- what the hostname resolves to: Gloo binds it when GLOO_SOCKET_IFNAME is unset ---------------------------------------
# torch's ProcessGroupGloo::createDefaultDevice (no GLOO_SOCKET_IFNAME) resolves gethostname() with getaddrinfo and
# binds the first address that binds; gloo's tcp device does the same and advertises that address to every peer.
# glibc answers from /etc/hosts when nsswitch.conf's `hosts:` line starts with `files` (the default of every
# distribution) and the file names the host, and then asks no other source. Only that file is read: no DNS query.


def parse_nsswitch_hosts_files_first(text: str | None) -> bool | None:
    """Whether nsswitch.conf's `hosts:` line consults `files` first; None without a readable line."""
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("hosts:"):
            sources = re.sub(r"\[[^\]]*\]", " ", line[len("hosts:"):]).split()
            return bool(sources) and sources[0] == "files"
    return None


def parse_hosts_addresses(text: str | None, hostname: str) -> list[str]:
    """The addresses an /etc/hosts text gives `hostname` (its canonical name or an alias, any case), in file order."""
    name = hostname.lower()
    out: list[str] = []
    for line in (text or "").splitlines():
        cols = line.split("#", 1)[0].split()
        if len(cols) >= 2 and name in (c.lower() for c in cols[1:]) and cols[0] not in out:
            out.append(cols[0])
    return out


def hostname_addresses(fs: RootFS, hostname: str, errors: list[str]) -> list[str] | None:
    """`host.hostname_addresses`: the addresses /etc/hosts gives the hostname, in file order ([]: it names it
    nowhere, so another source decides); None when /etc/hosts does not decide (nsswitch.conf unread, or its `hosts:`
    line starts with another source) or could not be read."""
    if not hostname:
        return None
    try:
        files_first = parse_nsswitch_hosts_files_first(fs.read_text("/etc/nsswitch.conf", limit=64 * 1024))
        hosts = fs.read_text("/etc/hosts", limit=1024 * 1024) if files_first else None
    except FsError as fe:
        errors.append(str(fe))
        return None
    return parse_hosts_addresses(hosts, hostname) if hosts is not None else None
