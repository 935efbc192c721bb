"""Collect a `doctor.cluster/1` document from a running Ray cluster (`doctor collect --ray`, `check --ray`).

How the work is split, and why:

* **The driver runs under the target interpreter.** Ray refuses a driver whose Ray or Python minor version
  differs from the cluster's, and the doctor may live in its own venv or pipx. So `collect_ray` always runs
  `doctor/probes/_ray_driver.py` (stdlib + ray only) as a subprocess of `--python` (the training env, whose
  Ray is the cluster's) or, without `--python`, of the doctor's own interpreter when it has Ray. Running
  it as a subprocess even then keeps Ray's global state, logs and threads out of the doctor process and
  lets one hard timeout bound the whole run.
* **The nodes run the same collector as `doctor collect`.** The driver zips the doctor package directory
  (the one this module is imported from), puts it in Ray's object store once, and each node task unpacks
  it into a private temp dir and calls `node_probe` below, which runs the local collection with the
  worker's own interpreter as the target Python. The alternative, shipping only the stdlib target-probe
  script text, would give the nodes a second, poorer code path (no Ascend files, npu-smi, PCI or network
  facts) whose snapshots checks could not trust the same way. The package's runtime needs are met in
  every Ray worker: Ray itself depends on click and packaging and vendors psutil
  (`ray/thirdparty_files`). The one limit is the doctor's own Python floor (3.10): on an older node the
  task reports that as the node's error. (Ray's runtime_env `py_modules` ships a package the same way
  but costs a fresh worker process plus runtime-env setup per node; a plain task reuses the node's
  prestarted worker, which is what keeps 4 nodes within 2x the time of one.)
* **Per-node root.** Each node reads its Ascend files under `DOCTOR_ROOT` from the node's own environment
  when it is set (the env form of `--root`), else under the `root` the caller passed. That is how tests
  give simulated nodes on one host different fake Ascend installs (`DOCTOR_ROOT=... ray start ...`), and
  how a node whose driver is mounted elsewhere (a container) can be pointed at it.
* **Never hang.** One task per node, pinned (soft=False), num_cpus=0; all wait together for at most
  `timeout` seconds; stragglers are force-cancelled and recorded with their error; the subprocess has
  an outer timeout too.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from doctor.errors import DoctorError, own_pip_install
from doctor.probes._run import run_bounded
from doctor.snapshot.model import Cluster

DRIVER = Path(__file__).resolve().parent / "_ray_driver.py"
NODE_ENTRY = "doctor.cluster.collect_ray:node_probe"
REACH_ENTRY = "doctor.cluster.npu_reach:node_reach"
CONNECT_TIMEOUT = 60.0
REACH_TIMEOUT = 60.0  # upper bound of the --ray --deep ping round (a reachable NPU answers in milliseconds)
# Time the driver needs around the per-node wait: start the interpreter, import ray, write, shut down.
_OVERHEAD = 45.0


def default_address() -> str:
    """`RAY_ADDRESS` when set, else "auto" (the cluster this host belongs to), as `ray.init` does."""
    return os.environ.get("RAY_ADDRESS") or "auto"


def _doctor_has_ray() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def driver_command(python: str, out: str, address: str, timeout: float, root: str,
                   connect_timeout: float = CONNECT_TIMEOUT, reach_timeout: float | None = None,
                   deep_timeout: float | None = None) -> list[str]:
    """The argv that runs the driver; the doctor package directory is what the nodes receive.
    `reach_timeout`: also run the `--deep` RoCE reachability round, bounded by it. `deep_timeout`: each node also
    records the `--deep` imports and installed files against RECORD, bounded by it (on top of `timeout`)."""
    package_dir = str(Path(__file__).resolve().parent.parent)
    reach = ["--reach-entry", REACH_ENTRY, "--reach-timeout", f"{reach_timeout:g}"] if reach_timeout else []
    deep = ["--deep-timeout", f"{deep_timeout:g}"] if deep_timeout else []
    return [
        python, str(DRIVER), "--out", out, "--address", address, "--timeout", f"{timeout:g}",
        "--connect-timeout", f"{connect_timeout:g}", "--root", root, "--package", package_dir,
        "--entry", NODE_ENTRY, *reach, *deep,
    ]


class RayNotInstalled(DoctorError):
    """`--ray` without `--python` and no Ray in the doctor's interpreter: the `ray` extra is missing, reported as
    every missing extra is (`extra-not-installed`, its fix the line that installs it), not as a doctor failure."""

    finding_id = "extra-not-installed"

    def __init__(self) -> None:
        self.fix = (f"Pass --python with the training environment's interpreter, whose Ray runs the cluster; or install "
                    f"the cluster's Ray release into the doctor's Python: {cluster_ray_install()}")
        super().__init__(f"Ray is not installed in the doctor's Python ({sys.executable}). {self.fix}.")


def cluster_ray_install() -> str:
    """The line that puts the cluster's own Ray release into the doctor's interpreter, and how to read VERSION. Not
    the `ray` extra: it installs the newest Ray, and Ray refuses a driver whose Ray release or Python minor version
    is not the cluster's ("Version mismatch", check_version_info in
    https://github.com/ray-project/ray/blob/master/python/ray/_private/utils.py)."""
    line = own_pip_install("'ray==VERSION'")
    return (f"`{line}`, VERSION being what `ray --version` prints on a node (Ray "
            "accepts a driver of the cluster's own Ray release and Python minor version only; the doctor's `ray` "
            "extra would install the newest Ray)")


def collect_ray(address: str | None, python: str | None, timeout: float, root: str = "/",
                *, connect_timeout: float = CONNECT_TIMEOUT, reach_timeout: float | None = None,
                deep_timeout: float | None = None) -> Cluster:
    """Probe every alive node of the Ray cluster at `address` and return the cluster document.

    `python`: the interpreter whose Ray is the cluster's (None: the doctor's own, if it has Ray).
    `timeout`: seconds all node probes together may take; a node that has not answered by then is
    recorded as timed out. `deep_timeout` (`--deep`): each node then also records what `check --deep` does
    on one host, the imports and its installed files against RECORD (doctor.probes.deep.add_deep_facts, in the
    node's worker environment), each bounded by it; the nodes get that much longer. `reach_timeout`: then ping
    between the nodes' NPUs (`--deep`) for at most that long. Raises DoctorError (exit 2) when Ray is missing or
    the cluster unreachable.
    """
    from doctor.snapshot.model import cluster_from_dict

    if timeout <= 0:
        raise DoctorError(f"--timeout must be positive, got {timeout:g}")
    if python is None:
        if not _doctor_has_ray():
            raise RayNotInstalled()
        python = sys.executable
    elif not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise DoctorError(f"--python {python}: not an executable file")
    address = address or default_address()

    fd, out = tempfile.mkstemp(prefix="doctor-cluster-", suffix=".json")
    os.close(fd)
    os.unlink(out)
    cmd = driver_command(python, out, address, timeout, root, connect_timeout, reach_timeout, deep_timeout)
    env = dict(os.environ)
    env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    limit = connect_timeout + timeout + (deep_timeout or 0.0) + (reach_timeout or 0.0) + _OVERHEAD
    t0 = time.monotonic()
    try:
        r = run_bounded(cmd, limit, env=env)
        data = _read_result(out) if r.status == "ok" else None
    finally:
        try:
            os.unlink(out)
        except OSError:
            pass
    if r.status == "timeout":
        raise DoctorError(f"the Ray driver did not finish within {limit:.0f} s (address {address}); "
                          "is the cluster overloaded?")
    if r.status != "ok":
        raise DoctorError(f"the Ray driver could not start: {r.error}")
    if data is None:
        tail = "\n".join(r.err.strip().splitlines()[-15:])
        raise DoctorError(
            f"the Ray driver ({python}) exited with code {r.returncode} without a result"
            + (f":\n{tail}" if tail else "")
        )
    if "fatal" in data:
        raise DoctorError(_fatal_message(data, python))
    cluster = cluster_from_dict(data, source=f"ray driver output ({address})")
    cluster.extra.setdefault("ray", {})["wall_seconds"] = round(time.monotonic() - t0, 3)
    return cluster


def _read_result(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _fatal_message(data: dict[str, Any], python: str) -> str:
    kind, msg = data.get("kind"), str(data.get("fatal"))
    if kind == "no-ray":
        return (f"{msg}. Run the doctor with --python pointing at the training environment's interpreter "
                f"(the one whose Ray runs the cluster), or install the cluster's Ray release there (for the doctor's "
                f"own environment: {cluster_ray_install()}).")
    if kind == "connect" and "version mismatch" in msg.lower():
        return (f"{msg}\nRay only accepts a driver with the cluster's Ray and Python minor version: pass "
                "--python with the interpreter of the environment that started the cluster.")
    return msg


# -- node side ------------------------------------------------------------------------------------------


def node_root(default: str) -> str:
    """The root prefix on this node: DOCTOR_ROOT from the node's environment wins over the caller's."""
    return os.environ.get("DOCTOR_ROOT") or default


VISIBLE = "ASCEND_RT_VISIBLE_DEVICES"


def worker_environ(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Ray worker's environment as the node's processes have it, minus Ray's own per-task override.

    Ray versions before the RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO default flipped set
    ASCEND_RT_VISIBLE_DEVICES="" in any task that asked for no NPU (ray `_private/utils.py::
    set_visible_accelerator_ids`); our probe asks for none, so that empty value is Ray's, not the user's.
    When the worker sees "" but its raylet (RAY_RAYLET_PID, whose environment every worker inherits)
    does not, the raylet's value (or its absence) is restored."""
    env = dict(os.environ if environ is None else environ)
    pid = env.get("RAY_RAYLET_PID", "")
    if env.get(VISIBLE) != "" or not pid.isdigit():
        return env
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            raw = fh.read()
    except OSError:
        return env
    parent = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            parent[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    if parent.get(VISIBLE) != "":
        if VISIBLE in parent:
            env[VISIBLE] = parent[VISIBLE]
        else:
            env.pop(VISIBLE, None)
    return env


def node_probe(root: str = "/", budget: float = 30.0, deep: float | None = None) -> dict[str, Any]:
    """Runs inside a Ray worker on each node: the local collection, as `doctor collect` does it, with the
    worker's interpreter as the target Python and the worker's environment (what verl's workers inherit
    from the raylet). npu-smi gets at most half the node budget, so a hung card still yields a snapshot
    (npu_smi status `timeout`) instead of a timed-out node. `deep` (`check --ray --deep`): then the `--deep`
    imports and RECORD comparison, as `collect --deep` on that node, each bounded by `deep` seconds (the driver
    waits that much longer). Returns the snapshot as a JSON-able dict."""
    from doctor.probes import collect_snapshot

    environ = worker_environ()
    snap = collect_snapshot(root=node_root(root), python=sys.executable, environ=environ,
                            npu_smi_timeout=max(1.0, min(10.0, budget / 2)),
                            python_timeout=max(5.0, budget * 0.9))
    if deep:
        from doctor.probes.deep import add_deep_facts

        add_deep_facts(snap, sys.executable, deep, environ=environ)
    return snap.to_dict()
