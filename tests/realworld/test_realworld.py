"""The real-world tier (`nox -s realworld`, not in .ci/run: it downloads gigabytes): a profile's Python stack
installed on this x86_64 machine from real upstream artifacts into a target made by plain `python3 -m venv` (the
pip its Python bundles), end to end. By default the newest release profile and the newest snapshot profile for A2;
`nox -s realworld -- PROFILE ...` (DOCTOR_REALWORLD_PROFILES) runs the ones named.

Per profile it records in bench/realworld.json: the cold install, `pip check` (only the profile's
upstream_conflicts may remain), the import checks, the check's findings, a no-op rerun, `--rollback`, a forced
failure after the MindSpeed step (the clones it made gone, the venv as before), the warm install, the wheelhouse's size and the
offline install's freeze against the online one. The git sources come from $DOCTOR_REALWORLD_MIRRORS (a directory
of `git clone --mirror` copies; tests/realworld/upstream.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.installers import wheelkit
from tests.realworld import upstream

pytestmark = [
    pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") != "1",
                       reason="the real-world tier downloads gigabytes: run `nox -s realworld`"),
    pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") == "1" and not upstream.mirrors_dir(),
                       reason=f"set {upstream.MIRRORS_ENV} to a directory of `git clone --mirror` copies"),
]
REPO = Path(__file__).resolve().parents[2]
WORK = Path(os.environ.get("DOCTOR_REALWORLD_DIR", REPO / ".nox" / "realworld-work"))
RESULTS = REPO / "bench" / "realworld.json"
HOST = {"cann", "kernels", "nnal", "driver", "firmware", "npu", "hccl", "network", "cluster"}
CUT = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
       "http_proxy": "http://127.0.0.1:9", "NO_PROXY": "", "no_proxy": ""}
# what a user imports; each runs in the target on a host without CANN (TORCH_DEVICE_BACKEND_AUTOLOAD=0)
IMPORTS = ("verl.trainer.main_ppo", "vllm", "vllm_ascend", "mindspeed.megatron_adaptor")
# the step after MindSpeed's install is made to fail (a version no index has)
FORCED = ("mbridge", "0.0.999")


def default_profiles() -> list[str]:
    """The newest release profile and the newest snapshot profile for x86_64 / A2."""
    from doctor.knowledge.profiles import load_profiles

    ps = [p for p in load_profiles() if "x86_64" in p.arches and "A2" in p.chips]
    releases = [p for p in ps if not p.is_snapshot]
    snapshots = [p for p in ps if p.is_snapshot]
    return [max(g, key=lambda p: p.verl_key).name for g in (releases, snapshots) if g]


def chosen() -> list[str]:
    named = [n for n in os.environ.get("DOCTOR_REALWORLD_PROFILES", "").split(",") if n.strip()]
    return named or default_profiles()


def doctor(*args: str, env: dict[str, str], timeout: float = 4 * 3600) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    cp = subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True, timeout=timeout, env=env)
    return cp, time.monotonic() - t0


def plain_venv(path: Path) -> Path:
    """A target as a user makes it: `python3 -m venv`, with the pip its Python bundles."""
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=600)
    return path / "bin" / "python"


def listing(venv: Path) -> list[str]:
    """Every path under the venv except the doctor's own state, bytecode caches and the clones."""
    out = []
    for p in sorted(venv.rglob("*")):
        rel = p.relative_to(venv).as_posix()
        if rel.startswith((".doctor", "src")) or "__pycache__" in rel:
            continue
        out.append(rel)
    return out


_PIP_CHECK = re.compile(r"^(?P<pkg>\S+) \S+ (?:has requirement (?P<req>.+?), but you have|requires (?P<missing>\S+), which)")


def pip_check(py: Path, profile) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """`pip check` in the target, each line sorted into the profile's named upstream conflicts or not."""
    from doctor.knowledge.pipcheck import same_requirement
    from doctor.snapshot.model import normalize_name

    cp = subprocess.run([str(py), "-m", "pip", "--isolated", "check"], capture_output=True, text=True, timeout=300,
                        env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    lines = [ln for ln in cp.stdout.splitlines() if ln.strip() and not ln.startswith("No broken")]
    named, other = [], []
    for ln in lines:
        m = _PIP_CHECK.match(ln)
        req = (m.group("req") or m.group("missing")) if m else None
        ok = m is not None and any(normalize_name(m.group("pkg")) == c["package"] and same_requirement(c["requirement"], req)
                                   for c in profile.upstream_conflicts)
        (named if ok else other).append(ln)
    return {"exit": cp.returncode, "named_upstream_conflicts": named, "other": other}


def sourced(venv: Path, env: dict[str, str]) -> dict[str, str]:
    """`env` after `. doctor-env.sh`, as a user's shell has it after the install: Megatron-LM's clone on PYTHONPATH
    where the stack puts it there (verl <= 0.7.0), the exports (a missing CANN set_env.sh only says so)."""
    cp = subprocess.run(["bash", "-c", f'. "{venv / "doctor-env.sh"}" 2>/dev/null; env -0'], capture_output=True,
                        timeout=120, env=env, check=True)
    return dict(x.split("=", 1) for x in cp.stdout.decode().split("\0") if "=" in x)


def import_checks(py: Path, env: dict[str, str]) -> dict[str, str]:
    out = {}
    for mod in IMPORTS:
        cp = subprocess.run([str(py), "-c", f"import {mod}"], capture_output=True, text=True, timeout=600,
                            env={**env, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}, cwd="/")
        last = (cp.stderr.strip().splitlines() or ["?"])[-1]
        out[mod] = "ok" if cp.returncode == 0 else last[:300]
    return out


@pytest.fixture(scope="module", params=chosen())
def world(request) -> dict:  # type: ignore[no-untyped-def]
    from doctor.installers.resolve import Facts, resolve
    from doctor.knowledge.profiles import load_profiles

    p = next(x for x in load_profiles() if x.name == request.param)
    work = WORK / p.name
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    plan = resolve(p, Facts(arch="x86_64", python_version=py, chip="A2", npu_seen=False), src_dir="/x")
    up = upstream.build(plan, WORK / "upstream")
    cpu = ("torch", "torchvision", "torchaudio")
    wanted = {(n, v if "+" in v or n not in cpu else v + "+cpu")
              for n, v in upstream.step_pins(plan, up, (*cpu, "triton-ascend"))}
    reachable = {(n, v) for n, v in wanted if any(f["filename"].endswith(".whl") and f["filename"].split("-")[1] == v
                                                  for f in upstream.simple_files(n))}
    up.index, up.substituted = upstream.standin_index(work / "upstream", wanted, reachable)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    # pip --isolated ignores PIP_CACHE_DIR; its cache follows XDG_CACHE_HOME, so "cold" really starts empty
    env.update({"NO_COLOR": "1", "XDG_CACHE_HOME": str(work / "cache")})
    common = ["--profile", p.name, "--backend", "pip", "--isolated", "--no-host-check", "--json"]
    online = [*common, "--index-url", upstream.PYPI + "/", "--extra-index-url", up.index]
    for m in up.mirrors:
        online += ["--git-mirror", m]
    for r in up.git_refs:
        online += ["--git-ref", r]
    return {"profile": p, "plan": plan, "up": up, "env": env, "online": online, "common": common, "work": work,
            "results": {"substituted": up.substituted, "sources": up.sources, "git_refs": up.git_refs}}


def _write(name: str, results: dict) -> None:
    """Merge into bench/realworld.json under the profile's name (the tests can run alone: `-k offline`)."""
    try:
        old = json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        old = {}
    profiles = old.get("profiles", {}) if isinstance(old.get("profiles"), dict) else {}
    profiles[name] = {**profiles.get(name, {}), **results}
    RESULTS.write_text(json.dumps({"profiles": profiles}, indent=2) + "\n")


def test_realworld_install_check_noop_forced_failure_rollback_warm(world) -> None:
    env, res, work, p = world["env"], world["results"], world["work"], world["profile"]
    shutil.rmtree(work / "cache", ignore_errors=True)
    venv = work / "venv1"
    py = plain_venv(venv)
    res["target_pip"] = next(x for x in wheelkit.freeze(py) if x.startswith("pip=="))
    empty, empty_files = wheelkit.freeze(py), listing(venv)
    # cold: a fresh venv, an empty pip cache, nothing cloned
    cp, cold = doctor("install", "--venv", str(venv), *world["online"], env=env)
    (work / "cold.json").write_text(cp.stdout)
    (work / "cold.stderr").write_text(cp.stderr)
    res["cold_exit"] = cp.returncode
    _write(p.name, res)
    assert cp.returncode == 0, cp.stderr[-6000:]
    rep = json.loads(cp.stdout)
    assert {s["status"] for s in rep["steps"]} <= {"done", "satisfied"}
    res["cold_seconds"] = round(cold, 1)
    frozen = wheelkit.freeze(py)
    online_freeze = sorted(frozen)
    assert not any(x.startswith("triton==") for x in frozen), frozen  # triton stays out on the first run
    # triton-ascend where the plan installs it (verl 0.6.1's vllm-ascend v0.9.1 line has none)
    assert any(x.startswith("triton-ascend==") for x in frozen) == ("triton-ascend" in dict(world["plan"].pins)), frozen
    res["pip_check"] = pip_check(py, p)
    shell = sourced(venv, env)
    res["imports"] = import_checks(py, shell)
    res["torch_is_standin"] = any(s.startswith("torch==") for s in world["up"].substituted)
    _write(p.name, res)
    # the check of the result, in the shell doctor-env.sh gives: the stack's errors are none (the profile's upstream
    # conflicts are info)
    ck, _ = doctor("check", "--python", str(py), "--profile", p.name, "--json", env=shell)
    found = json.loads(ck.stdout)["findings"]
    stack = [f for f in found if f["severity"] == "error" and f["components"][0] not in HOST]
    res["check_host_findings"] = sorted({f["id"] for f in found if f["components"][0] in HOST and f["severity"] != "info"})
    res["check_stack_findings"] = sorted({f"{f['severity']} {f['id']}: {f['title']}" for f in found
                                          if f["components"][0] not in HOST and f["severity"] != "info"})
    _write(p.name, res)
    assert not res["pip_check"]["other"], res["pip_check"]
    assert not stack, json.dumps(stack, indent=1)[:4000]
    # a second install is a no-op: every step satisfied (its time is recorded, not asserted: no timing asserts)
    cp, noop = doctor("install", "--venv", str(venv), *world["online"], env=env)
    rep = json.loads(cp.stdout)
    assert cp.returncode == 0 and {s["status"] for s in rep["steps"]} == {"satisfied"}, cp.stderr[-3000:]
    res["noop_seconds"], res["noop_report_seconds"] = round(noop, 2), rep["seconds"]
    _write(p.name, res)
    # --rollback restores the empty venv exactly, the clones the install made included
    cp, _ = doctor("install", "--rollback", "--venv", str(venv), "--json", env=env)
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert wheelkit.freeze(py) == empty
    assert listing(venv) == empty_files and not (venv / "src").exists()
    # forced failure after the MindSpeed step: restored to the empty venv, the clones it made (MindSpeed's, with the
    # egg-info its editable install wrote) removed
    ms = venv / "src" / "MindSpeed"
    cp, forced = doctor("install", "--venv", str(venv), *world["online"], "--set", f"{FORCED[0]}={FORCED[1]}", env=env)
    rep = json.loads(cp.stdout)
    failed = next((f for f in rep["findings"] if f["id"] == "install-step-failed"), {})
    res["forced_failure"] = {"exit": cp.returncode, "seconds": round(forced, 1),
                             "failed_step": next((s["id"] for s in rep["steps"] if s["status"] == "failed"), None),
                             "findings": sorted(f["id"] for f in rep["findings"] if f["severity"] == "error"),
                             "clones": (failed.get("evidence") or {}).get("clones"), "mindspeed_left": ms.exists(),
                             "venv_as_before": wheelkit.freeze(py) == empty and listing(venv) == empty_files}
    _write(p.name, res)
    assert cp.returncode == 1 and res["forced_failure"]["failed_step"] == FORCED[0]
    assert not ms.exists() and not (venv / "src").exists(), res["forced_failure"]["clones"]
    assert res["forced_failure"]["venv_as_before"]
    # warm: the same install again, the pip cache in place (the clones are made again)
    cp, warm = doctor("install", "--venv", str(venv), *world["online"], env=env)
    assert cp.returncode == 0, cp.stderr[-3000:]
    res["warm_seconds"] = round(warm, 1)
    res["online_freeze"] = online_freeze
    _write(p.name, res)


def test_realworld_download_only_then_offline_with_the_network_cut(world) -> None:
    env, res, work, p = world["env"], world["results"], world["work"], world["profile"]
    house = work / "house"
    shutil.rmtree(house, ignore_errors=True)
    cp, dl = doctor("install", "--download-only", str(house), *world["online"], env=env)
    assert cp.returncode == 0, cp.stderr[-6000:]
    wh = json.loads(cp.stdout)["wheelhouse"]
    res.update({"download_seconds": round(dl, 1), "wheelhouse_bytes": wh["bytes"], "wheelhouse_artifacts": wh["artifacts"],
                "wheelhouse_sdists": wh["sdists"]})
    _write(p.name, res)
    venv2 = work / "venv2"
    py2 = plain_venv(venv2)
    cp, off = doctor("install", "--venv", str(venv2), "--wheelhouse", str(house), "--offline", *world["common"],
                     "--index-url", "http://127.0.0.1:9/simple", env={**env, **CUT, "XDG_CACHE_HOME": str(work / "cache-offline")})
    (work / "offline.json").write_text(cp.stdout)
    res["offline_exit"] = cp.returncode
    _write(p.name, res)
    assert cp.returncode == 0, cp.stderr[-6000:]
    res["offline_seconds"] = round(off, 1)
    rep = json.loads(cp.stdout)
    assert {s["status"] for s in rep["steps"]} <= {"done", "satisfied"}
    offline = sorted(wheelkit.freeze(py2))
    try:
        online = json.loads(RESULTS.read_text())["profiles"][p.name]["online_freeze"]
    except (OSError, ValueError, KeyError):
        online = None
    res["offline_freeze_equals_online"] = offline == online if online is not None else None
    res["offline_freeze_differs"] = sorted(set(offline) ^ set(online or [])) if online is not None else None
    _write(p.name, res)
    assert online is None or offline == online, res["offline_freeze_differs"]
