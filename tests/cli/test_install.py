"""`doctor install` end to end: plans from snapshots of each profile's machine, refusals with exit 2, and real
offline installs into temporary venvs (pip and uv) from a wheelhouse built with --download-only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doctor.installers import wheelhouse as wh
from doctor.installers.resolve import CPU_LOCAL, SOURCES
from doctor.knowledge.profiles import PYTORCH_CPU_INDEX, load_profiles
from tests.conftest import SCHEMAS
from tests.installers import stack, wheelkit

PROFILES = load_profiles()
CHIP_NAME = {"A2": "910B3", "A3": "Ascend910_9391", "950": "Ascend950DT", "310P": "310P3"}


def doctor(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, text=True, timeout=timeout,
                          env=env or {**os.environ, "NO_COLOR": "1"})


def machine(p, arch: str, *, installed: bool, cann: str | None = None, chip: str | None = None, py: str | None = None) -> dict:
    """A snapshot of the machine a profile is for; `installed` adds the profile's complete stack, built from
    the profile's pins (not from the plan), as `doctor collect` would record it."""
    pyv = (py or p.python_recommended or "3.11") + ".4"
    snap: dict = {
        "schema": "doctor.snapshot/1", "complete": True,
        "host": {"arch": arch, "libc": "glibc 2.35"},
        "python": {"version": pyv, "prefix": "/opt/venv"},
        "packages": {"pip": {"version": "24.0"}}, "modules": {}, "env": {},
        "ascend": {"root": "/usr/local/Ascend",
                   "toolkit": {"version": cann or p.cann_version, "path": "/usr/local/Ascend/ascend-toolkit/latest"},
                   "kernels": {"version": cann or p.cann_version}, "nnal": {"version": cann or p.cann_version},
                   "driver": {"version": p.driver_min or "25.5.0"},
                   "devices": [{"id": 0, "chip": CHIP_NAME[chip or p.chips[0]]}]},
    }
    if not installed:
        return snap
    pk = snap["packages"]
    for name, spec in p.pins.items():
        if name in {v[1] for v in SOURCES.values()} and name in ("vllm-ascend", "vllm", "verl", "mindspeed") \
                and next((k for k, v in SOURCES.items() if v[1] == name), name) in p.git:
            continue
        v = stack.choose(name, spec) if spec.strip() else "1.0"
        if arch == "x86_64" and name in CPU_LOCAL:
            v += "+cpu"
        pk[name] = {"version": v}
    if "mbridge" not in pk and p.verl_version.release >= (0, 7):
        pk["mbridge"] = {"version": "0.15.1"}
    for line in (p.verl_requirements or {}).get("lines", ()):  # a PyPI verl's requirements-npu.txt (issue 21 item 4)
        from packaging.requirements import Requirement

        r = Requirement(line)
        name = r.name.lower().replace("_", "-")
        if name not in pk:
            v = stack.choose(name, str(r.specifier)) if str(r.specifier) and name in stack.CANDIDATES else None
            bounds = [x.version for x in r.specifier] + ["1.0"]  # a version the line accepts: one of its own bounds
            pk[name] = {"version": v or next(c for c in bounds if r.specifier.contains(c))}
    for key, g in p.git.items():
        d, dist, mod = SOURCES[key][:3]
        version = g.version or stack.choose(dist, p.pins.get(dist, "==0.0.1"))
        if key == "vllm":
            version += "+empty"
        if g.install == "pythonpath":
            snap["env"]["PYTHONPATH"] = f"/opt/venv/src/{d}"
        else:
            pk[dist] = {"version": version, "editable": True, "location": f"/opt/venv/src/{d}"}
        commit = g.commit or "0123456789abcdef0123456789abcdef01234567"
        snap["modules"][mod] = {"origins": [f"/opt/venv/src/{d}/{mod}"], "git": {"commit": commit, "branch": g.ref}}
    snap["env"].update(p.exports)
    snap["env"]["ASCEND_HOME_PATH"] = "/usr/local/Ascend/ascend-toolkit/latest"
    return snap


def dry_run(tmp_path: Path, snap: dict, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict | None]:
    f = tmp_path / f"snap-{len(list(tmp_path.iterdir()))}.json"
    f.write_text(json.dumps(snap))
    cp = doctor("install", "--dry-run", "--from", str(f), "--json", "--backend", "pip", *extra)
    return cp, (json.loads(cp.stdout) if cp.stdout.strip() else None)


def cases():
    for p in PROFILES:
        for arch in p.arches:
            yield pytest.param(p, arch, id=f"{p.name}-{arch}")


@pytest.mark.parametrize("p, arch", list(cases()))
def test_dry_run_plan_for_each_profile_machine(p, arch, tmp_path: Path) -> None:
    cp, rep = dry_run(tmp_path, machine(p, arch, installed=False), "--profile", p.name)
    assert cp.returncode == 0, cp.stderr
    assert rep["command"] == "install" and rep["profile"]["name"] == p.name
    plan, steps = rep["plan"], rep["steps"]
    assert [s["id"] for s in plan["steps"]] == [s["id"] for s in steps]
    # empty environment: everything runs except removals of what is not there
    assert {s["status"] for s in steps if s["kind"] != "uninstall"} == {"pending"}
    urls = {u for s in plan["steps"] for u in (s.get("index") or {}).get("extra_index_urls", [])}
    assert (PYTORCH_CPU_INDEX in urls) == (arch == "x86_64")
    # where the run would download from: every index a step names and every git source
    got = rep["downloads"]
    assert (PYTORCH_CPU_INDEX in got["indexes"]) == (arch == "x86_64") and "https://pypi.org/simple" in got["indexes"]
    assert {s["source"]["url"] for s in plan["steps"] if s["kind"] == "clone"} <= set(got["git"])
    reqs = [r for s in plan["steps"] for r in s.get("requirements", [])]
    torch = [r for r in reqs if r.startswith("torch==")]
    assert torch and all(r.endswith("+cpu") == (arch == "x86_64") for r in torch)
    assert {r["component"] for r in plan["system"]} >= {"cann", "kernels"}
    assert all(r["ok"] for r in plan["system"] if r["component"] != "firmware")
    # the same machine with the profile's complete stack installed: only satisfied steps
    cp, rep = dry_run(tmp_path, machine(p, arch, installed=True), "--profile", p.name)
    assert cp.returncode == 0, cp.stderr
    pending = [s["id"] for s in rep["steps"] if s["status"] != "satisfied"]
    # a git verl's requirements-npu.txt lives in the clone, which a snapshot of another machine does not bring:
    # the step cannot be judged met from here, so it runs (pip -r of met lines changes nothing), and so does the
    # removal of what the run's installs leave required by nothing (decided when it runs: here nothing); a profile
    # that carries the file's lines at the pinned commit (the main snapshot) is judged by them
    from_clone = "verl" in p.git and not p.verl_requirements
    assert pending == (["verl-requirements", "remove-orphans"] if from_clone else []), pending


def test_profile_is_selected_from_the_snapshot_and_reason_given(tmp_path: Path) -> None:
    p = next(x for x in PROFILES if x.name == "verl-0.7.1-cann8.5.0-a3")
    cp, rep = dry_run(tmp_path, machine(p, "aarch64", installed=True))
    assert cp.returncode == 0, cp.stderr
    assert rep["profile"]["name"] == p.name and "CANN 8.5.0" in rep["profile"]["reason"]


def test_seed_rule_refusal(tmp_path: Path) -> None:
    p = next(x for x in PROFILES if x.name == "verl-0.7.1-cann8.5.0-a2")
    cp, rep = dry_run(tmp_path, machine(p, "aarch64", installed=False), "--set", "vllm-ascend=0.7.3")
    assert cp.returncode == 2 and [f["id"] for f in rep["findings"]] == ["request-refused"]  # one report, also on exit 2
    assert "seed rule" in cp.stderr and "CANN 8.5.0" in cp.stderr and "vllm-ascend==0.7.3" in cp.stderr


def test_no_matching_profile_lists_the_nearest(tmp_path: Path) -> None:
    p = PROFILES[-1]
    cp, _ = dry_run(tmp_path, machine(p, "aarch64", installed=False, cann="7.0.0"))
    assert cp.returncode == 2
    assert "no verified stack matches" in cp.stderr and "Nearest profiles" in cp.stderr and "verl-" in cp.stderr


def test_nearest_profiles_say_a_profiles_cann_as_the_profile_does(tmp_path: Path) -> None:
    """The 950 stack's CANN is unknown (upstream names none; its range [9.1.0, 9.3.0) is inferred): the "Nearest
    profiles" list called it "CANN 9.1.0", a version no one documented for it."""
    p = next(x for x in PROFILES if x.name == "verl-0.9.0-cannunknown-950")
    snap = machine(p, "aarch64", installed=False)
    for part in ("toolkit", "kernels", "nnal"):  # no CANN on the host: every profile is as near
        del snap["ascend"][part]
    cp, _ = dry_run(tmp_path, snap)
    assert cp.returncode == 2 and "Nearest profiles" in cp.stderr, cp.stderr
    assert "verl-0.9.0-cannunknown-950 (CANN unknown, inferred [9.1.0, 9.3.0), chips 950, Python ==3.11.*)" \
        in cp.stderr, cp.stderr
    assert "verl-0.9.0-cannunknown-950 (CANN 9.1.0" not in cp.stderr


def test_atlas_310p_is_refused(tmp_path: Path) -> None:
    p = next(x for x in PROFILES if x.name == "verl-0.7.1-cann8.5.0-a2")
    cp, _ = dry_run(tmp_path, machine(p, "aarch64", installed=False, chip="310P"), "--profile", p.name)
    assert cp.returncode == 2 and "inference cards" in cp.stderr


def test_bad_inputs_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{nope")
    cp = doctor("install", "--dry-run", "--from", str(tmp_path / "bad.json"))
    assert cp.returncode == 2 and "bad.json" in cp.stderr
    cp = doctor("install", "--offline")
    assert cp.returncode == 2 and "--wheelhouse" in cp.stderr
    cp = doctor("install", "--from", str(tmp_path / "bad.json"))
    assert cp.returncode == 2 and "--dry-run" in cp.stderr


def test_install_list_alone_names_where_the_stacks_are_listed() -> None:
    """`doctor install --list` is what a new user types to see what install can install; it said only "use it with
    --rollback". It names the history command and `doctor profiles`, and --help says how a machine without CANN
    (no stack matches it) picks one."""
    cp = doctor("install", "--list")
    assert cp.returncode == 2 and "`doctor profiles`" in cp.stderr and "doctor install --rollback --list" in cp.stderr
    assert cp.stdout == ""
    text = " ".join(doctor("install", "--help").stdout.split())
    assert "No stack matches a machine without CANN (an image build, a CI runner): name one here" in text, text


# -- real installs -------------------------------------------------------------------------------------------

PROFILE = "verl-0.7.1-cann8.5.0-a2"


def download_only(profile: str, root: Path, prepare=None, isolated: bool = True,  # type: ignore[no-untyped-def]
                  **extra_env: str) -> dict:
    """A local 'PyPI' (file:// simple index) and local git servers for the profile's stack (`prepare(plan,
    stack)` may change them); then `doctor install --download-only` builds the wheelhouse from them, as on a
    connected host."""
    from doctor.installers.resolve import Facts, resolve

    p = next(x for x in PROFILES if x.name == profile)
    plan = resolve(p, Facts(arch="x86_64", python_version=f"{sys.version_info[0]}.{sys.version_info[1]}",
                            cann=p.cann_version, chip="A2" if "A2" in p.chips else sorted(p.chips)[0]), src_dir="/x")
    st = stack.build(plan, root / "upstream")
    if prepare is not None:
        prepare(plan, st)
    for name, v in (("setuptools", "80.0.0"), ("wheel", "0.45.0"), ("setuptools-scm", "8.1.0"), ("pybind11", "2.13.6"),
                    ("pip", "24.0")):
        wheelkit.make_wheel(st.wheels, name, v)
    index = wheelkit.make_simple_index(st.wheels, root / "simple")
    env = wheelkit.hermetic_env(root, NO_COLOR="1")
    house = root / "house"
    dl_env = {**env, **extra_env}
    args = ["install", "--profile", profile, "--download-only", str(house), "--arch", "x86_64", "--python-version",
            f"{sys.version_info[0]}.{sys.version_info[1]}", "--glibc", "2.35", "--index-url", index, "--json",
            *(["--isolated"] if isolated else [])]
    for m in st.mirrors:
        args += ["--git-mirror", m]
    for r in st.git_refs:  # the local repos have their own commits: choose their refs deliberately
        args += ["--git-ref", r]
    cp = doctor(*args, env=dl_env)
    assert cp.returncode == 0, cp.stderr
    return {"house": house, "report": json.loads(cp.stdout), "env": env, "stack": st, "root": root, "plan": plan}


@pytest.fixture(scope="module")
def airgap(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return download_only(PROFILE, tmp_path_factory.mktemp("airgap"))


def test_download_only_builds_a_verified_wheelhouse(airgap) -> None:
    house = airgap["house"]
    m = wh.verify(house)
    names = {Path(a.path).name.split("-")[0] for a in m.artifacts}
    assert {"torch", "torch_npu", "torchvision", "triton_ascend", "mbridge", "numpy", "transformers"} <= names
    # an offline target older than pip 21.3 runs the plan's pip step from the wheelhouse
    assert any(Path(a.path).name.startswith("pip-24.0-") for a in m.artifacts)
    assert set(m.git) == {"vllm", "vllm-ascend", "Megatron-LM", "MindSpeed", "verl"}
    assert m.git["Megatron-LM"]["commit"] == airgap["stack"].commits["Megatron-LM"]
    assert "manylinux_2_35_x86_64" in m.target["platforms"]


def test_download_only_bundles_submodules_and_an_offline_clone_uses_them(tmp_path: Path) -> None:
    """vllm-ascend (verl >= 0.8.0) is cloned with its submodules: the wheelhouse must carry them, or the
    air-gapped install stops at `git submodule update` reaching for the network."""
    from doctor.installers import gitsrc
    from doctor.installers.command import Options, _source
    from doctor.installers.plan import CLONE

    profile = next(p.name for p in PROFILES if p.verl == "0.8.0" and "A2" in p.chips)
    catlass_url = "https://gitcode.com/cann/catlass.git"

    def add_submodule(plan, st) -> None:  # type: ignore[no-untyped-def]
        src = next(s.source for s in plan.steps if s.kind == CLONE and s.source is not None and s.source.submodules)
        bare = tmp_path / "upstream" / "repos" / f"{src.name}.git"
        work = bare.with_name(bare.name + ".work")
        cat = wheelkit.make_source_repo(tmp_path / "upstream" / "repos" / "catlass.git", dist="catlass",
                                        packages={"include/catlass.h": "// kernels\n"}, refs=[("branch", "main", "1.0")])
        wheelkit.git("-c", "protocol.file.allow=always", "submodule", "add", "-q",
                     str(tmp_path / "upstream" / "repos" / "catlass.git"), "csrc/third_party/catlass", cwd=work)
        wheelkit.git("config", "-f", ".gitmodules", "submodule.csrc/third_party/catlass.url", catlass_url, cwd=work)
        wheelkit.git("commit", "-q", "-am", "catlass", cwd=work)
        kind = "refs/tags/" if wheelkit.git("tag", "-l", src.ref, cwd=work) else "refs/heads/"
        wheelkit.git(*(["tag", "-f", src.ref] if kind == "refs/tags/" else ["branch", "-f", src.ref]), cwd=work)
        wheelkit.git("push", "-q", "-f", str(bare), f"{kind}{src.ref}", cwd=work)
        st.mirrors.append(f"{catlass_url}={tmp_path / 'upstream' / 'repos' / 'catlass.git'}")
        st.commits["catlass"] = cat["main"]

    got = download_only(profile, tmp_path, prepare=add_submodule)
    m = wh.verify(got["house"])
    name = next(n for n, g in m.git.items() if g.get("submodules"))
    subs = m.git[name]["submodules"]
    assert [(s["path"], s["commit"]) for s in subs] == [("csrc/third_party/catlass", got["stack"].commits["catlass"])]
    # what an offline run hands the executor, and the clone it makes, with every upstream out of reach
    _, bundles = _source(Options(wheelhouse=str(got["house"]), offline=True))
    (tmp_path / "upstream" / "repos").rename(tmp_path / "gone")
    src = next(s.source for s in got["plan"].steps if s.kind == CLONE and s.source is not None and s.source.name == name)
    pinned = type(src)(name=src.name, url=src.url, ref=src.ref, commit=bundles[name]["commit"], submodules=True)
    gitsrc.clone(pinned, tmp_path / "offline" / name, bundle=bundles[name]["bundle"],
                 submodule_bundles=bundles[name]["submodules"])
    assert (tmp_path / "offline" / name / "csrc/third_party/catlass/include/catlass.h").read_text() == "// kernels\n"


def offline_install(airgap, venv: Path, backend: str, *extra: str) -> subprocess.CompletedProcess[str]:
    # no git mirrors and an unreachable index: everything must come from the wheelhouse
    return doctor("install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse", str(airgap["house"]),
                  "--offline", "--isolated", "--no-check", "--no-host-check", "--backend", backend,
                  "--index-url", "http://127.0.0.1:9/simple", "--json", *extra, env={**airgap["env"], "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"})


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["uv"])  # pip: same flow in tests/installers (executor, journal) and the bench
def test_offline_install_idempotent_and_rollback(airgap, backend, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    wheelkit.make_venv(venv)
    # the first run also re-probes and runs `doctor check` (this host has no CANN: its errors make exit 1)
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse", str(airgap["house"]),
                "--offline", "--isolated", "--backend", backend, "--json", env=airgap["env"])
    rep = json.loads(cp.stdout)
    assert cp.returncode == (1 if rep["summary"]["error"] else 0), cp.stderr
    assert rep["checks"] and any(f["id"] == "install-complete" for f in rep["findings"])
    assert {s["status"] for s in rep["steps"]} <= {"done", "satisfied"}
    # the post-install check's pip lines install from the wheelhouse: this host reaches no index
    pip_lines = [c for f in rep["findings"] for c in (f.get("fix") or {}).get("commands", []) if " pip install " in c]
    assert pip_lines and all(c.endswith(f"--no-index --find-links {airgap['house'] / 'wheels'}") for c in pip_lines)
    frozen = wheelkit.freeze(venv / "bin" / "python")
    for want in ("torch==2.8.0+cpu", "torch-npu==2.8.0", "vllm==0.13.0+empty", "megatron-core==0.12.1",
                 "mindspeed==0.12.1", "triton-ascend==3.2.0", "verl==0.7.1", "transformers==4.57.6"):
        assert want in frozen, frozen
    env_sh = (venv / "doctor-env.sh").read_text()
    assert "ascend-toolkit/set_env.sh" in env_sh and "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1" in env_sh
    cp = offline_install(airgap, venv, backend)
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    # a second run does nothing: probe, plan, check every step (how fast: bench/install_speed.py, not a test)
    assert {s["status"] for s in rep["steps"]} == {"satisfied"}
    assert any(f["id"] == "install-nothing-to-do" for f in rep["findings"])
    cp = doctor("install", "--rollback", "--venv", str(venv), "--json", env=airgap["env"])
    assert cp.returncode == 0, cp.stderr
    assert wheelkit.freeze(venv / "bin" / "python") == []
    assert not (venv / "doctor-env.sh").exists()


@pytest.mark.slow
def test_triton_pulled_back_by_a_late_resolve_is_gone_after_the_first_run(tmp_path: Path) -> None:
    """Issue 15 item 5: on x86 a later full resolve (xgrammar, here the final pins' transformers) brings mainline
    triton back after remove-triton; the first run must end with triton gone and triton-ascend in place."""
    def triton_again(plan, st) -> None:  # type: ignore[no-untyped-def]
        for w in st.wheels.glob("transformers-*.whl"):
            w.unlink()
        wheelkit.make_wheel(st.wheels, "transformers", "4.57.6", requires=["triton"])
        wheelkit.make_wheel(st.wheels, "triton", "3.3.0")

    got = download_only(PROFILE, tmp_path, prepare=triton_again)
    venv = tmp_path / "venv"
    wheelkit.make_venv(venv)
    cp = offline_install(got, venv, "uv")
    assert cp.returncode == 0, cp.stderr
    frozen = wheelkit.freeze(venv / "bin" / "python")
    assert "triton-ascend==3.2.0" in frozen and not any(x.startswith("triton==") for x in frozen), frozen
    # and the second run has nothing to repair
    rep = json.loads(offline_install(got, venv, "uv").stdout)
    assert {s["status"] for s in rep["steps"]} == {"satisfied"}


@pytest.mark.slow
def test_download_only_is_one_resolution_carrying_sdists_with_their_build_requirements(tmp_path: Path) -> None:
    """Issue 15 item 6: arctic-inference 0.1.1 has no wheel; the wheelhouse carries its sdist and what building it
    needs, one numpy serves every step, the size is reported, and the offline install builds the sdist."""
    def sdist_only(plan, st) -> None:  # type: ignore[no-untyped-def]
        for w in st.wheels.glob("transformers-*.whl"):
            w.unlink()
        wheelkit.make_wheel(st.wheels, "transformers", "4.57.6", requires=["arctic-inference==0.1.1"])
        wheelkit.make_sdist(st.wheels, "arctic-inference", "0.1.1", build_requires=["fake-build-helper"])
        wheelkit.make_wheel(st.wheels, "fake-build-helper", "1.0")

    # the host's pip configuration is never read (it used to be): here it would forbid every index
    got = download_only(PROFILE, tmp_path, prepare=sdist_only, isolated=False, PIP_NO_INDEX="1", PIP_ONLY_BINARY=":all:")
    house, rep = got["house"], got["report"]
    m = wh.verify(house)
    names = sorted(Path(a.path).name for a in m.artifacts)
    assert "arctic_inference-0.1.1.tar.gz" in names and any(n.startswith("fake_build_helper-1.0") for n in names)
    assert len([n for n in names if n.startswith("numpy-")]) == 1, names  # one resolution, not one per step
    info = rep["wheelhouse"]
    assert info["bytes"] == sum(a.size for a in m.artifacts) > 0 and "wheels/arctic_inference-0.1.1.tar.gz" in info["sdists"]
    # beside it only the archive of the git requirement in the clone's requirements-npu.txt (TransferQueue @ git+…)
    assert set(info["sdists"]) - {"wheels/arctic_inference-0.1.1.tar.gz"} <= {"wheels/TransferQueue-0.1.0.zip"}
    venv = tmp_path / "venv"
    wheelkit.make_venv(venv)
    cp = offline_install(got, venv, "pip")
    assert cp.returncode == 0, cp.stderr
    assert "arctic-inference==0.1.1" in wheelkit.freeze(venv / "bin" / "python")


def test_tampered_wheelhouse_is_refused_before_any_change(airgap, tmp_path: Path) -> None:
    import shutil

    house = tmp_path / "house"
    shutil.copytree(airgap["house"], house)
    w = next((house / "wheels").glob("torch_npu-*.whl"))
    w.write_bytes(w.read_bytes()[:-10] + b"0123456789")
    venv = tmp_path / "venv"
    wheelkit.make_venv(venv)
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse", str(house), "--offline",
                "--isolated", "--no-check", "--backend", "uv", env=airgap["env"])
    assert cp.returncode == 2
    assert "sha256 mismatch" in cp.stderr and w.name in cp.stderr
    assert wheelkit.freeze(venv / "bin" / "python") == []


def test_interrupted_journal_is_detected_and_rolled_back(airgap, tmp_path: Path) -> None:
    from doctor.installers import journal as jr
    from doctor.installers.target import probe

    venv = tmp_path / "venv"
    py = wheelkit.make_venv(venv)
    j = jr.Journal.start(probe(str(py), files=True), profile=PROFILE)  # the run was SIGKILLed after this
    wheelkit.make_wheel(tmp_path / "w", "numpy", "1.26.4")
    from doctor.installers.backends import find_uv

    subprocess.run([find_uv() or "uv", "pip", "install", "--python", str(py), "--no-index", "--find-links", str(tmp_path / "w"),
                    "numpy==1.26.4"], env=airgap["env"], check=True, capture_output=True, timeout=60)
    cp = offline_install(airgap, venv, "uv")
    assert cp.returncode == 2 and "interrupted" in cp.stderr and "--rollback" in cp.stderr
    cp = doctor("install", "--rollback", "--venv", str(venv), env=airgap["env"])
    assert cp.returncode == 0, cp.stderr
    assert wheelkit.freeze(py) == []
    assert jr.Journal.load(j.dir).state == jr.ROLLED_BACK


def test_a_dry_run_on_an_interrupted_install_says_what_the_run_would(tmp_path: Path) -> None:
    """After a SIGKILL mid-install the real run refuses (exit 2: roll back first); the dry run, which an operator
    runs first, must not print a plan over the half-installed environment and say "ok"."""
    from doctor.installers import journal as jr
    from doctor.installers.target import probe

    py = wheelkit.make_venv(tmp_path / "venv")
    jr.Journal.start(probe(str(py), files=True), profile=PROFILE)  # the run was SIGKILLed after this
    cp = doctor("install", "--dry-run", "--profile", PROFILE, "--python", str(py), "--backend", "pip",
                "--no-host-check")
    assert cp.returncode == 2, cp.stderr
    assert "an earlier install was interrupted" in cp.stderr and f"doctor install --rollback --python {py}" in cp.stderr
    assert "would run" not in cp.stderr


def test_report_matches_the_shared_schema(tmp_path: Path, shared_dir: Path) -> None:
    import jsonschema

    p = next(x for x in PROFILES if x.name == "verl-0.9.0-cann9.0.0-a2")
    cp, rep = dry_run(tmp_path, machine(p, "x86_64", installed=False), "--profile", p.name)
    assert cp.returncode == 0, cp.stderr
    schema = json.loads((SCHEMAS / "report.schema.json").read_text())
    jsonschema.validate(rep, schema)
    assert rep["plan"]["profile"] == p.name and len(rep["steps"]) == len(rep["plan"]["steps"])
    assert not rep["findings"]  # CANN, kernels, NNAL and driver all match


def test_system_packages_are_named_not_installed(tmp_path: Path) -> None:
    """Issue 13: a dry run from a snapshot whose driver `check` calls too old shows every host prerequisite with its
    state (CANN, kernels, NNAL, driver, firmware) and exits 1; the messages say "the snapshot", not "this host"."""
    p = next(x for x in PROFILES if x.name == "verl-0.10.0.dev20260822-cann9.1.0-a3")
    snap = machine(p, "aarch64", installed=False)
    snap["ascend"]["driver"]["version"] = "24.1.rc3"
    snap["ascend"]["nnal"] = None
    cp, rep = dry_run(tmp_path, snap, "--profile", p.name)
    assert cp.returncode == 1, cp.stderr
    by = {f["id"]: f for f in rep["findings"]}
    drv = by["install-system-driver-mismatch"]
    assert drv["severity"] == "error" and "Ascend-hdk-a3-npu-driver >= 26.0.rc1" in drv["title"]
    assert "on the snapshot" in drv["title"] and "this host" not in drv["title"]
    assert "install-system-nnal-missing" in by and "Ascend-cann-nnal 9.1.0" in by["install-system-nnal-missing"]["title"]
    assert all(s["kind"] in ("uninstall", "install", "clone", "editable", "envfile", "prune") for s in rep["plan"]["steps"])
    for part in ("cann", "kernels", "nnal", "driver", "firmware"):
        assert f"host {part}:" in cp.stderr, part
    assert "host driver: Ascend-hdk-a3-npu-driver >= 26.0.rc1 — NOT MET (found 24.1.rc3 on the snapshot" in cp.stderr
    # with the profile's driver the dry run exits 0 again
    snap = machine(p, "aarch64", installed=False)
    cp, rep = dry_run(tmp_path, snap, "--profile", p.name)
    assert cp.returncode == 0 and not rep["findings"], cp.stderr


def test_failed_install_exits_1_names_the_step_and_restores(airgap, tmp_path: Path) -> None:
    import shutil

    house = tmp_path / "house"
    shutil.copytree(airgap["house"], house)
    for w in (house / "wheels").glob("triton_ascend-*.whl"):
        w.unlink()
    wheelkit.make_wheel(house / "wheels", "triton-ascend", "3.2.0", broken=True)  # fails midway through its files
    m = wh.load(house)
    wh.write(house, wh.scan(house, m))
    venv = tmp_path / "venv"
    py = wheelkit.make_venv(venv)
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse", str(house), "--offline",
                "--isolated", "--no-check", "--backend", "uv", "--json", env=airgap["env"])
    assert cp.returncode == 1, cp.stderr
    rep = json.loads(cp.stdout)
    f = next(f for f in rep["findings"] if f["id"] == "install-step-failed")
    assert f["severity"] == "error" and "triton-ascend" in f["title"] and "restored" in f["title"]
    assert "log tail" in f["detail"] and f["evidence"]["restored"] is True
    st = {s["id"]: s["status"] for s in rep["steps"]}
    assert st["torch-stack"] == "done" and st["triton-ascend"] == "failed" and st["env-file"] == "not-run"
    assert wheelkit.freeze(py) == []  # torch, vllm, vllm-ascend ... were installed, then removed again
    assert Path(rep["log"]).is_file()


def test_an_install_still_running_is_not_called_interrupted(tmp_path: Path) -> None:
    """A second `doctor install` (or its dry run) on a target another one is installing into: the first one's
    journal reads `running`, and the second said "an earlier install was interrupted; run --rollback", an undo
    of a live run. It holds the lock: that is another install at work."""
    from doctor.installers import journal as jr
    from doctor.installers.target import probe

    venv = tmp_path / "venv"
    py = wheelkit.make_venv(venv)
    jr.Journal.start(probe(str(py), files=True), profile=PROFILE)  # the first run, at work
    with jr.lock(str(venv)):
        for extra in (["--dry-run"], ["--backend", "pip", "--no-check"]):
            cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--no-host-check", *extra)
            assert cp.returncode == 2, cp.stdout + cp.stderr
            assert "another `doctor install` is running" in cp.stderr and "--rollback --python" not in cp.stderr
    cp = doctor("install", "--dry-run", "--profile", PROFILE, "--venv", str(venv), "--no-host-check")
    assert cp.returncode == 2 and "an earlier install was interrupted" in cp.stderr  # the lock gone: it died


def test_sigterm_mid_step_restores_and_reports(airgap, tmp_path: Path) -> None:
    import signal

    venv = tmp_path / "venv"
    py = wheelkit.make_venv(venv)
    from doctor.installers.backends import find_uv

    wheelkit.make_wheel(tmp_path / "w", "triton", "3.3.0")
    subprocess.run([find_uv() or "uv", "pip", "install", "--python", str(py), "--no-index", "--find-links",
                    str(tmp_path / "w"), "triton==3.3.0"], env=airgap["env"], check=True, capture_output=True, timeout=60)
    before = wheelkit.freeze(py)
    hang = wheelkit.Hang()
    log = tmp_path / "install.log"
    # online mode with a wheelhouse: the index is asked too, and it never answers
    cmd = [sys.executable, "-m", "doctor", "install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse",
           str(airgap["house"]), "--index-url", hang.url, "--isolated", "--no-check", "--backend", "uv", "--json",
           "--log", str(log)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**airgap["env"], "UV_HTTP_TIMEOUT": "120"})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (log.exists() and "-- torch-stack" in log.read_text() and hang.conns):
            time.sleep(0.05)
        assert hang.conns, log.read_text() if log.exists() else "no log"
        assert wheelkit.freeze(py) == []  # remove-conflicts really ran
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        hang.close()
    assert proc.returncode == 1, err
    rep = json.loads(out)
    f = next(f for f in rep["findings"] if f["id"] == "install-interrupted")
    assert "SIGTERM" in f["title"] and f["evidence"]["restored"] is True
    assert wheelkit.freeze(py) == before


# -- issue 15 item 7 and issue 13: explicit targets, validated inputs, messages that name the flag ---------------


def test_install_needs_an_explicit_target(tmp_path: Path) -> None:
    p = next(x for x in PROFILES if x.name == PROFILE)
    cp = doctor("install", "--profile", p.name, "--dry-run")
    assert cp.returncode == 2 and "--venv" in cp.stderr and "its own environment" in cp.stderr


def test_a_venv_whose_interpreter_was_removed_is_refused_before_anything_naming_the_dead_link(tmp_path: Path) -> None:
    """A venv made from an interpreter that is gone since (a pyenv Python uninstalled): its bin/python is a dead
    link. Taken as a missing venv, the run tried to make one over it and uv's "A virtual environment already
    exists" was all it said; the dry run planned 17 steps."""
    shutil.copy2(os.path.realpath(sys.executable), tmp_path / "python3")  # a real interpreter, then removed
    venv = tmp_path / "venv"
    subprocess.run([str(tmp_path / "python3"), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    (tmp_path / "python3").unlink()
    before = sorted((str(p), p.is_symlink() or p.read_bytes()) for p in venv.rglob("*") if not p.is_dir())
    for args in (["--profile", PROFILE, "--dry-run"], ["--profile", PROFILE], ["--rollback"], ["--rollback", "--list"]):
        cp = doctor("install", *args, "--venv", str(venv), "--no-host-check", "--no-check")
        assert cp.returncode == 2, cp.stdout + cp.stderr
        assert "interpreter is gone" in cp.stderr and str(tmp_path / "python3") in cp.stderr, cp.stderr
        v = sys.version_info
        assert f"python{v[0]}.{v[1]} -m venv --upgrade {venv}" in cp.stderr, cp.stderr
    assert sorted((str(p), p.is_symlink() or p.read_bytes()) for p in venv.rglob("*") if not p.is_dir()) == before


def test_a_venv_that_is_someone_elses_directory_is_refused_before_anything(tmp_path: Path) -> None:
    """`--venv ~/myproject` (not a venv: no bin/python, no pyvenv.cfg): the pip backend wrote a venv among the
    user's files and installed the stack there; uv refused with a hint to --clear it, which deletes them."""
    proj = tmp_path / "myproject"
    (proj / "bin").mkdir(parents=True)
    (proj / "train.py").write_text("print('mine')\n")
    (proj / "bin" / "run.sh").write_text("#!/bin/sh\n")
    for extra in (["--dry-run"], ["--backend", "pip"]):
        cp = doctor("install", "--profile", PROFILE, "--venv", str(proj), "--no-host-check", "--no-check", *extra)
        assert cp.returncode == 2, cp.stdout + cp.stderr
        assert "is a directory that is not a venv" in cp.stderr and "bin, train.py" in cp.stderr, cp.stderr
    assert sorted(str(p.relative_to(proj)) for p in proj.rglob("*")) == ["bin", "bin/run.sh", "train.py"]
    (tmp_path / "empty").mkdir()  # an empty directory is still made into the venv
    cp = doctor("install", "--profile", PROFILE, "--venv", str(tmp_path / "empty"), "--no-host-check", "--dry-run")
    assert cp.returncode == 0, cp.stderr


def test_dry_run_for_a_venv_that_does_not_exist_yet_judges_nothing_installed(tmp_path: Path) -> None:
    venv = tmp_path / "new-venv"
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--dry-run", "--no-host-check", "--json", "-v")
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    st = {s["id"]: s for s in rep["steps"]}
    # the doctor's own environment has packages (click, packaging, torch here): none of them counts as installed
    assert all(s["status"] == "pending" for s in rep["steps"] if s["kind"] != "uninstall"), st
    assert str(venv / "bin" / "python") in st["torch-stack"]["command"] and sys.executable not in st["torch-stack"]["command"]
    assert rep["plan"]["target"]["prefix"] == str(venv) and not venv.exists()
    # the text plan says that the python it names is not there yet: the run creates the venv first
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--dry-run", "--no-host-check")
    assert cp.returncode == 0, cp.stderr
    assert f"({venv / 'bin' / 'python'}, a new venv the run creates first)" in cp.stdout + cp.stderr
    assert not venv.exists()


def test_offline_against_a_folder_that_is_not_a_wheelhouse_fails_before_the_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (tmp_path / "notahouse").mkdir()
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse", str(tmp_path / "notahouse"),
                "--offline")
    assert cp.returncode == 2 and "manifest.json" in cp.stderr
    assert not venv.exists()


@pytest.mark.parametrize("args, flag, text", [
    (("--set", "garbage"), "--set", "expected PKG=VERSION"),
    (("--set", "transformer=4.57.1"), "--set", "did you mean transformers"),
    (("--set", "nosuchpkg=1.0"), "--set", "not a package"),
    (("--set", "torch=2.1.0"), "--set", "built for torch"),
    (("--python-version", "banana"), "--python-version", "not a Python version"),
    (("--glibc", "banana"), "--glibc", "not a glibc version"),
])
def test_bad_choices_are_exit_2_naming_the_flag(tmp_path: Path, args, flag, text) -> None:
    p = next(x for x in PROFILES if x.name == PROFILE)
    snap = machine(p, "aarch64", installed=False)
    snap["ascend"]["toolkit"]["version"] = "7.0.0"  # no profile matches: the --set error must still come first
    if args[0] == "--set" and args[1] in ("torch=2.1.0", "transformer=4.57.1", "nosuchpkg=1.0"):
        snap = machine(p, "aarch64", installed=False)
    cp, _ = dry_run(tmp_path, snap, *args)
    assert cp.returncode == 2, cp.stderr
    assert flag in cp.stderr and text in cp.stderr and "no verified stack matches" not in cp.stderr


def test_seed_rule_is_checked_against_the_profiles_cann_on_a_host_without_cann(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    cp = doctor("install", "--profile", "verl-0.9.0-cann9.0.0-a2", "--venv", str(venv), "--dry-run", "--set", "vllm=0.9.0")
    assert cp.returncode == 2 and "seed rule" in cp.stderr and "CANN 9.0.0" in cp.stderr, cp.stderr
    assert not venv.exists()


def test_rollback_walks_the_history_and_lists_it(airgap, tmp_path: Path) -> None:
    """Issue 15 item 7: `--rollback` undoes the newest install not yet undone; run again, the one before it;
    `--rollback --list` shows the history and what goes next."""
    venv = tmp_path / "venv"
    py = wheelkit.make_venv(venv)
    assert offline_install(airgap, venv, "uv").returncode == 0
    first = wheelkit.freeze(py)
    assert "torch-npu==2.8.0" in first
    # the wheelhouse also holds the torch-npu post release vllm-ascend's requirements install on the way
    cp = offline_install(airgap, venv, "uv", "--set", "torch-npu=2.8.0.post2")
    assert cp.returncode == 0, cp.stderr
    assert "torch-npu==2.8.0.post2" in wheelkit.freeze(py)
    rows = json.loads(doctor("install", "--rollback", "--list", "--venv", str(venv), "--json", env=airgap["env"]).stdout)["journals"]
    assert [r["state"] for r in rows] == ["done", "done"] and rows[0]["next"] and not rows[1]["next"]
    cp = doctor("install", "--rollback", "--venv", str(venv), env=airgap["env"])
    assert cp.returncode == 0 and "rollback done: removed nothing; put back torch-npu\n" in cp.stdout, cp.stdout
    assert wheelkit.freeze(py) == first  # back to before the second install
    rows = json.loads(doctor("install", "--rollback", "--list", "--venv", str(venv), "--json", env=airgap["env"]).stdout)["journals"]
    assert [r["state"] for r in rows] == ["undone", "done"] and rows[1]["next"]
    assert doctor("install", "--rollback", "--venv", str(venv), env=airgap["env"]).returncode == 0
    assert wheelkit.freeze(py) == []  # one further: the empty venv
    cp = doctor("install", "--rollback", "--venv", str(venv), env=airgap["env"])
    assert cp.returncode == 2 and "already undone" in cp.stderr


def test_rollback_of_an_environment_the_doctor_never_installed_into_says_so(tmp_path: Path) -> None:
    """A plain venv (pip install verl, no `doctor install`): the refusal said "every install recorded for this
    environment is already undone", while none was ever recorded."""
    venv = tmp_path / "venv"
    wheelkit.make_venv(venv)
    cp = doctor("install", "--rollback", "--venv", str(venv))
    assert cp.returncode == 2 and "no install by the doctor is recorded for" in cp.stderr, cp.stderr
    assert "already undone" not in cp.stderr and not (venv / ".doctor").exists()


def test_no_host_check_lets_a_complete_python_stack_exit_0_on_a_host_without_cann(tmp_path: Path) -> None:
    """Issue 15 item 4: image builds and CI runners have no CANN and no NPU; their host findings are listed apart."""
    venv = tmp_path / "venv"
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--dry-run", "--json", "--root", str(tmp_path))
    assert cp.returncode == 1 and any(f["id"] == "install-system-cann-missing" for f in json.loads(cp.stdout)["findings"])
    cp = doctor("install", "--profile", PROFILE, "--venv", str(venv), "--dry-run", "--json", "--root", str(tmp_path),
                "--no-host-check")
    rep = json.loads(cp.stdout)
    assert cp.returncode == 0, cp.stderr
    assert not rep["findings"] and [f["id"] for f in rep["host_findings"]] == ["install-system-cann-missing"]
    assert "host (--no-host-check: not part of the verdict)" in cp.stderr
    env = dict(next(s for s in rep["plan"]["steps"] if s["id"] == "install-vllm-ascend").get("env", {}))
    assert env.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0"


# -- trial item 4: --set judged by check's own package checks on the stack the plan leaves ---------------------


def _set_dry_run(tmp_path: Path, pin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return doctor("install", "--profile", "verl-0.9.1-cann9.1.0-a3", "--venv", str(tmp_path / "v"), "--dry-run",
                  "--no-host-check", "--arch", "x86_64", "--python-version", "3.11", "--set", pin, *extra)


def test_set_says_a_pin_check_would_warn_on_in_the_plan_output(tmp_path: Path) -> None:
    # vllm 0.22.0 beside vllm-ascend 0.23 (built from releases/v0.23.0): check warns vllm-ascend-vllm-mismatch
    cp = _set_dry_run(tmp_path, "vllm=0.22.0")
    assert cp.returncode == 0, cp.stderr
    assert "--set vllm=0.22.0" in cp.stdout and "[vllm-ascend-vllm-mismatch]" in cp.stdout
    assert "install: warnings" in cp.stdout and "1 warning(s)" in cp.stdout
    rep = json.loads(_set_dry_run(tmp_path, "vllm=0.22.0", "--json").stdout)
    (f,) = [f for f in rep["findings"] if f["id"] == "install-set-breaks-requirement"]
    assert f["severity"] == "warning" and f["evidence"]["finding"] == "vllm-ascend-vllm-mismatch"
    # the stack's own pins say nothing (package-off-profile is what --set means, and the plan shows it)
    cp = _set_dry_run(tmp_path, "transformers=5.9.0")
    assert cp.returncode == 0 and "install: ok" in cp.stdout and "install-set" not in cp.stdout, cp.stdout


def test_set_refuses_what_check_calls_an_error_from_releases_toml_not_only_requirements_json(tmp_path: Path) -> None:
    # a knowledge copy whose requirements table relaxes verl's transformers range: check still errors with
    # transformers-outside-verl-window (releases.toml), so --set refuses too
    import shutil

    kn = tmp_path / "kn"
    shutil.copytree(Path(__file__).resolve().parents[2] / "profiles", kn)
    doc = json.loads((kn / "requirements" / "verl.json").read_text())
    doc["releases"]["0.9.1"]["requires_dist"] = [
        r for r in doc["releases"]["0.9.1"]["requires_dist"] if not r.startswith("transformers")]
    (kn / "requirements" / "verl.json").write_text(json.dumps(doc))
    cp = _set_dry_run(tmp_path, "transformers=4.57.1", "--knowledge", str(kn))
    assert cp.returncode == 2, cp.stdout
    assert "--set" in cp.stderr and "transformers-outside-verl-window" in cp.stderr and not (tmp_path / "v").exists()


def test_set_refuses_a_release_pypi_does_not_have(tmp_path: Path) -> None:
    cp = _set_dry_run(tmp_path, "numpy=3.0.0")
    assert cp.returncode == 2 and "--set" in cp.stderr
    assert "numpy 3.0.0 is not a release of numpy on PyPI" in cp.stderr and "newest 2." in cp.stderr
    # a release PyPI has as an sdist stating no requirements (the table's `unstated`) is not refused as unknown
    # (a profile that pins flash-attn: none of the packaged ones does, so the refusal is asked directly)
    from types import SimpleNamespace

    from doctor.errors import RefusedError
    from installers.setcheck import check_release_exists

    stack = SimpleNamespace(built_from_source=frozenset())
    check_release_exists(stack, {"deepspeed": "0.16.0"})  # between stated releases 0.15.0 and 0.16.1
    with pytest.raises(RefusedError, match="deepspeed 0.16.99 is not a release of deepspeed on PyPI"):
        check_release_exists(stack, {"deepspeed": "0.16.99"})
    # older than the table keeps (releases since 2024): it cannot tell, so it does not refuse
    assert _set_dry_run(tmp_path, "numpy=1.20.0").returncode == 0


def test_set_refuses_a_release_with_no_installable_file_for_the_plans_python_and_machine(tmp_path: Path) -> None:
    # xgrammar 0.1.11 publishes x86_64 wheels only (cp39-cp312) and no sdist (PyPI, profiles/requirements/)
    cp = doctor("install", "--profile", "verl-0.9.1-cann9.1.0-a3", "--venv", str(tmp_path / "v"), "--dry-run",
                "--no-host-check", "--arch", "aarch64", "--python-version", "3.11", "--set", "xgrammar=0.1.11")
    assert cp.returncode == 2 and "--set" in cp.stderr, cp.stderr
    assert "xgrammar 0.1.11 publishes no wheel for Python 3.11 on aarch64 and no sdist" in cp.stderr
    assert "cp39–cp312 on x86_64" in cp.stderr and "pip cannot install it; pin 0.1.17" in cp.stderr
    # the same pin on the machine it publishes wheels for is not refused for that
    cp = _set_dry_run(tmp_path, "xgrammar=0.1.11")
    assert "publishes no wheel" not in cp.stderr


@pytest.mark.parametrize("arch, py", [("x86_64", "3.11"), ("aarch64", "3.12")])
def test_check_and_install_agree_on_the_versions_only_form_of_a_documented_stack(tmp_path: Path, arch, py) -> None:
    """Trial item 2: a bug-report snapshot with exactly verl-0.9.1-cann9.1.0-a3's pins. check --from said
    `vllm-ascend 0.23.0 requires transformers==5.5.4` (PyPI's cp312 aarch64 wheel) while install --dry-run said ok:
    the stack builds vllm-ascend from releases/v0.23.0, and on 3.11 x86_64 that wheel is not even the target's."""
    from tests.stacks import versions_only

    p = next(x for x in PROFILES if x.name == "verl-0.9.1-cann9.1.0-a3")
    f = tmp_path / "report.json"
    f.write_text(json.dumps(versions_only(p, arch, py)))
    checked = json.loads(doctor("--json", "check", "--from", str(f)).stdout)
    assert checked["profile"]["name"] == p.name
    assert not [x["title"] for x in checked["findings"] if x["check"] == "declared-requirements" and x["severity"] != "info"]
    cp = doctor("--json", "install", "--dry-run", "--from", str(f), "--profile", p.name, "--venv", str(tmp_path / "v"),
                "--no-host-check")
    assert cp.returncode == 0 and json.loads(cp.stdout)["status"] == "ok", cp.stderr


def test_an_interpreter_the_os_manages_is_refused_before_anything_and_a_venv_from_it_is_planned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian's /usr/bin/python3 (PEP 668): pip and uv refuse every step there, so install refuses it up front,
    exit 2 with the reason and the venv line, dry run or not, and makes nothing (the env file and clones would
    go under /usr); `--venv DIR --python` it plans into a venv made from it. The real run is made in process with
    every way to change something replaced by a failure: this test must never install into the OS's Python."""
    import io

    from doctor.console import Console
    from doctor.errors import InputError
    from doctor.installers import command
    from tests.fakes import externally_managed_python

    exe = externally_managed_python()
    if exe is None:
        pytest.skip("/usr/bin/python3 is absent or not externally managed here")
    cp = doctor("install", "--profile", PROFILE, "--python", exe, "--dry-run")
    assert cp.returncode == 2, cp.stderr
    assert "PEP 668" in cp.stderr and f"--venv verl-venv --python {exe}" in cp.stderr

    def changed(*a: object, **k: object) -> None:
        raise AssertionError("install went on to change something")

    monkeypatch.setattr(command, "_execute", changed)
    monkeypatch.setattr(command, "_make_venv", changed)
    with pytest.raises(InputError, match="PEP 668") as e:
        command.run(command.Options(profile=PROFILE, python=exe), Console(err=io.StringIO()))
    assert e.value.exit_code == 2
    cp = doctor("install", "--profile", PROFILE, "--venv", str(tmp_path / "v"), "--python", exe, "--dry-run")
    assert "PEP 668" not in cp.stderr and str(tmp_path / "v") in cp.stdout and not (tmp_path / "v").exists()


def test_an_interpreter_the_os_manages_is_planned_into_when_the_user_turned_pips_guard_off(tmp_path: Path) -> None:
    """PIP_BREAK_SYSTEM_PACKAGES=1 (or `break-system-packages = true` in a pip.conf): pip would install there, so
    install plans into it and says so; uv, which reads neither, gets --break-system-packages. Only dry runs here:
    this test must never install into the OS's Python. `--isolated` hides the override from the steps, and an
    override for `[install]` only leaves the plan's uninstalls refused: both still exit 2, saying why."""
    from tests.fakes import externally_managed_python

    exe = externally_managed_python()
    if exe is None:
        pytest.skip("/usr/bin/python3 is absent or not externally managed here")
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "XDG_CONFIG"))}
    env = {**base, "NO_COLOR": "1", "HOME": str(home), "PIP_BREAK_SYSTEM_PACKAGES": "1"}
    cp = doctor("--json", "install", "--profile", PROFILE, "--python", exe, "--dry-run", "--backend", "uv", env=env)
    assert cp.returncode in (0, 1), cp.stderr  # 1: this host has no CANN (the host findings), not a refusal
    rep = json.loads(cp.stdout)
    assert rep["dry_run"] is True and rep["break_system_packages"] == "PIP_BREAK_SYSTEM_PACKAGES=1"
    steps = {s["id"]: s for s in rep["steps"]}
    assert "--break-system-packages" in steps["torch-stack"]["command"] and "/usr/bin/python3" in steps["torch-stack"]["command"]
    cp = doctor("install", "--profile", PROFILE, "--python", exe, "--dry-run", "--backend", "pip", env=env)
    assert f"PEP 668: {exe} is managed by the OS, and PIP_BREAK_SYSTEM_PACKAGES=1 turns pip's guard off" in cp.stdout
    assert "nothing was changed" in cp.stdout
    cp = doctor("install", "--profile", PROFILE, "--python", exe, "--dry-run", "--isolated", env=env)
    assert cp.returncode == 2 and "--isolated hides pip's configuration" in cp.stderr
    (home / ".config" / "pip" / "pip.conf").write_text("[install]\nbreak-system-packages = true\n")
    env.pop("PIP_BREAK_SYSTEM_PACKAGES")
    cp = doctor("install", "--profile", PROFILE, "--python", exe, "--dry-run", env=env)
    assert cp.returncode == 2 and "covers pip install (" in cp.stderr and "pip.conf) only" in cp.stderr


@pytest.mark.parametrize("how", ["env", "pip.conf"])
def test_pips_own_configuration_that_installs_elsewhere_is_refused_before_anything_runs(tmp_path: Path, how: str) -> None:
    """PIP_TARGET (or `target = DIR` in a pip.conf) sends every `pip install` to DIR, not into the target venv (and
    past PEP 668's check on an OS's interpreter): the pip steps would land there. Real, first: the pip backend's own
    step for the target installs into DIR and leaves the venv without it. Then install refuses, naming the setting;
    with --isolated (the steps ignore pip's configuration) it goes ahead."""
    import zipfile

    from doctor.installers.backends import PipBackend

    wheels, elsewhere, venv = tmp_path / "w", tmp_path / "elsewhere", tmp_path / "venv"
    wheels.mkdir()
    tag = "tinyx-1.0"
    with zipfile.ZipFile(wheels / f"{tag}-py3-none-any.whl", "w") as z:
        files = {"tinyx.py": "", f"{tag}.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinyx\nVersion: 1.0\n",
                 f"{tag}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
        for path, text in files.items():
            z.writestr(path, text)
        z.writestr(f"{tag}.dist-info/RECORD", "".join(f"{p},,\n" for p in files) + f"{tag}.dist-info/RECORD,,\n")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = str(venv / "bin" / "python")
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "XDG_CONFIG"))}
    env.update(HOME=str(home), NO_COLOR="1", PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    if how == "env":
        env["PIP_TARGET"] = str(elsewhere)
        said = f"PIP_TARGET={elsewhere}"
    else:
        (home / ".config" / "pip" / "pip.conf").write_text(f"[install]\ntarget = {elsewhere}\n")
        said = f"target = {elsewhere} ({home / '.config' / 'pip' / 'pip.conf'})"
    step = PipBackend(own=False).install(py, ["tinyx"])
    r = subprocess.run(list(step.argv), capture_output=True, text=True, timeout=300, env=step.environ(env))
    assert r.returncode == 0, r.stderr
    assert (elsewhere / "tinyx.py").is_file()
    assert subprocess.run([py, "-c", "import tinyx"], capture_output=True, env={"PATH": "/usr/bin"}).returncode != 0
    cp = doctor("install", "--profile", PROFILE, "--python", py, "--dry-run", "--no-host-check", "--backend", "pip",
                env=env)
    assert cp.returncode == 2 and said in cp.stderr and "--isolated" in cp.stderr, cp.stderr
    cp = doctor("install", "--profile", PROFILE, "--python", py, "--dry-run", "--no-host-check", "--backend", "pip",
                "--isolated", env=env)
    assert cp.returncode == 0, cp.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("profile", "git_req"), [("verl-0.9.1-cann9.1.0-a2", None),
                                                  ("verl-0.10.0.dev20260822-cann9.1.0-a2", "transferqueue"),
                                                  ("verl-0.6.1-cann8.2.rc1-a3", None),
                                                  ("verl-0.9.0-cannunknown-950", None)])
def test_profiles_download_and_install_offline_into_a_plain_venv(profile: str, git_req: str | None,
                                                                 tmp_path: Path) -> None:
    """The profiles the README points at first, end to end on their stand-in stack: verl 0.9.1 installs main's NPU
    requirements (with TransferQueue pinned to its PyPI release); 0.10.0.dev builds verl from git `main` (its branch,
    not a tag) and, at the stand-in's own commit (chosen with --git-ref: the profile's lines, TransferQueue pinned,
    stand for the real commit only), reads the requirements file of that clone, whose git requirement
    (`TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main`) the wheelhouse must carry and an offline
    install take from it. Beside them the oldest profile (an A3 one: verl 0.6.1,
    torch 2.5.1) and the 950 one (its CANN unknown), which no other install test runs. The target is a plain
    `python3 -m venv` with the pip it bundles."""
    got = download_only(profile, tmp_path)
    house = got["house"]
    if git_req:
        assert any(p.name.lower().startswith(git_req + "-") for p in (house / "wheels").iterdir())
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    cp = doctor("install", "--profile", profile, "--venv", str(venv), "--wheelhouse", str(house), "--offline",
                "--isolated", "--no-check", "--no-host-check", "--backend", "pip", "--index-url",
                "http://127.0.0.1:9/simple", "--json", env={**got["env"], "HTTPS_PROXY": "http://127.0.0.1:9",
                                                            "HTTP_PROXY": "http://127.0.0.1:9"}, timeout=900)
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    assert {s["status"] for s in rep["steps"]} <= {"done", "satisfied"}
    frozen = wheelkit.freeze(venv / "bin" / "python")
    torch = next(x for x in PROFILES if x.name == profile).pins["torch"].lstrip("=")
    assert f"torch=={torch}+cpu" in frozen and (git_req is None or f"{git_req}==0.1.0" in frozen), frozen
    assert any(x.startswith("verl==") for x in frozen)
    if next(x for x in PROFILES if x.name == profile).git["megatron-lm"].install == "pythonpath":
        # Megatron-LM is a clone on doctor-env.sh's PYTHONPATH (verl 0.6.1's guide), not a distribution
        path = os.pathsep.join(rep["plan"]["env"]["pythonpath"])
        cp = subprocess.run([str(venv / "bin" / "python"), "-c", "import megatron.core, sys; print(megatron.core.__file__)"],
                            env={"PYTHONPATH": path, "PATH": os.environ["PATH"]}, capture_output=True, text=True,
                            timeout=120)
        assert cp.returncode == 0 and cp.stdout.startswith(path.split(os.pathsep)[0]), cp.stderr
    else:
        assert any(x.startswith("megatron-core==") for x in frozen), frozen


def test_no_matching_profile_without_cann_names_no_host_check(tmp_path: Path) -> None:
    # a host with no CANN (a login node, an image build): `--profile NAME` alone, as the refusal used to say,
    # then ends in install-system-cann-missing (exit 1); the refusal names --no-host-check, and that line plans
    p = next(x for x in PROFILES if x.name == "verl-0.9.1-cann9.1.0-a2")
    snap = machine(p, "x86_64", installed=False)
    snap["ascend"] = {"root": None, "toolkit": None, "kernels": None, "nnal": None, "driver": None, "devices": []}
    cp, _ = dry_run(tmp_path, snap)
    assert cp.returncode == 2 and "no verified stack matches" in cp.stderr, cp.stderr
    assert "add --no-host-check" in cp.stderr, cp.stderr
    cp, rep = dry_run(tmp_path, snap, "--profile", p.name, "--no-host-check")
    assert cp.returncode == 0 and rep is not None and rep["profile"]["name"] == p.name, cp.stderr
    # a CANN no stack is for: --no-host-check would not help, so it is not offered
    cp, _ = dry_run(tmp_path, machine(p, "x86_64", installed=False, cann="7.0.0"))
    assert cp.returncode == 2 and "--no-host-check" not in cp.stderr, cp.stderr


def test_a_rollback_where_nothing_was_installed_says_so(tmp_path: Path) -> None:
    """`doctor install --rollback --venv DIR` for a DIR with no interpreter said only "no interpreter at DIR/bin/python":
    it now says what that means for a rollback (nothing installed there) and what to name instead."""
    from click.testing import CliRunner

    from doctor.cli import cli

    for extra in ((), ("--list",)):
        r = CliRunner().invoke(cli, ["install", "--rollback", *extra, "--venv", str(tmp_path / "none")])
        assert r.exit_code == 2
        assert f"no interpreter at {tmp_path / 'none' / 'bin' / 'python'}, so no install there to roll back" in r.output
        assert "name the --venv or --python the install was given" in " ".join(r.output.split())
