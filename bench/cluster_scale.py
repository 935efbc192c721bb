"""Cluster collect time for 1, 2 and 4 simulated Ray nodes: total and per node, as ratios to one node.

The nodes are real `ray start` processes on this host (tests/ray_sim.py), each probing a fake A2 Ascend
root through the real collector. The node probes run in parallel (one pinned task per node, no
runtime_env), so on this 2-core machine 4 nodes should take at most 2x one node; the ratio is the claim,
absolute seconds are noise. Runs: `python bench/cluster_scale.py [--repeat N]` or via bench/run_all.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # first: a stray site-packages `tests` package must not win

SIZES = (1, 2, 4)
LIMIT_4_VS_1 = 2.0


def _measure(address: str, n: int, repeat: int, timeout: float) -> dict:
    from doctor.cluster.collect_ray import collect_ray

    warm = collect_ray(address, None, timeout)  # warm-up: first job on fresh nodes, file caches
    if len(warm.nodes) != n:
        raise RuntimeError(f"expected {n} alive nodes, Ray lists {len(warm.nodes)}")
    walls, phases = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        cl = collect_ray(address, None, timeout)
        walls.append(time.perf_counter() - t0)
        bad = [x.node for x in cl.nodes if x.snapshot is None]
        if len(cl.nodes) != n or bad:
            raise RuntimeError(f"expected {n} probed nodes, got {len(cl.nodes)} (failed: {bad})")
        phases.append(cl.extra["ray"]["collect_seconds"])
    wall = statistics.median(walls)
    return {"name": f"{n} node{'s' if n > 1 else ''}", "nodes": n, "seconds": round(wall, 3),
            "per_node_seconds": round(wall / n, 3), "node_phase_seconds": round(statistics.median(phases), 3),
            "runs": repeat, "samples": [round(w, 3) for w in walls]}


def _background_cpu(seconds: float = 2.0) -> float:
    """Cores busy with other work on this host right now (the bench's own cluster is idle then)."""
    import psutil

    def busy() -> float:
        t = psutil.cpu_times()
        return t.user + t.system + getattr(t, "nice", 0.0) + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)

    b0, t0 = busy(), time.perf_counter()
    time.sleep(seconds)
    return (busy() - b0) / (time.perf_counter() - t0)


def run(repeat: int = 5, timeout: float = 120.0) -> dict:
    """Sizes are visited 1, 2, 4, 2, 1 (nodes added, then killed) so drift on a shared host hits every
    size alike; each size's time is the median over both visits."""
    from tests.fakes import make_ascend_root
    from tests.ray_sim import SimCluster

    order = [*SIZES, *reversed(SIZES[:-1])]
    samples: dict[int, list[dict]] = {n: [] for n in SIZES}
    background = []
    with tempfile.TemporaryDirectory(prefix="doctor-bench-") as tmp:
        root = make_ascend_root(Path(tmp), "a2-cann8.3rc1-old-layout")
        env = {"DOCTOR_ROOT": str(root)}
        with SimCluster() as sim:
            sim.start([("n0", env, {"NPU": 8})])
            added = 0
            for n in order:
                while len(sim.nodes) < n:
                    added += 1
                    sim.add(f"n{added}", env, {"NPU": 8})
                while len(sim.nodes) > n:
                    sim.remove(sim.nodes[-1])
                background.append(_background_cpu())
                samples[n].append(_measure(sim.address, n, max(1, (repeat + 1) // 2 if n != SIZES[-1] else repeat),
                                           timeout))
    rows = []
    for n in SIZES:
        walls = [w for m in samples[n] for w in m["samples"]]
        phase = statistics.median(m["node_phase_seconds"] for m in samples[n])
        wall = statistics.median(walls)
        rows.append({"name": f"{n} node{'s' if n > 1 else ''}", "nodes": n, "seconds": round(wall, 3),
                     "per_node_seconds": round(wall / n, 3), "node_phase_seconds": round(phase, 3),
                     "runs": len(walls), "samples": walls})
    one = rows[0]["seconds"]
    ratios = {f"{r['name']} / 1 node (total)": round(r["seconds"] / one, 2) for r in rows[1:]}
    ratios.update({f"{r['name']} / 1 node (per node)": round(r["per_node_seconds"] / one, 2) for r in rows[1:]})
    four = rows[-1]["seconds"] / one
    return {
        "title": "doctor collect --ray: 1, 2, 4 simulated nodes on one host",
        "rows": rows,
        "ratios": ratios,
        "notes": [f"4 nodes vs 1 node: {four:.2f}x total (limit {LIMIT_4_VS_1:.1f}x): "
                  + ("OK" if four <= LIMIT_4_VS_1 else "OVER"),
                  "seconds = median wall of collect_ray (driver start, connect, all node probes, shutdown)",
                  f"other load on this host while measuring: {statistics.median(background):.2f} cores busy "
                  f"(of {os.cpu_count()})"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    res = run(args.repeat)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(res["title"])
    print(f"{'nodes':>6} {'total s':>9} {'per node s':>11} {'node phase s':>13}")
    for r in res["rows"]:
        print(f"{r['nodes']:>6} {r['seconds']:>9.2f} {r['per_node_seconds']:>11.2f} {r['node_phase_seconds']:>13.2f}")
    for k, v in res["ratios"].items():
        print(f"  {k}: {v:.2f}x")
    for note in res["notes"]:
        print(f"  {note}")
    return 0 if res["rows"][-1]["seconds"] / res["rows"][0]["seconds"] <= LIMIT_4_VS_1 else 1


if __name__ == "__main__":
    sys.exit(main())
