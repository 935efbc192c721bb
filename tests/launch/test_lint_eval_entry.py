"""verl's evaluation entry points (`verl.trainer.main_eval`, `recipe.r1.main_eval`) score a parquet of responses:
they compose `evaluation.yaml` (data, custom_reward_function, ray_kwargs), which has no actor, so main_ppo's batch
rules do not apply. Upstream runs them in recipe/open_math_reasoning/run_eval.sh, recipe/r1/run_r1_distill_qwen.sh
and tests/special_e2e/run_r1_distill_qwen_aime24_eval.sh (v0.6.1 to v0.7.1, and verl-recipe main).

Before, each was two errors: "actor micro batch size is not set", "rollout log_prob micro batch size is not set".
"""

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


def errors(path: Path, version: str) -> list[tuple[str, str]]:
    config = CONFIGS / version / "verl" / "trainer" / "config"
    if not config.is_dir():
        pytest.skip(f"needs {config}")
    r = CliRunner().invoke(cli, ["--json", "lint", str(path), "--verl-version", version, "--verl-config", str(config)])
    return [(f["id"], f["title"]) for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]


def test_the_evaluation_entry_is_not_held_to_the_trainers_batch_rules(tmp_path):
    script = tmp_path / "run_eval.sh"
    script.write_text("python3 -m verl.trainer.main_eval data.path=/data/out.parquet data.prompt_key=prompt \\\n"
                      "    custom_reward_function.path=reward.py\n", encoding="utf-8")
    assert errors(script, "0.7.1") == []


@pytest.mark.parametrize("name", ["tests/special_e2e/run_r1_distill_qwen_aime24_eval.sh",
                                  "recipe/open_math_reasoning/run_eval.sh"])
def test_upstreams_evaluation_runs_are_not_errors(tmp_path, name):
    git_dir = mirror_git_dir("verl-project+verl")
    if git_dir is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    script = tmp_path / name
    script.parent.mkdir(parents=True)
    script.write_bytes(subprocess.run(["git", f"--git-dir={git_dir}", "show", f"v0.7.0:{name}"], check=True,
                                      capture_output=True).stdout)
    assert errors(script, "0.7.0") == []
