"""`doctor check` (live, verdicts) vs `python -m torch.utils.collect_env` (facts only), same machine, same run.

collect_env runs in an interpreter with CPU torch==2.13.0: $DOCTOR_BENCH_TORCH_PYTHON when set, else this
interpreter when it has torch, else a throw-away venv under a temp dir (`pip install torch==2.13.0`, which this
machine's pip config serves from a local wheel). Prints the median times and both ratios, by wall time and by CPU
(user+sys of the command and its children: the wall ratio follows the machine's load, since doctor check runs its
target probe on a second core). The targets: doctor check >= 8x faster (`TARGET`) and under 0.5 s (`LIMIT_SECONDS`).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile

from bench._measure import clean_env, compare, cpu_line, table

TARGET = 8.0  # doctor check >= 8x faster than collect_env, measured side by side here
LIMIT_SECONDS = 0.5  # and under this wall time on this machine


def torch_python(workdir: str) -> str:
    env = os.environ.get("DOCTOR_BENCH_TORCH_PYTHON")
    if env:
        return env
    if importlib.util.find_spec("torch") is not None:
        return sys.executable
    venv = os.path.join(workdir, "torch-venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
    py = os.path.join(venv, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "torch==2.13.0"], check=True, timeout=1800)
    return py


# What verl's scripts/diagnose.py and most "env report" snippets do: import torch and print its facts.
IMPORT_TORCH_REPORT = (
    "import platform, sys, importlib.metadata as md\n"
    "import torch\n"
    "print('python', sys.version.split()[0], platform.machine())\n"
    "print('torch', torch.__version__, 'cuda', torch.version.cuda, 'threads', torch.get_num_threads())\n"
    "for d in ('torch-npu', 'vllm', 'vllm-ascend', 'transformers', 'numpy', 'ray', 'verl'):\n"
    "    try:\n        print(d, md.version(d))\n"
    "    except md.PackageNotFoundError:\n        print(d, None)\n"
)


def run(repeat: int = 5) -> dict:
    load_before = os.getloadavg()  # the machine is shared: a ratio means little without the load it ran under
    with tempfile.TemporaryDirectory() as d:
        tpy = torch_python(d)
        cmds = {
            "doctor check (verdicts)": [sys.executable, "-m", "doctor", "--json", "check"],
            "torch.utils.collect_env (facts)": [tpy, "-m", "torch.utils.collect_env"],
            "import-torch report script (facts)": [tpy, "-c", IMPORT_TORCH_REPORT],
        }
        m = compare(cmds, repeat=repeat, env=clean_env(), cwd=d)
    rows = [m["torch.utils.collect_env (facts)"], m["import-torch report script (facts)"], m["doctor check (verdicts)"]]
    ratio = rows[0].seconds / rows[2].seconds if rows[2].seconds else float("nan")
    ratio_import = rows[1].seconds / rows[2].seconds if rows[2].seconds else float("nan")
    ratio_cpu = (rows[0].cpu_seconds or 0.0) / max(rows[2].cpu_seconds or 0.0, 1e-9)
    return {
        "title": "check vs torch collect_env",
        "rows": [r.to_dict() for r in rows],
        "ratios": {"collect_env / doctor check (time)": ratio,
                   "import-torch script / doctor check (time)": ratio_import,
                   "collect_env / doctor check (CPU)": ratio_cpu,
                   "collect_env / doctor check (peak RSS)": rows[0].peak_rss_mb / max(rows[2].peak_rss_mb, 1e-9)},
        "notes": ["doctor check exits 1 on a host without an NPU (it reports errors); the time is what counts."],
        "load_average": {"before": list(load_before), "after": list(os.getloadavg())},
        "table": table("doctor check vs python -m torch.utils.collect_env", rows, baseline="torch.utils.collect_env (facts)")
        + f"\n  doctor check is {ratio:.1f}x faster by wall time, {ratio_cpu:.1f}x by CPU (user+sys, less swayed by the "
        f"load); target >= {TARGET:g}x: {_met(ratio >= TARGET)} by wall time, {_met(ratio_cpu >= TARGET)} by CPU; "
        f"under {LIMIT_SECONDS:g} s: {_met(rows[2].seconds < LIMIT_SECONDS)}"
        + "".join(f"\n  {cpu_line(r)}" for r in (rows[2], rows[0]))
        + f"\n  load average (1/5/15 min) before {_load(load_before)}, after {_load(os.getloadavg())}",
    }


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def _load(avg: tuple[float, ...]) -> str:
    return "/".join(f"{x:.2f}" for x in avg)


if __name__ == "__main__":
    print(run(int(os.environ.get("DOCTOR_BENCH_REPEAT", "5")))["table"])
