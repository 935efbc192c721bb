"""`doctor smoke --dry-run` cold (empty workdir: dataset, tiny model and tokenizer are built) vs warm
(the cached workload is reused), same machine, same run."""

from __future__ import annotations

import shutil
import sys
import tempfile

from bench._measure import clean_env, compare, table


def run(repeat: int = 3) -> dict:
    cold_rows = []
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-m", "doctor", "--json", "smoke", "--dry-run", "--workdir", f"{d}/wd"]
        for _ in range(repeat):
            shutil.rmtree(f"{d}/wd", ignore_errors=True)
            cold_rows.append(compare({"smoke --dry-run (cold)": cmd}, repeat=1, warmup=0, env=clean_env())["smoke --dry-run (cold)"])
        warm = compare({"smoke --dry-run (warm)": cmd}, repeat=repeat, warmup=1, env=clean_env())["smoke --dry-run (warm)"]
    cold = sorted(cold_rows, key=lambda m: m.seconds)[len(cold_rows) // 2]
    cold.runs = len(cold_rows)
    rows = [cold, warm]
    return {
        "title": "smoke --dry-run: cold vs warm",
        "rows": [r.to_dict() for r in rows],
        "ratios": {"smoke dry-run cold / warm (time)": cold.seconds / warm.seconds},
        "table": table("doctor smoke --dry-run, cold vs warm workload cache", rows, baseline="smoke --dry-run (cold)"),
    }


if __name__ == "__main__":
    print(run()["table"])
