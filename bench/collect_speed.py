"""`doctor collect` cold (empty bytecode cache) vs warm (cache populated), same machine, same run."""

from __future__ import annotations

import sys
import tempfile

from bench._measure import clean_env, compare, table


def run(repeat: int = 5) -> dict:
    with tempfile.TemporaryDirectory() as out:
        return _run(repeat, [sys.executable, "-m", "doctor", "collect", "-o", f"{out}/snapshot.json"])


def _run(repeat: int, cmd: list[str]) -> dict:
    # a real file (atomic write + fsync), as a user's `-o node0.json`; not /dev/null
    warm = compare({"doctor collect (warm)": cmd}, repeat=repeat, env=clean_env())
    cold_rows = {}
    for i in range(repeat):
        # a fresh, empty pycache prefix forces every module to be compiled again: a first run after install
        with tempfile.TemporaryDirectory() as d:
            m = compare({"doctor collect (cold)": cmd}, repeat=1, warmup=0, env=clean_env(PYTHONPYCACHEPREFIX=d))
            cold_rows[i] = m["doctor collect (cold)"]
    cold = sorted(cold_rows.values(), key=lambda m: m.seconds)[len(cold_rows) // 2]
    cold.runs = len(cold_rows)
    rows = [cold, warm["doctor collect (warm)"]]
    return {
        "title": "collect: cold vs warm",
        "rows": [r.to_dict() for r in rows],
        "ratios": {"collect cold / warm (time)": cold.seconds / rows[1].seconds},
        "table": table("doctor collect, cold vs warm", rows, baseline="doctor collect (cold)"),
    }


if __name__ == "__main__":
    print(run()["table"])
