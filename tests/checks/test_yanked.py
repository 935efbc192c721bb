"""doctor/checks/yanked.py: an installed or stated release PyPI lists as yanked, judged with the real table
(profiles/requirements/, PyPI's release lists), and a real yanked wheel installed by real pip into a plain venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from doctor.checks.runner import CheckContext, Skipped
from doctor.snapshot.model import snapshot_from_dict

ROOT = Path(__file__).resolve().parents[2]


def _snap(packages: dict[str, Any]) -> Any:
    pk = {k: (v if isinstance(v, dict) else {"version": v}) for k, v in packages.items()}
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": pk,
                               "python": {"version": "3.11.9", "implementation": "CPython"}})


def _found(snap: Any, profile: Any = None) -> list[Any]:
    from doctor.checks.yanked import yanked_releases

    try:
        return list(yanked_releases(CheckContext(snapshot=snap, profile=profile)))
    except Skipped:
        return []


def test_a_yanked_release_is_a_warning_quoting_pypis_reason_with_the_next_release_of_its_line():
    (f,) = _found(_snap({"transformers": "4.57.0", "torch": "2.8.0"}))
    assert (f.id, f.severity.value, f.components) == ("release-yanked", "warning", ("transformers",))
    assert f.title == ('transformers 4.57.0 is a release PyPI lists as yanked: "Error in the setup causing '
                       'installation issues"')
    assert f.fix.commands == ("pip install 'transformers==4.57.1'",)
    assert "`transformers==4.57.0`" in f.fix.text
    assert f.source == "https://pypi.org/project/transformers/4.57.0/"
    assert f.evidence["later_release"] == "4.57.1" and f.evidence["table_read"] >= "2026-12-05"


def test_releases_pypi_did_not_yank_say_nothing():
    assert _found(_snap({"transformers": "4.57.1", "numpy": "2.4.1", "torch": "2.8.0", "verl": "0.9.1"})) == []


def test_a_yanked_release_without_a_reason_says_so_and_the_same_version_spelt_short_is_judged():
    fs = {f.evidence["package"]: f for f in _found(_snap({"wandb": "0.24.0", "numpy": "2.4"}))}
    assert fs["wandb"].title.endswith("yanked: (no reason given)") and "They gave no reason." in fs["wandb"].detail
    assert fs["wandb"].components == ("python",)  # no component of the doctor's own: the Python environment
    assert fs["numpy"].fix.commands == ("pip install 'numpy==2.4.1'",)


def test_a_pre_release_is_moved_to_the_next_final_release_not_to_another_candidate():
    (f,) = _found(_snap({"einops": "0.6.2rc0"}))
    assert f.evidence["later_release"] == "0.7.0" and "0.6.2 cancelled in favor of 0.7.0" in f.title


def test_a_later_release_of_another_line_is_not_called_one_of_its_line():
    """safetensors 0.3.3.post1 (and tokenizers 0.20.4) had no later 0.3 (0.20) release: the move is to 0.4.0
    (0.21.0), another minor line, and the fix must not call it "the first later release of its line"."""
    fs = {f.evidence["package"]: f for f in _found(_snap({"safetensors": "0.3.3.post1", "tokenizers": "0.20.4",
                                                           "numpy": "2.4.0"}))}
    assert fs["safetensors"].evidence["later_release"] == "0.4.0"
    assert fs["tokenizers"].evidence["later_release"] == "0.21.0"
    for name in ("safetensors", "tokenizers"):
        assert "of its line" not in fs[name].fix.text and "the first later release that PyPI did not yank" in fs[name].fix.text
    assert "the first later release of its line that PyPI did not yank" in fs["numpy"].fix.text


@pytest.mark.parametrize("pkg", [
    {"version": "2.4.0+cpu"},                                              # a local build, not PyPI's file
    {"version": "2.4.0", "editable": True},                                # an editable checkout
    {"version": "2.4.0", "url": "git+https://github.com/numpy/numpy@v2.4.0", "commit": "4a1b2c3"},  # a VCS install
    {"version": "2.4.0", "url": "file:///src/numpy"},                      # a local directory build
])
def test_another_build_than_the_file_pypi_yanked_is_not_judged(pkg):
    assert _found(_snap({"numpy": pkg})) == []


def test_the_yanked_wheel_itself_installed_from_a_wheelhouse_is_judged():
    (f,) = _found(_snap({"numpy": {"version": "2.4.0", "url": "file:///wh/numpy-2.4.0-cp311-cp311-manylinux_2_27_x86_64.whl"}}))
    assert f.id == "release-yanked"


def test_pypis_own_sdist_installed_by_its_url_is_judged():
    """`pip install https://files.pythonhosted.org/.../einops-0.6.2rc0.tar.gz` (a plain venv's pip records
    archive_info and that URL) installs the very file PyPI yanked, as `pip install --no-binary :all:
    einops==0.6.2rc0` does; an archive from anywhere else may be a build of other source and is not judged."""
    url = ("https://files.pythonhosted.org/packages/d1/d4/30c8c3ca796853641b935c676971b9ae65f08c4fb168abab3cc958512c49/"
           "einops-0.6.2rc0.tar.gz")
    (f,) = _found(_snap({"einops": {"version": "0.6.2rc0", "url": url}}))
    assert f.id == "release-yanked"
    assert _found(_snap({"einops": {"version": "0.6.2rc0", "url": "file:///src/dist/einops-0.6.2rc0.tar.gz"}})) == []


def test_the_stacks_own_source_build_is_not_judged():
    class Builds:
        def builds(self, name: str, version: str) -> bool:
            return name == "megatron-core"

    assert [f.id for f in _found(_snap({"megatron-core": "0.18.1"}))] == ["release-yanked"]
    assert _found(_snap({"megatron-core": "0.18.1"}), Builds()) == []


def test_check_from_a_bug_reports_versions_names_the_yanked_release():
    """The whole command on a versions-only snapshot (a bug report's stated versions)."""
    doc = {"schema": "doctor.snapshot/1", "python": {"version": "3.11.9"},
           "packages": {"torchvision": {"version": "0.15.0"}, "torch": {"version": "2.0.0"}}}
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", "-"], input=json.dumps(doc),
                       capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    rep = json.loads(r.stdout)
    (f,) = [f for f in rep["findings"] if f["id"] == "release-yanked"]
    assert f["title"].endswith('"Contains an incorrect torch dependency"') and f["severity"] == "warning"
    # torchvision requires torch: the line keeps the stated torch pinned, as every line that would resolve torch does
    assert f["fix"]["commands"] == ["pip install 'torchvision==0.15.1' torch==2.0.0"]


# -- a real yanked wheel, installed with the real pip of a plain venv ------------------------------------------


def _yanked_wheel() -> Path | None:
    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")  # nox -s tests downloads it next to the verl wheels
    hits = sorted((Path(d) / "wheels").glob("einops-0.6.2rc0-*.whl")) if d else []
    return hits[0] if hits else None


@pytest.mark.slow
def test_real_yanked_wheel_installed_by_pip_into_a_plain_venv_is_named_by_check(tmp_path):
    """einops 0.6.2rc0 as PyPI serves it (yanked: "0.6.2 cancelled in favor of 0.7.0"), installed into a
    `python3 -m venv` target by its bundled pip: `doctor check --python` on that target names it, read through
    the target's own importlib.metadata."""
    wheel = _yanked_wheel()
    if wheel is None:
        pytest.skip("no einops-0.6.2rc0 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--isolated", "--no-index", "-q", str(wheel)], check=True,
                   timeout=600)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", str(py), "--only", "packages"],
                       capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    rep = json.loads(r.stdout)
    (f,) = [f for f in rep["findings"] if f["id"] == "release-yanked"]
    assert f["evidence"]["package"] == "einops" and f["evidence"]["version"] == "0.6.2rc0"
    assert f["evidence"]["reason"] == "0.6.2 cancelled in favor of 0.7.0"
    assert f["fix"]["commands"] == [f"{py} -m pip install 'einops==0.7.0'"]  # run as the target's interpreter
    # without the yanked release the finding is gone (nothing downloads at test time, so no 0.7.0 is installed)
    subprocess.run([str(py), "-m", "pip", "uninstall", "-y", "-q", "einops"], check=True, timeout=300)
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", str(py), "--only", "packages"],
                       capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    assert not [f for f in json.loads(r.stdout)["findings"] if f["id"] == "release-yanked"]
