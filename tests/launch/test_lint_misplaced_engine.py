"""`actor_rollout_ref.actor.model_engine=megatron` is refused by Hydra (model_engine is a config group, set at the top
level), so the FSDP actor is composed and every `….megatron.*` key of the script is then "not in this FSDP config".
Upstream's examples/tuning/scaling/run_qwen2_5_32b_megatron.sh (v0.8.0 to main) writes it: lint gave 7 errors with
one cause (router_replay's script 15). The misplaced override is now the one error, the megatron keys listed in it;
with `model_engine=megatron` at the top level the same script lints with no error (it composes)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.realworld.upstream import mirror_git_dir

CONFIGS = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent"))
SCRIPT = "examples/tuning/scaling/run_qwen2_5_32b_megatron.sh"
MISPLACED = "actor_rollout_ref.actor.model_engine=megatron"


def _errors(script: Path) -> list[dict]:
    config = CONFIGS / "0.9.0" / "verl" / "trainer" / "config"
    if not config.is_dir():
        pytest.skip(f"needs {config}")
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", "0.9.0", "--verl-config", str(config)])
    return [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]


def test_a_misplaced_model_engine_is_one_error_listing_the_megatron_keys(tmp_path):
    git_dir = mirror_git_dir("verl-project+verl")
    if git_dir is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    text = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"v0.9.0:{SCRIPT}"], check=True,
                          capture_output=True, text=True).stdout
    assert MISPLACED in text
    script = tmp_path / "upstream.sh"
    script.write_text(text, encoding="utf-8")
    errors = _errors(script)
    assert [(f["id"], f["key"]) for f in errors] == [("launch-key-not-in-config",
                                                      "actor_rollout_ref.actor.model_engine")], errors
    keys = errors[0]["evidence"]["keys"]
    assert len(keys) == 6 and "actor_rollout_ref.actor.megatron.tensor_model_parallel_size" in keys, keys
    assert all(".megatron." in k for k in keys)
    fixed = tmp_path / "fixed.sh"
    fixed.write_text(text.replace(MISPLACED, "model_engine=megatron"), encoding="utf-8")
    assert _errors(fixed) == []
