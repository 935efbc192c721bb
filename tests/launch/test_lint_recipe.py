"""`doctor lint` on verl-recipe's NPU/megatron scripts (tests/fixtures/verl-recipe/README.md: repository, commit,
paths), composed against the real verl 0.9.1 package with the recipe mounted beside it as `recipe/`, the way verl
runs them (its `recipe/` submodule, from the repository root). Each test names what lint said before:

- a `hydra.searchpath` entry with no scheme (`verl/trainer/config`): "verl's config does not compose", where Hydra
  reads it as `file://` relative to the working directory, the verl root, and composes;
- `+key`s in a section whose `_target_` is a verl dataclass, under a recipe's entry point whose own workers read the
  section as a mapping: errors ("verl would stop with TypeError"), now warnings that say on what they depend;
- EP*ETP*PP against a node count the script takes from the environment with a default (`NNODES=${NNODES:-1}`): an
  error for one node, now a warning that names the default.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.launch.helpers import require_verl_config

RECIPE = Path(__file__).resolve().parents[1] / "fixtures" / "verl-recipe"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A verl root: the real verl 0.9.1 package (config and dataclass source) with the recipe beside it."""
    root = tmp_path_factory.mktemp("verl-root")
    shutil.copytree(require_verl_config().parents[1], root / "verl",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copytree(RECIPE, root / "recipe")
    return root


def lint(tree: Path, script: str) -> list[tuple[str, str, str | None, str]]:
    r = CliRunner().invoke(cli, ["--json", "lint", str(tree / "recipe" / script), "--verl-version", "0.9.1",
                                 "--verl-config", str(tree / "verl" / "trainer" / "config")])
    assert r.stdout.strip(), r.output
    return [(f["severity"], f["id"], f.get("key"), f["title"]) for f in json.loads(r.stdout)["findings"]]


def test_a_searchpath_entry_without_a_scheme_is_a_file_path_from_the_verl_root(tree):
    found = lint(tree, "dapo/dapo_transfer_queue/30B_megatron_dapo_npu.sh")
    assert not [f for f in found if f[1] == "launch-compose-failed"]
    composed = [f for f in found if f[1] == "launch-schema-composed"]
    assert composed and "dapo_transfer_queue_trainer" in composed[0][3]


def test_plus_keys_in_verl_dataclass_sections_under_a_recipes_own_workers_are_warnings(tree):
    found = lint(tree, "dance_grpo/dance_grpo_mindspeed_mm/run_verl_dance.sh")
    closed = [f for f in found if f[1] == "launch-key-not-in-config" and "which has no field" in f[3]]
    assert {f[2] for f in closed} >= {"actor_rollout_ref.model.reward_model_path", "actor_rollout_ref.rollout.latent_w"}
    assert {f[0] for f in closed} == {"warning"}
    assert all("if recipe.dance_grpo.dance_grpo_mindspeed_mm.main_dance builds it with verl's workers" in f[3]
               for f in closed)


def test_verl_own_entry_point_still_gets_the_error(tree, tmp_path):
    script = tree / "recipe" / "own.sh"
    script.write_text("python3 -m verl.trainer.main_ppo +actor_rollout_ref.model.reward_model_path=/x\n")
    found = lint(tree, "own.sh")
    assert ("error", "launch-key-not-in-config", "actor_rollout_ref.model.reward_model_path") in [f[:3] for f in found]


def test_a_node_count_from_an_environment_default_makes_the_world_size_a_warning(tree):
    found = lint(tree, "low_precision/run_dapo_qwen3_moe_30b_megatron_fp8e2e.sh")
    world = [f for f in found if f[1] == "launch-expert-world-indivisible"]
    assert [(f[0], f[3]) for f in world] == [
        ("warning", "8 NPUs are not divisible by EP*ETP*PP = 8*1*2 = 16 — with the script's default trainer.nnodes=1, "
                    "which the environment may replace (NNODES)")]


def test_a_node_count_the_script_fixes_still_decides(tree):
    text = (tree / "recipe" / "low_precision" / "run_dapo_qwen3_moe_30b_megatron_fp8e2e.sh").read_text()
    fixed = tree / "recipe" / "low_precision" / "fixed.sh"
    fixed.write_text(text.replace("NNODES=${NNODES:-1}", "NNODES=1"))
    found = lint(tree, "low_precision/fixed.sh")
    assert [f[0] for f in found if f[1] == "launch-expert-world-indivisible"] == ["error"]
