"""Host limits that fail a Ray job an hour in, judged by what Ray itself reads: the open-files limit (ray.init
raises the soft limit toward the hard one and warns below 4096; the raylet dies when a worker cannot be spawned
for want of descriptors) and the free space of Ray's temp dir (the raylet refuses to create objects that need
spilling once its filesystem is over `local_fs_capacity_threshold`, 0.95 by default). An unknown fact, or a
complete snapshot without Ray, keeps each rule silent.

The process limits (RLIMIT_NPROC, the cgroup's pids.max) are collected but judged by no rule: neither Ray, vLLM
nor torch states a limit below which they fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctor.checks.facts import env, installed, val
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import UNKNOWN, known

# -- open files ------------------------------------------------------------------------------------------------

# ray.init (Ray 2.60.0, unchanged since Ray 1.x): if soft < hard, soft = max(soft, min(hard, 65536)) via setrlimit;
# then, if soft < 4096: "File descriptor limit {soft} is too low for production servers and may result in
# connection errors. At least 8192 is recommended. --- Fix with 'ulimit -n 8192'". `ray start` (scripts.py,
# node.py) raises nothing: the raylet and its workers keep the shell's soft limit.
SRC_RAY_NOFILE = "https://github.com/ray-project/ray/blob/ray-2.60.0/python/ray/_private/worker.py"
# the raylet: a worker process that cannot be spawned with errno 24 is RAY_LOG(FATAL) "Too many workers, failed to
# create a file. Try setting `ulimit -n <num_files>` then restart Ray."
SRC_RAY_WORKER_POOL = "https://github.com/ray-project/ray/blob/ray-2.60.0/src/ray/raylet/worker_pool.cc"
# "Make sure ulimit -n is set to at least 65535. Ray opens many direct connections between worker processes"
SRC_RAY_LARGE_CLUSTER = ("https://github.com/ray-project/ray/blob/ray-2.60.0/doc/source/cluster/vms/user-guides/"
                         "large-cluster-best-practices.rst")
RAY_NOFILE_FLOOR = 4096  # ray.init warns below it
RAY_NOFILE_RAISE = 65536  # ray.init raises the soft limit to min(hard, this)


def ray_reachable_nofile(soft: int | None, hard: int | None) -> int | None:
    """The soft limit Ray's processes run with after ray.init's raise (None = unlimited)."""
    if soft is None:
        return None
    if hard is not None and soft >= hard:
        return soft
    return max(soft, RAY_NOFILE_RAISE if hard is None else min(hard, RAY_NOFILE_RAISE))


def _n(v: int | None) -> str:
    return "unlimited" if v is None else str(v)


@check("open-files-limit", "system", findings=("nofile-limit-low", "nofile-soft-limit-low"))
def open_files_limit(ctx: CheckContext) -> Iterator[Finding]:
    """The open-files limit Ray's processes get is at least the 4096 ray.init warns below."""
    snap = ctx.snapshot
    lim = snap.host.limits if known(snap.host) else UNKNOWN
    if not known(lim) or not known(lim.nofile_soft):
        skip("the open-files limit (RLIMIT_NOFILE) is not known")
    if installed(snap, "ray") is False:
        return
    soft: int | None = lim.nofile_soft
    hard: int | None = lim.nofile_hard if known(lim.nofile_hard) else UNKNOWN
    reach = ray_reachable_nofile(soft, hard) if known(hard) else UNKNOWN
    evidence: dict[str, Any] = {"nofile_soft": _n(soft), "nofile_hard": _n(hard) if known(hard) else "not known"}
    if known(reach):
        evidence["ray_init_raises_to"] = _n(reach)
    if known(reach) and reach is not None and reach < RAY_NOFILE_FLOOR:
        container = " In a container: docker run --ulimit nofile=65536:65536." if val(snap.host, "in_container") else ""
        yield finding(
            "nofile-limit-low", "warning", ("system", "ray"),
            f"The open-files limit Ray can reach is {reach} (soft {_n(soft)}, hard {_n(hard)}): below the "
            f"{RAY_NOFILE_FLOOR} Ray warns under",
            detail="ray.init raises the soft limit only up to the hard one (at most 65536), then warns that a limit "
                   f"under {RAY_NOFILE_FLOOR} 'is too low for production servers and may result in connection errors'. "
                   "Ray workers, gRPC connections, DataLoader worker pipes and shared tensors all hold descriptors: "
                   "once they run out, the raylet dies spawning a worker ('Too many workers, failed to create a "
                   "file. Try setting `ulimit -n <num_files>`') and torch's DataLoader fails with 'Too many open "
                   "files' — after the job has grown, not at start-up.",
            evidence=evidence,
            fix="Raise the hard and soft limit of the shell that starts Ray (as root, or `* - nofile 65536` in "
                "/etc/security/limits.conf and a new login), then restart Ray; Ray's large-cluster guide asks for "
                f"at least 65535.{container}",
            commands=("ulimit -n 65536",), source=f"{SRC_RAY_NOFILE}; {SRC_RAY_WORKER_POOL}; {SRC_RAY_LARGE_CLUSTER}")
    elif soft is not None and soft < RAY_NOFILE_FLOOR:
        raised = (f"ray.init raises it to {_n(reach)}" if known(reach)
                  else "ray.init raises it as far as the hard limit (not known) allows")
        yield finding(
            "nofile-soft-limit-low", "info", ("system", "ray"),
            f"The open-files soft limit is {soft}: {raised}, `ray start` keeps {soft}",
            detail="ray.init raises the soft limit toward the hard one for the cluster it starts itself; a cluster "
                   "started with `ray start` from this shell (the multi-node way) runs its raylet and workers with "
                   f"the soft limit as it is, under the {RAY_NOFILE_FLOOR} ray.init warns below, and the raylet dies "
                   "when a worker cannot be spawned for want of descriptors.",
            evidence=evidence,
            fix="Raise the soft limit in the shell before `ray start` (up to the hard limit, `ulimit -Hn`; Ray's "
                "ray.init goes to 65536 at most).",
            commands=(f"ulimit -Sn {reach}" if known(reach) else "ulimit -Sn $(ulimit -Hn)",),
            source=f"{SRC_RAY_NOFILE}; {SRC_RAY_WORKER_POOL}")


# -- free space of Ray's temp dir ---------------------------------------------------------------------------------

# RAY_CONFIG(float, local_fs_capacity_threshold, 0.95): "Once we are over the capacity, all subsequent object
# creation will fail." The raylet's plasma store monitors the spill directories and its fallback directory (the
# session dir under the temp dir unless an object spilling directory is set); over the threshold it logs "<path>
# is over 95% full ... Object creation will fail if spilling is required." and creation raises OutOfDiskError.
# RayConfig reads RAY_local_fs_capacity_threshold from the environment; >= 1 turns the monitor off.
SRC_RAY_FS_THRESHOLD = ("https://github.com/ray-project/ray/blob/ray-2.60.0/src/ray/common/ray_config_def.h; "
                        "https://github.com/ray-project/ray/blob/ray-2.60.0/src/ray/common/file_system_monitor.cc; "
                        "https://github.com/ray-project/ray/blob/ray-2.60.0/python/ray/exceptions.py")
RAY_FS_THRESHOLD = 0.95


def _threshold(raw: str | None) -> float:
    try:
        return float(raw) if raw is not None else RAY_FS_THRESHOLD
    except ValueError:
        return RAY_FS_THRESHOLD  # RayConfig would refuse to start; env-values is where a bad value is judged


@check("ray-temp-disk", "system", findings=("ray-tmp-disk-full",))
def ray_temp_disk(ctx: CheckContext) -> Iterator[Finding]:
    """The filesystem Ray spills to is below Ray's local_fs_capacity_threshold."""
    snap = ctx.snapshot
    disks = val(snap.host, "disks")
    if not isinstance(disks, list):
        skip("the free space of Ray's temp dir is not known")
    spill_dir = env(snap, "RAY_object_spilling_directory")
    role = "ray_spill" if spill_dir else "ray_temp"
    disk = next((d for d in disks if role in (val(d, "roles") or [])), None)
    used, total, free = (val(disk, k) for k in ("used_fraction", "total_gb", "free_gb"))
    if disk is None or not isinstance(used, (int, float)):
        skip(f"the free space of Ray's {'spilling directory' if spill_dir else 'temp dir'} is not known")
    if installed(snap, "ray") is False:
        return
    raw = env(snap, "RAY_local_fs_capacity_threshold")
    threshold = _threshold(raw)
    if threshold >= 1 or used < threshold:
        return
    path = val(disk, "path")
    where = "Ray's object spilling directory" if spill_dir else "Ray's temp dir"
    yield finding(
        "ray-tmp-disk-full", "error", ("system", "ray"),
        f"The filesystem of {where} ({path}) is {used:.0%} full ({free} GB free of {total} GB): at or over Ray's "
        f"local_fs_capacity_threshold ({threshold:g})",
        detail="Ray's raylet watches the filesystem it spills objects to (by default its session dir under the temp "
               f"dir) and, over local_fs_capacity_threshold ({'RAY_local_fs_capacity_threshold=' + raw if raw else '0.95 by default'}), "
               f"refuses every object that needs spilling: '<path> is over {threshold * 100:g}% full ... Object creation will fail if "
               "spilling is required.', and ray.put / task returns raise OutOfDiskError. A verl job fills the object "
               "store with rollouts and weights; the first object that must spill fails, an hour in. (A --temp-dir or "
               "object_spilling_directory given to ray start / ray.init is not known here.)",
        evidence={"path": path, "paths": val(disk, "paths"), "used_fraction": used, "free_gb": free,
                  "total_gb": total, "threshold": threshold},
        fix="Free space there, or give Ray a larger disk for its temp and spill files, then restart Ray.",
        commands=("ray start --head --temp-dir=/data/ray_tmp --object-spilling-directory=/data/ray_spill",
                  "export RAY_TMPDIR=/data/ray_tmp  # before ray.init / ray start"),
        source=SRC_RAY_FS_THRESHOLD)


# -- who may write Ray's temp dir -----------------------------------------------------------------------------------

# Ray makes its temp dir ($RAY_TMPDIR, else $TMPDIR, else /tmp, plus `ray`) with os.makedirs and then tries to chmod
# it 0777 so other users can share it, silently giving up when it is not the owner (try_to_create_directory /
# try_make_directory_shared); a temp dir another user left without write access for this one (or created by an
# older Ray, by hand, or with a umask) fails ray.init / ray start with "PermissionError: [Errno 13] Permission
# denied: '/tmp/ray/...'" on a shared machine; the reports name ray.init(_temp_dir=...) / --temp-dir as the way out.
SRC_RAY_TEMP_SHARED = ("https://github.com/ray-project/ray/issues/3899; https://github.com/ray-project/ray/issues/4593; "
                       "https://github.com/ray-project/ray/issues/32776; "
                       "https://github.com/ray-project/ray/blob/ray-2.60.0/python/ray/_common/utils.py")


@check("ray-temp-writable", "system", findings=("ray-temp-dir-not-writable",))
def ray_temp_writable(ctx: CheckContext) -> Iterator[Finding]:
    """The user who collected may create entries in Ray's temp dir (or create it, while it does not exist)."""
    snap = ctx.snapshot
    fact = val(snap.host, "ray_temp")
    writable, path, checked = (val(fact, k) for k in ("writable", "path", "checked"))
    if not isinstance(writable, bool) or not isinstance(path, str) or not isinstance(checked, str):
        skip("whether this user may write Ray's temp dir is not known (collected on another host, or by an older doctor)")
    if installed(snap, "ray") is False or writable:
        return
    uid, owner, mode = (val(fact, k) for k in ("uid", "owner_uid", "mode"))
    who = f"uid {uid}" if isinstance(uid, int) else "the collecting user"
    there = f"uid {owner}'s, mode {mode}" if isinstance(owner, int) else "its mode"
    if checked == path:
        title = f"Ray's temp dir {path} is not writable for {who} ({there})"
        why = ("Another user's Ray (or an admin, or a Ray that did not make it shared) left it so that this user "
               "cannot create its session directory in it: ray.init and `ray start` fail at once with "
               f"\"PermissionError: [Errno 13] Permission denied: '{path}/...'\" — as verl's trainer calls ray.init.")
    else:
        title = f"Ray's temp dir {path} does not exist and {who} may not create it under {checked} ({there})"
        why = (f"Ray makes its temp dir with os.makedirs, which needs to create {path} under {checked}: $RAY_TMPDIR or "
               "$TMPDIR names a directory that is not there (Python's tempfile falls back to /tmp, Ray does not), so "
               "ray.init and `ray start` fail with PermissionError.")
    yield finding(
        "ray-temp-dir-not-writable", "error", ("system", "ray"), title,
        detail=why + " Judged for the user the facts were collected as; a --temp-dir given to `ray start` or ray.init(_temp_dir=) "
                     "is not known here.",
        evidence={"path": path, "checked": checked, "uid": uid, "owner_uid": owner, "mode": mode, "writable": writable},
        fix="Give Ray a temp dir of this user's own before `ray start` or the job (RAY_TMPDIR, which Ray reads before "
            "TMPDIR; keep it short and on a local disk: Ray's socket paths live under it), or ask the owner to remove "
            f"{path if checked == path else 'the stale setting'}.",
        commands=('export RAY_TMPDIR="/tmp/ray-$(id -u)"',), source=SRC_RAY_TEMP_SHARED)
