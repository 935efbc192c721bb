"""`doctor install` speed: the same plan from a local wheelhouse with the pip backend, the uv backend, and the
upstream documented sequence of separate `pip install` commands (verl's install guide runs one pip command per
package: https://github.com/verl-project/verl/blob/v0.9.0/scripts/install_vllm_mcore_npu.sh), each into a fresh
venv; plus a second `doctor install` run (nothing to do). The real-world tier's figures (`nox -s realworld`: the
newest profile from real upstream artifacts; cold, warm, no-op, wheelhouse size) are read from bench/realworld.json
when that run has written it.

The stack is the verl 0.7.1 / CANN 8.5.0 profile, built locally with the real distribution names, versions and
Requires-Dist pins (tests/installers/stack.py), so the numbers measure installer overhead, not downloads.
Absolute times are noise on a shared machine: read the ratios (interleaved runs, median).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench._measure import Measurement, run_once, table  # noqa: E402

PROFILE = "verl-0.7.1-cann8.5.0-a2"


def _setup(root: Path) -> tuple[object, object, dict[str, str]]:
    from doctor.installers import wheelhouse as wh
    from doctor.installers.resolve import Facts, resolve
    from doctor.knowledge.profiles import find_profile, load_profiles
    from tests.installers import stack, wheelkit

    prof = find_profile(load_profiles(), PROFILE)
    pyv = f"{sys.version_info[0]}.{sys.version_info[1]}"
    plan = resolve(prof, Facts(arch="x86_64", python_version=pyv, cann=prof.cann_version, chip="A2"), src_dir="/x")
    st = stack.build(plan, root / "up")
    house = root / "up"
    wh.write(house, wh.scan(house, wh.Manifest(profile=prof.name, target={})))
    env = wheelkit.hermetic_env(root, NO_COLOR="1")
    return plan, st, env


def _doctor_cmd(venv: Path, house: Path, st, backend: str) -> list[str]:  # type: ignore[no-untyped-def]
    cmd = [sys.executable, "-m", "doctor", "install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse",
           str(house), "--offline", "--isolated", "--no-check", "--no-host-check", "--backend", backend, "-q"]
    for m in st.mirrors:
        cmd += ["--git-mirror", m]
    for r in st.git_refs:  # the local repositories have their own commits, chosen deliberately
        cmd += ["--git-ref", r]
    return cmd


def realworld() -> dict | None:
    """The last `nox -s realworld` figures, if that run wrote them."""
    import json

    f = HERE / "realworld.json"
    try:
        return json.loads(f.read_text())
    except (OSError, ValueError):
        return None


def _upstream(plan, st, venv: Path, src: Path, wheels: Path) -> list[tuple[list[str], dict[str, str]]]:
    """The documented sequence: one pip process per package, git clones, editable installs."""
    from doctor.installers.gitsrc import map_url, parse_mirrors
    from doctor.installers.plan import CLONE, EDITABLE, INSTALL, UNINSTALL

    py = str(venv / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", py, "--isolated", "--disable-pip-version-check"]
    src_opts = ["--no-index", "--find-links", str(wheels)]
    mirrors = parse_mirrors(st.mirrors)
    cmds: list[tuple[list[str], dict[str, str]]] = []
    for s in plan.steps:
        if s.kind == UNINSTALL:
            cmds.append((pip + ["uninstall", "-y", *s.packages], {}))
        elif s.kind == INSTALL:
            reqs = list(s.requirements)
            if reqs[:1] == ["-r"]:
                cmds.append((pip + ["install", *src_opts, "-r", str(src / Path(reqs[1]).parent.name / Path(reqs[1]).name)], {}))
            else:
                cmds += [(pip + ["install", *src_opts, r], {}) for r in reqs]
        elif s.kind == CLONE:
            url = map_url(s.source.url, mirrors)
            cmds.append((["git", "clone", "-q", "--branch", s.source.ref, url, str(src / s.source.name)], {}))
        elif s.kind == EDITABLE:
            cmds.append((pip + ["install", *src_opts, "-e", str(src / s.source.name)], dict(s.env)))
    return cmds


def _timed(cmds: list[tuple[list[str], dict[str, str]]], env: dict[str, str]) -> tuple[float, int, float]:
    """Seconds for the whole command sequence, the last non-zero exit code, and the peak RSS (MB) of any
    process it started (pip, uv, git and their children)."""
    seconds, rc, rss = 0.0, 0, 0.0
    for argv, extra in cmds:
        m = run_once(argv, env={**env, **extra}, timeout=900)
        seconds += m["seconds"]
        rc = m["returncode"] or rc
        rss = max(rss, m["peak_rss_mb"])
    return seconds, rc, rss


def run(repeat: int = 3) -> dict:
    repeat = max(1, min(repeat, 3))  # each round installs the whole stack three times
    from tests.installers.wheelkit import make_venv

    samples: dict[str, list[tuple[float, int, float]]] = {k: [] for k in ("doctor install --backend uv", "doctor install --backend pip",
                                                                   "upstream: separate pip commands",
                                                                   "doctor install, second run (nothing to do)")}
    with tempfile.TemporaryDirectory(prefix="doctor-bench-") as d:
        root = Path(d)
        plan, st, env = _setup(root)
        house = root / "up"
        for i in range(repeat):
            for backend in ("uv", "pip"):
                venv = root / f"v-{backend}-{i}"
                make_venv(venv)
                samples[f"doctor install --backend {backend}"].append(
                    _timed([(_doctor_cmd(venv, house, st, backend), {})], env))
                if backend == "uv":
                    samples["doctor install, second run (nothing to do)"].append(
                        _timed([(_doctor_cmd(venv, house, st, backend), {})], env))
                shutil.rmtree(venv, ignore_errors=True)
            venv, src = root / f"v-up-{i}", root / f"src-up-{i}"
            make_venv(venv)
            samples["upstream: separate pip commands"].append(_timed(_upstream(plan, st, venv, src, st.wheels), env))
            shutil.rmtree(venv, ignore_errors=True)
            shutil.rmtree(src, ignore_errors=True)
    bad = {k: [rc for _, rc, _ in v if rc] for k, v in samples.items() if any(rc for _, rc, _ in v)}
    if bad:
        raise RuntimeError(f"a measured install failed (exit codes {bad}): the timings would be meaningless")
    rows = [Measurement(name=k, seconds=statistics.median(t for t, _, _ in v), peak_rss_mb=max(r for _, _, r in v),
                        runs=len(v), returncodes=sorted({rc for _, rc, _ in v})) for k, v in samples.items()]
    by = {r.name: r.seconds for r in rows}
    up, pip, uv = by["upstream: separate pip commands"], by["doctor install --backend pip"], by["doctor install --backend uv"]
    rw = realworld()
    notes = [f"profile {PROFILE}, {len(plan.steps)} steps, local wheelhouse + local git; fresh venv per run",
             "doctor runs verify every step and keep a journal; the upstream sequence does neither"]
    if rw:
        notes.append(f"realworld ({rw.get('profile')}, real upstream artifacts): cold {rw.get('cold_seconds')} s, warm "
                     f"{rw.get('warm_seconds')} s, no-op {rw.get('noop_seconds')} s, wheelhouse "
                     f"{(rw.get('wheelhouse_bytes') or 0) / 1e9:.2f} GB, offline {rw.get('offline_seconds')} s")
    return {
        "title": "install: pip vs uv vs upstream pip sequence",
        "realworld": rw,
        "rows": [r.to_dict() for r in rows],
        "ratios": {"upstream sequence / doctor pip": up / pip, "upstream sequence / doctor uv": up / uv,
                   "doctor pip / doctor uv": pip / uv,
                   "doctor uv / second run": uv / by["doctor install, second run (nothing to do)"]},
        "notes": notes,
        "table": table("doctor install vs upstream sequence (ratio = upstream time / command time)", rows,
                       baseline="upstream: separate pip commands"),
    }


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    res = run(int(os.environ.get("DOCTOR_BENCH_REPEAT", "1")))
    print(res["table"])
    for k, v in res["ratios"].items():
        print(f"  {k}: {v:.2f}x")
    for n in res["notes"]:
        print(f"  {n}")
