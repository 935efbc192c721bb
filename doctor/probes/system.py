"""Host facts: OS, kernel, arch, glibc, CPUs, memory, /dev/shm, cwd, resource limits, free disk space and whether
we run in a container.

Live facts (CPU count, memory, kernel, arch, hostname) come from the os module (the same sysconf values
psutil reports, without psutil's ~25 ms import); file facts (os-release,
container markers, /dev/shm) are read through the root prefix. glibc comes from
`os.confstr("CS_GNU_LIBC_VERSION")` because it decides which manylinux wheels can install.
Resource limits (`host.limits`) are this process's, which the shell that starts Ray or verl also hands on:
`resource.getrlimit` for open files and processes, and the container's cgroup pids limit read through the root
prefix. Free space (`host.disks`) is `shutil.disk_usage` of Ray's temp dir, /tmp and the cwd through the root
prefix, one entry per filesystem. Container detection: /.dockerenv (Docker), /run/.containerenv (Podman), `container=` in the environment
(systemd-nspawn, Podman), KUBERNETES_SERVICE_HOST, and container runtimes named in /proc/1/cgroup.
The server's product identity (`host.dmi`) is the world-readable DMI strings under /sys/class/dmi/id (probes.dmi).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from doctor.probes._fs import FsError, RootFS
from doctor.probes.network import hostname_addresses, ray_temp_dir

_CGROUP_RUNTIMES = re.compile(r"docker|kubepods|containerd|libpod|lxc|crio|podman", re.I)


def parse_os_release(text: str | None) -> str | None:
    """PRETTY_NAME (else NAME VERSION) of an os-release file."""
    if not isinstance(text, str):
        return None
    kv: dict[str, str] = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep and k.strip():
            kv.setdefault(k.strip(), v.strip().strip("\"'"))
    if kv.get("PRETTY_NAME"):
        return kv["PRETTY_NAME"]
    name = " ".join(x for x in (kv.get("NAME"), kv.get("VERSION")) if x)
    return name or None


def container_evidence(fs: RootFS, environ: Mapping[str, str]) -> list[str]:
    found = []
    for marker in ("/.dockerenv", "/run/.containerenv"):
        if fs.exists(marker):
            found.append(marker)
    if environ.get("container"):
        found.append(f"container={environ['container']}")
    if environ.get("KUBERNETES_SERVICE_HOST"):
        found.append("KUBERNETES_SERVICE_HOST")
    try:
        cg = fs.read_text("/proc/1/cgroup", limit=16384)
    except FsError:
        cg = None
    if cg and _CGROUP_RUNTIMES.search(cg):
        found.append("/proc/1/cgroup")
    return found


def glibc_version() -> str | None:
    try:
        v = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError, AttributeError):
        v = None
    if v:
        return v  # "glibc 2.35"
    import platform  # only where confstr cannot answer (musl, non-Linux): it costs ~10 ms of imports

    lib, ver = platform.libc_ver()
    return f"{lib} {ver}".strip() or None


def total_memory_bytes() -> int | None:
    """Physical memory (MemTotal): pages x page size from sysconf, else psutil where sysconf has no answer."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and size > 0:
            return int(pages * size)
    except (ValueError, OSError, AttributeError):
        pass
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except (ImportError, OSError, RuntimeError):
        return None


def build_tools(environ: Mapping[str, str]) -> dict[str, str | None]:
    """ninja and g++ on the PATH the training process will see (MindSpeed JIT-builds fused ops with them)."""
    from shutil import which

    path = environ.get("PATH", os.defpath)
    return {tool: which(tool, path=path) for tool in ("ninja", "g++")}


STALE_LOCK_SECONDS = 600.0  # a JIT build of one MindSpeed op takes seconds to a few minutes


def stale_extension_locks(fs: RootFS, environ: Mapping[str, str], now: float | None = None) -> list[str] | None:
    """`lock` files left in torch_extensions build dirs by an interrupted JIT build (older than 10 min).

    torch.utils.cpp_extension waits forever on such a file, so the next run hangs at "Using ... as PyTorch
    extensions root". None when there is no extensions dir to look at. Bounded: two levels, 500 entries."""
    import time

    base = environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".cache", "torch_extensions")
    try:
        top = fs.host(fs.resolve(base))
    except FsError:
        return None
    if not os.path.isdir(top):
        return None
    now = time.time() if now is None else now
    found: list[str] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(top):
        depth = dirpath[len(top):].count(os.sep)
        if depth >= 2:
            dirnames[:] = []
        seen += len(filenames) + len(dirnames)
        if "lock" in filenames:
            p = os.path.join(dirpath, "lock")
            try:
                if now - os.stat(p).st_mtime > STALE_LOCK_SECONDS:
                    found.append(os.path.join(base, os.path.relpath(p, top)))
            except OSError:
                pass
        if seen > 500:
            break
    return sorted(found)


def _rlimit(value: int) -> int | None:
    """A getrlimit value; None for RLIM_INFINITY (unlimited)."""
    import resource

    return None if value == resource.RLIM_INFINITY or value < 0 else int(value)


# the pids controller's limit of the cgroup the container sees as its own (Docker's --pids-limit): v2, then v1
PIDS_MAX_FILES = ("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max")


def parse_pids_max(text: str | None) -> tuple[bool, int | None]:
    """(understood, limit) of a pids.max file: "max" is unlimited (None), a number is the limit."""
    if not isinstance(text, str):
        return False, None
    s = text.strip()
    if s == "max":
        return True, None
    if s.isascii() and s.isdigit():
        return True, int(s)
    return False, None


def process_limits(fs: RootFS) -> dict[str, int | None]:
    """Soft and hard RLIMIT_NOFILE / RLIMIT_NPROC (None = unlimited) and the cgroup's pids.max when readable.
    A limit that cannot be read is left out (unknown)."""
    import resource

    out: dict[str, int | None] = {}
    for name in ("nofile", "nproc"):
        res = getattr(resource, f"RLIMIT_{name.upper()}", None)
        if res is None:
            continue
        try:
            soft, hard = resource.getrlimit(res)
        except (OSError, ValueError):
            continue
        out[f"{name}_soft"], out[f"{name}_hard"] = _rlimit(soft), _rlimit(hard)
    for path in PIDS_MAX_FILES:
        try:
            ok, limit = parse_pids_max(fs.read_text(path, limit=64))
        except FsError:
            continue
        if ok:
            out["pids_max"] = limit
            break
    return out


def ray_temp_access(fs: RootFS, environ: Mapping[str, str]) -> dict[str, Any] | None:
    """Whether the collecting user may create entries in Ray's temp dir, or, while it does not exist, in the
    nearest directory above it that does (Ray makes the rest with os.makedirs): the kernel's own answer (os.access
    with the effective ids), so only on the live host (None under a root prefix, where it would be the test
    runner's). `owner_uid` / `mode` are those of the directory checked, `uid` the user collect ran as."""
    import stat

    if fs.root != "/":
        return None
    path = ray_temp_dir(environ)
    checked = path
    while not os.path.isdir(checked) and posixpath.dirname(checked) != checked:
        checked = posixpath.dirname(checked)
    try:
        st = os.stat(checked)
    except OSError:
        return None
    writable = os.access(checked, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids)
    return {"path": path, "checked": checked, "uid": os.geteuid(), "owner_uid": st.st_uid,
            "mode": f"{stat.S_IMODE(st.st_mode):04o}", "writable": writable}


def disk_usage(fs: RootFS, environ: Mapping[str, str], cwd: str) -> list[dict[str, Any]]:
    """Free space of the filesystems Ray and the job write to, one entry per filesystem (by device).

    Roles: `ray_temp` (Ray's temp dir, or its parent while it does not exist yet: its spill and fallback files go
    there), `ray_spill` (`RAY_object_spilling_directory`, when set), `tmp` (/tmp) and `cwd`. `used_fraction` is
    1 - available / capacity, as Ray's FileSystemMonitor computes it (`shutil.disk_usage` reports the same
    statvfs numbers: f_bavail and f_blocks)."""
    from shutil import disk_usage as usage

    ray = ray_temp_dir(environ)
    wanted = [(ray if fs.exists(ray) else posixpath.dirname(ray), "ray_temp")]
    if environ.get("RAY_object_spilling_directory"):
        wanted.append((environ["RAY_object_spilling_directory"], "ray_spill"))
    wanted += [("/tmp", "tmp"), (cwd, "cwd")]
    by_dev: dict[int, dict[str, Any]] = {}
    for path, role in wanted:
        if not path or not path.startswith("/"):
            continue
        try:
            real = fs.host(fs.resolve(path))
            dev = os.stat(real).st_dev
            du = usage(real)
        except (OSError, FsError):
            continue
        entry = by_dev.get(dev)
        if entry is None:
            used = 1.0 if du.total <= 0 else 1 - du.free / du.total
            entry = by_dev[dev] = {"path": path, "paths": [], "roles": [], "total_gb": round(du.total / 2**30, 2),
                                   "free_gb": round(du.free / 2**30, 2), "used_fraction": round(used, 4)}
        if path not in entry["paths"]:
            entry["paths"].append(path)
        if role not in entry["roles"]:
            entry["roles"].append(role)
    return list(by_dev.values())


def probe_system(fs: RootFS, environ: Mapping[str, str], cwd: str) -> tuple[dict[str, Any], list[str]]:
    errors: list[str] = []
    uname = os.uname()
    host: dict[str, Any] = {"hostname": uname.nodename, "kernel": uname.release, "arch": uname.machine}
    try:
        os_name = parse_os_release(fs.read_text("/etc/os-release") or fs.read_text("/usr/lib/os-release"))
    except FsError as e:
        os_name = None
        errors.append(str(e))
    host["os"] = os_name or uname.sysname
    libc = glibc_version()
    if libc:
        host["libc"] = libc
    host["cpu_count"] = os.cpu_count() or 0
    memory = total_memory_bytes()
    if memory:
        host["memory_gb"] = round(memory / 2**30, 1)
    else:
        errors.append("memory: the kernel did not report the physical memory size")
    shm = fs.host("/dev/shm")
    try:
        st = os.statvfs(fs.host(fs.resolve("/dev/shm")))
        host["shm_gb"] = round(st.f_frsize * st.f_blocks / 2**30, 1)
    except (OSError, FsError):
        host["shm_gb"] = None
        errors.append(f"{shm}: cannot stat")
    if fs.root == "/":  # the hostname is this machine's: a root prefix's /etc/hosts is another machine's
        resolved = hostname_addresses(fs, uname.nodename, errors)
        if resolved is not None:
            host["hostname_addresses"] = resolved
    host["cwd"] = cwd
    host["limits"] = process_limits(fs)
    host["disks"] = disk_usage(fs, environ, cwd)
    ray_tmp = ray_temp_access(fs, environ)
    if ray_tmp is not None:
        host["ray_temp"] = ray_tmp
    from doctor.probes.preload import probe_preload

    host["preload"], preload_errors = probe_preload(fs, environ, uname.machine)
    errors += preload_errors
    host["tools"] = build_tools(environ)
    locks = stale_extension_locks(fs, environ)
    if locks is not None:
        host["torch_extensions_locks"] = locks
    from doctor.probes.dmi import probe_dmi

    dmi = probe_dmi(fs)
    if dmi != {}:  # {}: a DMI directory with nothing readable in it leaves the model unknown
        host["dmi"] = dmi
    evidence = container_evidence(fs, environ)
    host["in_container"] = bool(evidence)
    if evidence:
        host["container_evidence"] = evidence
    return host, errors
