"""A key the target verl does not have and a later release does is named with the release that added it ("added
in verl 0.9.1 (the target is verl 0.9.0)"), not a bare "no such section": the script was written for a newer verl.
The releases come from removed_keys.json's `added_in` (tools/verl_removed_keys.py: the first release whose composed
trainer config has each key path the oldest release lacks).

The script is upstream's (tests/fixtures/verl-main/README.md): main's run_qwen3_8b_megatron.sh sets
`ray_kwargs.ray_init.runtime_env.py_executable`, which verl 0.9.1 added.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.removed_keys import added_after
from tools.verl_removed_keys import first_releases

SCRIPT = Path(__file__).resolve().parents[1] / "fixtures" / "verl-main" / "examples" / "grpo_trainer" / \
    "run_qwen3_8b_megatron.sh"
CONFIG_090 = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent")) / "0.9.0" / "verl" / "trainer" / "config"
PY_EXECUTABLE = "ray_kwargs.ray_init.runtime_env.py_executable"


@pytest.mark.skipif(not CONFIG_090.is_dir(), reason="needs DOCTOR_TEST_VERL_CONFIGS/0.9.0 (verl 0.9.0's config)")
def test_a_key_of_a_later_release_names_it_and_the_target():
    r = CliRunner().invoke(cli, ["--json", "lint", str(SCRIPT), "--verl-version", "0.9.0", "--verl-config",
                                 str(CONFIG_090)])
    report = json.loads(r.stdout)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [(f["id"], f["key"]) for f in errors] == [("launch-key-added-later", PY_EXECUTABLE)]
    f = errors[0]
    assert f["title"] == f"{PY_EXECUTABLE} was added in verl 0.9.1 (the target is verl 0.9.0)"
    assert f["evidence"]["added_in"] == "0.9.1" and r.exit_code == 1  # Hydra refuses it: still an error


def test_the_release_that_added_a_key_or_its_section():
    assert added_after(PY_EXECUTABLE, "0.9.0") == (PY_EXECUTABLE, "0.9.1")
    assert added_after("ray_kwargs.ray_init.runtime_env.no_such_key", "0.9.0") == ("ray_kwargs.ray_init.runtime_env",
                                                                                   "0.9.1")
    assert added_after(PY_EXECUTABLE, "0.9.1") is None  # the target has it
    assert added_after(PY_EXECUTABLE, "0.10.0.dev20260822") is None  # main is after 0.9.1
    assert added_after("ray_kwargs.ray_init.no_such_key", "0.9.0") is None  # its section is in 0.9.0: a typo
    assert added_after("trainer.total_epochs", "0.4.0") is None  # in every release
    assert added_after(PY_EXECUTABLE, "not-a-version") is None


def test_added_in_agrees_with_present_in():
    """Both come from the same composed configs: a removed key that the oldest release lacked was added by the first
    release present_in lists."""
    data = json.loads((Path(__file__).resolve().parents[2] / "doctor" / "launch" / "removed_keys.json").read_text())
    oldest = data["releases"][0]
    for key, had in data["present_in"].items():
        if oldest not in had:
            assert data["added_in"][key] == had[0], key
        else:
            assert key not in data["added_in"], key
    assert set(data["added_in"].values()) <= set(data["releases"][1:])


def test_first_releases():
    present = {"0.4.0": {"a"}, "0.5.0": {"a", "b"}, "0.6.0": {"a", "c"}, "0.7.0": {"a", "b", "c"}}
    assert first_releases(present, ["0.4.0", "0.5.0", "0.6.0", "0.7.0"]) == {"b": "0.5.0", "c": "0.6.0"}
