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
