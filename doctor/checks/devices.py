"""NPUs: visible at all, healthy, not held by other processes, ASCEND_RT_VISIBLE_DEVICES well formed,
container device nodes, and the prerequisites of MindSpeed's JIT-compiled extensions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from doctor.checks.cluster_facts import npu_less_skip
from doctor.checks.facts import devices, env, env_known, env_unset, family, installed, val
from doctor.checks.runner import CheckContext, check, skip
from doctor.report import Finding, finding
from doctor.snapshot.model import known

# CANN requires ASCEND_RT_VISIBLE_DEVICES in ascending order; otherwise torch.npu.is_available() is False.
SRC_VISIBLE = "https://github.com/agentscope-ai/Trinity-RFT/pull/618"
_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")


def _npu_nodes(paths: Iterable[Any] | None) -> list[str]:
    """The per-NPU device nodes (/dev/davinciN) among `paths`, not the manager nodes."""
    return [p for p in (paths or []) if isinstance(p, str) and p.startswith("/dev/davinci") and p[12:].isdigit()]


def _not_visible_detail(status: Any, pci: Any, files: Any) -> str:
    """What each source of NPU facts said: an npu-smi that is not installed listed nothing (saying it "lists no
    device" sends the reader to a card or a driver that may not exist), and a source the probe could not read
    (None) is not said to be empty."""
    said = {"missing": "npu-smi was not found (on PATH, in /usr/local/sbin, /usr/local/bin or the driver's "
                       "tools/)",
            "ok": "npu-smi lists no device"}.get(status)
    parts = [said or "npu-smi's device list is not known"]
    parts.append("there are no /dev/davinciN nodes" if files is not None else "the /dev/davinciN nodes were not read")
    parts.append("no Huawei accelerator is on PCI" if pci is not None else "PCI was not read")
    return "; ".join(parts) + "."


def _not_visible_fix(ctx: CheckContext) -> str:
    """Run where the NPUs are; then what to do from a machine without them, which depends on where this run is: on
    this host, collect here and check elsewhere; on a snapshot file (or a report), that was already done, so the
    snapshot is of the wrong machine or container; on a cluster, each node is its own host."""
    run = "Run on an Ascend host (Atlas A2/A3); in a container pass --device=/dev/davinciN and the manager nodes."
    if ctx.options.get("cluster"):
        return run
    if ctx.options.get("local"):
        return (f"{run} To diagnose an Ascend host from a machine without NPUs: `doctor collect -o snap.json` on it, "
                "then `doctor check --from snap.json` here.")
    return (f"{run} If the job runs on an Ascend host, the snapshot is of another machine or container: collect it "
            "again inside the container that runs the job (`doctor collect -o snap.json`), then `doctor check --from "
            "snap.json`.")


@check("npu-visible", "devices", findings=("npu-not-visible", "npu-smi-failed"))
def npu_visible(ctx: CheckContext) -> Iterator[Finding]:
    """At least one NPU is visible (npu-smi, PCI or device nodes) and npu-smi answers."""
    snap = ctx.snapshot
    asc = snap.ascend
    if not known(asc):
        skip("the snapshot has no Ascend facts")
    if ctx.node and (why := npu_less_skip(snap)):
        skip(why)
    devs = devices(snap)
    pci = val(asc, "pci")
    files = val(asc, "device_files")
    smi = val(asc, "npu_smi")
    status = val(smi, "status")
    davinci = _npu_nodes(files)
    if status in ("timeout", "error"):
        user = _non_root_user(asc) if status == "error" else None
        detail = (f"{val(smi, 'error') or ''} A hanging or failing npu-smi usually means a sick card or a broken "
                  "driver (`dcmi module initialize failed`).").strip()
        fix = ("Check `dmesg` and the device health (`npu-smi info -t health -i <id>`); reset or reboot the card, or "
               "reinstall the driver.")
        commands: tuple[str, ...] = ()
        source = "https://github.com/vllm-project/vllm-ascend/issues/2698"
        lacking = _container_lacks(snap) if status == "error" else None
        if lacking and not (user is not None and user[1]):
            ids = " / ".join(i for i, hit in (("container-device-nodes-missing", any(p in _NODES for p in lacking)),
                                               ("container-driver-not-mounted", any(p not in _NODES for p in lacking)))
                             if hit)
            detail = (f"{val(smi, 'error') or ''} This container lacks {', '.join(lacking)} ({ids}): DCMI cannot "
                      "reach the NPUs through it, which says nothing about the card or the driver.").strip()
            fix = ("Pass them into the container (the container findings say how) and run `npu-smi info` in it again: "
                   "neither the card nor the driver needs touching for this.")
            source = f"{SRC_CONTAINER}; {source}"
        elif user is not None:
            uid, refused = user
            commands = ("sudo npu-smi info",)
            if refused:
                detail = (f"{val(smi, 'error') or ''} npu-smi ran as uid {uid}, who may not open "
                          f"{', '.join(refused[:3])}{' ...' if len(refused) > 3 else ''} "
                          "(npu-device-access-denied): npu-smi's DCMI fails for want of access, which says nothing "
                          "about the card or the driver.").strip()
                fix = ("Give this user access to the device nodes (npu-device-access-denied says how); `sudo npu-smi "
                       "info` lists the NPUs when only the access is wrong: neither the card nor the driver needs "
                       "touching for this.")
                source = f"{SRC_RUNNING_USER}; {source}"
            else:
                detail = (f"{val(smi, 'error') or ''} npu-smi ran as uid {uid}, not root, and may open the device "
                          "nodes: some hosts give DCMI to root only, and npu-smi then fails for every other user with "
                          "`dcmi module initialize failed` while the cards are fine.").strip()
                fix = ("Compare with `sudo npu-smi info` (or the site's privileged queue): if it lists the NPUs, the "
                       "cards are fine and only npu-smi is root only here; if it fails too, check `dmesg` and the "
                       "device health, then reset the card or reinstall the driver.")
                source = f"{SRC_DCMI_ROOT_ONLY}; {source}"
        elif lacking is not None:  # a container with every node and mount it needs: ask the host first
            fix = ("Run `npu-smi info` on the host: if it lists the NPUs there, the container is what fails (a device "
                   "node, /usr/local/dcmi or the driver not passed in, or another container holding the NPUs: `ret is "
                   "-8020 ... the device is used`); if it fails on the host too, check `dmesg` and the device health "
                   "there, then reset the card or reinstall the driver.")
            source = f"{SRC_CONTAINER}; {SRC_DEVICE_USED}; {source}"
        yield finding(
            "npu-smi-failed", "error", ("npu", "driver"), f"npu-smi {'hung' if status == 'timeout' else 'failed'}",
            detail=detail, evidence={"status": status, "error": val(smi, "error")}, fix=fix, commands=commands,
            source=source)
    seen_any = bool(devs) or bool(pci) or bool(davinci)
    probed_any = devs is not None or pci is not None or files is not None
    if asc is None or (probed_any and not seen_any):
        yield finding(
            "npu-not-visible", "error", ("npu", "driver"), "No Ascend NPU is visible on this host",
            detail=_not_visible_detail(status, pci, files),
            evidence={"npu_smi": status, "devices": len(devs or []), "pci": len(pci or []), "device_files": files or []},
            fix=_not_visible_fix(ctx),
            source="https://github.com/ray-project/ray/blob/ad047a724cc854c52c8441a35a01f909ff5d2fec/python/ray/_private/accelerators/npu.py")


@check("npu-health", "devices", findings=("npu-hbm-in-use", "npu-unhealthy"))
def npu_health(ctx: CheckContext) -> Iterator[Finding]:
    """Every chip reports health OK and no other process holds its HBM."""
    snap = ctx.snapshot
    if devices(snap) is None:
        skip("npu-smi's device list is not in the snapshot")
    devs = devices(snap) or []
    bad = [(d.id, d.health) for d in devs if known(d.health) and d.health and d.health.upper() != "OK"]
    crit = [b for b in bad if b[1].lower() in ("critical", "alarm", "error")]
    if bad:
        yield finding(
            "npu-unhealthy", "error" if crit else "warning", ("npu",),
            f"{len(bad)} NPU(s) report health other than OK",
            detail="npu-smi health: " + ", ".join(f"NPU {i}: {h}" for i, h in bad),
            evidence={"devices": [{"id": i, "health": h} for i, h in bad]},
            fix="Inspect with `npu-smi info -t health -i <id>`; exclude the chip via ASCEND_RT_VISIBLE_DEVICES or repair it.",
            source="https://github.com/vllm-project/vllm-ascend/issues/5111; https://github.com/vllm-project/vllm-ascend/issues/960")
    held = []
    for d in devs:
        procs = val(d, "processes")
        if procs:
            held.append({"id": d.id, "pids": [p.pid for p in procs if known(p.pid)],
                         "hbm_mb": sum(p.hbm_mb for p in procs if known(p.hbm_mb) and p.hbm_mb)})
        elif procs is None:
            used, total = val(d, "hbm_used_mb"), val(d, "hbm_total_mb")
            if used and total and used > 0.5 * total:
                held.append({"id": d.id, "hbm_used_mb": used, "hbm_total_mb": total})
    if held:
        yield finding(
            "npu-hbm-in-use", "warning", ("npu",), f"{len(held)} NPU(s) already have HBM in use by other processes",
            detail="A training job sharing a chip runs out of memory or fails to start (`device is used`).",
            evidence={"devices": held},
            fix="Stop the other jobs (see `npu-smi info`) or pick free chips with ASCEND_RT_VISIBLE_DEVICES.",
            source="https://github.com/vllm-project/vllm-ascend/issues/5111; https://github.com/Ascend/cann-container-image/issues/46")


@check("visible-devices", "devices",
       findings=("visible-devices-duplicate", "visible-devices-invalid", "visible-devices-out-of-range", "visible-devices-rt-unset", "visible-devices-unsorted"))
def visible_devices(ctx: CheckContext) -> Iterator[Finding]:
    """ASCEND_RT_VISIBLE_DEVICES: integers, no duplicates, ascending, inside the device count."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    raw = env(snap, "ASCEND_RT_VISIBLE_DEVICES")
    vis = env(snap, "ASCEND_VISIBLE_DEVICES")
    if raw is None and vis and env_unset(snap, "ASCEND_RT_VISIBLE_DEVICES"):
        ids = [x.strip() for x in vis.split(",") if x.strip()]
        if ids and not (all(x.isdigit() for x in ids) and sorted(int(x) for x in ids) == list(range(len(ids)))):
            yield finding(
                "visible-devices-rt-unset", "warning", ("env", "npu"),
                "ASCEND_VISIBLE_DEVICES is set but ASCEND_RT_VISIBLE_DEVICES is not",
                detail=f"The device plugin exposed physical NPUs {vis}; without ASCEND_RT_VISIBLE_DEVICES the runtime may "
                       "open a device the pod was not given (SetDevice error 507033).",
                evidence={"ASCEND_VISIBLE_DEVICES": vis, "ASCEND_RT_VISIBLE_DEVICES": None},
                fix=f"export ASCEND_RT_VISIBLE_DEVICES={','.join(str(i) for i in range(len(ids)))}",
                source="https://github.com/Project-HAMi/HAMi/issues/1894")
    if not raw:
        if not env_unset(snap, "ASCEND_RT_VISIBLE_DEVICES"):
            skip("ASCEND_RT_VISIBLE_DEVICES is not in the snapshot")
        return
    parts = [x.strip() for x in raw.split(",")]
    bad = [x for x in parts if not x.isdigit()]
    ev = {"ASCEND_RT_VISIBLE_DEVICES": raw}
    if bad:
        yield finding(
            "visible-devices-invalid", "error", ("env", "npu"), f"ASCEND_RT_VISIBLE_DEVICES has non-integer entries {bad}",
            evidence=ev, fix="Use a comma-separated list of device ids, e.g. 0,1,2,3.", source=SRC_VISIBLE)
        return
    nums = [int(x) for x in parts]
    fixed = ",".join(str(i) for i in sorted(set(nums)))
    if len(set(nums)) != len(nums):
        yield finding(
            "visible-devices-duplicate", "error", ("env", "npu"), "ASCEND_RT_VISIBLE_DEVICES lists a device twice",
            evidence=ev, fix=f"export ASCEND_RT_VISIBLE_DEVICES={fixed}", source=SRC_VISIBLE)
    elif nums != sorted(nums):
        yield finding(
            "visible-devices-unsorted", "error", ("env", "npu"), "ASCEND_RT_VISIBLE_DEVICES is not in ascending order",
            detail="The CANN runtime then reports no devices and torch.npu.is_available() silently returns False.",
            evidence=ev, fix=f"export ASCEND_RT_VISIBLE_DEVICES={fixed}", source=SRC_VISIBLE)
    devs = devices(snap)
    if devs and all(known(getattr(d, "id", None)) for d in devs):  # a chip a report names states no count
        n = len(devs)
        out = [i for i in nums if i >= n]
        if out:
            yield finding(
                "visible-devices-out-of-range", "error", ("env", "npu"),
                f"ASCEND_RT_VISIBLE_DEVICES names device(s) {out}, but only {n} are present",
                evidence={**ev, "device_count": n},
                fix=f"Use ids 0..{n - 1}.", source=SRC_VISIBLE + "; https://github.com/ray-project/ray/blob/ad047a724cc854c52c8441a35a01f909ff5d2fec/python/ray/_private/accelerators/npu.py")


@check("container-devices", "devices",
       findings=("container-device-nodes-missing", "container-driver-not-mounted", "container-no-devices"))
def container_devices(ctx: CheckContext) -> Iterator[Finding]:
    """In a container, the davinci manager nodes and the driver must be passed through."""
    snap = ctx.snapshot
    if val(snap.host, "in_container") is not True:
        skip("not known to run in a container")
    files = val(snap.ascend, "device_files") if known(snap.ascend) and snap.ascend is not None else None
    if files is None:
        skip("the snapshot does not list the /dev device nodes")
    davinci = _npu_nodes(files)
    missing = [n for n in _NODES if n not in files]
    has_npu = bool(davinci) or bool(devices(snap)) or bool(family(snap))
    if has_npu and missing:
        yield finding(
            "container-device-nodes-missing", "error", ("npu", "driver"),
            "The container lacks Ascend device nodes: " + ", ".join(missing),
            detail="Without the manager nodes no NPU can be opened even when /dev/davinciN is present.",
            evidence={"missing": missing, "device_files": files},
            fix="docker run --device=/dev/davinci_manager --device=/dev/devmm_svm --device=/dev/hisi_hdc "
                "--device=/dev/davinciN ... (or use the Ascend Docker Runtime / --privileged).",
            source="https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md; https://github.com/vllm-project/vllm-ascend/issues/2698")
    mounts = snap.ascend.extra.get("driver_mounts") if known(snap.ascend) and snap.ascend is not None else None
    if has_npu and isinstance(mounts, dict):
        lost = [p for p in ("/usr/local/Ascend/driver", "/usr/local/Ascend/driver/lib64", "/etc/ascend_install.info")
                if mounts.get(p) is False]
        if lost:
            yield finding(
                "container-driver-not-mounted", "error", ("driver", "npu"),
                "The host's Ascend driver is not mounted into this container: " + ", ".join(lost),
                detail="Without the driver libraries (libascend_hal.so) and /etc/ascend_install.info the runtime cannot "
                       "open the devices, and torch_npu cannot read the driver version.",
                evidence={"missing": lost, "driver_mounts": mounts},
                fix="docker run -v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro "
                    "-v /etc/ascend_install.info:/etc/ascend_install.info:ro (or use the Ascend Docker Runtime).",
                source="https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/dockerfile_build_guidance.rst; "
                       "https://github.com/Ascend/pytorch/blob/v7.2.0-pytorch2.7.1/torch_npu/csrc/core/npu/GetCANNInfo.cpp")
    if not davinci and not files and known(snap.ascend) and snap.ascend is not None and val(snap.ascend, "toolkit"):
        yield finding(
            "container-no-devices", "error", ("npu",), "No /dev/davinci* device is passed into this container",
            evidence={"device_files": files},
            fix="Start the container with --device=/dev/davinciN for each NPU plus the manager nodes.",
            source="https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/get_start/dockerfile_build_guidance.rst; https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md")


SRC_CONTAINER = "https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/installation.md"
# npu-smi in a container whose NPUs another container holds: `dcmi module initialize failed. ret is -8020`
SRC_DEVICE_USED = "https://github.com/Ascend/cann-container-image/issues/46"


def _container_lacks(snap: Any) -> list[str] | None:
    """In a container: the manager nodes and driver mounts it lacks ([] when none is known to be missing); None when
    the snapshot does not say it runs in one."""
    if val(snap.host, "in_container") is not True or not known(snap.ascend) or snap.ascend is None:
        return None
    files = val(snap.ascend, "device_files")
    lacking = [n for n in _NODES if n not in files] if isinstance(files, list) else []
    mounts = snap.ascend.extra.get("driver_mounts")
    if isinstance(mounts, dict):
        lacking += [p for p in ("/usr/local/Ascend/driver", "/usr/local/Ascend/driver/lib64",
                                "/etc/ascend_install.info") if mounts.get(p) is False]
    return lacking


# The driver and firmware run as their running user and group (HwHiAiUser unless installed with
# --install-for-all); another user who runs the job must be in that group.
SRC_RUNNING_USER = "https://www.hiascend.com/document/detail/en/canncommercial/800/softwareinst/instg/instg_0004.html"


# a shared host where DCMI is granted to root only: a non-root `npu-smi info` prints `dcmi module initialize failed.
# ret is -8005` (exit 187) while the same query as root lists the NPUs
SRC_DCMI_ROOT_ONLY = "https://github.com/hw-native-sys/simpler/pull/2043"


def _access(asc: Any) -> tuple[int, set[int], dict[str, Any], dict[str, Any]] | None:
    """(uid, its groups, every node's facts, the nodes it may not open) from `ascend.device_access`; None when the
    snapshot does not record them."""
    acc = asc.extra.get("device_access") if known(asc) and asc is not None else None
    if not isinstance(acc, dict) or not isinstance(acc.get("nodes"), dict):
        return None
    uid, gids = acc.get("uid"), acc.get("gids")
    if not isinstance(uid, int) or not isinstance(gids, list):
        return None
    groups = {g for g in gids if isinstance(g, int)}
    nodes = {p: n for p, n in acc["nodes"].items() if isinstance(n, dict)}
    return uid, groups, nodes, {p: n for p, n in nodes.items() if _node_rw(n, uid, groups) is False}


def _non_root_user(asc: Any) -> tuple[int, list[str]] | None:
    """(uid, the device nodes it may not open) when collect recorded a non-root user; None for root or unknown."""
    got = _access(asc)
    return (got[0], sorted(got[3])) if got is not None and got[0] != 0 else None


def _node_rw(node: dict[str, Any], uid: int, gids: set[int]) -> bool | None:
    """Whether `uid` (in `gids`) may read and write a device node: the kernel's own answer where collect asked it
    on the live host, else the node's permission bits (owner, group, other; root passes). None when unknown."""
    if isinstance(node.get("rw"), bool):
        return bool(node["rw"])
    mode, nuid, ngid = node.get("mode"), node.get("uid"), node.get("gid")
    if not (isinstance(mode, str) and isinstance(nuid, int) and isinstance(ngid, int)):
        return None
    try:
        bits = int(mode, 8)
    except ValueError:
        return None
    if uid == 0:
        return True
    shift = 6 if uid == nuid else 3 if ngid in gids else 0
    return (bits >> shift) & 0o6 == 0o6


@check("device-access", "devices", findings=("npu-device-access-denied",))
def device_access(ctx: CheckContext) -> Iterator[Finding]:
    """The user who runs the job may open the NPU device nodes (the driver's running group, or --install-for-all)."""
    got = _access(ctx.snapshot.ascend)
    if got is None:
        skip("the snapshot does not record who may open the device nodes, or the user collect ran as")
    uid, groups, nodes, denied = got
    if not denied:
        return
    npus = _npu_nodes(nodes)
    # some NPUs open and the manager nodes too: a site that gives each user their own NPUs; a job on those runs
    partial = any(p not in denied for p in npus) and all(p in npus for p in denied)
    owners = sorted({f"{n.get('uid')}:{n.get('group') or n.get('gid')} {n.get('mode')}" for n in denied.values()})
    # the groups whose membership would open the nodes: the group's bits grant read and write, the user is not in it
    # (never group 0: joining root's group to open a device hands the user root's files too)
    join = sorted({n.get("group") or str(n["gid"]) for n in denied.values()
                   if isinstance(n.get("gid"), int) and n["gid"] != 0 and n["gid"] not in groups
                   and _node_rw({**n, "rw": None}, -1, {n["gid"]})})
    fix = (f"Add the user to the driver's group and log in again: sudo usermod -aG {join[0]} $USER (in a container: "
           f"docker run --group-add {join[0]}, or run as root)" if join else
           "Run the job as root or as the driver's running user (HwHiAiUser by default), or reinstall the driver and "
           "firmware with --install-for-all so every user may open the devices")
    commands = ([f"sudo usermod -aG {join[0]} $USER"] if join else []) + ["npu-smi info"]
    yield finding(
        "npu-device-access-denied", "warning" if partial else "error", ("npu", "driver"),
        f"uid {uid} cannot open {len(denied)} NPU device node(s): " + ", ".join(sorted(denied)[:6])
        + (" ..." if len(denied) > 6 else "") + f" ({'; '.join(owners)})",
        detail="The driver gives its device nodes to its running user and group (HwHiAiUser unless it was installed "
               "with --install-for-all). Any other user is refused when the runtime opens them: torch_npu finds no "
               "device and npu-smi / DCMI calls fail with a permission error."
               + (" The other NPUs and the manager nodes do open, so a job on those runs (a site that gives each user "
                  "their own NPUs): keep ASCEND_RT_VISIBLE_DEVICES to them." if partial else "")
               + " Judged for the user doctor ran as"
               + ("" if all(isinstance(n.get("rw"), bool) for n in denied.values())
                  else ", from the nodes' permission bits (an ACL granting access would not show here)") + ".",
        evidence={"uid": uid, "gids": sorted(groups), "denied": denied},
        fix=fix + "; then check with `npu-smi info` as that user.", commands=commands,
        source=SRC_RUNNING_USER)


@check("jit-prerequisites", "devices",
       findings=("mindspeed-jit-tools-missing", "torch-extensions-stale-lock"))
def jit_prerequisites(ctx: CheckContext) -> Iterator[Finding]:
    """MindSpeed JIT-builds its ops with ninja and g++; a stale torch_extensions lock makes runs hang."""
    snap = ctx.snapshot
    tools = snap.host.extra.get("tools") if known(snap.host) else None
    locks = snap.host.extra.get("torch_extensions_locks") if known(snap.host) else None
    ms = installed(snap, "mindspeed") or bool(val(snap.module("mindspeed"), "origins"))
    if not (ms and isinstance(tools, dict)) and not isinstance(locks, list):
        skip("MindSpeed or the build tools are not known" if not ms else "the build tools are not in the snapshot")
    if ms and isinstance(tools, dict):
        missing = [t for t in ("ninja", "g++") if t in tools and not tools[t]]
        if "ninja" in missing and installed(snap, "ninja"):
            missing.remove("ninja")
        if missing:
            yield finding(
                "mindspeed-jit-tools-missing", "warning", ("mindspeed", "system"),
                "MindSpeed's JIT op build needs " + " and ".join(missing),
                detail="MindSpeed compiles some fused ops at first use (torch.utils.cpp_extension); without them the run "
                       "fails when the feature is enabled.",
                evidence={"tools": tools}, fix="pip install ninja; install g++ (apt-get install g++ / yum install gcc-c++).",
                source="https://github.com/Ascend/MindSpeed/blob/v2.3.0_core_r0.12.1/requirements.txt; "
                       "https://github.com/Ascend/MindSpeed/blob/028de58ca629d035185b00ff7d1eb7eff4f7fd48/docs/zh/FAQ.md")
    if isinstance(locks, list) and locks:
        yield finding(
            "torch-extensions-stale-lock", "warning", ("mindspeed", "system"),
            f"{len(locks)} stale torch_extensions lock file(s) can make the next run hang",
            detail="An interrupted JIT build leaves a `lock` file; the next run waits forever at 'Using ... as PyTorch "
                   "extensions root'.",
            evidence={"locks": locks[:10]},
            fix="Delete the listed lock files (or ~/.cache/torch_extensions/py3xx_cpu) when no build is running.",
            source="https://github.com/Ascend/MindSpeed/blob/028de58ca629d035185b00ff7d1eb7eff4f7fd48/docs/zh/FAQ.md")
