"""The real-world tier (`nox -s realworld`, not in .ci/run: it downloads gigabytes): the newest profile's Python
stack installed on this x86_64 machine into a fresh venv from real upstream artifacts, end to end; then the check
shows only host findings, a second install is a no-op in under 2 s, --rollback restores the empty venv exactly,
and --download-only + --offline (network cut) installs a second venv. Figures go to bench/realworld.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.installers import wheelkit
from tests.realworld import upstream

pytestmark = pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") != "1",
                                reason="the real-world tier downloads gigabytes: run `nox -s realworld`")
REPO = Path(__file__).resolve().parents[2]
WORK = Path(os.environ.get("DOCTOR_REALWORLD_DIR", REPO / ".nox" / "realworld-work"))
RESULTS = REPO / "bench" / "realworld.json"
HOST = {"cann", "kernels", "nnal", "driver", "firmware", "npu", "hccl", "network", "cluster"}
CUT = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
       "http_proxy": "http://127.0.0.1:9", "NO_PROXY": "", "no_proxy": ""}


def newest_profile():  # type: ignore[no-untyped-def]
    from packaging.version import Version

    from doctor.knowledge.profiles import load_profiles
    from doctor.knowledge.versions import CannVersion

    ps = [p for p in load_profiles() if "x86_64" in p.arches and "A2" in p.chips]
    return max(ps, key=lambda p: (CannVersion(p.cann_version), p.verl == "main", Version(p.verl) if p.verl != "main" else Version("0")))


def doctor(*args: str, env: dict[str, str], timeout: float = 4 * 3600) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    cp = subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True, timeout=timeout, env=env)
    return cp, time.monotonic() - t0


def listing(venv: Path) -> list[str]:
    """Every path under the venv except the doctor's own state and bytecode caches."""
    out = []
    for p in sorted(venv.rglob("*")):
        rel = p.relative_to(venv).as_posix()
        if rel.startswith(".doctor") or "__pycache__" in rel:
            continue
        out.append(rel)
    return out


@pytest.fixture(scope="module")
def world() -> dict:
    from doctor.installers.resolve import Facts, resolve

    p = newest_profile()
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    plan = resolve(p, Facts(arch="x86_64", python_version=py, chip="A2", npu_seen=False), src_dir="/x")
    up = upstream.build(plan, WORK / "upstream")
    wanted = {n: v.lstrip("=") for n, v in plan.pins if n in ("torch", "torchvision", "torchaudio", "triton-ascend")}
    for n in ("torch", "torchvision", "torchaudio"):
        if n in wanted:
            wanted[n] += "+cpu"
    reachable = {n for n, v in wanted.items() if any(f["filename"].endswith(".whl") and f["filename"].split("-")[1] == v
                                                     for f in upstream.simple_files(n))}
    up.index, up.substituted = upstream.standin_index(WORK / "upstream", wanted, reachable)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    # pip --isolated ignores PIP_CACHE_DIR; its cache follows XDG_CACHE_HOME, so "cold" really starts empty
    env.update({"NO_COLOR": "1", "XDG_CACHE_HOME": str(WORK / "cache")})
    common = ["--profile", p.name, "--backend", "pip", "--isolated", "--no-host-check", "--json"]
    online = [*common, "--index-url", upstream.PYPI + "/", "--extra-index-url", up.index]
    for m in up.mirrors:
        online += ["--git-mirror", m]
    for r in up.git_refs:
        online += ["--git-ref", r]
    return {"profile": p, "plan": plan, "up": up, "env": env, "online": online, "common": common,
            "results": {"profile": p.name, "substituted": up.substituted, "sources": up.sources, "git_refs": up.git_refs}}


def _write(results: dict) -> None:
    """Merge into bench/realworld.json (the two tests can be run alone: `nox -s realworld -- -k offline`)."""
    try:
        old = json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        old = {}
    RESULTS.write_text(json.dumps({**old, **results}, indent=2) + "\n")


def test_realworld_install_check_noop_rollback_warm(world) -> None:
    import shutil

    env, res = world["env"], world["results"]
    shutil.rmtree(WORK / "venv1", ignore_errors=True)
    shutil.rmtree(WORK / "cache", ignore_errors=True)
    venv = WORK / "venv1"
    py = wheelkit.make_venv(venv)
    empty, empty_files = wheelkit.freeze(py), listing(venv)
    # cold: a fresh venv, an empty pip cache, nothing cloned
    cp, cold = doctor("install", "--venv", str(venv), *world["online"], env=env)
    rep = json.loads(cp.stdout)
    (WORK / "cold.json").write_text(cp.stdout)
    assert cp.returncode == 0, cp.stderr[-6000:]
    assert {s["status"] for s in rep["steps"]} <= {"done", "satisfied"}
    res["cold_seconds"] = round(cold, 1)
    frozen = wheelkit.freeze(py)
    assert not any(x.startswith("triton==") for x in frozen), frozen  # triton stays out on the first run
    assert any(x.startswith("triton-ascend==") for x in frozen), frozen
    # the check of the result shows only host findings
    ck, _ = doctor("check", "--python", str(py), "--json", env=env)
    found = json.loads(ck.stdout)["findings"]
    stack = [f for f in found if f["severity"] in ("error", "warning") and f["components"][0] not in HOST]
    res["check_host_findings"] = sorted({f["id"] for f in found if f["components"][0] in HOST and f["severity"] != "info"})
    assert not stack, json.dumps(stack, indent=1)[:4000]
    # a second install is a no-op in under 2 s
    cp, noop = doctor("install", "--venv", str(venv), *world["online"], env=env)
    rep = json.loads(cp.stdout)
    assert cp.returncode == 0 and {s["status"] for s in rep["steps"]} == {"satisfied"}, cp.stderr[-3000:]
    res["noop_seconds"], res["noop_report_seconds"] = round(noop, 2), rep["seconds"]
    assert noop < 2.0, noop
    # --rollback restores the empty venv exactly
    cp, _ = doctor("install", "--rollback", "--venv", str(venv), "--json", env=env)
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert wheelkit.freeze(py) == empty
    assert [f for f in listing(venv) if not f.startswith("src")] == empty_files
    # warm: the same install again, the pip cache and the clones in place
    cp, warm = doctor("install", "--venv", str(venv), *world["online"], env=env)
    assert cp.returncode == 0, cp.stderr[-3000:]
    res["warm_seconds"] = round(warm, 1)
    _write(res)


def test_realworld_download_only_then_offline_with_the_network_cut(world) -> None:
    import shutil

    env, res = world["env"], world["results"]
    house = WORK / "house"
    shutil.rmtree(house, ignore_errors=True)
    cp, dl = doctor("install", "--download-only", str(house), *world["online"], env=env)
    assert cp.returncode == 0, cp.stderr[-6000:]
    wh = json.loads(cp.stdout)["wheelhouse"]
    res.update({"download_seconds": round(dl, 1), "wheelhouse_bytes": wh["bytes"], "wheelhouse_artifacts": wh["artifacts"],
                "wheelhouse_sdists": wh["sdists"]})
    _write(res)
    venv2 = WORK / "venv2"
    shutil.rmtree(venv2, ignore_errors=True)
    wheelkit.make_venv(venv2)
    cp, off = doctor("install", "--venv", str(venv2), "--wheelhouse", str(house), "--offline", *world["common"],
                     "--index-url", "http://127.0.0.1:9/simple", env={**env, **CUT, "XDG_CACHE_HOME": str(WORK / "cache-offline")})
    (WORK / "offline.json").write_text(cp.stdout)
    assert cp.returncode == 0, cp.stderr[-6000:]
    res["offline_seconds"] = round(off, 1)
    rep = json.loads(cp.stdout)
    assert {s["status"] for s in rep["steps"]} <= {"done", "satisfied"}
    frozen = {x.split("==")[0].replace("_", "-"): x.split("==")[1] for x in wheelkit.freeze(venv2 / "bin" / "python")}
    assert {"vllm", "vllm-ascend", "megatron-core", "mindspeed", "verl", "triton-ascend"} <= set(frozen), frozen
    assert "triton" not in frozen and not [f for f in rep["findings"] if f["severity"] in ("error", "warning")]
    res["offline_versions"] = {k: frozen[k] for k in ("vllm", "vllm-ascend", "megatron-core", "mindspeed", "verl",
                                                       "torch", "torch-npu", "triton-ascend", "transformers", "numpy")
                               if k in frozen}
    _write(res)
