"""The pip the plan needs (issue 21, item 1): editable installs of setup.py-only projects through PEP 660, with the
pip a target made by `python3 -m venv` brings (23.2.1 on Python 3.11), not an upgraded one."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from doctor.errors import InputError
from doctor.installers import execute as ex
from doctor.installers.backends import PIP_FLOOR, PipBackend, Source
from doctor.installers.plan import EDITABLE, GitSource, Plan, Step, Target
from doctor.installers.satisfy import View, satisfied
from doctor.installers.target import Dist, TargetEnv, probe
from tests.installers.test_rollback_guard import bundled_pip_venv, pip, work_tree
from tests.installers.wheelkit import freeze, wheel_of_installed


def env_with(pip_version: str | None) -> TargetEnv:
    e = TargetEnv(python="/t/bin/python", version="3.10.0", prefix="/t", base_prefix="/usr", arch="x86_64",
                  glibc="2.35", purelib="/t/lib/python3.10/site-packages")
    if pip_version:
        e.dists["pip"] = Dist("pip", pip_version, "/t/lib/python3.10/site-packages/pip.dist-info")
    return e


def test_the_target_pip_is_brought_to_the_floor_as_a_journalled_step() -> None:
    target_pip = PipBackend(isolated=True, own=False)
    step = ex.pip_step(target_pip, env_with("21.2.3"))  # what ensurepip gives on Python 3.10.0
    assert step is not None and step.requirements == (f"pip>={PIP_FLOOR}",) and step.kind == "install"
    assert not satisfied(step, View(versions={"pip": "21.2.3"}))
    assert satisfied(step, View(versions={"pip": "23.2.1"}))  # 3.11's bundled pip: nothing to do
    # the doctor's own pip with --python runs the steps: the target's pip is not used, no step
    assert ex.pip_step(PipBackend(isolated=True, own="26.3"), env_with("21.2.3")) is None
    # a doctor pip without --python (< 22.3) is not used
    assert PipBackend(isolated=True, own="22.2").own is None
    with pytest.raises(InputError, match="ensurepip"):
        ex.pip_step(target_pip, env_with(None))


def test_editable_installs_ask_pip_for_pep_660() -> None:
    cmd = PipBackend(isolated=True, own=False).install("/t/bin/python", editable="/src/MindSpeed")
    assert cmd.argv[:3] == ("/t/bin/python", "-m", "pip")
    assert "--use-pep517" in cmd.argv and cmd.argv[-2:] == ("-e", "/src/MindSpeed")
    assert "--use-pep517" not in PipBackend(isolated=True).install("/t/bin/python", ["x==1"]).argv


@pytest.mark.slow
def test_bundled_pip_installs_a_setup_py_project_editable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run of issue 21: the target's pip 23.2.1 runs (the doctor's pip is as old, or absent), `wheel` is
    importable, MindSpeed has only a setup.py. The step must end as a PEP 660 editable install from the clone."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a))
    py = bundled_pip_venv(tmp_path / "venv")
    # real build tools, offline: the doctor's setuptools and packaging, and the `wheel` setuptools vendors
    build = wheel_of_installed("setuptools", tmp_path / "build")
    wheel_of_installed("packaging", build)
    wheel_of_installed("wheel", build, path=[_setuptools_vendor()])
    pip(py, "install", "--no-index", "--find-links", str(build), "wheel")  # what the vllm-ascend build deps bring
    assert probe(str(py)).dists["pip"].version == "23.2.1"
    src_dir = tmp_path / "venv" / "src"
    work_tree(src_dir / "MindSpeed")
    src = GitSource("MindSpeed", "https://gitcode.com/Ascend/MindSpeed.git", "core_r0.16.0", module="mindspeed")
    step = Step("install-mindspeed", EDITABLE, "Install MindSpeed editable", source=src, editable_dist="mindspeed",
                expect=(("mindspeed", "==0.16.0"),))
    plan = Plan("test", "", Target(str(py), "3.11", "x86_64", None, src_dir=str(src_dir)), (step,))
    out = ex.Executor(plan, PipBackend(isolated=True), str(py), log_path=tmp_path / "install.log",
                      source=Source(find_links=(str(build),), no_index=True)).run()
    assert out.ok, (out.error, (tmp_path / "install.log").read_text()[-3000:])
    assert [r.id for r in out.results] == ["pip", "install-mindspeed"]
    assert [r.status for r in out.results] == ["satisfied", "done"]
    assert "setup.py develop" not in (tmp_path / "install.log").read_text()
    d = probe(str(py)).dists["mindspeed"]
    assert d.editable and d.url == (src_dir / "MindSpeed").as_uri()
    assert json.loads(Path(d.dist_info, "direct_url.json").read_text())["dir_info"] == {"editable": True}
    assert "mindspeed==0.16.0" in freeze(py)



def _setuptools_vendor() -> str:
    spec = importlib.util.find_spec("setuptools")  # found, not imported (importing it patches distutils)
    assert spec is not None and spec.origin
    return str(Path(spec.origin).parent / "_vendor")


def test_a_develop_install_is_reported_as_what_it_is(tmp_path: Path) -> None:
    """Issue 21 item 7: not "wanted {'mindspeed': '==0.16.0'}, found {'mindspeed': '0.16.0'}" with a fix about the
    network, but what was expected, what was found, how it was read, and the fix that follows."""
    from doctor.installers.findings import outcome_findings
    from doctor.installers.satisfy import live_view

    e = env_with("23.2.1")
    src_dir = str(tmp_path / "src")
    e.dists["mindspeed"] = Dist("mindspeed", "0.16.0", f"{src_dir}/MindSpeed/mindspeed.egg-info", site=f"{src_dir}/MindSpeed")
    src = GitSource("MindSpeed", "https://gitcode.com/Ascend/MindSpeed.git", "core_r0.16.0", module="mindspeed")
    step = Step("install-mindspeed", EDITABLE, "Install MindSpeed editable", source=src, editable_dist="mindspeed",
                expect=(("mindspeed", "==0.16.0"),))
    view = live_view(e, src_dir=src_dir, sources=[], env_ok=True)
    reading, fix = ex.mismatch(step, e, view, src_dir)
    assert reading.startswith("mindspeed 0.16.0 is installed, but not as an editable install: no direct_url.json")
    assert "setup.py develop" in reading and "mindspeed.egg-info" in reading
    assert "PEP 660" in fix and "network" not in fix
    failed = ex.StepFailed(step, f"install-mindspeed: the step ran, but {reading}", fix=fix)
    out = ex.Outcome([ex.StepResult(step.id, step.kind, step.title, ex.FAILED, detail=str(failed))], ok=False,
                     changed=True, restored={"ok": True}, error=str(failed), fix=failed.fix)
    f = outcome_findings(out, "/log", "/t/bin/python")[0]
    assert f.id == "install-step-failed" and "not as an editable install" in f.detail
    assert "PEP 660" in str(f.fix) and "network" not in str(f.fix)


def test_a_cuda_torch_is_reported_by_its_missing_local_label() -> None:
    from doctor.installers.plan import INSTALL
    from doctor.installers.satisfy import live_view

    e = env_with("23.2.1")
    e.dists["torch"] = Dist("torch", "2.7.1", "/t/lib/python3.10/site-packages/torch-2.7.1.dist-info")
    step = Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",))
    reading, fix = ex.mismatch(step, e, live_view(e, src_dir=None, sources=[], env_ok=True), None)
    assert reading.startswith("torch is 2.7.1 (no local label: not the build the pin names), expected torch==2.7.1+cpu")
    assert "--index-url" in fix
