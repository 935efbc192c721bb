"""Measure whole commands side by side: wall time (median of interleaved repeats) and peak RSS.

Absolute times are noise on a shared 2-core machine, so every benchmark reports ratios between commands
measured in the same run, interleaved (A B A B ...) so drift hits both sides alike. Peak RSS is the
child's `ru_maxrss`, read in a tiny wrapper process so each command's peak is its own.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass

_WRAPPER = r"""
import json, resource, subprocess, sys, time
cmd = json.loads(sys.argv[1])
t0 = time.perf_counter()
p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
dt = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": dt, "peak_rss_mb": ru.ru_maxrss / 1024.0, "returncode": p.returncode,
                  "cpu_seconds": ru.ru_utime + ru.ru_stime, "sys_seconds": ru.ru_stime, "minor_faults": ru.ru_minflt}))
"""


@dataclass
class Measurement:
    name: str
    seconds: float  # median wall time
    peak_rss_mb: float  # max over the repeats
    runs: int
    returncodes: list[int]
    # median user+sys CPU of the command and every child it waited for: on a shared machine the wall time follows
    # the load, the CPU much less
    cpu_seconds: float | None = None
    # where that CPU goes and how far it strays: the kernel's share (page faults of a fresh interpreter's heap, file
    # system calls) and the quartiles of the repeats (one line of a shared machine's noise next to the median)
    sys_seconds: float | None = None
    minor_faults: float | None = None
    cpu_quartiles: tuple[float, float] | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def run_once(cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None, timeout: float = 900) -> dict:
    out = subprocess.run([sys.executable, "-c", _WRAPPER, json.dumps(cmd)], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=timeout, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(commands: dict[str, list[str]], *, repeat: int = 5, env: dict[str, str] | None = None,
            cwd: str | None = None, warmup: int = 1) -> dict[str, Measurement]:
    """Run each command `repeat` times, interleaved, after `warmup` unmeasured rounds."""
    for _ in range(warmup):
        for cmd in commands.values():
            run_once(cmd, env, cwd)
    samples: dict[str, list[dict]] = {k: [] for k in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            samples[name].append(run_once(cmd, env, cwd))
    return {
        name: Measurement(
            name=name,
            seconds=statistics.median(s["seconds"] for s in ss),
            peak_rss_mb=max(s["peak_rss_mb"] for s in ss),
            runs=len(ss),
            returncodes=sorted({s["returncode"] for s in ss}),
            cpu_seconds=statistics.median(s["cpu_seconds"] for s in ss),
            sys_seconds=statistics.median(s["sys_seconds"] for s in ss),
            minor_faults=statistics.median(s["minor_faults"] for s in ss),
            cpu_quartiles=_quartiles([s["cpu_seconds"] for s in ss]),
        )
        for name, ss in samples.items()
    }


def _quartiles(xs: list[float]) -> tuple[float, float] | None:
    if len(xs) < 2:
        return None
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def cpu_line(r: Measurement) -> str:
    """`name: CPU 0.277 s (q1-q3 0.270-0.290), sys 0.062 s, 9966 minor faults` for a compare() row."""
    if r.cpu_seconds is None:
        return f"{r.name}: CPU not measured"
    spread = f" (q1-q3 {r.cpu_quartiles[0]:.3f}-{r.cpu_quartiles[1]:.3f})" if r.cpu_quartiles else ""
    sys_part = f", sys {r.sys_seconds:.3f} s" if r.sys_seconds is not None else ""
    faults = f", {r.minor_faults:.0f} minor faults" if r.minor_faults is not None else ""
    return f"{r.name}: CPU {r.cpu_seconds:.3f} s{spread}{sys_part}{faults}"


def table(title: str, rows: list[Measurement], baseline: str | None = None) -> str:
    base = next((r for r in rows if r.name == baseline), rows[0]) if rows else None
    lines = [title, f"  {'command':<44} {'median s':>9} {'CPU s':>7} {'peak RSS MB':>12} {'ratio':>8}"]
    for r in rows:
        ratio = base.seconds / r.seconds if base and r.seconds else float("nan")
        cpu = f"{r.cpu_seconds:.3f}" if r.cpu_seconds is not None else "-"
        lines.append(f"  {r.name:<44} {r.seconds:>9.3f} {cpu:>7} {r.peak_rss_mb:>12.1f} {ratio:>7.1f}x")
    return "\n".join(lines)


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment minus test-runner variables and PYTHONDONTWRITEBYTECODE: an installed tool
    (pip compiles bytecode at install time) runs from cached bytecode, and so must what we measure."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "COV_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env
