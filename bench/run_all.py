"""Run every benchmark under bench/ in one process tree on this machine and print one table of ratios.

Each bench module exposes `run(repeat: int) -> dict` with `title`, `rows` (Measurement dicts), `ratios`
({label: value}) and optional `notes`. Results go to bench/results.json (with the previous file kept as
results.prev.json) so a later run can be compared.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _modules(only: list[str]) -> list[Path]:
    mods = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_") and p.name != "run_all.py")
    return [p for p in mods if not only or p.stem in only]


def _load(path: Path):
    sys.path.insert(0, str(HERE.parent))
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _generic_table(res: dict) -> str:
    lines = [res.get("title", ""), f"  {'row':<44} {'median s':>9} {'peak RSS MB':>12}"]
    for r in res.get("rows", []):
        rss = r.get("peak_rss_mb")
        lines.append(f"  {r.get('name', '?'):<44} {r.get('seconds', float('nan')):>9.3f} "
                     f"{(f'{rss:.1f}' if isinstance(rss, (int, float)) else '-'):>12}")
    lines += [f"  note: {n}" for n in res.get("notes", [])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("only", nargs="*", help="bench names (file stems) to run; default all")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("DOCTOR_BENCH_REPEAT", "5")))
    ap.add_argument("--out", default=str(HERE / "results.json"))
    args = ap.parse_args(argv)
    results: dict = {"machine": {"python": platform.python_version(), "machine": platform.machine(),
                                 "cpus": os.cpu_count()}, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "benchmarks": {}}
    failed = []
    for path in _modules(args.only):
        print(f"== {path.stem}", flush=True)
        t0 = time.perf_counter()
        try:
            res = _load(path).run(args.repeat)
        except Exception:  # noqa: BLE001 - one broken bench must not hide the others
            traceback.print_exc()
            failed.append(path.stem)
            results["benchmarks"][path.stem] = {"error": traceback.format_exc(limit=3)}
            continue
        res["wall_seconds"] = time.perf_counter() - t0
        results["benchmarks"][path.stem] = res
        print(res.get("table") or _generic_table(res))
    out = Path(args.out)
    if out.exists():
        out.replace(out.with_name("results.prev.json"))
    out.write_text(json.dumps(results, indent=2))
    print("\nSummary (ratios measured side by side in this run):")
    print(f"  {'benchmark':<18} {'ratio':<52} {'value':>10}")
    for name, res in results["benchmarks"].items():
        for label, value in (res.get("ratios") or {}).items():
            print(f"  {name:<18} {label:<52} {value:>9.2f}x")
    print(f"\nresults: {out}")
    if failed:
        print(f"FAILED benchmarks: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
