"""`doctor lint` on every NPU / Ascend / megatron script of verl-recipe (github.com/verl-project/verl-recipe, the
repository verl mounts as `recipe/`), each against the verl its recipe pins in REQUIRED_VERL.txt (a tag, or a commit
of verl; the rolling pin where a recipe gives both; verl main 1dda039b9 where it pins none), composed from a git
mirror of both repositories ($DOCTOR_REALWORLD_MIRRORS: verl-project+verl, verl-project+verl-recipe) laid out as verl
runs them: the verl tree at the pin with the recipe repository as its `recipe/`. Skipped where the mirrors are not
here (CI has neither).

Every error must be one verified below with real Hydra against the same config (each listed one must still be
found). Before lint's fixes for this input there were 21 errors on 48 scripts; 9 were not true (7 `+key`s a recipe's
own workers read from a mapping, a `hydra.searchpath` without a scheme, a node count the job sets).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.realworld.upstream import mirror_git_dir

RECIPE_HEAD = "48ea0a797fa29867ea0ad92aff7d284eec7d4be3"
MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"
_SELECT = r"ASCEND|HCCL|device=npu|vllm_ascend|mindspeed|megatron|npu"

# Each composed with real Hydra (hydra-core 1.3.8) against the pinned config, from the verl root:
TRUE_ERRORS = {
    # `MODEL_PATH="<path_to_dsv3_config>"`, a placeholder left in: OverrideParseException (LexerNoViableAltException)
    "dapo/test_dapo_dspk_671b_megatron_96gb.sh": {"actor_rollout_ref.model.path",
                                                  "actor_rollout_ref.actor.megatron.dist_checkpointing_path",
                                                  "actor_rollout_ref.ref.megatron.dist_checkpointing_path"},
    # "Could not append to config. An item is already at 'algorithm.filter_groups.enable'" (fully_async_ppo_megatron)
    "low_precision/run_dapo_asyncrl_qwen3_moe_30b_fp8rollout.sh": {"algorithm.filter_groups.enable",
                                                                   "algorithm.filter_groups.max_num_gen_batches"},
    # no pin (verl main): "Could not override 'trainer.use_legacy_worker_impl'"
    "low_precision/run_dapo_qwen3_moe_30b_megatron_fp8e2e.sh": {"trainer.use_legacy_worker_impl"},
    "low_precision/run_dapo_qwen3_moe_30b_megatron_trtllm_fp8e2e.sh": {"trainer.use_legacy_worker_impl"},
    # rolling pin bcb638649 (prime_trainer): "Could not override 'reward_model.micro_batch_size_per_gpu'" / '….input_tokenizer'
    "prime/run_prime_qwen.sh": {"reward_model.micro_batch_size_per_gpu", "reward_model.model.input_tokenizer"},
    "prime/run_prime_qwen_code.sh": {"reward_model.micro_batch_size_per_gpu", "reward_model.model.input_tokenizer"},
    # pin v0.6.1 (sft_trainer_engine): "Could not override 'data.ignore_input_ids_mismatch'" (no such key in 0.6.1)
    "retool/run_qwen2_7b_sft_npu.sh": {"data.ignore_input_ids_mismatch"},
}


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True).stdout


def _pin(text: str) -> str:
    """The verl revision a REQUIRED_VERL.txt names: the rolling commit, else the commit, else the tag."""
    fields = dict(re.findall(r"^([A-Z_]+)=(\S+)", text, re.M))
    return (fields.get("ROLLING_VERL_COMMIT") or fields.get("VERL_COMMIT") or fields.get("TAG") or fields.get("COMMIT")
            or MAIN)


def test_every_recipe_npu_script_lints_without_an_error_hydra_does_not_confirm(tmp_path):
    verl, recipe = mirror_git_dir("verl-project+verl"), mirror_git_dir("verl-project+verl-recipe")
    if verl is None or recipe is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl and verl-project+verl-recipe")
    if subprocess.run(["git", f"--git-dir={recipe}", "cat-file", "-e", f"{RECIPE_HEAD}^{{commit}}"]).returncode:
        pytest.skip(f"the verl-recipe mirror has no {RECIPE_HEAD}")
    names = [n.split(":", 1)[1] for n in _git(recipe, "grep", "-l", "-i", "-E", _SELECT, RECIPE_HEAD, "--",
                                               "*.sh").decode().split()]
    assert len(names) > 40, names
    pins = {str(Path(n).parent): _git(recipe, "show", f"{RECIPE_HEAD}:{n}").decode()
            for n in _git(recipe, "ls-tree", "-r", "--name-only", RECIPE_HEAD).decode().split()
            if n.endswith("REQUIRED_VERL.txt")}
    trees: dict[str, Path] = {}
    unexpected, found = [], {n: set() for n in TRUE_ERRORS}
    for name in names:
        rev = next((_pin(pins[d]) for d in map(str, Path(name).parents) if d in pins), MAIN)  # the nearest pin
        if rev not in trees:
            tree = trees[rev] = tmp_path / rev[:12]
            (tree / "recipe").mkdir(parents=True)
            subprocess.run(["tar", "-x", "-C", str(tree)], input=_git(verl, "archive", rev, "verl"), check=True)
            subprocess.run(["tar", "-x", "-C", str(tree / "recipe")], input=_git(recipe, "archive", RECIPE_HEAD),
                           check=True)
        tree = trees[rev]
        version = "0.10.0.dev20260822" if rev == MAIN else (tree / "verl/version/version").read_text().strip()
        r = CliRunner().invoke(cli, ["--json", "lint", str(tree / "recipe" / name), "--verl-version", version,
                                     "--verl-config", str(tree / "verl/trainer/config")])
        assert r.stdout.strip(), (name, r.output)
        for f in json.loads(r.stdout)["findings"]:
            if f["severity"] != "error":
                continue
            if f.get("key") in TRUE_ERRORS.get(name, ()):
                found[name].add(f["key"])
            else:
                unexpected.append((name, version, f["id"], f.get("key"), f["title"]))
    assert unexpected == []
    assert found == TRUE_ERRORS
