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
                  "tensordict": {"version": "0.9.0"}})
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


def test_unknown_facts_stay_silent():
    pkgs = {"somelib": {"version": "1.0", "requires_dist": ['only-arm; platform_machine == "aarch64"', "absent-lib"],
                        "requires_python": ">=3.11"}}
    # no arch: the arch marker is not judged; incomplete snapshot: "not installed" is not said; no python: no
    # Requires-Python verdict
    assert _declared(_snap(pkgs, complete=False, arch=None, python=None)) == []
    # an old snapshot without declarations: the check skips
    assert _declared(_snap({"verl": {"version": "0.9.1"}})) == []


def test_requires_python_unmet_is_a_finding():
    snap = _snap({"verl": {"version": "0.9.1", "requires_python": "<3.13,>=3.10", "requires_dist": []}}, python="3.9.18")
    (f,) = _declared(snap)
    assert f.id == "requires-python-unmet" and f.severity.value == "error"
    assert f.components[0] == "python" and "verl 0.9.1 requires Python <3.13,>=3.10" in f.title


def test_prereleases_satisfy_a_specifier_as_pip_check_judges_them():
    snap = _snap({"vllm-ascend": {"version": "0.11.0rc1", "requires_dist": ["torch-npu>=2.7.1"]},
                  "torch-npu": {"version": "2.7.1rc1"}})
    # pip check compares with prereleases=True: 2.7.1rc1 < 2.7.1 is unmet, the rc itself is not excluded
    assert [f.id for f in _declared(snap)] == ["requirement-version-unmet"]
    snap2 = _snap({"vllm-ascend": {"version": "0.11.0rc1", "requires_dist": ["torch-npu>=2.7.1.dev0"]},
                   "torch-npu": {"version": "2.7.1rc1"}})
    assert _declared(snap2) == []


def test_extras_asked_by_another_package_are_active():
    snap = _snap({
        "verl": {"version": "0.9.1", "requires_dist": ["ray[default]>=2.41.0"]},
        "ray": {"version": "2.46.0", "requires_dist": ["click>=7.0", 'aiohttp>=3.7; extra == "default"',
                                                       'fastapi; extra == "serve"']},
        "click": {"version": "8.1.7"},
    })
    (f,) = _declared(snap)
    assert f.evidence["requires"] == "aiohttp" and f.evidence["extra"] == "default" and f.severity.value == "error"
    assert "for its extra [default]" in f.title


def test_a_conflict_the_profile_names_as_upstreams_own_is_info():
    class P:
        name = "verl-x"
        upstream_conflicts = ({"package": "vllm-ascend", "requirement": "torch-npu==2.7.1",
                               "source": "https://github.com/vllm-project/vllm-ascend/issues/1"},)

    snap = _snap({"vllm-ascend": {"version": "0.11.0", "requires_dist": ["torch-npu==2.7.1"]},
                  "torch-npu": {"version": "2.7.1.post1"}})
    (f,) = _declared(snap, P())
    assert f.severity.value == "info" and f.source == "https://github.com/vllm-project/vllm-ascend/issues/1"
    (g,) = _declared(snap)
    assert g.severity.value == "error"


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
    for d in (os.environ.get("DOCTOR_TEST_VERL_CONFIGS"), "/work/verl-configs"):
        if d:
            hits = sorted((Path(d) / "wheels").glob("verl-0.9.1-*.whl"))
            if hits:
                return hits[0]
    return None


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
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", str(py), "--only", "packages"],
                       capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    missing = [f for f in rep["findings"] if f["id"] == "requirement-missing" and f["evidence"]["package"] == "verl"]
    assert missing and all(f["severity"] == "error" for f in missing)
    names = {f["evidence"]["requires"] for f in missing}
    assert {"codetiming", "hydra-core", "tensordict", "accelerate"} <= names
    assert all("verl-0.9.1.dist-info/METADATA" in f["evidence"]["metadata"] for f in missing)
    # the same verdicts through `check --from` on a collected snapshot
    snapfile = tmp_path / "snap.json"
    subprocess.run([sys.executable, "-m", "doctor", "collect", "--python", str(py), "-o", str(snapfile)],
                   check=True, timeout=300, env=env, cwd=str(tmp_path), capture_output=True)
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
