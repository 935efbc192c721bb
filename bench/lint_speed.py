"""`doctor lint` of an upstream verl NPU script: cold (empty compose cache: Hydra composes each path) vs warm
(the cached composition is read back), and `doctor smoke --dry-run` the same way, same machine, same run.

The script is verl v0.9.0's `examples/grpo_trainer/run_qwen3_5_397b_megatron.sh` from shared/realworld (two
paths: its GPU and NPU branches), linted against that tag's config; skipped when shared/ is absent."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench._measure import clean_env, compare, table

SHARED = Path(os.environ.get("DOCTOR_SHARED", Path(__file__).resolve().parents[2] / "shared"))
SCRIPTS = SHARED / "realworld" / "verl-scripts" / "v0.9.0"
SCRIPT = SCRIPTS / "scripts" / "examples" / "grpo_trainer" / "run_qwen3_5_397b_megatron.sh"


def _cold_and_warm(label: str, cmd: list[str], cache: str, repeat: int) -> list:
    env = clean_env(XDG_CACHE_HOME=cache)
    cold_rows = []
    for _ in range(repeat):
        shutil.rmtree(os.path.join(cache, "verl-ascend-doctor", "compose"), ignore_errors=True)
        cold_rows.append(compare({f"{label} (cold)": cmd}, repeat=1, warmup=0, env=env)[f"{label} (cold)"])
    warm = compare({f"{label} (warm)": cmd}, repeat=repeat, warmup=1, env=env)[f"{label} (warm)"]
    cold = sorted(cold_rows, key=lambda m: m.seconds)[len(cold_rows) // 2]
    cold.runs = len(cold_rows)
    return [cold, warm]


def run(repeat: int = 3) -> dict:
    rows = []
    notes = []
    with tempfile.TemporaryDirectory() as d:
        if SCRIPT.is_file():
            lint = [sys.executable, "-m", "doctor", "--json", "lint", str(SCRIPT), "--verl-version", "0.9.0",
                    "--verl-config", str(SCRIPTS / "config")]
            rows += _cold_and_warm("lint upstream 397B script", lint, f"{d}/cache", repeat)
        else:
            notes.append(f"no upstream script at {SCRIPT}: lint rows skipped")
        smoke = [sys.executable, "-m", "doctor", "--json", "smoke", "--dry-run", "--workdir", f"{d}/wd"]
        compare({"prime smoke workload": smoke}, repeat=1, warmup=0, env=clean_env(XDG_CACHE_HOME=f"{d}/cache"))
        rows += _cold_and_warm("smoke --dry-run", smoke, f"{d}/cache", repeat)
    ratios = {f"{rows[i].name} / {rows[i + 1].name}": rows[i].seconds / rows[i + 1].seconds
              for i in range(0, len(rows), 2)}
    return {"title": "lint and smoke --dry-run: cold vs warm compose cache", "rows": [r.to_dict() for r in rows],
            "ratios": ratios, "notes": notes,
            "table": table("doctor lint / smoke --dry-run, cold vs warm compose cache", rows, baseline=rows[0].name)}


if __name__ == "__main__":
    print(run()["table"])
