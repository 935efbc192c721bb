"""`hccn_tool` and `/etc/hccn.conf`: every NPU's RoCE port (link, address, health, speed, flaps, optics,
gateway) under one time budget shared by all calls.

The tool is the driver's `tools/hccn_tool` under the root prefix (where npu-exporter and msprechecker run
it), else `hccn_tool` on PATH. Devices are the physical ids N of `/dev/davinciN` (the id `hccn_tool -i`
and `address_N` use; a container sees only the devices mounted into it), else the ids in hccn.conf.
One device's commands run one after another and the devices run in parallel, as msprechecker does
("each device has max concurrency 1", Ascend/msit msprechecker/collectors/hccl.py). Every call goes
through `run_bounded` with what is left of the budget, so a hung tool costs at most the budget and leaves
no process behind; the outcome is data (`ok` / `missing` / `timeout` / `error`), never an exception.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from doctor.probes._fs import FsError, RootFS
from doctor.probes._run import RunResult, run_bounded

DRIVER_TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
CONF = "/etc/hccn.conf"
_FACT_KEYS = ("link", "address", "netmask", "health", "speed_mbps", "link_up_count", "link_down_count",
              "optical_present", "gateway")


@functools.cache
def queries() -> tuple[tuple[str, tuple[str, ...], Callable[[Any], dict[str, Any]]], ...]:
    """(fact group, hccn_tool arguments after `-i N`, parser), in the order one device runs them. The parsers are
    imported only once there is a tool to run or a hccn.conf to read (most hosts have neither)."""
    from doctor.probes import hccn_parse as P

    return (
        ("link", ("-link", "-g"), P.parse_link),
        ("ip", ("-ip", "-g"), P.parse_ip),
        ("net_health", ("-net_health", "-g"), P.parse_net_health),
        ("speed", ("-speed", "-g"), P.parse_speed),
        ("link_stat", ("-link_stat", "-g"), P.parse_link_stat),
        ("optical", ("-optical", "-g"), P.parse_optical),
        ("gateway", ("-gateway", "-g"), P.parse_gateway),
    )


def driver_tools(fs: RootFS) -> list[str]:
    """Where the driver's hccn_tool is, in the machine's own paths: under the directory /etc/ascend_install.info
    records (`Driver_Install_Path_Param`: a driver installed with `--install-path`), then the default one."""
    from doctor.probes.ascend_files import get_ci, parse_kv

    try:
        text = fs.read_text("/etc/ascend_install.info")
    except FsError:
        text = None
    base = get_ci(parse_kv(text), "Driver_Install_Path_Param") if text else None
    recorded = f"{base.rstrip('/')}/driver/tools/hccn_tool" if base and base.startswith("/") else None
    return list(dict.fromkeys(p for p in (recorded, DRIVER_TOOL) if p))


def find_hccn_tool(root: str = "/", path: str | None = None) -> str | None:
    """The driver's hccn_tool under `root` (driver_tools), else `hccn_tool` on `path` (None: $PATH)."""
    for tool in driver_tools(RootFS(root)):
        host = os.path.join(os.path.abspath(root or "/"), tool.lstrip("/"))
        if os.path.isfile(host) and os.access(host, os.X_OK):
            return host
    import shutil

    return shutil.which("hccn_tool", path=path)


def device_ids(fs: RootFS) -> list[int]:
    """Physical NPU ids from /dev/davinciN ([] when none is visible)."""
    try:
        names = fs.listdir("/dev")
    except FsError:
        return []
    return sorted(int(n[7:]) for n in names if re.fullmatch(r"davinci\d{1,4}", n))


def run_per_device(exe: str, jobs: Mapping[int, Sequence[Sequence[str]]], deadline: float,
                   env: Mapping[str, str] | None) -> dict[int, list[RunResult]]:
    """Run `exe -i <device> <args...>` for each device's jobs in order, devices in parallel, all before
    `deadline` (time.monotonic()); a call that would start past it is a `timeout` without a process."""
    results: dict[int, list[RunResult]] = {d: [] for d in jobs}

    def one_device(dev: int) -> None:
        for args in jobs[dev]:
            results[dev].append(run_bounded([exe, "-i", str(dev), *args], deadline - time.monotonic(), env=env))

    threads = [threading.Thread(target=one_device, args=(d,), name=f"doctor-hccn-{d}", daemon=True) for d in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 2.0)  # run_bounded kills at the deadline; 2 s to reap
    return results


def device_facts(dev: int, runs: Sequence[RunResult]) -> dict[str, Any]:
    """One device's snapshot entry from its queries() runs: a fact whose command gave no usable answer is
    left out (unknown) and its reason recorded in `errors`."""
    facts: dict[str, Any] = {"id": dev}
    errors: dict[str, str] = {}
    for (name, _args, parse), r in zip(queries(), runs, strict=False):
        if r.status != "ok":
            errors[name] = r.error or r.status
            continue
        parsed = parse(r.out + "\n" + r.err)
        if "error" in parsed:
            errors[name] = f"exit {r.returncode}: {parsed['error']}" if r.returncode else parsed["error"]
            continue
        for key in _FACT_KEYS:
            if key in parsed and not (key == "link_down_count" and parsed[key] is None):
                facts[key] = parsed[key]
    for name, _args, _parse in queries()[len(runs):]:
        errors[name] = "not run: no time left in the budget"
    facts["errors"] = errors
    return facts


def read_conf(fs: RootFS) -> tuple[dict[str, Any] | None, str | None]:
    """(/etc/hccn.conf as `ascend.hccn.conf`, or None when absent; error when unreadable)."""
    try:
        text = fs.read_text(CONF)
    except FsError as e:
        return None, f"{CONF}: {e.reason}"
    if text is None:
        return None, None
    from doctor.probes.hccn_parse import parse_hccn_conf

    parsed = parse_hccn_conf(text)
    devices = [{"id": d, **{k: v for k, v in keys.items()}} for d, keys in sorted(parsed["devices"].items())]
    return {"path": CONF, "devices": devices}, None


def _status(runs: Sequence[RunResult]) -> tuple[str, str | None]:
    timed_out = next((r for r in runs if r.status == "timeout"), None)
    if timed_out is not None:
        return "timeout", f"{' '.join(timed_out.argv[1:])}: {timed_out.error}"
    broken = [r for r in runs if r.status != "ok"]
    if runs and len(broken) == len(runs):
        return "error", broken[0].error
    return "ok", None


def probe_hccn(timeout: float, *, root: str = "/", path: str | None = None,
               environ: Mapping[str, str] | None = None) -> tuple[dict[str, Any], list[RunResult], RootFS]:
    """-> (`ascend.hccn` facts, every run in order, the RootFS that read hccn.conf)."""
    fs = RootFS(root)
    conf, conf_error = read_conf(fs)
    facts: dict[str, Any] = {}
    if conf_error is None:
        facts["conf"] = conf
    exe = find_hccn_tool(root, path)
    if exe is None:
        facts.update(status="missing", path=None,
                     error=f"hccn_tool not found ({' or '.join(driver_tools(fs))} or on PATH)")
        return facts, [], fs
    ids = device_ids(fs) or [d["id"] for d in (conf or {}).get("devices", [])]
    deadline = time.monotonic() + timeout
    env = dict(environ) if environ is not None else None
    by_dev = run_per_device(exe, {d: [q[1] for q in queries()] for d in ids}, deadline, env)
    runs = [r for d in ids for r in by_dev[d]]
    status, error = _status(runs)
    facts.update(status=status, path=exe, error=error or conf_error,
                 devices=[device_facts(d, by_dev[d]) for d in ids])
    return facts, runs, fs


def ping(exe: str, plan: Sequence[tuple[int, str]], timeout: float,
         environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """`hccn_tool -i D -ping -g address X` for each (D, X) in `plan`, one at a time per device and the
    devices in parallel, all within `timeout`: -> [{device, address, ok, loss_pct, seconds, error}]."""
    jobs: dict[int, list[list[str]]] = {}
    for dev, addr in plan:
        jobs.setdefault(dev, []).append(["-ping", "-g", "address", addr])
    by_dev = run_per_device(exe, jobs, time.monotonic() + timeout, environ)
    from doctor.probes.hccn_parse import parse_ping

    out = []
    for dev, addr in plan:
        r = by_dev[dev].pop(0) if by_dev.get(dev) else RunResult([exe], "timeout", error="not run")
        res: dict[str, Any] = {"device": dev, "address": addr, "seconds": round(r.seconds, 3)}
        if r.status != "ok":
            res.update(ok=None, loss_pct=None, error=f"ping {r.status}: {r.error}")
        else:
            res.update({"loss_pct": None, "error": None, **parse_ping(r.out + "\n" + r.err, r.returncode)})
        out.append(res)
    return out
