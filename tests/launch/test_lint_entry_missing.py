"""`python -m verl.trainer.main_generation` (and `verl.trainer.fsdp_sft_trainer`) at a release without the module:
the 0.7.0 wheel has verl/trainer/main_generation.py, the 0.7.1 wheel has only main_generation_server.py. Such a run
stops at "No module named …" before Hydra reads a config; lint said "verl's config does not compose" (no
generation.yaml either), which names the wrong cause. Against a tree that carries verl's Python files (an unpacked
real wheel here), the missing module is the one error; against a directory of config files only, nothing is known
and the finding stays Hydra's."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.launch.helpers import verl_file

CONFIGS = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent"))
SCRIPT = "examples/generation/run_deepseek_v2_lite_math.sh"  # upstream's, unchanged from v0.7.0 to v0.7.1


def _wheel_tree(tmp_path: Path, version: str) -> Path:
    """verl/ of the real PyPI wheel, unpacked as pip would lay it out in site-packages."""
    wheel = CONFIGS / "wheels" / f"verl-{version}-py3-none-any.whl"
    if not wheel.is_file():
        pytest.skip(f"needs {wheel}")
    root = tmp_path / version
    with zipfile.ZipFile(wheel) as z:
        z.extractall(root, [n for n in z.namelist() if n.startswith("verl/")])
    return root / "verl" / "trainer" / "config"


def _script(tmp_path: Path) -> Path:
    return verl_file(tmp_path, "v0.7.1", SCRIPT)


def _errors(script: Path, version: str, config: Path) -> list[dict]:
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", version, "--verl-config", str(config)])
    return [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]


def test_main_generation_missing_from_the_071_wheel_is_the_one_error(tmp_path):
    """Against the 0.7.1 wheel the missing module is the one error; the same script against the 0.7.0 wheel (which
    ships the module) and against 0.7.1's config files alone (no Python files to say so) is not this finding."""
    script = _script(tmp_path)
    errors = _errors(script, "0.7.1", _wheel_tree(tmp_path, "0.7.1"))
    assert [f["id"] for f in errors] == ["launch-entry-missing"], errors
    assert "no verl/trainer/main_generation.py" in errors[0]["title"]
    assert errors[0]["evidence"]["near"] == ["main_generation_server"]
    assert "launch-entry-missing" not in [f["id"] for f in _errors(script, "0.7.0", _wheel_tree(tmp_path, "0.7.0"))]
    config = CONFIGS / "0.7.1" / "verl" / "trainer" / "config"
    if config.is_dir():
        assert "launch-entry-missing" not in [f["id"] for f in _errors(script, "0.7.1", config)]


def _cache_tree(tmp_path: Path, version: str) -> Path:
    """The release as `doctor lint --verl-version X` reads it: the doctor's own cache unpacking of the real wheel."""
    from doctor.launch.verl_release import _unpack

    wheel = CONFIGS / "wheels" / f"verl-{version}-py3-none-any.whl"
    if not wheel.is_file():
        pytest.skip(f"needs {wheel}")
    _unpack(wheel, tmp_path / "cache" / version)
    return tmp_path / "cache" / version / "verl" / "trainer" / "config"


@pytest.mark.parametrize("tree", [_wheel_tree, _cache_tree])
def test_experimental_entry_the_071_wheel_left_out_is_no_error(tmp_path, tree):
    """v0.7.1's own tests/special_npu/run_one_step_off_policy.sh runs verl.experimental.one_step_off_policy.main_ppo,
    which the v0.7.1 tag has and its PyPI wheel does not (that directory has no __init__.py, so the wheel carries only
    its config/*.yaml): lint said launch-entry-missing, an error, on an upstream NPU script that runs from a checkout
    (verl's Ascend install guide: pip install -v -e .). It is a warning naming the wheel, and the script is composed
    against the one_step_off_ppo_trainer config the wheel does carry, with no error."""
    script = verl_file(tmp_path, "v0.7.1", "tests/special_npu/run_one_step_off_policy.sh")
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", "0.7.1", "--verl-config",
                                 str(tree(tmp_path, "0.7.1"))])
    found = json.loads(r.stdout)["findings"]
    assert [f["id"] for f in found if f["severity"] == "error"] == [], found
    (w,) = [f for f in found if f["id"] == "launch-entry-not-in-wheel"]
    assert w["severity"] == "warning"
    assert w["evidence"]["package"] == "verl/experimental/one_step_off_policy"
    composed = [f for f in found if f["id"] == "launch-schema-composed"]
    assert composed and "one_step_off_ppo_trainer" in composed[0]["title"], found
