"""pip-check semantics in `doctor check`: the requirements the installed distributions declare (issue 22).

Unit cases run hand-written snapshots through the real check; the probe case writes real dist-info read by the
real importlib.metadata in a throw-away venv; the slow case installs the real verl 0.9.1 wheel `--no-deps`
with real pip and runs the CLI on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from doctor.checks.diagnose import diagnose
from doctor.knowledge.pipcheck import unmet
from doctor.probes.pyenv import run_target_probe, to_snapshot_parts
from doctor.snapshot.model import snapshot_from_dict
from tests.fakes import make_site_packages

ROOT = Path(__file__).resolve().parents[2]


def _snap(packages: dict[str, Any], *, complete: bool = True, python: str | None = "3.10.12",
          arch: str | None = "aarch64") -> Any:
    doc: dict[str, Any] = {"schema": "doctor.snapshot/1", "packages": packages}
    if complete:
        doc["complete"] = True
    if python:
        doc["python"] = {"version": python, "implementation": "CPython"}
    if arch:
        doc["host"] = {"arch": arch}
    return snapshot_from_dict(doc)


def _declared(snap: Any, profile: Any = None) -> list[Any]:
    from doctor.checks.declared import declared_requirements
    from doctor.checks.runner import CheckContext, Skipped

    try:
        return list(declared_requirements(CheckContext(snapshot=snap, profile=profile)))
    except Skipped:
        return []


def test_missing_requirement_of_verl_is_an_error_naming_verl_the_requirement_and_the_metadata():
    snap = _snap({"verl": {"version": "0.9.1", "requires_dist": ["codetiming", "tensordict<=0.10.0,>=0.8.0,!=0.9.0"],
                           "metadata": "/v/site-packages/verl-0.9.1.dist-info/METADATA"},
                  "tensordict": {"version": "0.9.0", "requires_dist": []}})
    fs = _declared(snap)
    assert [(f.id, f.severity.value) for f in fs] == [("requirement-missing", "error"), ("requirement-version-unmet", "error")]
    miss, bad = fs
    assert "verl 0.9.1 requires codetiming" in miss.title and miss.components == ("python", "verl")
    assert miss.evidence["metadata"] == "/v/site-packages/verl-0.9.1.dist-info/METADATA"
    assert "verl-0.9.1.dist-info/METADATA" in miss.detail and miss.fix.commands == ("pip install 'codetiming'",)
    assert "tensordict 0.9.0 is installed" in bad.title and bad.evidence["installed"] == "0.9.0"


def test_elsewhere_a_warning_and_markers_use_the_snapshots_python_and_arch():
    snap = _snap({
        "somelib": {"version": "1.0", "requires_dist": [
            "needed-everywhere",
            'only-old-python; python_version < "3.9"',
            'only-x86; platform_machine == "x86_64"',
            'only-arm; platform_machine == "aarch64"',
            'only-docs; extra == "docs"']},
    })
    fs = _declared(snap)
    assert {f.evidence["requires"]: f.severity.value for f in fs} == {"needed-everywhere": "warning", "only-arm": "warning"}
    # the same package on an x86 host: the x86-only requirement applies instead
    snap_x86 = _snap(snap.to_dict()["packages"], arch="x86_64")
    assert {f.evidence["requires"] for f in _declared(snap_x86)} == {"needed-everywhere", "only-x86"}
    # the title says what to install, as pip check does; the marker that made it apply stays in the evidence
    arm = next(f for f in fs if f.evidence["requires"] == "only-arm")
    assert arm.title == "somelib 1.0 requires only-arm, which is not installed"
    assert arm.evidence["requirement"] == 'only-arm; platform_machine == "aarch64"'


def test_marker_verdicts_kept_for_the_process_are_those_of_each_snapshots_own_target():
    """The verdicts of markers are kept per environment for the process (several checks judge the same lines): one
    process judging targets in turn still gives each one its own."""
    lines = ['only-x86; platform_machine == "x86_64"', 'only-arm; platform_machine == "aarch64"',
             'only-new; python_version >= "3.11" and extra == "gpu"', "somelib[gpu]"]
    pkgs = {"somelib": {"version": "1.0", "requires_dist": lines[:3]}, "app": {"version": "1", "requires_dist": lines[3:]}}
    want = {("aarch64", "3.10.12"): {"only-arm"}, ("x86_64", "3.10.12"): {"only-x86"},
            ("x86_64", "3.12.1"): {"only-x86", "only-new"}, (None, "3.12.1"): {"only-new"}}
    for arch, python in [*want, ("aarch64", "3.10.12"), (None, "3.12.1")]:
        got = {f.evidence["requires"] for f in _declared(_snap(pkgs, arch=arch, python=python))}
        assert got == want[arch, python], (arch, python)


def test_unknown_facts_stay_silent():
    pkgs = {"somelib": {"version": "1.0", "requires_dist": ['only-arm; platform_machine == "aarch64"', "absent-lib"],
                        "requires_python": ">=3.11"}}
    # no arch: the arch marker is not judged; incomplete snapshot: "not installed" is not said; no python: no
    # Requires-Python verdict
    assert _declared(_snap(pkgs, complete=False, arch=None, python=None)) == []
    # an old snapshot without declarations, of a package the release table does not hold: the check skips
    assert _declared(_snap({"in-house-lib": {"version": "0.9.1"}})) == []


def test_requires_python_unmet_is_a_finding():
    snap = _snap({"vllm": {"version": "0.9.1", "requires_python": "<3.13,>=3.10", "requires_dist": []}}, python="3.9.18")
    (f,) = _declared(snap)
    assert f.id == "requires-python-unmet" and f.severity.value == "error"
    assert f.components[0] == "python" and "vllm 0.9.1 requires Python <3.13,>=3.10" in f.title


def test_a_python_the_python_version_check_rules_out_for_the_same_package_is_said_once(tmp_path):
    """verl 0.9.1 on Python 3.9 (its Requires-Python and its release row agree): one error, python-version's, whose
    fix rebuilds the environment; with python-version waived, declared-requirements says it."""
    import json
    import subprocess
    import sys

    doc = {"schema": "doctor.snapshot/1", "python": {"version": "3.9.18"},
           "packages": {"verl": {"version": "0.9.1", "requires_python": "<3.13,>=3.10", "requires_dist": []}}}
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))

    def ids(*args: str) -> list[str]:
        r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(path), *args],
                           capture_output=True, text=True)
        return [f["id"] for f in json.loads(r.stdout)["findings"] if "python" in f["components"][:1]
                and f["severity"] == "error"]

    assert ids() == ["python-too-old-for-package"]
    assert ids("--ignore", "python-too-old-for-package") == ["requires-python-unmet"]
    assert ids("--only", "declared-requirements") == ["requires-python-unmet"]


def test_torch_npus_torch_pin_broken_at_the_release_is_said_once_by_the_torch_npu_check(tmp_path):
    """torch 2.1.0 beside torch-npu 2.4.0 (a bare report): one error, the torch-npu check's, which names the load
    failure and the +cpu build; waive it and the declared pin speaks. A pin broken only in its local part (+cpu) is
    the declared check's alone."""
    def ids(doc: dict[str, Any], *args: str) -> list[str]:
        path = tmp_path / "snap.json"
        path.write_text(json.dumps(doc))
        r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(path), *args],
                           capture_output=True, text=True)
        return sorted(f["id"] for f in json.loads(r.stdout)["findings"] if f["severity"] == "error")

    bare = {"schema": "doctor.snapshot/1", "packages": {"torch": {"version": "2.1.0"}, "torch-npu": {"version": "2.4.0"}}}
    assert ids(bare) == ["torch-npu-torch-mismatch"]
    assert ids(bare, "--ignore", "torch-npu-torch-mismatch") == ["requirement-version-unmet"]
    assert ids(bare, "--only", "declared-requirements") == ["requirement-version-unmet"]
    local = {"schema": "doctor.snapshot/1", "complete": True, "python": {"version": "3.10.12"},
             "host": {"arch": "x86_64"},
             "packages": {"torch": {"version": "2.4.0", "requires_dist": []},
                          "torch-npu": {"version": "2.4.0", "requires_dist": ["torch==2.4.0+cpu"]}}}
    assert "requirement-version-unmet" in ids(local, "--only", "declared-requirements")
    assert "torch-npu-torch-mismatch" not in ids(local)


def test_a_stated_torch_npu_on_x86_64_is_judged_by_its_x86_64_wheels_and_said_once(tmp_path):
    """A bug report stating torch-npu 2.10.0.post4 beside PyPI's plain torch 2.10.0 on x86_64: the x86_64 wheels
    of that torch-npu pin `torch==2.10.0+cpu` (the table's `machines` row). One error for the pair, the torch-cuda
    check's, whose line uses the PyTorch CPU index; under `--only declared-requirements` the declared pin speaks,
    citing that x86_64 wheel. The same report on aarch64 (whose wheels pin `torch==2.10.0`) gives neither."""
    def found(doc: dict[str, Any], *args: str) -> list[dict[str, Any]]:
        path = tmp_path / "snap.json"
        path.write_text(json.dumps(doc))
        r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(path), *args],
                           capture_output=True, text=True)
        return [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]

    doc = {"schema": "doctor.snapshot/1", "python": {"version": "3.11.9"}, "host": {"arch": "x86_64"},
           "packages": {"torch": {"version": "2.10.0"}, "torch-npu": {"version": "2.10.0.post4"}}}
    assert [f["id"] for f in found(doc)] == ["torch-not-cpu-build-x86"]
    (own,) = found(doc, "--only", "declared-requirements")
    assert own["id"] == "requirement-version-unmet" and own["evidence"]["requirement"].replace(" ", "") == "torch==2.10.0+cpu"
    assert own["source"].endswith("-cp311-cp311-manylinux_2_28_x86_64.whl") and "torch_npu-2.10.0.post4" in own["source"]
    arm = {**doc, "host": {"arch": "aarch64"}}
    assert found(arm) == [] and found(arm, "--only", "declared-requirements") == []


def test_prereleases_satisfy_a_specifier_as_pip_check_judges_them():
    snap = _snap({"vllm-ascend": {"version": "0.11.0rc1", "requires_dist": ["torch-npu>=2.7.1"]},
                  "torch-npu": {"version": "2.7.1rc1", "requires_dist": []}})
    # pip check compares with prereleases=True: 2.7.1rc1 < 2.7.1 is unmet, the rc itself is not excluded
    assert [f.id for f in _declared(snap)] == ["requirement-version-unmet"]
    snap2 = _snap({"vllm-ascend": {"version": "0.11.0rc1", "requires_dist": ["torch-npu>=2.7.1.dev0"]},
                   "torch-npu": {"version": "2.7.1rc1", "requires_dist": []}})
    assert _declared(snap2) == []


def test_extras_asked_by_another_package_are_active():
    snap = _snap({
        "verl": {"version": "0.9.1", "requires_dist": ["ray[default]>=2.41.0"]},
        "ray": {"version": "2.46.0", "requires_dist": ["click>=7.0", 'aiohttp>=3.7; extra == "default"',
                                                       'fastapi; extra == "serve"']},
        "click": {"version": "8.1.7", "requires_dist": []},
    })
    (f,) = _declared(snap)
    assert f.evidence["requires"] == "aiohttp" and f.evidence["extra"] == "default" and f.severity.value == "error"
    assert "for its extra [default]" in f.title


def test_a_conflict_the_profile_names_as_upstreams_own_is_info():
    class P:
        name = "verl-x"
        upstream_conflicts = ({"package": "vllm-ascend", "requirement": "torch-npu==2.7.1",
                               "source": "https://github.com/vllm-project/vllm-ascend/issues/1"},)

    # (2.7.1.post3: a build vllm-ascend's own docs do not name for 0.11.0, unlike its matrix's 2.7.1.post1)
    snap = _snap({"vllm-ascend": {"version": "0.11.0", "requires_dist": ["torch-npu==2.7.1"]},
                  "torch-npu": {"version": "2.7.1.post3", "requires_dist": []}})
    (f,) = _declared(snap, P())
    assert f.severity.value == "info" and f.source == "https://github.com/vllm-project/vllm-ascend/issues/1"
    (g,) = _declared(snap)
    assert g.severity.value == "error"


def test_a_build_vllm_ascends_own_docs_name_for_the_release_is_info():
    """v0.11.0's release notes: "TorchNPU is upgraded to 2.7.1.post1 ... Please install it by yourself" (its
    requirements pin 2.7.1; the release matrix says 2.7.1.post1)."""
    snap = _snap({"vllm-ascend": {"version": "0.11.0", "requires_dist": ["torch-npu==2.7.1"]},
                  "torch-npu": {"version": "2.7.1.post1", "requires_dist": []}})
    (f,) = _declared(snap)
    assert f.severity.value == "info" and "release_notes.md" in f.source
    assert f.fix is not None and "Nothing to change" in f.fix.text and not f.fix.commands


def test_unmet_matches_pip_check_on_the_same_requirements():
    """The evaluator's verdicts on a mixed set, written as pip check would print them."""
    snap = _snap({
        "a": {"version": "1.0", "requires_dist": ["b>=2", "c", "d<1; python_version >= '3'", "e!=1.0"]},
        "b": {"version": "1.5"}, "d": {"version": "1.0"}, "e": {"version": "1.0"},
    })
    got = sorted((u.kind, u.name) for u in unmet(snap))
    assert got == [("missing", "c"), ("version", "b"), ("version", "d"), ("version", "e")]


def test_older_snapshots_without_the_fields_still_load_and_write_back_unchanged():
    doc = {"schema": "doctor.snapshot/1", "packages": {"verl": {"version": "0.9.1"}}}
    assert snapshot_from_dict(doc).to_dict() == doc


# -- snapshots that only state versions: the published metadata of those releases ------------------------


def test_stated_versions_are_checked_against_the_published_metadata_of_those_releases():
    # a bug report's versions only: vllm-ascend 0.11.0rc1 declares torch==2.7.1 and torch-npu==2.7.1 (its wheel's
    # METADATA on PyPI, profiles/requirements.json)
    snap = _snap({"vllm-ascend": {"version": "0.11.0rc1"}, "torch": {"version": "2.8.0"},
                  "torch-npu": {"version": "2.8.0"}}, complete=False)
    fs = [f for f in _declared(snap) if f.evidence["package"] == "vllm-ascend"]
    assert {(f.id, f.evidence["requires"], f.severity.value) for f in fs} == {
        ("requirement-version-unmet", "torch", "error"), ("requirement-version-unmet", "torch-npu", "error")}
    f = fs[0]
    assert f.source.startswith("https://pypi.org/project/vllm-ascend/0.11.0rc1/")
    assert "published metadata of vllm-ascend 0.11.0rc1" in f.detail
    # incomplete: nothing is said about what the report does not list
    assert not any(f.id == "requirement-missing" for f in _declared(snap))


def test_a_long_stated_package_list_finds_the_release_table_once(monkeypatch):
    # finding the table in use (the knowledge directory the environment names) cost more than a look-up, and it
    # was done once per listed package: a report's 600k-row `pip list` paid it 600k times
    from doctor.knowledge import requirements

    calls = []
    real = requirements.load_requirements

    def counted(path: Any = None) -> Any:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(requirements, "load_requirements", counted)
    pkgs = {f"pkg{i}": {"version": f"1.{i}.0"} for i in range(50)}
    snap = _snap({**pkgs, "vllm-ascend": {"version": "0.11.0rc1"}, "torch": {"version": "2.8.0"}}, complete=False)
    fs = [f for f in _declared(snap) if f.evidence["package"] == "vllm-ascend"]
    assert {f.evidence["requires"] for f in fs} >= {"torch"}
    assert len(calls) == 1


def test_a_stated_python_outside_a_releases_requires_python():
    snap = _snap({"transformers": {"version": "4.57.1"}}, complete=False, python="3.8.18")
    (f,) = _declared(snap)
    assert f.id == "requires-python-unmet" and f.severity.value == "error" and ">=3.9.0" in f.title
    assert f.source == "https://pypi.org/project/transformers/4.57.1/#transformers-4.57.1-py3-none-any.whl"


# -- collection: the probe reads what the dists declare ----------------------------------------------------


def test_the_probe_collects_requires_python_requires_dist_and_top_level(tmp_path):
    site = make_site_packages(
        tmp_path / "site", {"verl": "0.9.1", "ray": "2.46.0"},
        requires={"verl": ["ray[default]>=2.41.0", 'math-verify; extra == "math"']},
        requires_python={"verl": ">=3.10"}, top_level={"ray": ["ray"]})
    (site / "verl-0.9.1.dist-info" / "RECORD").write_text("verl/__init__.py,,\nverl/trainer/main_ppo.py,,\n"
                                                          "verl-0.9.1.dist-info/METADATA,,\n../../bin/x,,\n")
    env = dict(os.environ, PYTHONPATH=str(site))
    doc, err, _ = run_target_probe(sys.executable, environ=env, cwd=str(tmp_path), args=["--dists-only"])
    assert err is None and doc is not None
    pk = to_snapshot_parts(doc)["packages"]
    assert pk["verl"]["requires_dist"] == ["ray[default]>=2.41.0", 'math-verify; extra == "math"']
    assert pk["verl"]["requires_python"] == ">=3.10"
    assert pk["verl"]["top_level"] == ["verl"]  # from RECORD: no top_level.txt
    assert pk["verl"]["metadata"].endswith("verl-0.9.1.dist-info/METADATA")
    assert pk["ray"]["top_level"] == ["ray"] and pk["ray"]["requires_dist"] == [] and pk["ray"]["requires_python"] is None
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", **to_snapshot_parts(doc)})
    assert snap.packages["verl"].requires_dist[0] == "ray[default]>=2.41.0"


# -- the real verl 0.9.1 wheel, installed --no-deps with real pip --------------------------------------------


def _verl_wheel() -> Path | None:
    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")  # nox -s tests puts the newest release's wheel there
    hits = sorted((Path(d) / "wheels").glob("verl-0.9.1-*.whl")) if d else []
    return hits[0] if hits else None


@pytest.mark.slow
def test_real_verl_wheel_installed_no_deps_gets_an_error_naming_verl_and_a_missing_requirement(tmp_path):
    wheel = _verl_wheel()
    if wheel is None:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--isolated", "--no-index", "--no-deps", "-q", str(wheel)],
                   check=True, timeout=600)
    # doctor found through the cwd, not PYTHONPATH: the probe inherits PYTHONPATH, and a directory of modules no
    # listed distribution describes there leaves a run-set addition the trainer imports a warning
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", str(py), "--only", "packages"],
                       capture_output=True, text=True, timeout=300, env=env, cwd=str(ROOT))
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    missing = [f for f in rep["findings"] if f["id"] == "requirement-missing" and f["evidence"]["package"] == "verl"
               and "built_on" not in f["evidence"]]
    assert missing and all(f["severity"] == "error" for f in missing)
    # what its [verl-core] run set adds: errors for what its trainer imports at load, warnings for the rest
    core = {f["evidence"]["requires"]: f["severity"] for f in rep["findings"] if f["evidence"].get("built_on")}
    assert core == {"cachetools": "error", "fastapi": "error", "uvicorn": "error", "transferqueue": "error",
                    "pyzmq": "warning", "msgspec": "warning", "mathruler": "warning", "qwen-vl-utils": "warning",
                    "torchcodec": "warning", "nvtx": "warning"}
    names = {f["evidence"]["requires"] for f in missing}
    assert {"codetiming", "hydra-core", "tensordict", "accelerate"} <= names
    assert all("verl-0.9.1.dist-info/METADATA" in f["evidence"]["metadata"] for f in missing)
    # the same verdicts through `check --from` on a collected snapshot
    snapfile = tmp_path / "snap.json"
    subprocess.run([sys.executable, "-m", "doctor", "collect", "--python", str(py), "-o", str(snapfile)],
                   check=True, timeout=300, env=env, cwd=str(ROOT), capture_output=True)
    snap = snapshot_from_dict(json.loads(snapfile.read_text()))
    ids = {(f.id, f.evidence.get("requires")) for f in diagnose([(None, snap, None)]).findings}
    assert ("requirement-missing", "codetiming") in ids
    # `doctor install`'s verification (the post-install check) fails on the same target
    from doctor.knowledge.profiles import load_profiles
    from doctor.report import Report
    from installers.findings import post_check

    profile = next(p for p in load_profiles() if p.verl == "0.9.1")
    post = post_check("/", str(py), profile, Report(command="install"))
    assert any(f.id == "requirement-missing" and f.severity.value == "error" and f.evidence["package"] == "verl"
               for f in post)


def test_every_documented_stack_gives_no_error_from_its_declared_requirements():
    """The stacks as their profiles document them (tests/stacks.py), judged by the published metadata of their
    releases: conflicts upstream itself leaves are in the profile's upstream_conflicts, and come out as info."""
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import diagnose_dict, stack_snapshot, versions_only

    infos = 0
    for p in load_profiles():
        for arch in p.arches:
            r = diagnose_dict(stack_snapshot(p, arch), forced=p.name)
            fs = [f for f in r.findings if f.check == "declared-requirements"]
            assert not [f.title for f in fs if f.severity.value != "info"], (p.name, arch)
            infos += len(fs)
            # the versions-only form (a bug report, `check --from`): each pin as a plain version, judged by what
            # PyPI publishes for it, except what the stack builds from source (vllm-ascend 0.23.0's PyPI wheel
            # pins transformers==5.5.4; the stack builds releases/v0.23.0 with transformers 5.10.4)
            for py in sorted({p.python_recommended or "3.11", "3.11"}):
                r = diagnose_dict(versions_only(p, arch, py), forced=p.name)
                bad = [f.title for f in r.findings if f.check == "declared-requirements" and f.severity.value != "info"]
                assert not bad, (p.name, arch, py, bad)
    assert infos  # the 0.6.1 and 0.9.x stacks do carry upstream conflicts


def test_a_stated_release_on_a_stated_machine_is_judged_by_that_machines_wheels():
    """The table's `machines` rows (PyPI, read 2026-12-07): torchvision 0.15.0's x86_64 wheels pin
    `torch (==2.0.0+cu117)` where its aarch64 ones name `torch`; torch 2.0.1's x86_64 wheels add the CUDA nvidia-*
    packages and `triton (==2.0.0)`, its aarch64 ones neither. Each machine's snapshot is judged by its own wheels;
    one that states no machine by the row (the aarch64 wheel read first) alone, as before."""
    tv = {"torchvision": {"version": "0.15.0"}, "torch": {"version": "2.0.1"}}
    (f,) = _declared(_snap(tv, complete=False, arch="x86_64"))
    assert (f.id, f.severity.value) == ("requirement-version-unmet", "error")
    assert f.evidence["package"] == "torchvision" and f.evidence["requires"] == "torch"
    assert "2.0.0+cu117" in f.evidence["requirement"] and f.evidence["installed"] == "2.0.1"
    assert f.source == "https://pypi.org/project/torchvision/0.15.0/#torchvision-0.15.0-cp310-cp310-manylinux1_x86_64.whl"
    assert _declared(_snap(tv, complete=False, arch="aarch64")) == []
    assert _declared(_snap(tv, complete=False, arch=None)) == []

    tt = {"torch": {"version": "2.0.1"}, "triton": {"version": "2.1.0"}}
    (g,) = _declared(_snap(tt, complete=False, python="3.11.9", arch="x86_64"))
    assert (g.id, g.evidence["package"], g.evidence["requires"]) == ("requirement-version-unmet", "torch", "triton")
    assert "triton==2.0.0" in g.title.replace(" ", "").replace("(", "").replace(")", "")
    assert g.source == "https://pypi.org/project/torch/2.0.1/#torch-2.0.1-cp311-cp311-manylinux1_x86_64.whl"
    assert _declared(_snap(tt, complete=False, python="3.11.9", arch="aarch64")) == []
    assert _declared(_snap(tt, complete=False, python="3.11.9", arch=None)) == []
    # published metadata never says "not installed": the x86_64 wheels' nvidia-* packages the report does not list
    # are not findings, while one it lists at another release is
    cudnn = {**tt, "triton": {"version": "2.0.0"}, "nvidia-cudnn-cu11": {"version": "8.9.2.26"}}
    (h,) = _declared(_snap(cudnn, complete=False, python="3.11.9", arch="x86_64"))
    assert h.evidence["requires"] == "nvidia-cudnn-cu11" and "8.5.0.96" in h.evidence["requirement"]


def test_a_package_the_profile_builds_from_source_is_judged_by_its_checkout_not_pypis_wheel():
    from doctor.knowledge.profiles import load_profiles

    p = next(p for p in load_profiles() if p.name == "verl-0.9.1-cann9.1.0-a3")
    assert {"vllm", "vllm-ascend", "mindspeed", "megatron-core"} <= p.built_from_source
    # the wheel's tags fit (cp310 aarch64, the one the table read): PyPI's metadata says transformers==5.5.4
    snap = _snap({"vllm-ascend": {"version": "0.23.0"}, "transformers": {"version": "5.10.4"}}, complete=False,
                 python="3.10.14", arch="aarch64")
    (pypi,) = _declared(snap)
    assert pypi.evidence["requires"] == "transformers" and pypi.source.startswith("https://pypi.org/")
    # the stack builds releases/v0.23.0 at 50e87d6: its requirements.txt there is what is judged (the same pin, which
    # the stack's documented transformers 5.10.4 does not meet: the profile names it upstream's own conflict, info)
    (own,) = _declared(snap, p)
    assert own.source == ("https://github.com/vllm-project/vllm-ascend/blob/50e87d630528418b54c8cfddca6c3f4f49d6563a/"
                          "requirements.txt")
    assert own.severity.value == "info" and "the files vllm-ascend 0.23.0 is built from" in own.detail
    # another release than the stack builds (0.22.x on a releases/v0.23.0 stack) came some other way: PyPI's
    assert p.builds("vllm-ascend", "0.23.0") and not p.builds("vllm-ascend", "0.22.0")
    assert p.build_commit("vllm-ascend", "0.23.0") == "50e87d630528418b54c8cfddca6c3f4f49d6563a"
    assert p.build_commit("vllm-ascend", "0.22.0") is None
    assert p.builds("megatron-core", "0.16.2") and not p.builds("transformers", "5.10.4")


@pytest.mark.parametrize(("cann", "packages", "package", "requirement", "commit"), [
    # verl v0.6.1's setup.py (the stack's git.verl) caps numpy; CANN 8.2.RC1 picks the verl 0.6.1 stack
    ("8.2.RC1", {"verl": {"version": "0.6.1"}, "numpy": {"version": "2.2.0"}}, "verl", "numpy<2.0.0",
     "https://github.com/verl-project/verl/blob/d62da4950573d7a4b7ef2362337952e7ab59e78d/setup.py"),
    # vllm-ascend v0.9.1's requirements.txt (the same stack's git.vllm-ascend) caps transformers
    ("8.2.RC1", {"vllm-ascend": {"version": "0.9.1"}, "transformers": {"version": "4.54.0"}}, "vllm-ascend",
     "transformers<4.53.0",
     "https://github.com/vllm-project/vllm-ascend/blob/0740d10211fcdcaa00d29e8659d7de892f5ed4d8/requirements.txt"),
])
def test_a_stacks_source_build_stated_only_by_version_is_judged_by_its_checkout(cann, packages, package, requirement,
                                                                               commit):
    """A report that states the stack's own versions and an Ascend fact: the stack builds that release from git, and
    what the checkout declares at the pinned commit still holds (before, such a build was not judged at all)."""
    d = {"schema": "doctor.snapshot/1", "packages": packages, "ascend": {"toolkit": {"version": cann}}}
    report = diagnose([(None, snapshot_from_dict(d), None)])
    got = [f for f in report.findings if f.id == "requirement-version-unmet"]
    assert [(f.severity.value, f.evidence["package"], f.evidence["requirement"], f.source) for f in got] == [
        ("error", package, requirement, commit)]


def test_a_platform_wheels_metadata_applies_only_to_the_python_and_machine_its_tags_name():
    from doctor.checks.declared import published
    from doctor.knowledge.requirements import declared

    d = declared("vllm-ascend", "0.23.0")
    # no pure wheel: the refresh reads a Linux aarch64 CPython 3.10 one (tools/refresh_knowledge/pypi.py), and its
    # Linux siblings for 3.9-3.12: all six of 0.23.0's (cp310-cp312, aarch64 and x86_64) declare the same
    assert d is not None and d.wheel == "vllm_ascend-0.23.0-cp310-cp310-manylinux_2_34_aarch64.whl"
    assert "vllm_ascend-0.23.0-cp311-cp311-manylinux_2_34_x86_64.whl" in d.wheels
    assert d.fits("3.10.14", "aarch64") and d.fits("3.11.9", "x86_64") and d.fits("3.12.3", "aarch64")
    assert not d.fits("3.9.18", "aarch64") and not d.fits("3.9.18", None)  # a stated Python no wheel is for
    assert not d.fits("3.11.9", "ppc64le") and not d.fits(None, "ppc64le")
    # a fact the snapshot does not state rules no wheel out (issue 22 fresh set: bug reports give versions only)
    assert d.fits(None, "aarch64") and d.fits("3.10.14", None) and d.fits(None, None)
    assert published("vllm-ascend", "0.23.0", "3.9.18", "aarch64") is None  # no cp39 wheel: nothing claimed
    assert published("verl", "0.9.1") is not None  # a pure wheel (py3-none-any) fits every target
    # the trial's report: py3.11 x86_64, vllm-ascend 0.23.0 and transformers 5.10.4, no profile: PyPI's cp311 x86_64
    # wheel (the one that target installs) pins transformers==5.5.4, and the finding cites that file
    snap = _snap({"vllm-ascend": {"version": "0.23.0"}, "transformers": {"version": "5.10.4"}}, complete=False,
                 python="3.11.9", arch="x86_64")
    (f,) = _declared(snap)
    assert f.evidence["requires"] == "transformers" and "==5.5.4" in f.title
    assert f.source == ("https://pypi.org/project/vllm-ascend/0.23.0/"
                        "#vllm_ascend-0.23.0-cp311-cp311-manylinux_2_34_x86_64.whl")


def test_an_extra_named_for_an_installed_package_is_judged_in_use():
    # mbridge declares megatron-core>=0.12.0 under its `megatron` extra (its wheel METADATA on PyPI); a report that
    # states mbridge and an older megatron-core breaks that range although nobody asked for mbridge[megatron]
    snap = _snap({"mbridge": {"version": "0.13.0"}, "megatron-core": {"version": "0.11.0"}}, complete=False)
    (f,) = _declared(snap)
    assert f.id == "requirement-version-unmet" and f.severity.value == "error"  # mbridge is on verl's import path
    assert f.components == ("megatron", "mbridge") and "its [megatron] extra" in f.title
    assert f.evidence["extra_inferred"] is True
    # elsewhere a warning: a library whose `torch` extra asks for a newer torch than the one installed
    lib = _snap({"somelib": {"version": "1.0", "requires_dist": ['torch>=2.6; extra == "torch"']},
                 "torch": {"version": "2.5.1", "requires_dist": []}}, complete=False)
    assert [(g.severity.value, g.evidence["requires"]) for g in _declared(lib)] == [("warning", "torch")]
    ok = _snap({"mbridge": {"version": "0.13.0"}, "megatron-core": {"version": "0.12.1"}}, complete=False)
    assert _declared(ok) == []
    # only an integration between the stack's components: the real verl 0.9.1 install (tests/realworld) has
    # huggingface-hub 1.33.0, whose `[mcp]` extra asks mcp<2.0.0,>=1.9.4, and mcp 2.3.0 that vLLM brought in
    hub = _snap({"huggingface-hub": {"version": "1.33.0", "requires_dist": ['mcp<2.0.0,>=1.9.4; extra == "mcp"']},
                 "mcp": {"version": "2.3.0", "requires_dist": []}}, complete=False)
    assert _declared(hub) == []


def test_verls_vllm_extra_is_judged_off_ascend_but_not_beside_vllm_ascend():
    # verl 0.5.0 declares vllm<=0.8.5,>=0.7.3 under its `vllm` extra (its PyPI wheel); a report of verl 0.5 with
    # vllm 0.11 on a CUDA host breaks it. On Ascend vLLM is vllm-ascend's source build, paired by its own guide.
    off = _snap({"verl": {"version": "0.5"}, "vllm": {"version": "0.11"}}, complete=False)
    (f,) = _declared(off)
    assert f.id == "requirement-version-unmet" and set(f.components) == {"verl", "vllm"}, (f.id, f.components)
    assert "[vllm] extra" in f.title
    on = _snap({"verl": {"version": "0.5"}, "vllm": {"version": "0.11"}, "vllm-ascend": {"version": "0.11.0rc0"}},
               complete=False)
    assert [g for g in _declared(on) if g.evidence.get("requires") == "vllm"] == []


def test_mindspeed_from_git_is_judged_by_what_it_declares_at_that_commit():
    # MindSpeed is installed from git: its requirements.txt at the pinned commit (profiles/requirements-git.toml)
    snap = snapshot_from_dict({
        "schema": "doctor.snapshot/1", "python": {"version": "3.11.9"},
        "packages": {"mindspeed": {"version": "0.12.1"}, "numpy": {"version": "1.26.4"}},
        "modules": {"mindspeed": {"origins": ["/MindSpeed/mindspeed"],
                                  "git": {"commit": "f2b0977ec85f0ce3906e34df1e1aafed7b22cafd"}}}})
    (f,) = _declared(snap)
    assert f.id == "requirement-version-unmet" and f.severity.value == "error" and f.components == ("numpy", "mindspeed")
    assert f.source == "https://github.com/Ascend/MindSpeed/blob/f2b0977ec85f0ce3906e34df1e1aafed7b22cafd/requirements.txt"
    # an unknown commit: MindSpeed is not on PyPI, so nothing is said
    snap.modules["mindspeed"].git.commit = "0" * 40
    assert _declared(snap) == []


def test_the_git_requirements_table_is_validated(tmp_path):
    from doctor.errors import InputError
    from doctor.knowledge.requirements_git import load

    bad = tmp_path / "requirements-git.toml"
    bad.write_text('schema = "doctor.requirements-git/1"\nread = "2026-12-03"\n[[release]]\nproject = "mindspeed"\n'
                   'commit = "abc"\nref = "master"\nversion = "0.12.1"\nrequires_dist = []\nread_from = "x"\n'
                   'source = "https://github.com/Ascend/MindSpeed/blob/abc/requirements.txt"\n')
    with pytest.raises(InputError) as e:
        load(str(bad))
    assert "release[0].commit" in str(e.value)
    table = load()
    assert {r.project for r in table.releases} == {"mindspeed", "megatron-core", "vllm-ascend", "verl"}
    assert table.read == "2026-12-06"


def test_fix_lines_never_undo_an_upstream_conflict_nor_install_another_build_of_a_pinned_package():
    """An upstream conflict's fix is to keep the stack as documented (no command); a requirement on a package
    the verified stack pins is fixed with the command its install plan runs (on x86 PyPI's bare `torch` range
    is the CUDA build), never `pip install '<requirement>'`."""
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    p = next(p for p in load_profiles() if p.name == "verl-0.9.1-cann9.1.0-a2")
    conflict = {"package": "vllm-ascend", "requirement": "torch-npu==2.7.1", "source": "https://example.invalid/x"}

    class P:
        name = p.name
        upstream_conflicts = (conflict,)

    # (2.7.1.post3: a build vllm-ascend's own docs do not name for 0.11.0, unlike its matrix's 2.7.1.post1)
    snap = _snap({"vllm-ascend": {"version": "0.11.0", "requires_dist": ["torch-npu==2.7.1"]},
                  "torch-npu": {"version": "2.7.1.post3", "requires_dist": []}})
    (f,) = _declared(snap, P())
    assert f.fix.commands == () and "Nothing to change" in f.fix.text

    doc = stack_snapshot(p, "x86_64")
    torch = doc["packages"]["torch"]["version"]
    doc["packages"]["helper-lib"] = {"version": "1.0", "requires_dist": ["torch>=99"]}
    (g,) = [x for x in _declared(snapshot_from_dict(doc), p) if x.evidence.get("package") == "helper-lib"]
    assert g.evidence["installed"] == torch
    (cmd,) = g.fix.commands
    assert cmd != "pip install 'torch>=99'"
    assert cmd.startswith("doctor install --profile") or "download.pytorch.org/whl/cpu" in cmd, cmd


def test_a_2023_stack_in_a_report_is_judged_by_what_those_releases_published():
    """Bug reports on Ascend trackers state 2023 stacks and packages beyond the core projects: the table keeps
    releases since 2023-01-01 of the ecosystem the stacks declare (torchvision, tokenizers, datasets, xformers,
    ...), read from a Linux wheel of the stacks' Pythons when there is no pure one; `check --from` on a
    versions-only report names the release whose published metadata is broken."""
    report = {"schema": "doctor.snapshot/1", "python": {"version": "3.10.12", "implementation": "CPython"},
              "host": {"arch": "aarch64"},
              "packages": {"torch": {"version": "2.0.1"}, "torchvision": {"version": "0.16.0"},
                           "transformers": {"version": "4.36.0"}, "tokenizers": {"version": "0.13.3"},
                           "datasets": {"version": "2.16.0"}, "dill": {"version": "0.3.8"},
                           "numpy": {"version": "1.26.2"}, "torch-npu": {"version": "2.1.0.post3"}}}
    fs = _declared(snapshot_from_dict(report))
    got = {(f.evidence["package"], f.evidence["requires"], f.severity.value) for f in fs}
    # torch-npu 2.1.0.post3's torch==2.1.0 pin is left to the torch-npu check (torch-npu-torch-mismatch)
    assert got == {("torchvision", "torch", "error"), ("transformers", "tokenizers", "error"),
                   ("datasets", "dill", "warning")}, got
    tv = next(f for f in fs if f.evidence["package"] == "torchvision")
    assert tv.title == "torchvision 0.16.0 requires torch==2.1.0, but torch 2.0.1 is installed"
    assert tv.source == ("https://pypi.org/project/torchvision/0.16.0/"
                         "#torchvision-0.16.0-cp310-cp310-manylinux2014_aarch64.whl")
    assert "published metadata of torchvision 0.16.0" in tv.detail
    tok = next(f for f in fs if f.evidence["package"] == "transformers")
    assert tok.source.startswith("https://pypi.org/project/transformers/4.36.0/") and "<0.19,>=0.14" in tok.title
    # the same report through the CLI: exit 1, the findings in the JSON report
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "report.json"
        f.write_text(json.dumps(report))
        r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(f)], cwd=ROOT,
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert r.returncode == 1, r.stderr
    cli = {(x["evidence"]["package"], x["evidence"]["requires"]) for x in json.loads(r.stdout)["findings"]
           if x["check"] == "declared-requirements"}
    assert {("torchvision", "torch"), ("transformers", "tokenizers"), ("datasets", "dill")} <= cli
    # a wheel for x86_64 only (xformers 0.0.23 has no aarch64 wheel): judged on x86_64, silent on aarch64
    x86 = {**report, "host": {"arch": "x86_64"}, "packages": {"torch": {"version": "2.1.0"}, "xformers": {"version": "0.0.23"}}}
    (x,) = _declared(snapshot_from_dict(x86))
    assert (x.evidence["package"], x.evidence["requires"]) == ("xformers", "torch") and "==2.1.1" in x.title
    assert _declared(snapshot_from_dict({**x86, "host": {"arch": "aarch64"}})) == []


def test_a_report_that_states_versions_but_not_its_python_or_machine_is_judged_by_the_published_wheels():
    """tensordict 0.6.2 ships only platform wheels (cp39-cp312 x86_64): a report stating tensordict 0.6.2 and torch
    2.4.0+cu124, but no interpreter or machine (verl issue 62), used to get nothing; the wheels declare
    torch>=2.5.0 whatever the target, so it is a finding, which says the target was not stated."""
    snap = _snap({"tensordict": {"version": "0.6.2"}, "torch": {"version": "2.4.0+cu124"}}, complete=False,
                 python=None, arch=None)
    (f,) = _declared(snap)
    assert f.id == "requirement-version-unmet" and f.severity.value == "error"
    assert f.components[:2] == ("torch", "python") and "torch>=2.5.0" in f.title
    assert f.evidence["target"] == "not stated (Python version and machine)"
    assert "does not state its Python version and machine" in f.detail
    assert f.source.startswith("https://pypi.org/project/tensordict/0.6.2/#tensordict-0.6.2-")
    # a stated machine no wheel is for still fits nothing: tensordict 0.6.2 has no aarch64 wheel
    assert _declared(_snap({"tensordict": {"version": "0.6.2"}, "torch": {"version": "2.4.0"}}, complete=False,
                           python=None, arch="aarch64")) == []
    # stated in full: no note
    (g,) = _declared(_snap({"tensordict": {"version": "0.6.2"}, "torch": {"version": "2.4.0"}}, complete=False,
                           python="3.10.12", arch="x86_64"))
    assert "target" not in g.evidence and "does not state" not in g.detail


def test_vllm_is_judged_by_its_published_metadata_off_ascend_and_only_by_requires_python_on_ascend():
    """vllm 0.6.3 declares torch==2.4.0. Off Ascend (verl issue 1084: torch 2.6.0 beside vllm 0.6.3) that is PyPI's
    build and an error; beside vllm-ascend or torch-npu the vllm-ascend install guide replaces vLLM's torch on
    purpose, so only vLLM's Requires-Python is judged there."""
    pkgs = {"vllm": {"version": "0.6.3"}, "torch": {"version": "2.6.0"}}
    (f,) = _declared(_snap(pkgs, complete=False, python="3.10", arch=None))
    assert f.id == "requirement-version-unmet" and f.severity.value == "error"
    assert f.components[:2] == ("torch", "vllm") and "vllm 0.6.3 requires torch==2.4.0" in f.title
    assert f.source.startswith("https://pypi.org/project/vllm/0.6.3/")
    for ascend in ({"vllm-ascend": {"version": "0.7.1rc1"}}, {"torch-npu": {"version": "2.5.1"}}):
        assert not [x for x in _declared(_snap({**pkgs, **ascend}, complete=False, python="3.10", arch=None))
                    if x.evidence["package"] == "vllm"]
    # Requires-Python still holds on Ascend (vllm 0.9.1: <3.13,>=3.9; its cp38-abi3 wheel installs on 3.13)
    on_npu = _declared(_snap({"vllm": {"version": "0.9.1"}, "torch": {"version": "2.5.1"},
                              "torch-npu": {"version": "2.5.1.post1"}}, complete=False, python="3.13.1", arch="x86_64"))
    assert [(x.id, x.evidence["package"]) for x in on_npu if x.evidence["package"] == "vllm"] == [
        ("requires-python-unmet", "vllm")]


def test_vllm_on_ascend_is_judged_by_what_its_empty_target_build_installs():
    """vllm-ascend's guide builds vLLM from source with VLLM_TARGET_DEVICE=empty; its setup.py then installs
    requirements/common.txt (vLLM 0.10.0: transformers >= 4.53.2), which a report stating vllm 0.10.0 beside
    vllm-ascend 0.10.0rc1 and transformers 4.40.0 breaks. Before the table held those declarations, nothing was said."""
    pkgs = {"vllm": {"version": "0.10.0"}, "vllm-ascend": {"version": "0.10.0rc1"},
            "transformers": {"version": "4.40.0"}}
    (f,) = [x for x in _declared(_snap(pkgs, complete=False, python=None, arch=None))
            if x.evidence["package"] == "vllm"]
    assert f.id == "requirement-version-unmet" and f.severity.value == "error"  # vLLM is on verl's import path
    assert "vllm 0.10.0 requires transformers>=4.53.2, but transformers 4.40.0 is installed" in f.title
    assert f.source == "https://github.com/vllm-project/vllm/blob/v0.10.0/requirements/common.txt"
    assert ("Declared in requirements/common.txt, the requirements file vLLM 0.10.0's sdist installs when built with "
            "VLLM_TARGET_DEVICE=empty") in f.detail and f.source in f.detail
    # the empty build's own version label (0.11.0+empty: transformers >= 4.55.2), on a host with only an NPU fact
    on_npu = _snap({"vllm": {"version": "0.11.0+empty"}, "torch-npu": {"version": "2.7.1"},
                    "transformers": {"version": "4.51.3"}}, complete=False, python="3.11.9", arch="aarch64")
    (g,) = [x for x in _declared(on_npu) if x.evidence["package"] == "vllm"]
    assert "vllm 0.11.0+empty requires transformers>=4.55.2" in g.title and "v0.11.0/requirements/common.txt" in g.source
    # its Requires-Python too (vLLM 0.11.0's pyproject.toml: >=3.9,<3.14)
    old_py = _snap({"vllm": {"version": "0.11.0+empty"}, "vllm-ascend": {"version": "0.11.0rc1"}}, complete=False,
                   python="3.14.0", arch=None)
    assert [(x.id, x.source) for x in _declared(old_py) if x.evidence["package"] == "vllm"] == [
        ("requires-python-unmet", "https://github.com/vllm-project/vllm/blob/v0.11.0/requirements/common.txt")]
    # another build's label, and a release the table does not hold, still say nothing of vLLM's requirements
    for other in ("0.10.0+cpu", "0.10.3"):
        assert not [x for x in _declared(_snap({**pkgs, "vllm": {"version": other}}, complete=False, python=None,
                                               arch=None)) if x.evidence["package"] == "vllm"]


def test_a_range_the_paired_vllm_ascend_release_rules_out_is_upstreams_own_conflict():
    """vllm-ascend 0.18.0 declares opencv-python-headless<=4.11.0.86 and its matrix pairs it with vLLM 0.18.0, whose
    requirements/common.txt says >=4.13.0: no opencv meets both, so the documented pair carries vLLM's unmet range as
    info (naming both files). Beside a vllm-ascend release not paired with that vLLM, or with an opencv that meets
    neither, it is an error."""
    pair = {"vllm": {"version": "0.18.0+empty"}, "vllm-ascend": {"version": "0.18.0"},
            "opencv-python-headless": {"version": "4.11.0.86"}}
    (f,) = [x for x in _declared(_snap(pair, complete=False)) if x.evidence["package"] == "vllm"]
    assert f.severity.value == "info" and "opencv-python-headless>=4.13.0" in f.title
    assert "vllm-ascend 0.18.0, which its release matrix pairs with this vLLM release" in f.detail
    assert f.source.startswith("https://github.com/vllm-project/vllm/blob/v0.18.0/requirements/common.txt; ")
    assert "vllm-ascend/tree/v0.18.0" in f.source and f.fix.text.startswith("Nothing to change") and not f.fix.commands
    unpaired = {**pair, "vllm": {"version": "0.19.1"}}
    assert [x.severity.value for x in _declared(_snap(unpaired, complete=False))
            if x.evidence["package"] == "vllm"] == ["error"]
    neither = {**pair, "opencv-python-headless": {"version": "4.12.0.88"}}
    assert sorted((x.evidence["package"], x.severity.value) for x in _declared(_snap(neither, complete=False))) == [
        ("vllm", "error"), ("vllm-ascend", "error")]


def test_vllm_off_ascend_keeps_pypis_wheel_metadata_not_the_empty_target():
    """Off Ascend (no vllm-ascend, no NPU fact) vLLM 0.10.0 is PyPI's CUDA wheel: its published Requires-Dist judges
    it (torch==2.7.1), not common.txt; a `+empty` build there is no PyPI release and stays unjudged as before."""
    pkgs = {"vllm": {"version": "0.10.0"}, "transformers": {"version": "4.40.0"}, "torch": {"version": "2.6.0"}}
    got = [x for x in _declared(_snap(pkgs, complete=False, python="3.11.9", arch="x86_64"))
           if x.evidence["package"] == "vllm"]
    assert got and all(x.source.startswith("https://pypi.org/project/vllm/0.10.0/") for x in got)
    assert any(x.evidence["requires"] == "torch" for x in got)
    empty = {**pkgs, "vllm": {"version": "0.10.0+empty"}}
    assert not [x for x in _declared(_snap(empty, complete=False, python="3.11.9", arch="x86_64"))
                if x.evidence["package"] == "vllm"]


def _files(snap: Any, profile: Any = None) -> list[Any]:
    from doctor.checks.declared import published_files
    from doctor.checks.runner import CheckContext, Skipped

    try:
        return list(published_files(CheckContext(snapshot=snap, profile=profile)))
    except Skipped:
        return []


def test_a_stated_release_without_a_wheel_for_the_python_and_no_sdist_cannot_be_installed():
    # torch 2.1.0 publishes cp38-cp311 wheels and no sdist (PyPI, read 2026-12-03): on Python 3.12 pip finds nothing
    (f,) = _files(_snap({"torch": {"version": "2.1.0"}}, complete=False, python="3.12.3", arch="x86_64"))
    assert f.id == "release-has-no-wheel-for-target" and f.severity.value == "error"
    assert f.components == ("torch", "python") and f.source == "https://pypi.org/project/torch/2.1.0/"
    assert "publishes no wheel for Python 3.12 on x86_64 and no sdist: pip cannot install it" in f.title
    assert "cp38–cp311" in f.detail and "torch 2.2.0" in f.fix.text and f.evidence["nearest"] == "2.2.0"
    # on a Python it publishes wheels for: nothing
    assert not _files(_snap({"torch": {"version": "2.1.0"}}, complete=False, python="3.11.7", arch="x86_64"))


def test_an_aarch64_target_of_a_release_with_x86_64_wheels_only_is_a_system_error():
    # ray 2.11.0 publishes x86_64 wheels only (cp39-cp311), no sdist
    (f,) = _files(_snap({"ray": {"version": "2.11.0"}}, complete=False, python="3.11.7", arch="aarch64"))
    assert f.severity.value == "error" and f.components == ("ray", "system")
    assert "aarch64" in f.title and f.evidence["nearest"]
    # vllm 0.4.0 (x86_64 wheels only, no sdist) off Ascend; on an Ascend host vLLM is built from source: silent
    (f,) = _files(_snap({"vllm": {"version": "0.4.0"}}, complete=False, python="3.10.12", arch="aarch64"))
    assert f.components == ("vllm", "system") and f.severity.value == "error"
    assert not _files(_snap({"vllm": {"version": "0.4.0"}, "vllm-ascend": {"version": "0.9.1"}}, complete=False,
                            python="3.10.12", arch="aarch64"))


def test_a_package_without_a_component_of_its_own_is_named_once_as_python():
    # tensordict 0.6.0: cp39-cp312 x86_64 wheels, no sdist; its component is "python" (ownership table)
    (f,) = _files(_snap({"tensordict": {"version": "0.6.0"}}, complete=False, python="3.13.1", arch="x86_64"))
    assert f.severity.value == "error" and f.components == ("python",)
    (f,) = _files(_snap({"tensordict": {"version": "0.6.0"}}, complete=False, python="3.11.7", arch="aarch64"))
    assert f.components == ("python", "system")


def test_torch_npu_on_a_python_it_has_no_wheel_for():
    # torch-npu 2.1.0: cp38-cp310 wheels, no sdist
    (f,) = _files(_snap({"torch-npu": {"version": "2.1.0"}}, complete=False, python="3.11.7", arch="aarch64"))
    assert f.severity.value == "error" and f.components == ("torch-npu", "python")
    assert f.evidence["nearest"] and f.evidence["nearest"] in f.fix.text


def test_only_an_sdist_of_a_compiled_project_is_a_warning_that_pip_builds_it():
    # vllm 0.3.0: cp38-cp311 x86_64 wheels and an sdist; on Python 3.12 pip builds the CUDA extension from source
    fs = _files(_snap({"vllm": {"version": "0.3.0"}}, complete=False, python="3.12.3", arch="x86_64"))
    (f,) = [x for x in fs if x.id == "release-has-no-wheel-for-target"]
    assert f.severity.value == "warning" and "pip builds it from source" in f.title
    assert f.source == "https://pypi.org/project/vllm/0.3.0/" and "sdist" in f.evidence["published"]
    # a pure-Python project's sdist is no build problem (tests below: what such a release pins still counts)
    assert not _files(_snap({"verl": {"version": "0.9.1"}}, complete=False, python="3.12.3", arch="x86_64"))


def test_a_release_that_pins_a_release_with_no_wheel_for_the_target_cannot_be_installed(tmp_path):
    """vllm 0.3.0 declares torch==2.1.2 (its wheel's METADATA on PyPI); torch 2.1.2 publishes cp38-cp311 wheels and
    no sdist. On Python 3.12 pip could build vLLM's sdist, but it must install exactly torch 2.1.2 with it and finds
    nothing: the install fails (vllm issue 2695). An error naming the pin, the pinned release's page and a fix."""
    snap = _snap({"vllm": {"version": "0.3.0"}}, complete=False, python="3.12.3", arch=None)
    (f,) = [x for x in _files(snap) if x.id == "release-pin-has-no-wheel-for-target"]
    assert f.severity.value == "error" and f.components == ("vllm", "python", "torch")
    assert f.title == ("vllm 0.3.0 pins torch==2.1.2, which publishes no wheel for Python 3.12 and no sdist: pip "
                       "cannot install vllm 0.3.0")
    assert f.source == "https://pypi.org/project/torch/2.1.2/" and f.evidence["pinned"] == "2.1.2"
    # the nearest vLLM with a cp312 wheel whose own pin (torch==2.3.1) has one too
    assert "cp38–cp311" in f.detail and f.fix.text.startswith("Install vllm 0.5.2, the nearest release")
    # on a Python torch 2.1.2 has wheels for: nothing about the pin (vllm 0.3.0 has its own cp311 wheel too)
    assert not _files(_snap({"vllm": {"version": "0.3.0"}}, complete=False, python="3.11.7", arch="x86_64"))
    # a range (not an exact pin) is not judged: a release the table does not hold may meet it
    assert not [x for x in _files(_snap({"verl": {"version": "0.9.1"}}, complete=False, python="3.13.1", arch=None))
                if x.id == "release-pin-has-no-wheel-for-target"]
    # what the user sees: `doctor check --from` on the report exits 1 and names the pin
    f = tmp_path / "report.json"
    f.write_text(json.dumps({"schema": "doctor.snapshot/1", "python": {"version": "3.12"},
                             "packages": {"vllm": {"version": "0.3.0"}}}))
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(f)], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert r.returncode == 1, r.stderr
    got = [x for x in json.loads(r.stdout)["findings"] if x["id"] == "release-pin-has-no-wheel-for-target"]
    assert [(x["severity"], x["evidence"]["requires"]) for x in got] == [("error", "torch")]


def test_a_stated_machine_without_its_python_is_judged_for_every_python(tmp_path):
    """A report that names the machine but not the interpreter (ray issues 45045, 46104: `pip install ray==2.12.0`
    on Linux aarch64): no Python rules a wheel out, but a release with no wheel for that machine and no sdist cannot
    be installed with any of them. Ray's weekly releases publish x86_64 wheels only; 2.20.0 has aarch64 ones."""
    (f,) = _files(_snap({"ray": {"version": "2.12.0"}}, complete=False, python=None, arch="aarch64"))
    assert f.id == "release-has-no-wheel-for-target" and f.severity.value == "error"
    assert f.components == ("ray", "system") and f.evidence["python"] is None
    assert f.title == "ray 2.12.0 publishes no wheel for Linux aarch64 (any Python) and no sdist: pip cannot install it"
    assert f.evidence["nearest"] == "2.20.0" and "ray 2.20.0" in f.fix.text
    assert not _files(_snap({"ray": {"version": "2.20.0"}}, complete=False, python=None, arch="aarch64"))
    assert not _files(_snap({"ray": {"version": "2.12.0"}}, complete=False, python=None, arch="x86_64"))
    assert not _files(_snap({"ray": {"version": "2.12.0"}}, complete=False, python=None, arch=None))
    f = tmp_path / "report.json"
    f.write_text(json.dumps({"schema": "doctor.snapshot/1", "host": {"arch": "aarch64"},
                             "packages": {"ray": {"version": "2.24.0"}}}))
    r = subprocess.run([sys.executable, "-m", "doctor", "check", "--from", str(f)], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert r.returncode == 1 and "ray 2.24.0 publishes no wheel for Linux aarch64 (any Python)" in r.stdout + r.stderr


def test_the_profiles_source_builds_are_exempt_only_on_an_ascend_host():
    """The verified stacks build verl (and vLLM, vllm-ascend, MindSpeed) from git, so on their hosts PyPI's wheel is
    not what is installed. A report with no Ascend fact (verl issue 5586: verl 0.7.0 with vLLM 0.16.0) still gets the
    Ascend profile of its verl release as the closest stack, but nothing says it was installed that way: it is judged
    by what verl 0.7.0 publishes (`vllm<=0.12.0,>=0.8.5` under its `vllm` extra)."""
    from doctor.knowledge.profiles import load_profiles

    p = next(p for p in load_profiles() if p.name == "verl-0.7.0-cann8.3.rc1-a3")
    assert p.builds("verl", "0.7.0")
    off = _snap({"verl": {"version": "0.7.0"}, "vllm": {"version": "0.16.0"}}, complete=False, python=None, arch=None)
    (f,) = _declared(off, p)
    assert f.severity.value == "error" and set(f.components) == {"verl", "vllm"} and "<=0.12.0" in f.title
    on = _snap({"verl": {"version": "0.7.0"}, "vllm": {"version": "0.16.0"}, "torch-npu": {"version": "2.7.1"}},
               complete=False, python=None, arch=None)
    assert [g for g in _declared(on, p) if g.evidence.get("package") == "verl"] == []
    r = diagnose_report({"schema": "doctor.snapshot/1", "packages": {"verl": {"version": "0.7.0"},
                                                                   "vllm": {"version": "0.16.0"}}})
    assert [(x.id, x.severity.value) for x in r.findings if x.check == "declared-requirements"] == [
        ("requirement-version-unmet", "error")]


def diagnose_report(doc: dict[str, Any]) -> Any:
    """`doctor check --from` on a report: the profile is chosen as the CLI chooses it."""
    return diagnose([(None, snapshot_from_dict(doc), None)])


def test_installed_packages_of_a_live_snapshot_and_unknown_pythons_are_not_judged():
    # METADATA read (a live snapshot): it IS installed, whatever PyPI publishes
    live = {"torch": {"version": "2.1.0", "requires_dist": [], "requires_python": ">=3.8"}}
    assert not _files(_snap(live, python="3.12.3", arch="x86_64"))
    # no Python stated: judged for the machine only (torch 2.1.0 has x86_64 wheels); a local build is not PyPI's
    assert not _files(_snap({"torch": {"version": "2.1.0"}}, complete=False, python=None, arch="x86_64"))
    assert not _files(_snap({"torch": {"version": "2.1.0+cpu"}}, complete=False, python="3.12.3", arch="x86_64"))


def test_a_package_named_only_under_extras_that_all_exclude_it_is_unmet():
    """Ray 2.8.0 names pydantic only in its [air], [all], [default], [serve] extras, each `pydantic<2` (PyPI's
    metadata): with pydantic 2.5 installed and nothing else requiring it, the pair is out of range whichever
    extra brought it. Real packages (tests/realworld/test_pip_check_blind_spots.py): pip check passes and
    `ray start --head` fails in Ray's pydantic shim."""
    snap = _snap({"ray": {"version": "2.8.0"}, "pydantic": {"version": "2.5.0"}}, complete=False)
    (f,) = [f for f in _declared(snap) if f.evidence.get("requires") == "pydantic"]
    assert (f.id, f.severity.value) == ("requirement-version-unmet", "error")
    assert "ray 2.8.0 requires pydantic<2 (in every extra that names it: [air], [all]" in f.title
    assert f.evidence["extra_inferred"] is True
    # and it does not say pip check agrees: pip check reads only the requirements outside extras (real, a venv with
    # verl 0.7.1 and transformers 5.10.4 beside kernels 0.19.1: pip check names only verl's numpy, while
    # transformers' kernels<0.13 of its extras is what breaks `import verl.trainer.main_ppo`)
    assert "pip check reports the same conflict" not in f.detail and "pip check does not report it" in f.detail
    base = _snap({"verl": {"version": "0.7.1", "requires_dist": ["numpy<2.0.0"]},
                  "numpy": {"version": "2.2.6", "requires_dist": []}}, complete=False)
    (g,) = [g for g in _declared(base) if g.evidence.get("requires") == "numpy"]
    assert "pip check reports the same conflict" in g.detail
    ok = _snap({"ray": {"version": "2.8.0"}, "pydantic": {"version": "1.10.13"}}, complete=False)
    assert not [f for f in _declared(ok) if f.evidence.get("requires") == "pydantic"]
    # another installed package requires pydantic itself: it may be there for that one, not for Ray's extras
    other = _snap({"ray": {"version": "2.8.0"}, "pydantic": {"version": "2.5.0"},
                   "fastapi": {"version": "0.110.0", "requires_dist": ["pydantic>=1.7.4"]}}, complete=False)
    assert not [f for f in _declared(other) if f.evidence.get("requires") == "pydantic"]


def test_an_extra_named_for_a_plain_python_dependency_still_counts_for_the_only_extras_rule():
    """transformers 4.47.0 names accelerate only under extras, one of them named for it ([accelerate]), each
    `accelerate>=0.26.0` (https://pypi.org/project/transformers/4.47.0/). The named-extra rule judges stack
    components only, so the only-extras rule judges accelerate. Real packages (a plain venv, Python 3.11):
    transformers 4.47.0 + accelerate 0.25.0 + torch 2.13.0 passes pip check, and Trainer(...).train() raises
    "Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`"."""
    lines = [f"accelerate>=0.26.0; extra == '{e}'" for e in ("accelerate", "agents", "all", "deepspeed", "torch")]
    lines += ["accelerate>=0.26.0; extra == 'dev'", "numpy>=1.17"]
    snap = _snap({"transformers": {"version": "4.47.0", "requires_dist": lines},
                  "accelerate": {"version": "0.25.0", "requires_dist": []},
                  "numpy": {"version": "1.26.4", "requires_dist": []}}, complete=False)
    (f,) = [f for f in _declared(snap) if f.evidence.get("requires") == "accelerate"]
    assert (f.id, f.severity.value) == ("requirement-version-unmet", "error")
    assert "[accelerate], [agents], [all], [deepspeed], [torch]" in f.title
    ok = _snap({"transformers": {"version": "4.47.0", "requires_dist": lines},
                "accelerate": {"version": "1.2.1", "requires_dist": []},
                "numpy": {"version": "1.26.4", "requires_dist": []}}, complete=False)
    assert not [f for f in _declared(ok) if f.evidence.get("requires") == "accelerate"]


def test_an_exact_pin_in_extras_chooses_a_build_and_is_not_judged():
    snap = _snap({"x": {"version": "1.0", "requires_dist": ["torchvision==0.26.0; extra == 'cuda'"]},
                  "torchvision": {"version": "0.25.0", "requires_dist": []}}, complete=False)
    assert not _declared(snap)


def test_a_profile_chosen_without_any_ascend_fact_does_not_excuse_its_upstream_conflicts():
    """Seen on a real target: a plain CPU venv (Python 3.11.7, verl 0.9.1 from PyPI, numpy 1.26.4 forced in
    `--no-deps`, torch 2.13.0+cpu), its `pip freeze` read with `check --from-report`. No CANN, chip, device,
    torch-npu or vllm-ascend is stated, yet the verl version picks the 0.9.1 Ascend stack, whose upstream_conflicts
    names verl's `numpy>=2.0.0` (the Ascend guide pins numpy below 2): the report got info "Nothing to change" where
    the live check of the same venv says error. Like vLLM's torch pin, upstream's Ascend deviations excuse a
    conflict only where something says the stack is Ascend's."""
    from tests.stacks import diagnose_dict

    pkgs = {"verl": {"version": "0.9.1"}, "numpy": {"version": "1.26.4"}, "torch": {"version": "2.13.0+cpu"},
            "transformers": {"version": "5.10.4"}, "tensordict": {"version": "0.10.0"}}
    doc = {"schema": "doctor.snapshot/1", "python": {"version": "3.11.7", "implementation": "CPython"},
           "packages": pkgs}

    def verl_numpy(d: dict[str, Any]) -> str:
        r = diagnose_dict(d, forced="verl-0.9.1-cann9.1.0-a3")
        (f,) = [f for f in r.findings if f.check == "declared-requirements" and f.evidence.get("package") == "verl"
                and f.evidence.get("requires") == "numpy"]
        return f.severity.value

    assert verl_numpy(doc) == "error"
    # the same versions beside torch-npu: the Ascend stack as its guide installs it, upstream's own conflict
    doc["packages"] = {**pkgs, "torch-npu": {"version": "2.10.0"}}
    assert verl_numpy(doc) == "info"


def test_a_copy_outside_the_environment_that_hides_its_own_is_named_and_pip_is_not_the_fix():
    """Seen on a real target: a venv with verl 0.9.1 and transformers 5.10.4, run with PYTHONPATH naming a
    `pip install --target` directory holding transformers 4.57.1 (a shared library directory). Python imports
    4.57.1, so the conflict is real; but the fix line `<venv python> -m pip install 'transformers>=5.5.3,...'`
    changes nothing: pip says "Not uninstalling transformers at DIR, outside environment", reinstalls 5.10.4 into
    site-packages, and the import still finds 4.57.1 first. The finding names the copy and where it is, and the fix
    is to take it off the path; the environment's own copy meets the requirement."""
    site = "/tmp/t/a/lib/python3.11/site-packages"
    doc: dict[str, Any] = {
        "schema": "doctor.snapshot/1", "complete": True,
        "python": {"version": "3.11.7", "implementation": "CPython", "prefix": "/tmp/t/a",
                   "base_prefix": "/root/.pyenv/versions/3.11.7", "site_packages": [site]},
        "host": {"arch": "x86_64"},
        "packages": {
            "verl": {"version": "0.9.1", "location": site, "requires_dist": ["transformers!=5.6.0,<5.11,>=5.5.3"],
                     "metadata": f"{site}/verl-0.9.1.dist-info/METADATA"},
            "transformers": {"version": "4.57.1", "location": "/tmp/t/pylibs", "requires_dist": [],
                             "metadata": "/tmp/t/pylibs/transformers-4.57.1.dist-info/METADATA",
                             "shadowed": [{"version": "5.10.4", "location": site}]}}}
    (f,) = _declared(snapshot_from_dict(doc))
    assert f.severity.value == "error" and "transformers 4.57.1 is installed" in f.title
    assert "/tmp/t/pylibs" in f.detail and "outside the environment" in f.detail and "5.10.4" in f.detail
    assert f.fix.commands == () and "/tmp/t/pylibs" in f.fix.text and "PYTHONPATH" in f.fix.text
    assert f.evidence["found_at"] == "/tmp/t/pylibs" and f.evidence["hides"] == [{"version": "5.10.4", "location": site}]
    # the environment's own copy is off too: taking the outside one off the path is not enough, pip's line stays
    doc["packages"]["transformers"]["shadowed"] = [{"version": "4.46.0", "location": site}]
    (g,) = _declared(snapshot_from_dict(doc))
    assert g.fix.commands == ("pip install 'transformers!=5.6.0,<5.11,>=5.5.3'",) and "/tmp/t/pylibs" in g.fix.text
    # not a virtual environment (a user-site copy over the system's): pip uninstalls there, its line stands
    doc["python"]["base_prefix"] = doc["python"]["prefix"]
    (k,) = _declared(snapshot_from_dict(doc))
    assert "outside the environment" not in k.detail and k.fix.commands
    doc["python"]["base_prefix"] = "/root/.pyenv/versions/3.11.7"
    # no copy inside the environment (an egg-link or PYTHONPATH-only install): nothing to say about hiding
    del doc["packages"]["transformers"]["shadowed"]
    (h,) = _declared(snapshot_from_dict(doc))
    assert "outside the environment" not in h.detail and "found_at" not in h.evidence


def _wheel_requires(version: str) -> list[str] | None:
    """The Requires-Dist lines of a real verl wheel ($DOCTOR_TEST_VERL_CONFIGS/wheels, PyPI's files), or None."""
    import zipfile
    from email.parser import HeaderParser

    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")
    hits = sorted((Path(d) / "wheels").glob(f"verl-{version}-*.whl")) if d else []
    if not hits:
        return None
    with zipfile.ZipFile(hits[0]) as z:
        meta = HeaderParser().parsestr(z.read(f"verl-{version}.dist-info/METADATA").decode())
    return meta.get_all("Requires-Dist") or []


# what `pip install verl==0.9.1` installed on a real CPU venv (Python 3.11.7, torch 2.13.0+cpu), `pip freeze`
_VERL_091_BASE = {"accelerate": "1.16.0", "codetiming": "1.4.0", "datasets": "5.2.0", "dill": "0.4.1",
                  "hydra-core": "1.3.8", "numpy": "2.4.6", "pandas": "3.1.1", "peft": "0.21.2", "pyarrow": "26.0.1",
                  "pybind11": "3.1.0", "pylatexenc": "2.11", "ray": "2.60.0", "torchdata": "0.11.0",
                  "tensordict": "0.10.0", "transformers": "5.10.4", "wandb": "0.31.0", "packaging": "25.0",
                  "tensorboard": "2.21.0"}


def test_a_run_set_extra_every_backend_builds_on_is_judged_without_being_asked_for():
    """verl 0.9.1 (its PyPI wheel) moved what its trainer imports into the [verl-core] extra, which restates every
    base requirement and which [vllm], [sglang], [fsdp], [megatron] and [cpu] each require (`verl[verl-core]`). A
    plain `pip install verl==0.9.1` (a real CPU venv) then passes pip check while `import
    verl.trainer.ppo.ray_trainer` raises "No module named 'cachetools'", verl.workers.engine_workers "No module
    named 'uvicorn'" and the default V1 trainer "No module named 'transfer_queue'"; `pip install
    'verl[verl-core]==0.9.1'` fixed all three. What the import-surface table records verl 0.9.1's trainer modules
    import at load (cachetools, fastapi, uvicorn, transfer_queue) is an error; nvtx, torchcodec, mathruler,
    qwen_vl_utils, zmq and msgspec it does not (each uninstalled from a real venv, the trainer's modules still
    imported, but for zmq and msgspec, which `import transfer_queue` needs: TransferQueue's own requirements):
    warnings. pytest is a development tool ([test] names it too) and is not judged."""
    lines = _wheel_requires("0.9.1")
    if lines is None:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    meta = "/v/lib/python3.11/site-packages/verl-0.9.1.dist-info/METADATA"
    pkgs: dict[str, Any] = {k: {"version": v, "requires_dist": []} for k, v in _VERL_091_BASE.items()}
    pkgs["verl"] = {"version": "0.9.1", "requires_dist": lines, "metadata": meta}
    fs = _declared(_snap(pkgs, python="3.11.7", arch="x86_64"))
    assert {f.evidence["requires"]: f.severity.value for f in fs} == {
        "transferqueue": "error", "fastapi": "error", "uvicorn": "error", "cachetools": "error",
        "pyzmq": "warning", "msgspec": "warning", "mathruler": "warning", "qwen-vl-utils": "warning",
        "torchcodec": "warning", "nvtx": "warning"}
    assert all(f.id == "requirement-missing" for f in fs)
    f = next(f for f in fs if f.evidence["requires"] == "cachetools")
    # why: the file:line of verl 0.9.1 that imports it at module level, read from its PyPI wheel
    assert f.evidence["imported_at_load"] == {"module": "cachetools", "at": "verl/workers/rollout/router.py:21",
                                              "read": "PyPI's verl-0.9.1-py3-none-any.whl"}
    assert "imports `cachetools` at module level (verl/workers/rollout/router.py:21)" in f.detail
    assert "verl.trainer.ppo.v1" in f.detail and "without it that import fails" in f.detail
    n = next(f for f in fs if f.evidence["requires"] == "nvtx")
    assert n.evidence["imported_at_load"] is None and "imports none of nvtx's modules" in n.detail
    assert f.title == ("verl 0.9.1 requires cachetools (its [verl-core] extra, which its extras [cpu], [fsdp], "
                       "[megatron], [sglang], [vllm] build on), which is not installed")
    assert f.evidence["extra"] == "verl-core" and f.evidence["built_on"] == ["cpu", "fsdp", "megatron", "sglang", "vllm"]
    # its own line, not the whole extra: that would re-resolve verl's base requirements (numpy>=2.0.0 against the
    # Ascend stacks' numpy<2)
    assert f.fix.commands == ("pip install 'cachetools'",)
    # installed, the extra's distributions are on verl's import path: TransferQueue without its own msgspec (import
    # transfer_queue raised "No module named 'msgspec'" there) is an error; one below the extra's range a warning
    core = {"cachetools": "8.0.2", "fastapi": "0.165.0", "uvicorn": "0.55.0", "pyzmq": "27.3.0", "mathruler": "0.1.0",
            "qwen-vl-utils": "0.0.14", "torchcodec": "0.17.0", "nvtx": "0.2.17"}
    pkgs.update({k: {"version": v, "requires_dist": []} for k, v in core.items()})
    # TransferQueue 0.1.11's RECORD: transfer_queue beside recipe, scripts, tests, tutorial
    pkgs["transferqueue"] = {"version": "0.1.9", "requires_dist": ["pyzmq", "msgspec"],
                             "top_level": ["recipe", "scripts", "tests", "transfer_queue", "tutorial"]}
    fs = _declared(_snap(pkgs, python="3.11.7", arch="x86_64"))
    assert sorted((f.id, f.severity.value, f.key) for f in fs) == [
        ("requirement-missing", "error", "transferqueue:msgspec"),
        ("requirement-missing", "warning", "verl:msgspec"),
        ("requirement-version-unmet", "error", "verl:transferqueue")]
    bad = next(f for f in fs if f.key == "verl:transferqueue")
    assert "its [verl-core] extra" in bad.title and "0.1.9 is installed" in bad.title
    assert bad.evidence["imported_at_load"]["module"] == "transfer_queue"
    assert bad.fix.commands == ("pip install 'TransferQueue>=0.1.10'",)
    # its own top_level is what it installs: one naming none of what verl loads stays a warning
    pkgs["transferqueue"]["top_level"] = ["tq_renamed"]
    fs = _declared(_snap(pkgs, python="3.11.7", arch="x86_64"))
    assert next(f for f in fs if f.key == "verl:transferqueue").severity.value == "warning"
    pkgs["transferqueue"]["top_level"] = ["transfer_queue"]
    # the extra asked for by name: pip check's own rule judges all it lists, its test tools too (once each)
    pkgs["other"] = {"version": "1", "requires_dist": ["verl[verl-core]"]}
    fs = _declared(_snap(pkgs, python="3.11.7", arch="x86_64"))
    assert sorted((f.key, f.severity.value, "built_on" in f.evidence) for f in fs) == [
        ("transferqueue:msgspec", "error", False), ("verl:msgspec", "error", False),
        ("verl:pytest", "error", False), ("verl:pytest-asyncio", "error", False),
        ("verl:pytest-rerunfailures", "error", False), ("verl:transferqueue", "error", False)]


def test_on_the_ascend_stack_the_run_set_additions_its_npu_requirements_leave_out_are_upstreams_own():
    """The 0.9.1 Ascend stacks install verl from PyPI and then main's requirements-npu.txt, which lists neither nvtx
    nor torchcodec of [verl-core]: with torch-npu beside it (an Ascend fact) they are the stack's own, info; what the
    trainer imports at load (cachetools) is an error, with its own install line (not the whole extra, which would
    re-resolve numpy, which the stack holds below verl 0.9.1's numpy>=2.0.0)."""
    from tests.stacks import diagnose_dict

    lines = _wheel_requires("0.9.1")
    if lines is None:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    pkgs: dict[str, Any] = {k: {"version": v, "requires_dist": []} for k, v in _VERL_091_BASE.items()}
    pkgs["verl"] = {"version": "0.9.1", "requires_dist": lines}
    pkgs["torch-npu"] = {"version": "2.10.0.post4", "requires_dist": []}
    doc = {"schema": "doctor.snapshot/1", "complete": True, "packages": pkgs, "host": {"arch": "aarch64"},
           "python": {"version": "3.11.7", "implementation": "CPython"}}
    r = diagnose_dict(doc, forced="verl-0.9.1-cann9.1.0-a2")
    core = {f.evidence["requires"]: f for f in r.findings if f.evidence.get("built_on")}
    assert core["nvtx"].severity.value == "info" and core["torchcodec"].severity.value == "info"
    assert core["nvtx"].fix.commands == ()
    assert core["mathruler"].severity.value == "warning"
    assert core["cachetools"].severity.value == "error"
    assert core["cachetools"].fix.commands == ("pip install 'cachetools'",)


def test_a_run_set_addition_is_an_error_only_where_the_import_surface_table_read_the_release():
    """A verl release the table did not read (0.9.2 here, declaring what 0.9.1 declares) is not known to import
    anything at load: its run-set additions stay warnings, and say nothing about load. Every addition verl 0.9.1's
    extra makes has its modules in the ownership table (a missing distribution has no top_level of its own to
    read), so none is left a warning for want of a name."""
    from doctor.knowledge.ownership import modules_of_distribution

    lines = _wheel_requires("0.9.1")
    if lines is None:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    pkgs: dict[str, Any] = {k: {"version": v, "requires_dist": []} for k, v in _VERL_091_BASE.items()}
    pkgs["verl"] = {"version": "0.9.2", "requires_dist": lines}
    fs = _declared(_snap(pkgs, python="3.11.7", arch="x86_64"))
    assert len(fs) == 10 and all(f.severity.value == "warning" and "imported_at_load" not in f.evidence for f in fs)
    assert all(modules_of_distribution(f.evidence["requires"]) for f in fs), [
        f.evidence["requires"] for f in fs if not modules_of_distribution(f.evidence["requires"])]


def test_an_extra_other_extras_build_on_that_does_not_restate_the_base_is_one_feature():
    """safetensors 0.7's [numpy] extra is required by [torch], [jax], [paddlepaddle], [tensorflow] and more (its
    wheel METADATA, `safetensors[numpy]; extra == "torch"`), yet a bare safetensors runs without numpy: only an
    extra that restates every base requirement is a run set. verl 0.9.0 (its PyPI wheel) has no such extra."""
    lines = ['numpy>=1.21.6; extra == "numpy"', 'safetensors[numpy]; extra == "torch"', 'torch>=1.10; extra == "torch"',
             'safetensors[numpy]; extra == "jax"', 'jax>=0.3.25; extra == "jax"', 'safetensors[numpy]; extra == "paddlepaddle"']
    snap = _snap({"safetensors": {"version": "0.7.0", "requires_dist": lines}}, python="3.11.7", arch="x86_64")
    assert _declared(snap) == []
    old = _wheel_requires("0.9.0")
    if old is None:
        pytest.skip("no verl-0.9.0 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    pkgs: dict[str, Any] = {k: {"version": v, "requires_dist": []} for k, v in _VERL_091_BASE.items()}
    pkgs["verl"] = {"version": "0.9.0", "requires_dist": old}
    assert _declared(_snap(pkgs, python="3.11.7", arch="x86_64")) == []


def test_a_run_set_addition_a_plain_pythonpath_directory_can_hold_stays_a_warning():
    """The snapshot lists distributions, not what a plain PYTHONPATH directory holds: with one that no listed
    distribution describes (a vendored cachetools without its dist-info: real, `import verl.trainer.ppo.ray_trainer`
    loads), a missing run-set addition verl imports at load cannot be said to break the import. CANN's python/site-
    packages and a checkout a probed module resolves to (Megatron-LM) change nothing."""
    from doctor.snapshot.model import snapshot_from_dict

    lines = _wheel_requires("0.9.1")
    if lines is None:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    pkgs: dict[str, Any] = {k: {"version": v, "requires_dist": []} for k, v in _VERL_091_BASE.items()}
    pkgs["verl"] = {"version": "0.9.1", "requires_dist": lines}

    def sev(pythonpath: str) -> dict[str, Any]:
        doc = {"schema": "doctor.snapshot/1", "complete": True, "packages": pkgs, "env": {"PATH": "/usr/bin",
               "PYTHONPATH": pythonpath}, "modules": {"megatron": {"origins": ["/opt/Megatron-LM/megatron"]}},
               "python": {"version": "3.11.7", "implementation": "CPython"}, "host": {"arch": "x86_64"}}
        fs = _declared(snapshot_from_dict(doc))
        return {f.evidence["requires"]: (f.severity.value, (f.evidence.get("imported_at_load") or {}).get(
            "pythonpath_unlisted")) for f in fs if f.evidence["requires"] in ("cachetools", "nvtx")}

    cann = "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages"
    assert sev(f"{cann}:/opt/Megatron-LM") == {"cachetools": ("error", None), "nvtx": ("warning", None)}
    assert sev(f"{cann}:/opt/vendor") == {"cachetools": ("warning", ["/opt/vendor"]), "nvtx": ("warning", None)}


def test_a_range_another_installed_package_rules_out_moves_the_declaring_package_not_the_required_one():
    """datasets 5.2.0 requires huggingface-hub>=1.31.0 while transformers 4.57.6 requires huggingface-hub<1.0: the line
    `pip install 'huggingface-hub<3.0,>=1.31.0'` breaks transformers, whose own finding's line moves huggingface-hub
    back. Real (a venv with verl 0.7.1 after `pip install 'transformers<5.0.0'`): following the lines in order swung
    huggingface-hub 0.36.2 -> 2.4.0 -> 0.36.2 and `import verl.trainer.main_ppo` still failed in datasets. The fix
    keeps huggingface-hub and lets pip pick a datasets release that accepts it (real: datasets 5.0.1)."""
    snap = _snap({"datasets": {"version": "5.2.0", "requires_dist": ["huggingface-hub<3.0,>=1.31.0"]},
                  "transformers": {"version": "4.57.6", "requires_dist": ["huggingface-hub<1.0,>=0.34.0"]},
                  "huggingface-hub": {"version": "0.36.2", "requires_dist": []}}, python="3.11.7", arch="x86_64")
    (f,) = [f for f in _declared(snap) if f.evidence.get("requires") == "huggingface-hub"]
    assert f.fix is not None and f.fix.commands == ("pip install datasets 'huggingface-hub==0.36.2'",)
    assert "transformers 4.57.6 requires huggingface-hub<1.0,>=0.34.0" in f.fix.text
    # nothing else caps it: the declared range, as before
    alone = _snap({"datasets": {"version": "5.2.0", "requires_dist": ["huggingface-hub<3.0,>=1.31.0"]},
                   "huggingface-hub": {"version": "0.36.2", "requires_dist": []}}, python="3.11.7", arch="x86_64")
    (g,) = [g for g in _declared(alone) if g.evidence.get("requires") == "huggingface-hub"]
    assert g.fix is not None and g.fix.commands == ("pip install 'huggingface-hub<3.0,>=1.31.0'",)


def test_the_held_line_keeps_the_declaring_package_inside_what_other_installed_packages_require_of_it():
    """Real venv (python3 -m venv; torch 2.13.0, verl 0.9.1 with its requirements, then `pip install --no-deps
    transformers==4.57.6`): transformers 4.57.6 requires huggingface-hub<1.0, datasets 5.2.0 holds it >=1.31.0, and
    verl 0.9.1 requires transformers<5.11. The held line was `pip install transformers 'huggingface-hub==1.33.0'`:
    `pip install --dry-run` of it says 'Would install transformers-5.24.0', outside verl's range (the next check names
    verl:transformers). With verl's range on it, the line installed transformers 5.10.4 and pip check was clean."""
    snap = _snap({"datasets": {"version": "5.2.0", "requires_dist": ["huggingface-hub<3.0,>=1.31.0"]},
                  "transformers": {"version": "4.57.6", "requires_dist": ["huggingface-hub<1.0,>=0.34.0"]},
                  "verl": {"version": "0.9.1", "requires_dist": ["transformers!=5.6.0,<5.11,>=5.5.3"]},
                  "huggingface-hub": {"version": "1.33.0", "requires_dist": []}}, python="3.11.7", arch="x86_64")
    (f,) = [f for f in _declared(snap) if f.evidence.get("requires") == "huggingface-hub"]
    assert f.fix is not None
    assert f.fix.commands == ("pip install 'transformers!=5.6.0,<5.11,>=5.5.3' 'huggingface-hub==1.33.0'",)
    assert "inside what verl 0.9.1 requires transformers!=5.6.0,<5.11,>=5.5.3" in f.fix.text


def test_a_declaring_package_installed_from_a_checkout_is_not_swapped_for_an_index_release():
    """Real venv (`python3 -m venv`, torch 2.13.0, then verl's install_vllm_mcore_npu.sh at 1dda039b9 without vLLM:
    `pip install -e Megatron-LM` (core_r0.16.0), `pip install -e MindSpeed` (core_r0.16.0), `pip install -e verl`,
    requirements-npu.txt): MindSpeed requires numpy<=1.26.0, verl main numpy>=2.0.0, numpy 1.26.4 installed. The fix
    said `pip install verl 'numpy==1.26.4'`, and `pip install --dry-run` of it says 'Would install verl-0.8.0': pip
    replaces the editable checkout of verl main with PyPI's 0.8.0 (and `pip install mindspeed 'numpy==1.26.4'` tries
    PyPI's mindspeed 0.0.1.dev1 placeholder). A package installed from a checkout or URL gets no such line."""
    pk: dict[str, Any] = {
        "mindspeed": {"version": "0.16.0", "requires_dist": ["numpy<=1.26.0"], "editable": True,
                      "url": "file:///work/MindSpeed"},
        "verl": {"version": "0.10.0.dev0", "requires_dist": ["numpy>=2.0.0"], "editable": True,
                 "url": "file:///work/verl"},
        "numpy": {"version": "1.26.4", "requires_dist": [], "editable": False}}
    fs = {f.evidence["package"]: f for f in _declared(_snap(pk, python="3.11.7", arch="x86_64"))}
    assert set(fs) == {"mindspeed", "verl"}
    for name, other in (("mindspeed", "verl"), ("verl", "mindspeed")):
        f = fs[name]
        assert f.fix is not None and f.fix.commands == ()
        assert f"{name} {pk[name]['version']} is installed from {pk[name]['url']} (editable)" in f.fix.text
        assert f"`pip install {name}` would replace it with a release from the index" in f.fix.text
        assert f"releases or commits of {other} that allow it" in f.fix.text
    # MindSpeed 2.3.0_core_r0.12.1 editable beside scipy 1.17.1 (numpy>=1.26.4) from PyPI: the index side moves, and
    # `pip install --dry-run 'numpy<=1.26.0' scipy` in that venv said 'Would install numpy-1.26.0 scipy-1.16.3'
    pk2 = {"mindspeed": pk["mindspeed"], "scipy": {"version": "1.17.1", "requires_dist": ["numpy<2.7,>=1.26.4"],
                                                   "editable": False}, "numpy": pk["numpy"]}
    (g,) = [g for g in _declared(_snap(pk2, python="3.11.7", arch="x86_64")) if g.evidence["package"] == "mindspeed"]
    assert g.fix is not None and g.fix.commands == ("pip install 'numpy<=1.26.0' scipy",)
    assert "would replace it with a release from the index" in g.fix.text
    # the same pair installed from the index keeps pip's line
    for n in ("mindspeed", "verl"):
        pk[n] = {k: v for k, v in pk[n].items() if k not in ("editable", "url")} | {"editable": False}
    fs = {f.evidence["package"]: f for f in _declared(_snap(pk, python="3.11.7", arch="x86_64"))}
    assert fs["verl"].fix is not None and fs["verl"].fix.commands == ("pip install verl 'numpy==1.26.4'",)


def test_a_missing_requirement_of_a_package_verl_needs_through_others_is_an_error_naming_the_chain():
    """Real venv (Python 3.11.7, torch 2.13.0+cpu, `pip install verl==0.9.0` then cachetools fastapi uvicorn
    TransferQueue): `pip uninstall MarkupSafe` left check at 0 errors (two warnings: jinja2 and werkzeug require it)
    while `import verl.trainer.main_ppo` raised ModuleNotFoundError: No module named 'markupsafe' (verl ->
    transformers/utils/chat_template_utils.py -> jinja2 -> markupsafe). jinja2 is no requirement of verl itself,
    but of transformers, which verl requires: a broken requirement anywhere on that chain is an error; one of a
    package nothing verl needs requires stays a warning."""
    snap = _snap({"verl": {"version": "0.9.0", "requires_dist": ["transformers>=5", 'ray[default]>=2.41.0']},
                  "transformers": {"version": "5.10.4", "requires_dist": ["jinja2"]},
                  "jinja2": {"version": "3.1.6", "requires_dist": ["MarkupSafe>=2.0"]},
                  "ray": {"version": "2.60.0", "requires_dist": ['aiohttp; extra == "default"']},
                  "aiohttp": {"version": "3.14.5", "requires_dist": ["yarl>=1.17"]},
                  "jupyter-thing": {"version": "1.0", "requires_dist": ["nbformat"]}})
    fs = {f.evidence["package"]: f for f in _declared(snap)}
    assert {p: f.severity.value for p, f in fs.items()} == {"jinja2": "error", "aiohttp": "error",
                                                            "jupyter-thing": "warning"}
    # transformers and ray are stack packages: the chain starts there
    assert fs["jinja2"].evidence["required_through"] == ["transformers"]
    assert "transformers -> jinja2 (each requires the next)" in fs["jinja2"].detail
    # through an extra the requiring line asks for: ray[default] brings aiohttp
    assert fs["aiohttp"].evidence["required_through"] == ["ray"]
    assert "required_through" not in fs["jupyter-thing"].evidence


def test_a_chain_in_an_environment_without_verl_does_not_say_verl_needs_it():
    """Real venv (plain `python3 -m venv`, transformers 4.51.3, then tokenizers 0.22.0 and huggingface-hub 1.2.0
    with --no-deps; no verl): check said 'verl needs huggingface-hub through transformers -> huggingface-hub'. verl
    is not installed there: the chain starts at the stack's transformers, and the text says that instead."""
    pk = {"transformers": {"version": "4.51.3", "requires_dist": ["huggingface-hub<1.0,>=0.30.0", "tokenizers"]},
          "tokenizers": {"version": "0.22.0", "requires_dist": ["huggingface-hub<1.0,>=0.16.4"]},
          "huggingface-hub": {"version": "1.2.0", "requires_dist": ["httpx<1,>=0.23.0"]}}
    fs = {(f.evidence["package"], f.evidence["requires"]): f for f in _declared(_snap(pk))}
    for f in (fs["tokenizers", "huggingface-hub"], fs["huggingface-hub", "httpx"]):
        assert f.evidence["required_through"] == ["transformers"]
        assert "verl needs" not in f.detail
        assert "The stack needs" in f.detail and "through transformers -> " in f.detail
    # with verl installed (it requires transformers), the chain is verl's
    pk["verl"] = {"version": "0.6.1", "requires_dist": ["transformers"]}
    (f,) = [f for f in _declared(_snap(pk)) if f.evidence["requires"] == "httpx"]
    assert " verl needs huggingface-hub through transformers -> huggingface-hub" in f.detail


def test_the_chain_is_read_from_real_dist_info(tmp_path):
    """The same chain from METADATA the real importlib.metadata reads (the probe), as `check --python` sees it."""
    site = make_site_packages(
        tmp_path / "site", {"verl": "0.9.0", "transformers": "5.10.4", "jinja2": "3.1.6"},
        requires={"verl": ["transformers>=5"], "transformers": ["jinja2"], "jinja2": ["MarkupSafe>=2.0"]})
    env = dict(os.environ, PYTHONPATH=str(site))
    doc, err, _ = run_target_probe(sys.executable, environ=env, cwd=str(tmp_path), args=["--dists-only"])
    assert err is None and doc is not None
    parts = to_snapshot_parts(doc)
    pk = {k: v for k, v in parts["packages"].items() if k in ("verl", "transformers", "jinja2")}
    snap = _snap(pk)
    (f,) = [f for f in _declared(snap) if f.evidence["requires"] == "markupsafe"]
    assert (f.id, f.severity.value) == ("requirement-missing", "error")
    assert f.evidence["required_through"] == ["transformers"]


def test_a_missing_requirement_of_a_package_verl_imports_at_load_without_requiring_it_is_an_error(tmp_path):
    """Real venv (Python 3.11.7, torch 2.13.0+cpu, verl 0.9.0 + cachetools fastapi uvicorn TransferQueue), `pip
    uninstall starlette`: check said one warning (fastapi requires starlette) and 0 errors, while `import
    verl.trainer.ppo.ray_trainer` raised No module named 'starlette' (verl/workers/rollout/utils.py imports fastapi
    at load). verl's metadata does not name fastapi, so no requirement chain reached it; the import-surface table
    does. Read from METADATA the real importlib.metadata reads, as `check --python` sees it."""
    site = make_site_packages(
        tmp_path / "site", {"verl": "0.9.0", "fastapi": "0.165.0", "jupyter-thing": "1.0"},
        top_level={"fastapi": ["fastapi"], "jupyter-thing": ["jupyter_thing"]},
        requires={"verl": ["packaging>=20.0"], "fastapi": ["starlette>=1.6.0"], "jupyter-thing": ["nbformat"]})
    env = dict(os.environ, PYTHONPATH=str(site))
    doc, err, _ = run_target_probe(sys.executable, environ=env, cwd=str(tmp_path), args=["--dists-only"])
    assert err is None and doc is not None
    parts = to_snapshot_parts(doc)
    snap = _snap({k: v for k, v in parts["packages"].items() if k in ("verl", "fastapi", "jupyter-thing")})
    fs = {f.evidence["package"]: f for f in _declared(snap) if f.id == "requirement-missing"}
    assert {p: f.severity.value for p, f in fs.items() if p != "verl"} == {"fastapi": "error",
                                                                           "jupyter-thing": "warning"}
    assert fs["fastapi"].evidence["required_through"] == ["verl"]
    assert "verl's modules import fastapi when its trainer loads" in fs["fastapi"].detail


def test_an_only_extras_verdict_does_not_claim_pip_check_reports_it():
    """Real venv: verl 0.7.1, transformers 4.57.6 after 5.25.0 (kernels 0.19.1 left behind): pip check said nothing
    of transformers and kernels, and the finding said 'pip check reports the same conflict'."""
    lines = [f"kernels<=0.9,>=0.6.1; extra == '{e}'" for e in ("all", "hub-kernels", "integrations")]
    snap = _snap({"transformers": {"version": "4.57.6", "requires_dist": lines},
                  "kernels": {"version": "0.19.1", "requires_dist": []}}, complete=False)
    (f,) = [f for f in _declared(snap) if f.evidence.get("requires") == "kernels"]
    assert "pip check does not report it" in f.detail and "pip check reports the same" not in f.detail


def test_an_only_extras_distribution_that_cannot_run_beside_the_package_is_a_warning():
    """The differential import oracle (real venvs, Python 3.11, torch 2.13.0+cpu): `pip install verl==0.7.1` brings
    transformers 5.25.0 and the kernels 0.19.1 it requires; `pip install 'transformers<5' 'datasets<5'` (verl 0.7.1's
    docs: no transformers 5) gives transformers 4.57.6 and huggingface-hub 0.36.2 and leaves kernels behind.
    transformers, modeling_qwen2, verl.trainer.main_ppo, ray_trainer and fsdp_workers all import: kernels 0.19.1
    needs huggingface-hub>=1.32.0 (it fails to import), transformers 4.57.6 <1.0, so its hub_kernels integration,
    which catches that ImportError, is off. The only-extras rule called that an error on verl's import path."""
    tf = ["huggingface-hub<1.0,>=0.34.0", "tokenizers<=0.23.0,>=0.22.0"]
    tf += [f"kernels<=0.9,>=0.6.1; extra == '{e}'" for e in ("all", "hub-kernels", "integrations")]
    pk = {"verl": {"version": "0.7.1", "requires_dist": ["transformers"]},
          "transformers": {"version": "4.57.6", "requires_dist": tf},
          "kernels": {"version": "0.19.1", "requires_dist": ["huggingface-hub>=1.32.0", "packaging>=20.0"]},
          "huggingface-hub": {"version": "0.36.2", "requires_dist": []},
          "tokenizers": {"version": "0.22.2", "requires_dist": []}, "packaging": {"version": "25.0", "requires_dist": []}}
    fs = {(f.evidence["package"], f.evidence["requires"]): f for f in _declared(_snap(pk))}
    f = fs["transformers", "kernels"]
    assert (f.id, f.severity.value) == ("requirement-version-unmet", "warning")
    assert f.evidence["cannot_run_beside"] == {"kernels": "huggingface-hub>=1.32.0",
                                               "transformers": "huggingface-hub<1.0,>=0.34.0"}
    assert "cannot be what transformers 4.57.6 runs with" in f.detail
    assert fs["kernels", "huggingface-hub"].severity.value == "warning"  # kernels' own, off verl's path
    # a kernels whose own requirements leave room beside transformers (kernels 0.9.0: huggingface-hub>=0.26.0):
    # the extras may be in use, and the out-of-range release stays an error on verl's import path
    pk["kernels"] = {"version": "0.10.0", "requires_dist": ["huggingface-hub>=0.26.0"]}
    (g,) = [g for g in _declared(_snap(pk)) if g.evidence.get("requires") == "kernels"]
    assert g.severity.value == "error" and "cannot_run_beside" not in g.evidence


def test_a_requirement_transformers_checks_at_import_is_an_error_that_says_the_import_raises():
    """transformers' dependency_versions_check runs require_version_core over its declared tokenizers, huggingface-hub,
    safetensors, numpy, ... when imported: an unmet one is an ImportError at `import transformers`, wherever it is used
    (profiles/code-needs.toml [[enforces]]). A missing tokenizers it skips; requirements it does not check say
    nothing of it."""
    def fs(packages: dict[str, Any], python: str = "3.10.12") -> list[Any]:
        pk = {n: {"version": v, "requires_dist": r} for n, (v, r) in packages.items()}
        pk["transformers"]["requires_python"] = ">=3.9.0"
        return [f for f in _declared(_snap(pk, python=python)) if f.evidence["package"] == "transformers"]

    base = {"transformers": ("4.51.3", ["tokenizers<0.22,>=0.21", "huggingface-hub<1.0,>=0.30.0",
                                        "jinja2>=3.0; extra == 'chat-template'"]),
            "huggingface-hub": ("0.30.2", [])}
    (f,) = fs({**base, "tokenizers": ("0.22.0", [])})
    assert f.severity.value == "error" and f.id == "requirement-version-unmet"
    assert ("`import transformers` raises ImportError: tokenizers<0.22,>=0.21 is required for a normal functioning of "
            "this module, but found tokenizers==0.22.0") in f.detail
    assert f.evidence["checked_at_import"].endswith("/v4.51.3/src/transformers/dependency_versions_check.py#L25")
    (h,) = fs({**base, "tokenizers": ("0.21.1", []), "huggingface-hub": ("1.0.0", [])})
    assert h.evidence["requires"] == "huggingface-hub" and "checked_at_import" in h.evidence
    # not installed: transformers skips tokenizers' check (pip check still names it)
    (m,) = fs(base)
    assert m.id == "requirement-missing" and "checked_at_import" not in m.evidence
    # Requires-Python: its check of `python` raises too
    (py,) = fs({**base, "tokenizers": ("0.21.1", [])}, python="3.8.18")
    assert py.id == "requires-python-unmet" and py.severity.value == "error" and "checked_at_import" in py.evidence
    # a missing safetensors it does check: require_version raises PackageNotFoundError, never "found ...==None"
    # (real venv: transformers 4.51.3, `pip uninstall safetensors`, `import transformers`)
    (s,) = fs({**base, "tokenizers": ("0.21.1", []),
               "transformers": ("4.51.3", [*base["transformers"][1], "safetensors>=0.4.3"])})
    assert s.id == "requirement-missing" and "checked_at_import" in s.evidence
    assert ("`import transformers` raises PackageNotFoundError: No package metadata was found for The "
            "'safetensors>=0.4.3' distribution was not found and is required by this application") in s.detail
    assert "==None" not in s.detail
    # a release older than the rows read says nothing of an import-time check
    old = {"transformers": ("4.30.0", ["tokenizers<0.14,>=0.11.1,!=0.11.3"]), "tokenizers": ("0.15.0", [])}
    (o,) = fs(old)
    assert "checked_at_import" not in o.evidence


# verl main 1dda039b9's Requires-Dist (the METADATA `pip install --no-deps -e` of a checkout at that commit wrote,
# Python 3.11.7): its base requirements, the [verl-core] run set (pyproject.toml) and the backends that build on it
_VERL_MAIN_1DDA039 = "1dda039b9c6311889a9c9a26040677e1254814f9"
_VERL_MAIN_BASE = ["accelerate", "codetiming", "datasets", "dill", "hydra-core", "numpy>=2.0.0", "pandas", "peft",
                   "pyarrow>=19.0.0", "pybind11", "pylatexenc", "ray[default]>=2.41.0", "torchdata",
                   "tensordict!=0.9.0,<=0.10.0,>=0.8.0", "transformers!=5.6.0,<5.11,>=5.5.3", "wandb",
                   "packaging>=20.0", "tensorboard"]
_VERL_MAIN_REQUIRES = _VERL_MAIN_BASE + [
    f'{r.replace("transformers!=5.6.0,<5.11,>=5.5.3", "transformers")}; extra == "verl-core"' for r in _VERL_MAIN_BASE
] + [f'{r}; extra == "verl-core"' for r in ("fastapi", "uvicorn", "mathruler", "qwen_vl_utils", "torchcodec",
                                            "cachetools", "nvtx")] + [
    f'verl[verl-core]; extra == "{e}"' for e in ("vllm", "sglang", "fsdp", "megatron", "cpu")]


def _verl_checkout(commit: str | None, **also: Any) -> Any:
    pkgs: dict[str, Any] = {k: {"version": v, "requires_dist": []} for k, v in _VERL_091_BASE.items()}
    pkgs.update({k: {"version": v, "requires_dist": []} for k, v in also.items()})
    pkgs["verl"] = {"version": "0.10.0.dev0", "requires_dist": _VERL_MAIN_REQUIRES, "editable": True,
                    "url": "file:///src/verl", "metadata": "/v/site-packages/verl-0.10.0.dev0.dist-info/METADATA"}
    doc: dict[str, Any] = {"schema": "doctor.snapshot/1", "complete": True, "packages": pkgs,
                           "python": {"version": "3.11.7", "implementation": "CPython"}, "host": {"arch": "x86_64"}}
    if commit is not None:
        doc["modules"] = {"verl": {"origins": ["/src/verl/verl"], "git": {"commit": commit, "branch": "main"}}}
    return snapshot_from_dict(doc)


def test_a_verl_checkout_at_the_commit_a_stack_pins_is_judged_by_what_that_commit_imports_at_load():
    """verl installed `--no-deps -e` from a checkout of main at 1dda039b9 (the commit the 0.10.0.dev profile pins)
    reports 0.10.0.dev0, a version no release has. Real venv (Python 3.11.7, torch 2.13.0+cpu, verl's base
    requirements, fastapi and cachetools, no uvicorn): `import verl.workers.engine_workers` raised "No module named
    'uvicorn'". The import-surface table reads that commit as a source build: with the commit its git facts give, a
    missing uvicorn, fastapi or cachetools is an error naming the file:line that imports it at load; nvtx and
    torchcodec, which the trainer's modules do not import, stay warnings."""
    fs = _declared(_verl_checkout(_VERL_MAIN_1DDA039, cachetools="6.2.4", fastapi="0.128.0"))
    core = {f.evidence["requires"]: f for f in fs if f.evidence.get("built_on")}
    assert {k: f.severity.value for k, f in core.items()} == {
        "uvicorn": "error", "mathruler": "warning", "qwen-vl-utils": "warning", "torchcodec": "warning",
        "nvtx": "warning"}
    u = core["uvicorn"]
    assert u.evidence["imported_at_load"] == {"module": "uvicorn", "at": "verl/workers/rollout/utils.py:20",
                                              "read": "main, commit 1dda039b9"}
    assert "imports `uvicorn` at module level (verl/workers/rollout/utils.py:20)" in u.detail
    assert core["nvtx"].evidence["imported_at_load"] is None
    # the same found by the commit pip recorded (`pip install git+...@1dda039b9`: direct_url.json's vcs_info)
    snap = _verl_checkout(None)
    snap.packages["verl"].commit = _VERL_MAIN_1DDA039
    core = {f.evidence["requires"]: f.severity.value for f in _declared(snap) if f.evidence.get("built_on")}
    assert core["uvicorn"] == core["fastapi"] == core["cachetools"] == "error" and core["nvtx"] == "warning"


def test_a_verl_dev_version_without_a_commit_the_table_read_stays_unjudged():
    """0.10.0.dev0 names no release: without a commit (a stated report, a checkout git cannot read) or at a commit
    the import-surface table did not read, the run-set additions stay warnings and say nothing about load."""
    for commit in (None, "0" * 40):
        fs = _declared(_verl_checkout(commit))
        core = [f for f in fs if f.evidence.get("built_on")]
        assert len(core) == 7 and all(f.severity.value == "warning" and "imported_at_load" not in f.evidence
                                      for f in core), [(f.evidence["requires"], f.severity.value) for f in core]


def test_what_a_verl_checkout_imports_at_load_puts_its_requirements_on_verls_path_by_the_commit():
    """Real venv (Python 3.11.7): verl `--no-deps -e` from a checkout of main at 1dda039b9 and aiohttp 3.14.5
    `--no-deps`. `import aiohttp` raised "No module named 'multidict'", and verl/experimental/reward_loop/reward_loop.py:19
    imports aiohttp when the trainer loads (the import-surface table read that commit). check said aiohttp's missing
    requirements were warnings: the chain through what verl imports without requiring it looked verl up by its
    version, 0.10.0.dev0, which names no release. With the commit the checkout's git facts give (or pip's vcs commit)
    they are errors naming verl -> aiohttp; with no commit, or one the table did not read, they stay warnings."""
    def aiohttp(snap: Any) -> dict[str, Any]:
        snap.packages["aiohttp"].requires_dist = ["multidict<8.0,>=4.5", "yarl<2.0,>=1.25.1"]
        return {f.evidence["requires"]: f for f in _declared(snap) if f.evidence["package"] == "aiohttp"}

    fs = aiohttp(_verl_checkout(_VERL_MAIN_1DDA039, aiohttp="3.14.5"))
    assert {k: f.severity.value for k, f in fs.items()} == {"multidict": "error", "yarl": "error"}
    assert fs["multidict"].evidence["required_through"] == ["verl"]
    assert ("verl needs aiohttp through verl -> aiohttp (verl's modules import aiohttp when its trainer loads"
            in fs["multidict"].detail)
    snap = _verl_checkout(None, aiohttp="3.14.5")
    snap.packages["verl"].commit = _VERL_MAIN_1DDA039
    assert {f.severity.value for f in aiohttp(snap).values()} == {"error"}
    for commit in (None, "0" * 40):
        fs = aiohttp(_verl_checkout(commit, aiohttp="3.14.5"))
        assert {k: f.severity.value for k, f in fs.items()} == {"multidict": "warning", "yarl": "warning"}
        assert "required_through" not in fs["multidict"].evidence


def _system(packages: dict[str, Any], managed: bool = True) -> Any:
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "complete": True, "packages": packages,
                               "python": {"version": "3.11.2", "implementation": "CPython",
                                          "executable": "/usr/bin/python3", "externally_managed": managed}})


@pytest.mark.parametrize("location", ["/usr/lib/python3/dist-packages", "/usr/lib64/python3.12/site-packages"])
def test_an_os_packages_unmet_requirement_is_info_whose_fix_is_the_os_package_manager(location):
    # Debian's python3-gi (an egg-info, no INSTALLER) declares pycairo, which Debian ships as python3-gi-cairo:
    # `doctor check --python /usr/bin/python3` on this machine's Debian gave a warning to install it with pip
    gi = {"version": "3.42.2", "location": location, "requires_dist": ["pycairo>=1.16.0"],
          "metadata": f"{location}/PyGObject-3.42.2.egg-info/PKG-INFO"}
    (f,) = _declared(_system({"pygobject": gi}))
    assert (f.id, f.severity.value) == ("requirement-missing", "info")
    assert f.evidence["os_package"] == location and "OS package manager" in f.detail
    assert f.fix.commands == () and "not pip" in f.fix.text
    # the same files where pip put them, by pip, or on an interpreter the OS does not manage: pip check's warning
    for other in (_system({"pygobject": {**gi, "location": "/usr/local/lib/python3.11/dist-packages"}}),
                  _system({"pygobject": {**gi, "installer": "pip"}}), _system({"pygobject": gi}, managed=False)):
        (w,) = _declared(other)
        assert w.severity.value == "warning" and "os_package" not in w.evidence


def test_an_os_package_on_verls_import_path_stays_an_error():
    numpy = {"version": "1.24.2", "location": "/usr/lib/python3/dist-packages", "requires_dist": [],
             "metadata": "/usr/lib/python3/dist-packages/numpy-1.24.2.egg-info/PKG-INFO"}
    verl = {"version": "0.9.1", "location": "/usr/local/lib/python3.11/dist-packages", "installer": "pip",
            "requires_dist": ["numpy>=2.0.0"]}
    fs = [f for f in _declared(_system({"numpy": numpy, "verl": verl})) if f.evidence.get("requires") == "numpy"]
    assert [(f.id, f.severity.value) for f in fs] == [("requirement-version-unmet", "error")]


def _fixture(name: str) -> dict[str, Any]:
    return json.loads((Path(__file__).parent / "data" / name).read_text())["packages"]


def test_an_extra_another_packages_requirement_rules_out_and_nothing_asks_for_is_a_warning():
    """Real venv (Python 3.11.7, `pip install 'verl[vllm]==0.8.0' vllm==0.12.0`, pyarrow 25.0.1): every import of verl's
    vLLM rollout and trainer works, and pip check is clean. flashinfer-python 0.5.3 asks for nvidia-cudnn-frontend
    without an extra; pip took 1.32.0, whose [triton] extra wants triton>=3.7.0, while torch 2.9.0 requires
    triton==3.5.0. Nothing asks for nvidia-cudnn-frontend[triton] (pip would refuse it beside this torch), and
    `import cudnn` loads the kernels that need triton on first use. The named-extras rule called it an error on verl's
    path. The lines are the wheels' own (tests/checks/data)."""
    pk = _fixture("verl080_vllm012_cudnn_frontend.json")
    snap = _snap(pk, complete=False, python="3.11.7", arch="x86_64")
    (f,) = [f for f in _declared(snap) if f.evidence["requires"] == "triton"]
    assert (f.id, f.severity.value) == ("requirement-version-unmet", "warning")
    assert f.evidence["package"] == "nvidia-cudnn-frontend" and f.evidence["extra"] == "triton"
    assert f.evidence["held_by"] == {"torch": "triton==3.5.0"}
    assert "Nothing installed asks for nvidia-cudnn-frontend[triton]" in f.detail
    assert "torch 2.9.0 requires triton==3.5.0" in f.detail
    assert "(its [triton] extra, which nothing installed asks for)" in f.title and "in use since" not in f.title
    assert f.fix.commands == () and "Nothing to change" in f.fix.text
    # the same extra with nothing holding triton there (no torch pin): the integration may be in use, an error
    free = {**pk, "torch": {"version": "2.9.0", "requires_dist": ["triton"]}}
    (g,) = [g for g in _declared(_snap(free, complete=False, python="3.11.7", arch="x86_64"))
            if g.evidence["requires"] == "triton"]
    assert g.severity.value == "error" and "held_by" not in g.evidence
    # a pin the installed triton does not meet either is no evidence of what holds it: the rule stays as it was
    off = {**pk, "torch": {"version": "2.9.0", "requires_dist": ["triton==3.4.0"]}}
    (h,) = [h for h in _declared(_snap(off, complete=False, python="3.11.7", arch="x86_64"))
            if h.evidence["requires"] == "triton" and h.evidence["package"] == "nvidia-cudnn-frontend"]
    assert h.severity.value == "error" and "held_by" not in h.evidence
    # a package that asks for nvidia-cudnn-frontend[triton] makes it a requirement: pip check's own rule, an error
    asked = {**pk, "flashinfer-python": {"version": "0.5.3", "requires_dist": ["nvidia-cudnn-frontend[triton]>=1.13.0",
                                                                               "torch"]}}
    (k,) = [k for k in _declared(_snap(asked, complete=False, python="3.11.7", arch="x86_64"))
            if k.evidence["requires"] == "triton"]
    assert k.severity.value == "error" and "extra_inferred" not in k.evidence and "held_by" not in k.evidence
    # what really breaks when an integration is in use stays an error through what the code imports: transformers
    # 4.57.6's [torch] extra (torch>=2.2) beside a torch 2.1.0 that torch-npu 2.1.0 pins is this same shape, and
    # transformers reads torch.utils._pytree.register_pytree_node at load, which torch 2.1.0 lacks
    tf = {"transformers": {"version": "4.57.6", "requires_dist": ['torch>=2.2; extra == "torch"']},
          "torch": {"version": "2.1.0", "requires_dist": []}, "torch-npu": {"version": "2.1.0",
                                                                             "requires_dist": ["torch==2.1.0"]}}
    report = diagnose([(None, _snap(tf, complete=False), None)])
    assert any(x.severity.value == "error" and x.id == "package-imports-missing-name" and "transformers" in x.title
               for x in report.findings)


def test_the_0_7_1_stack_as_the_real_world_tier_installed_it_gives_info_for_what_upstream_leaves():
    """The real-world tier's install of verl-0.7.1-cann8.5.0-a2 (2026-12-07), as its pip check and post-install check
    saw it: Megatron-LM core_v0.12.1 installed --no-deps (its requirements would take numpy 2.x), vLLM 0.13.0's
    xgrammar==0.1.27 moved by vllm-ascend's xgrammar>=0.1.30, xgrammar's triton removed for triton-ascend, vllm-ascend's
    fastapi<0.124 under prometheus-fastapi-instrumentator 8's starlette>=1, pyvers' packaging<26 under
    vcs-versioning's >=26.2. Each is upstream's, named by the profile with its source: info, not an error."""
    from doctor.knowledge.profiles import load_profiles

    p = next(p for p in load_profiles() if p.name == "verl-0.7.1-cann8.5.0-a2")
    megatron = ["flask-restful", "nltk", "pytest-cov", "pytest-random-order", "zarr", "tensorstore!=0.1.46,!=0.1.72",
                "nvidia-modelopt[torch]>=0.23.2; sys_platform != \"darwin\"", "einops", "packaging"]
    snap = _snap({
        "megatron-core": {"version": "0.12.1", "requires_dist": megatron},
        "einops": {"version": "0.8.1", "requires_dist": []},
        "vllm": {"version": "0.13.0+empty", "requires_dist": [
            'xgrammar==0.1.27; platform_machine == "x86_64" or platform_machine == "aarch64"',
            "prometheus-fastapi-instrumentator>=7.0.0"]},
        "vllm-ascend": {"version": "0.13.1.dev14+g06a285f37", "requires_dist": ["xgrammar>=0.1.30", "setuptools-scm>=8"]},
        "xgrammar": {"version": "0.2.9", "requires_dist": ['triton; platform_system == "Linux" and platform_machine == "x86_64"']},
        "prometheus-fastapi-instrumentator": {"version": "8.1.0", "requires_dist": ["starlette<2.0.0,>=1.0.0"]},
        "starlette": {"version": "0.50.0", "requires_dist": []},
        "setuptools-scm": {"version": "9.2.2", "requires_dist": ["vcs-versioning"]},
        "vcs-versioning": {"version": "2.6.0", "requires_dist": ["packaging>=26.2"]},
        "packaging": {"version": "25.0", "requires_dist": []},
    }, python="3.11.7", arch="x86_64")
    fs = _declared(snap, p)
    assert len(fs) == 11
    assert [f.title for f in fs if f.severity.value != "info"] == []


@pytest.mark.parametrize("name", ["verl-0.6.1-cann8.2.rc1-a2", "verl-0.6.1-cann8.2.rc1-a3"])
def test_the_0_6_1_stack_as_the_real_world_tier_installed_it_gives_info_for_what_upstream_leaves(name):
    """The real-world tier's install of verl-0.6.1-cann8.2.rc1-a2 (2026-12-07), as its post-install check saw it:
    vLLM v0.9.1's xgrammar 0.1.19 requires triton on x86_64, which vllm-ascend v0.9.1's Dockerfile (and the doctor)
    uninstall; pyvers' packaging<26 (tensordict, requirements-npu.txt) under vcs-versioning's >=26.2 (setuptools-scm,
    vllm-ascend's). Each is upstream's, named by the profile with its source: info, not an error."""
    from doctor.knowledge.profiles import load_profiles

    p = next(p for p in load_profiles() if p.name == name)
    snap = _snap({
        "vllm": {"version": "0.9.1+empty", "requires_dist": [
            'xgrammar==0.1.19; platform_machine == "x86_64" or platform_machine == "aarch64"']},
        "xgrammar": {"version": "0.1.19", "requires_dist": ['triton; platform_system == "Linux" and platform_machine == "x86_64"']},
        "vllm-ascend": {"version": "0.9.1", "requires_dist": ["setuptools-scm>=8"]},
        "setuptools-scm": {"version": "9.2.2", "requires_dist": ["vcs-versioning"]},
        "vcs-versioning": {"version": "2.6.0", "requires_dist": ["packaging>=26.2"]},
        "tensordict": {"version": "0.10.0", "requires_dist": ["pyvers<0.2.0,>=0.1.0"]},
        "pyvers": {"version": "0.1.0", "requires_dist": ["packaging<26"]},
        "packaging": {"version": "25.0", "requires_dist": []},
    }, python="3.11.7", arch="x86_64")
    fs = _declared(snap, p)
    assert sorted(f.title for f in fs) == [
        "vcs-versioning 2.6.0 requires packaging>=26.2, but packaging 25.0 is installed",
        "xgrammar 0.1.19 requires triton, which is not installed"]
    assert [f.title for f in fs if f.severity.value != "info"] == []
