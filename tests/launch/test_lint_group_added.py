"""A config group option only a later release has is one finding, not one per key of its section. verl main's
automodel SFT script (examples/sft/gsm8k/run_qwen2_5_0_5b_automodel.sh at 1dda039b9) writes `engine=automodel`,
`optim=automodel` and then `engine.tp_size=1`, `engine.distributed_strategy=fsdp2`, …; engine/automodel.yaml is in the
0.8.0 wheel and not in 0.7.1's. Linted for 0.7.1, Hydra composes the default FSDP engine in its place, and lint gave
nine errors: the two rejected options and each engine/optim key "added in verl 0.8.0 (FSDPEngineConfig has no
field …)". Now: one launch-group-added-later per option, naming 0.8.0, with the keys listed in it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.launch.helpers import verl_file

CONFIGS = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent"))
MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"
SCRIPT = "examples/sft/gsm8k/run_qwen2_5_0_5b_automodel.sh"


def _errors(script: Path, version: str) -> list[dict]:
    config = CONFIGS / version / "verl" / "trainer" / "config"
    if not config.is_dir():
        pytest.skip(f"needs {config}")
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", version, "--verl-config", str(config)])
    return [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]


def test_automodel_options_linted_for_071_are_one_finding_each(tmp_path):
    script = verl_file(tmp_path, MAIN, SCRIPT)
    errors = _errors(script, "0.7.1")
    assert [(f["id"], f["key"]) for f in errors] == [("launch-group-added-later", "engine"),
                                                     ("launch-group-added-later", "optim")], errors
    assert all(f["evidence"]["added_in"] == "0.8.0" for f in errors)
    assert "engine.tp_size" in errors[0]["evidence"]["keys"]
    assert errors[1]["evidence"]["keys"] == ["optim.init_lr_ratio"]
    # the release that has the options: neither this finding nor the per-key ones
    assert [f["id"] for f in _errors(script, "0.8.0")] == []
