"""Ray driver for `doctor collect --ray`: run the doctor's node probe once on every alive Ray node.

This file is run as a script by the *target* interpreter (`--python`, the training environment whose Ray
is the cluster's), never imported by the doctor: Ray refuses a driver whose Ray or Python minor version
differs from the cluster's (`ray/_private/utils.py::check_version_info`), so the driver must live in the
cluster's environment, where the doctor itself may not be installed. Hence it uses only the standard
library and `ray`, and keeps Python 3.8 syntax.

What it does:
  * connects to ADDRESS (no job runtime_env), zips the doctor package directory once and puts it in the
    object store; each node task unpacks it into a fresh private temp dir, puts that on sys.path and
    runs the same collector as the local `doctor collect`, inside the Ray worker's real environment
    (the raylet's env vars, PATH and interpreter: what verl's workers see). A runtime_env `py_modules`
    would do the same shipping, but it forces a dedicated worker process per node plus runtime-env
    setup (measured 2-5 s per node on a 2-core host, and it grows with the node count there), while a
    plain task reuses the node's prestarted idle worker;
  * submits one task per alive node, pinned with NodeAffinitySchedulingStrategy(soft=False), with
    num_cpus=0 (a node whose CPUs are all taken by training still answers) and max_retries=0;
  * waits at most TIMEOUT seconds for all of them together (they run in parallel), force-cancels the
    stragglers and records them as timed out; a node that dies or whose task fails is recorded with its
    error; the document is written either way;
  * writes one `doctor.cluster/1` JSON document to --out (temp file + rename) and exits 0; on a problem
    that stops the whole run (no ray, cannot connect) it writes {"fatal": ..., "kind": ...} and exits 3;
  * with --deep-timeout (`doctor check --ray --deep`), each node's entry also runs the `--deep` imports and
    installed-files comparison, each bounded by it, and the wait for the nodes grows by it;
  * with --reach-entry (`doctor check --ray --deep`), runs a second round: every node gets all nodes'
    `ascend.hccn` facts and pings one NPU address of each other node (doctor/cluster/npu_reach.py says
    why this is a second round); the answers go into each snapshot's ascend.hccn.reach.

Usage: python _ray_driver.py --out FILE --address ADDR --timeout S --root ROOT --package DIR
       --entry MODULE:FUNCTION [--connect-timeout S] [--reach-entry MODULE:FUNCTION --reach-timeout S]
       [--deep-timeout S]
"""

import argparse
import io
import json
import os
import sys
import tempfile
import threading
import time
import traceback
import zipfile


def _write(path, data):
    d = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".doctor-ray-", dir=d)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


def _fatal(out, kind, message):
    _write(out, {"fatal": message, "kind": kind})
    sys.stderr.flush()
    os._exit(3)


def package_payload(package_dir):
    """The package directory as zip bytes (arcnames start with its own name), without bytecode."""
    buf = io.BytesIO()
    base = os.path.dirname(os.path.abspath(package_dir))
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for dirpath, dirnames, filenames in os.walk(package_dir):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for f in sorted(filenames):
                if f.endswith((".pyc", ".pyo")):
                    continue
                full = os.path.join(dirpath, f)
                z.write(full, os.path.relpath(full, base))
    return buf.getvalue()


def _node_task(entry, payload, root, budget, expected_node_id, deep=None):
    """Runs on the node. Unpacks the shipped doctor package, imports its node entry and returns its
    result plus what only the node knows: its own Ray version, its node id (proof of the pinning).
    `deep`: the entry also runs the `--deep` imports and file comparison, each bounded by that many seconds."""
    info = _task_info(expected_node_id)
    if "error" not in info:
        kwargs = {"root": root, "budget": budget}
        if deep:
            kwargs["deep"] = deep
        _call_shipped(entry, payload, kwargs, info, "snapshot")
    return info


def _task_info(expected_node_id):
    import platform

    import ray

    here = ray.get_runtime_context().get_node_id()
    info = {"ray_version": ray.__version__, "node_id": here, "python": platform.python_version(),
            "executable": sys.executable, "pid": os.getpid()}
    if here != expected_node_id:
        info["error"] = f"task ran on node {here} instead of {expected_node_id}"
    return info


def _call_shipped(entry, payload, kwargs, info, key):
    """Unpack the package into a fresh private dir, call entry(**kwargs), store its result in info[key]."""
    import importlib
    import platform
    import shutil

    t0 = time.time()
    mod_name, _, fn_name = entry.partition(":")
    # A task of an earlier round in this worker imported the package from its own, now deleted, directory.
    top = mod_name.split(".")[0]
    for name in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        del sys.modules[name]
    # A fresh private directory per run (mkdtemp is 0700): a predictable shared path could be planted.
    where = tempfile.mkdtemp(prefix="verl-ascend-doctor-")
    try:
        zipfile.ZipFile(io.BytesIO(payload)).extractall(where)
        sys.path.insert(0, where)
        try:
            fn = getattr(importlib.import_module(mod_name), fn_name)
        except Exception as e:  # SyntaxError/ImportError: the node's Python cannot run the doctor's code
            info["error"] = (f"the doctor's node probe cannot run under Python {platform.python_version()} "
                             f"on this node: {type(e).__name__}: {e}")
            return
        try:
            info[key] = fn(**kwargs)
        except Exception as e:  # a crashing probe is this node's error, not the whole run's
            info["error"] = f"node probe crashed: {type(e).__name__}: {e}"
            info["traceback"] = traceback.format_exc()
    finally:
        sys.path[:] = [p for p in sys.path if p != where]
        shutil.rmtree(where, ignore_errors=True)
        info["seconds"] = round(time.time() - t0, 3)


def _reach_task(entry, payload, root, budget, me, peers, expected_node_id):
    """Round 2 of `--deep`: on node `me`, ping one NPU address of every other node (doctor.cluster.npu_reach)."""
    info = _task_info(expected_node_id)
    if "error" not in info:
        _call_shipped(entry, payload, {"me": me, "peers": peers, "root": root, "budget": budget}, info, "result")
    return info


def _reach_round(args, nodes, ray_nodes):
    """After the probe round: hand every node all nodes' `ascend.hccn` facts and let each ping the others
    (one pinned task per node, in parallel, at most --reach-timeout in total). Results go into each
    snapshot's ascend.hccn.reach, or its reach_error."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    ids = {m["node"]: m["node_id"] for m in ray_nodes if m.get("alive")}
    hccn = {}
    for entry in nodes:
        h = ((entry.get("snapshot") or {}).get("ascend") or {}).get("hccn")
        if isinstance(h, dict) and entry["node"] in ids:
            hccn[entry["node"]] = h
    if len(hccn) < 2:
        return
    peers = {n: {"devices": h.get("devices")} for n, h in hccn.items()}
    payload = ray.put(package_payload(args.package))
    remote = ray.remote(num_cpus=0, max_retries=0)(_reach_task)
    budget = max(1.0, args.reach_timeout * 0.8)
    refs = {remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=ids[n], soft=False),
                           name="doctor-reach").remote(args.reach_entry, payload, args.root, budget, n, peers, ids[n]): n
            for n in hccn}
    ready, pending = ray.wait(list(refs), num_returns=len(refs), timeout=args.reach_timeout)
    for r in pending:
        try:
            ray.cancel(r, force=True)
        except Exception:
            pass
        hccn[refs[r]]["reach_error"] = f"timeout: no answer within {args.reach_timeout:g} s"
    for r in ready:
        try:
            info = ray.get(r, timeout=5)
        except Exception as e:
            hccn[refs[r]]["reach_error"] = "{}: {}".format(*_describe(e))
            continue
        result = info.get("result") if isinstance(info.get("result"), dict) else {}
        if info.get("error"):
            result = {"reach_error": info["error"]}
        hccn[refs[r]].update({k: v for k, v in result.items() if k in ("reach", "reach_error")})


def _describe(exc):
    """A one-line reason for a failed node task, classified so checks can tell dead from failed."""
    name = type(exc).__name__
    text = str(exc).strip().splitlines()
    first = next((line for line in text if line.strip()), "")
    if name in ("NodeDiedError", "LocalRayletDiedError", "RaySystemError", "ObjectLostError",
                "OwnerDiedError", "ReferenceCountingAssertionError"):
        kind = "died"
    elif name == "WorkerCrashedError":
        kind = "died"
    elif name == "TaskUnschedulableError":
        kind = "unschedulable"
    elif name == "RuntimeEnvSetupError":
        kind = "runtime-env"
    else:
        kind = "failed"
    return kind, f"{name}: {first}"[:2000]


def _parse_args(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--address", required=True)
    ap.add_argument("--timeout", type=float, required=True)
    ap.add_argument("--connect-timeout", type=float, default=60.0)
    ap.add_argument("--root", default="/")
    ap.add_argument("--package", required=True)
    ap.add_argument("--entry", required=True)
    ap.add_argument("--reach-entry", default=None)  # --deep: the second round (doctor.cluster.npu_reach)
    ap.add_argument("--reach-timeout", type=float, default=30.0)
    ap.add_argument("--deep-timeout", type=float, default=None)  # --deep: each node's imports and RECORD comparison
    return ap.parse_args(argv)


def _connect(ray, args):
    """ray.init under a watchdog (an unreachable address can retry for minutes). True when connected; on
    failure the error document is written."""
    connected = threading.Event()

    def _watchdog():
        if not connected.wait(args.connect_timeout):
            _fatal(args.out, "connect",
                   f"could not connect to the Ray cluster at {args.address} within {args.connect_timeout:.0f} s")

    threading.Thread(target=_watchdog, daemon=True).start()
    try:
        ray.init(address=args.address, namespace="verl-ascend-doctor", log_to_driver=False, logging_level="ERROR",
                 configure_logging=True)
    except Exception as e:  # version mismatch, no cluster, bad address
        _fatal(args.out, "connect", f"cannot connect to Ray at {args.address}: {type(e).__name__}: {str(e).strip()}")
        return False
    connected.set()
    return True


def _alive_nodes(all_nodes):
    """Alive nodes, head first, then by name: a stable order for the document and the table."""
    return sorted((n for n in all_nodes if n.get("Alive")),
                  key=lambda n: ("node:__internal_head__" not in (n.get("Resources") or {}),
                                 str(n.get("NodeName")), n["NodeID"]))


def _run_probes(ray, affinity, alive, args, t_connected):
    """One pinned task per alive node; wait until all answered or the deadline, force-cancel the rest.
    Returns ({ref: node}, {ref: seconds to answer})."""
    remote = ray.remote(num_cpus=0, max_retries=0)(_node_task)
    payload = ray.put(package_payload(args.package))
    budget = max(1.0, args.timeout * 0.8)
    refs = {}
    for n in alive:
        strategy = affinity(node_id=n["NodeID"], soft=False)
        ref = remote.options(scheduling_strategy=strategy, name="doctor-probe").remote(
            args.entry, payload, args.root, budget, n["NodeID"], args.deep_timeout)
        refs[ref] = n
    pending = list(refs)
    done = {}
    deadline = t_connected + _wait(args)[0]
    while pending:
        left = deadline - time.time()
        if left <= 0:
            break
        ready, pending = ray.wait(pending, num_returns=1, timeout=left)
        for r in ready:
            done[r] = time.time() - t_connected
    for r in pending:
        try:
            ray.cancel(r, force=True)
        except Exception:
            pass
    return refs, done


def _wait(args):
    """(seconds the driver waits for the nodes, how to say it): --timeout, plus --deep-timeout when each node also
    runs the --deep imports and file comparison (bounded apart), named so that a timed-out node does not read as
    cancelled after the shorter --ray-timeout the user gave."""
    if not args.deep_timeout:
        return args.timeout, f"{args.timeout:g} s"
    wait = args.timeout + args.deep_timeout
    return wait, f"{wait:g} s (--ray-timeout {args.timeout:g} + --deep-timeout {args.deep_timeout:g})"


def _node_result(ray, ref, n, seconds, gcs, waited):
    """(cluster entry, ray node record) for one probed node; `waited`: how long the driver waited, said."""
    node_id = n["NodeID"]
    node_name = n.get("NodeName") or n.get("NodeManagerAddress") or "?"
    name = f"{node_name}/{node_id}"
    resources = {k: v for k, v in (n.get("Resources") or {}).items()}
    is_head = "node:__internal_head__" in resources
    entry = {"node": name, "snapshot": None, "error": None}
    meta = {"node": name, "node_id": node_id, "node_name": node_name,
            "address": n.get("NodeManagerAddress"), "alive": True, "is_head": is_head,
            "resources": resources, "seconds": None, "error": None}
    if seconds is None:
        entry["error"] = f"timeout: no answer within {waited} (task force-cancelled)"
    else:
        meta["seconds"] = round(seconds, 3)
        try:
            info = ray.get(ref, timeout=5)
        except Exception as e:
            kind, text = _describe(e)
            entry["error"] = f"{kind}: {text}"
        else:
            if info.get("error"):
                entry["error"] = "failed: " + info["error"]
            snap = info.get("snapshot")
            if isinstance(snap, dict):
                ray_facts = dict(snap.get("ray") or {})
                ray_facts.update({
                    "version": info.get("ray_version"), "address": gcs, "node_id": node_id,
                    "node_name": node_name, "node_ip": n.get("NodeManagerAddress"), "is_head": is_head,
                    "resources": resources, "alive": True,
                })
                snap["ray"] = ray_facts
                entry["snapshot"] = snap
            meta["ray_version"] = info.get("ray_version")
            meta["python"] = info.get("python")
            meta["probe_seconds"] = info.get("seconds")
    meta["error"] = entry["error"]
    return entry, meta


def _dead_node(n):
    return {"node": "{}/{}".format(n.get("NodeName") or "?", n["NodeID"]),
            "node_id": n["NodeID"], "node_name": n.get("NodeName"),
            "address": n.get("NodeManagerAddress"), "alive": False, "is_head": False,
            "resources": dict(n.get("Resources") or {}), "seconds": None,
            "error": "Ray reports this node dead; it was not probed"}


def main(argv=None):
    args = _parse_args(argv)
    try:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except ImportError as e:
        _fatal(args.out, "no-ray", f"ray is not importable in {sys.executable}: {e}")
        return 3
    t_start = time.time()
    if not _connect(ray, args):
        return 3
    t_connected = time.time()
    gcs = None
    try:
        gcs = ray.get_runtime_context().gcs_address
    except Exception:
        pass
    all_nodes = ray.nodes()
    refs, done = _run_probes(ray, NodeAffinitySchedulingStrategy, _alive_nodes(all_nodes), args, t_connected)
    nodes, ray_nodes = [], []
    for ref, n in refs.items():
        entry, meta = _node_result(ray, ref, n, done.get(ref), gcs, _wait(args)[1])
        nodes.append(entry)
        ray_nodes.append(meta)
    ray_nodes.extend(_dead_node(n) for n in all_nodes if not n.get("Alive"))
    if args.reach_entry:
        _reach_round(args, nodes, ray_nodes)
    import platform

    doc = {
        "schema": "doctor.cluster/1",
        "nodes": nodes,
        "ray": {
            "address": gcs, "requested_address": args.address, "driver_ray_version": ray.__version__,
            "driver_python": platform.python_version(), "driver_executable": sys.executable,
            "timeout": args.timeout, "connect_seconds": round(t_connected - t_start, 3),
            "collect_seconds": round(time.time() - t_connected, 3), "nodes": ray_nodes,
        },
    }
    _write(args.out, doc)
    sys.stdout.flush()
    sys.stderr.flush()
    # ray.shutdown() can wait on a hung, force-cancelled worker; bound it, then leave without atexit hooks.
    t = threading.Thread(target=ray.shutdown, daemon=True)
    t.start()
    t.join(2)
    os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
