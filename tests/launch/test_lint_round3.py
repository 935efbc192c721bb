"""Issue 26 (lint/launch round 3): advice from the schema (`+` only where a mapping is open, removed keys named
with their release), values typed against the config, overrides cut off from their entry point, every entry
point composed, engines per device, the NPU target inferred, parameter counts from the model config.

The releases' configs come from their wheels (tests/launch/conftest.py points pip at a local wheelhouse,
DOCTOR_TEST_VERL_CONFIGS/wheels), unpacked into the per-run cache as `doctor lint --verl-version X` does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli

WHEELS = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent")) / "wheels"
needs_wheels = pytest.mark.skipif(not WHEELS.is_dir(), reason="no verl wheelhouse (DOCTOR_TEST_VERL_CONFIGS/wheels)")
HEAD = """#!/bin/bash
python3 -m verl.trainer.main_ppo trainer.device=npu \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \\
"""


@pytest.fixture(autouse=True)
def _wheelhouse(monkeypatch):
    """Releases come from the local wheelhouse only (whatever PIP_FIND_LINKS the host sets)."""
    monkeypatch.setenv("PIP_FIND_LINKS", str(WHEELS))
    monkeypatch.setenv("PIP_NO_INDEX", "1")


def lint(text: str, *args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(cli, ["--json", "lint", "-", *args], input=text)
    assert r.stdout.strip(), r.output
    return r.exit_code, json.loads(r.stdout)


def by_key(report: dict, key: str) -> list[dict]:
    return [f for f in report["findings"] if f["key"] == key]


# --- item 1: '+' only where the mapping is open; removed keys named with their release -------------------

@needs_wheels
def test_no_plus_advice_for_a_dataclass_section():
    """0.7.1's CheckpointConfig has no `strict`: `+` would fail at start-up with a TypeError, so it is not advised,
    and a `+` already written is an error; an open dict (engine_kwargs.vllm) still gets the `+` advice."""
    _, report = lint(HEAD + "    actor_rollout_ref.actor.checkpoint.strict=False \\\n"
                            "    actor_rollout_ref.rollout.engine_kwargs.vllm.foo=1\n", "--verl-version", "0.7.1")
    strict = by_key(report, "actor_rollout_ref.actor.checkpoint.strict")
    assert [f["id"] for f in strict] == ["launch-key-added-later"] and strict[0]["severity"] == "error"
    assert strict[0]["title"].endswith("was added in verl 0.8.0 (the target is verl 0.7.1)")
    assert "CheckpointConfig" in strict[0]["detail"] and "+actor" not in strict[0]["fix"]["text"]
    vllm = by_key(report, "actor_rollout_ref.rollout.engine_kwargs.vllm.foo")
    assert [f["id"] for f in vllm] == ["launch-key-needs-plus"]
    code, report = lint(HEAD + "    +actor_rollout_ref.actor.checkpoint.strict=False\n", "--verl-version", "0.7.1")
    plus = by_key(report, "actor_rollout_ref.actor.checkpoint.strict")
    assert code == 1 and plus and plus[0]["severity"] == "error" and "TypeError" in plus[0]["fix"]["text"]
    code, report = lint(HEAD + "    actor_rollout_ref.actor.checkpoint.strict=False\n", "--verl-version", "0.8.0")
    assert not by_key(report, "actor_rollout_ref.actor.checkpoint.strict")  # 0.8.0 has the field


@needs_wheels
def test_removed_key_names_its_release_for_any_section():
    """trainer.use_legacy_worker_impl went in 0.8.0 (verl #6067): named so, not a did-you-mean; with `+` it is
    accepted and read by nothing, which is said too."""
    _, report = lint(HEAD + "    trainer.use_legacy_worker_impl=disable\n", "--verl-version", "0.8.0")
    f = by_key(report, "trainer.use_legacy_worker_impl")
    assert [x["id"] for x in f] == ["launch-key-removed"] and "removed in verl 0.8.0" in f[0]["title"]
    _, report = lint(HEAD + "    +trainer.use_legacy_worker_impl=disable\n", "--verl-version", "0.9.0")
    f = by_key(report, "trainer.use_legacy_worker_impl")
    assert [x["id"] for x in f] == ["launch-key-removed"] and f[0]["severity"] == "warning"
    assert "nothing reads it" in f[0]["title"]
    _, report = lint(HEAD + "    trainer.use_legacy_worker_impl=disable\n", "--verl-version", "0.7.1")
    assert not by_key(report, "trainer.use_legacy_worker_impl")  # still there in 0.7.1


def test_removed_table_is_computed_from_consecutive_releases():
    from doctor.launch.removed_keys import removed_in

    assert removed_in("trainer.use_legacy_worker_impl", "0.8.0")[1:] == ("0.7.1", "0.8.0")
    assert removed_in("trainer.use_legacy_worker_impl", "0.7.1") is None
    assert removed_in("reward_model.megatron.dtype", "0.9.1")[0] == "reward_model.megatron.dtype"



# --- item 4: values typed against the config -----------------------------------------------------------

TYPED = """#!/bin/bash
python3 -m verl.trainer.main_ppo trainer.device=npu \\
    actor_rollout_ref.actor.use_kl_loss={kl} \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro} \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2 \\
    actor_rollout_ref.actor.optim.lr=1e-6 data.max_prompt_length=512 trainer.total_epochs=15 \\
    actor_rollout_ref.rollout.name={name} algorithm.adv_estimator={adv}
"""


@needs_wheels
@pytest.mark.parametrize("version", ["0.6.1", "0.8.0"])
def test_values_are_checked_against_the_configs_types(version):
    """`use_kl_loss=Ture` is a type error (not a truthy string); `ppo_micro_batch_size_per_gpu=one` is a type
    error, not "micro batch size is not set"; a rollout engine or advantage estimator the release does not have
    is named with the ones it has; correct values give nothing."""
    code, report = lint(TYPED.format(kl="Ture", micro="one", name="vllmm", adv="grpoo"), "--verl-version", version)
    got = {(f["id"], f["key"]) for f in report["findings"] if f["severity"] == "error"}
    assert ("launch-value-type", "actor_rollout_ref.actor.use_kl_loss") in got
    assert ("launch-value-type", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu") in got
    assert ("launch-value-not-allowed", "actor_rollout_ref.rollout.name") in got
    assert ("launch-value-not-allowed", "algorithm.adv_estimator") in got
    assert not any(i == "launch-micro-batch-missing" for i, _ in got) and code == 1
    code, report = lint(TYPED.format(kl="True", micro="1", name="vllm", adv="grpo"), "--verl-version", version)
    assert [f for f in report["findings"] if f["severity"] == "error"] == []


# --- item 3: overrides cut off from the entry point -------------------------------------------------------

CUT = """#!/bin/bash
ARGS=(actor_rollout_ref.rollout.n=4 trainer.total_epochs=2)
python3 -m verl.trainer.main_ppo trainer.device=npu \\
    data.train_batch_size=16
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1

python3 -m verl.trainer.main_ppo trainer.device=npu actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    "${ARGS[@]}"
echo done
"""


def test_overrides_cut_off_from_the_entry_point_are_an_error_naming_both_lines():
    """An entry-point line that ends without `\\` leaves the next lines to run as a command of their own (two
    scripts of verl PR #5266): override words, or an array expansion of them, right after it are an error."""
    code, report = lint(CUT, "--verl-version", "0.9.1")
    cut = [f for f in report["findings"] if f["id"] == "lint-overrides-cut-off"]
    assert code == 1 and [(f["evidence"]["entry_line"], f["evidence"]["entry_end"], f["evidence"]["line"])
                          for f in cut] == [(3, 4, 5), (8, 9, 10)]
    assert all(f["severity"] == "error" for f in cut) and "line 4" in cut[0]["fix"]["text"]
    assert cut[1]["evidence"]["overrides"] == ["actor_rollout_ref.rollout.n=4", "trainer.total_epochs=2"]
    fixed = CUT.replace("train_batch_size=16\n", "train_batch_size=16 \\\n").replace(
        "log_prob_micro_batch_size_per_gpu=1\n    \"$", "log_prob_micro_batch_size_per_gpu=1 \\\n    \"$")
    _, report = lint(fixed, "--verl-version", "0.9.1")
    assert not [f for f in report["findings"] if f["id"] == "lint-overrides-cut-off"]


def test_a_finding_about_a_key_set_on_a_cut_off_line_is_fixed_by_the_backslash():
    """A `doctor launch` script whose line lost its `\\` on hand-editing: the overrides after it (n_gpus_per_node=16,
    the rollout log-prob micro batch) never reach the run, so verl's defaults give 'NPUs are not divisible by
    TP*PP*CP' and 'log_prob micro batch size is not set'. Those findings used to come first with their own fixes
    (choose another TP/PP, set the key the script does set); the cut-off is now first, and theirs name it."""
    text = """#!/bin/bash
python3 -m verl.trainer.main_ppo trainer.device=npu model_engine=megatron actor_rollout_ref.actor.strategy=megatron \\
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=8 \\
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=4 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.n=8
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \\
    trainer.n_gpus_per_node=16 \\
    trainer.nnodes=4
"""
    code, report = lint(text, "--verl-version", "0.9.1")
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert code == 1 and errors[0]["id"] == "lint-overrides-cut-off"
    blamed = {f["key"]: f for f in errors[1:] if f.get("key") in (
        "trainer.n_gpus_per_node", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu")}
    assert set(blamed) == {"trainer.n_gpus_per_node", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu"}
    assert blamed["trainer.n_gpus_per_node"]["fix"]["text"] == (
        "End line 6 with ` \\`: line 7 sets trainer.n_gpus_per_node=16, which the run never receives.")
    assert "cut off" in blamed["actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu"]["detail"]


# --- item 2: every entry point that composes verl's trainer config ----------------------------------------

ONE_STEP = """#!/bin/bash
python3 -m verl.experimental.one_step_off_policy.main_ppo trainer.device=npu \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \\
    rollout.nnodes=1 rollout.n_gpus_per_node=4 {bad}
"""


def composed(report: dict) -> list[str]:
    return [f["evidence"]["config_name"] for f in report["findings"] if f["id"] == "launch-schema-composed"]


@needs_wheels
def test_one_step_off_policy_composes_with_its_searchpath_relative_to_the_verl_root():
    """Its yaml says `hydra.searchpath: [file://verl/trainer/config]`, relative to where verl runs (its source
    root), not to the doctor's working directory: no false launch-compose-failed, and its keys are checked."""
    code, report = lint(ONE_STEP.format(bad=""), "--verl-version", "0.8.0")
    assert composed(report) == ["one_step_off_ppo_trainer"] and code == 0, report["findings"]
    _, report = lint(ONE_STEP.format(bad="rollout.nnodez=1"), "--verl-version", "0.8.0")
    assert [f["key"] for f in report["findings"] if f["severity"] == "error"] == ["rollout.nnodez"]


@needs_wheels
def test_fully_async_main_is_an_entry_point_and_composes_through_pkg_searchpath():
    """`verl.experimental.fully_async_policy.fully_async_main` (searchpath `pkg://verl.trainer.config`: the
    release's package, not whatever verl is importable here)."""
    text = ONE_STEP.replace("one_step_off_policy.main_ppo", "fully_async_policy.fully_async_main").format(
        bad="async_training.staleness_threshold=Ture")
    code, report = lint(text, "--verl-version", "0.8.0")
    assert report["invocations"] and report["invocations"][0]["entry"].endswith("fully_async_main")
    assert composed(report) == ["fully_async_ppo_trainer"]
    assert [(f["id"], f["key"], f["severity"]) for f in report["findings"] if f["id"] == "launch-value-type"] == \
        [("launch-value-type", "async_training.staleness_threshold", "warning")]  # a yaml number default only


SFT = """set -x
torchrun --standalone --nnodes=1 --nproc_per_node=8 \\
     -m verl.trainer.fsdp_sft_trainer \\
    data.train_files=$HOME/data/gsm8k/train.parquet \\
    data.micro_batch_size_per_gpu={micro} \\
    model.partial_pretrain=Qwen/Qwen2.5-0.5B-Instruct \\
    trainer.total_epochs=1 $@ \\
    model.lora_rank=32 ulysses_sequence_parallel_size=2 use_remove_padding=true trainer.device=npu
"""


@needs_wheels
def test_sft_trainer_under_torchrun_is_linted_against_the_sft_config():
    """verl v0.5.0's tests/special_npu/run_qwen2_5_05b_sft_peft_sp2.sh shape: torchrun … -m fsdp_sft_trainer
    composes sft_trainer (main_ppo's batch rules do not apply), and its keys and values are checked."""
    code, report = lint(SFT.format(micro=32), "--verl-version", "0.6.1")
    assert composed(report) == ["sft_trainer"] and code == 0, [f["title"] for f in report["findings"]]
    _, report = lint(SFT.format(micro="thirty"), "--verl-version", "0.6.1")
    assert [(f["id"], f["key"]) for f in report["findings"] if f["severity"] == "error"] == \
        [("launch-value-type", "data.micro_batch_size_per_gpu")]


@needs_wheels
def test_absolute_config_path_inside_a_verl_tree_is_that_releases_config():
    """`--config-path=/verl/trainer/config` (a container's checkout) means the linted release's trainer config."""
    text = HEAD.replace("main_ppo ", "main_ppo --config-path=/verl/trainer/config --config-name=ppo_trainer ") \
        + "    trainer.nnodez=1\n"
    _, report = lint(text, "--verl-version", "0.8.0")
    assert composed(report) == ["ppo_trainer"]
    assert [f["key"] for f in report["findings"] if f["severity"] == "error"] == ["trainer.nnodez"]


# --- items 5, 6, 7: engines per device, Megatron keys in an FSDP run, the NPU target --------------------------

BASE = """#!/bin/bash
{env}python3 -m verl.trainer.main_ppo {device}\\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \\
    {extra}
"""


def test_trtllm_rollout_is_an_error_on_npu_and_nothing_on_gpu(verl_config_dir):
    """verl's own example refuses INFER_BACKEND=trtllm with DEVICE=npu; vllm and sglang run on Ascend."""
    text = BASE.format(env="", device="trainer.device=npu ", extra="actor_rollout_ref.rollout.name=trtllm")
    code, report = lint(text, "--verl-version", "0.9.1")
    hit = [f for f in report["findings"] if f["id"] == "launch-rollout-not-on-npu"]
    assert code == 1 and hit and hit[0]["severity"] == "error" and hit[0]["key"] == "actor_rollout_ref.rollout.name"
    _, report = lint(text.replace("trainer.device=npu", "trainer.device=cuda"), "--verl-version", "0.9.1")
    assert not [f for f in report["findings"] if f["id"] == "launch-rollout-not-on-npu" and f["severity"] != "info"]
    _, report = lint(text.replace("=trtllm", "=sglang"), "--verl-version", "0.9.1")
    assert not [f for f in report["findings"] if f["id"] == "launch-rollout-not-on-npu"]


def test_megatron_key_in_an_fsdp_run_says_it_needs_the_megatron_engine(verl_config_dir):
    """Not a did-you-mean to the rollout's TP: the key exists only with the megatron engine."""
    text = BASE.format(env="", device="trainer.device=npu ",
                       extra="actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2")
    _, report = lint(text, "--verl-version", "0.9.1")
    f = by_key(report, "actor_rollout_ref.actor.megatron.tensor_model_parallel_size")
    assert f and "needs the megatron engine" in f[0]["title"] and "model_engine=megatron" in f[0]["fix"]["text"]
    assert "rollout.tensor_model_parallel_size" not in f[0]["fix"]["text"] and "did_you_mean" not in f[0]["evidence"]


@pytest.mark.parametrize("env,name,want", [
    ("export HCCL_CONNECT_TIMEOUT=1500\n", "run.sh", True),
    ("export VLLM_ASCEND_ENABLE_NZ=0\n", "run.sh", True),
    ("", "run_qwen3_8b_npu.sh", True),
    ("", "run.sh", None),
])
def test_npu_target_inferred_from_what_the_script_says(env, name, want, tmp_path, monkeypatch, verl_config_dir):
    """Ascend/HCCL/vllm-ascend variables and an `*_npu.sh` name say NPU; when nothing says, what breaks on an NPU
    (trtllm here) is a warning, not info."""
    from doctor.launch import lint_script

    monkeypatch.setattr(lint_script, "HOST_NPUS", str(tmp_path / "no-davinci[0-9]*"))
    script = tmp_path / name
    script.write_text(BASE.format(env=env, device="", extra="actor_rollout_ref.rollout.name=trtllm"))
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", "0.9.1"])
    report = json.loads(r.stdout)
    hit = [f for f in report["findings"] if f["id"] == "launch-rollout-not-on-npu"]
    assert hit and hit[0]["severity"] == ("error" if want else "warning")
    engine = next(f for f in report["findings"] if f["id"] == "lint-engine")
    assert engine["evidence"]["npu"] is want


def test_npus_on_this_host_make_it_the_target(tmp_path, monkeypatch, verl_config_dir):
    from doctor.launch import lint_script

    (tmp_path / "davinci0").write_text("")
    monkeypatch.setattr(lint_script, "HOST_NPUS", str(tmp_path / "davinci[0-9]*"))
    _, report = lint(BASE.format(env="", device="", extra="actor_rollout_ref.rollout.name=trtllm"), "--verl-version",
                     "0.9.1")
    assert [f["severity"] for f in report["findings"] if f["id"] == "launch-rollout-not-on-npu"] == ["error"]


# --- item 8: launch's parameter count -------------------------------------------------------------------------

# config.json fields of the models the README names (and Qwen2.5-7B, the case), as published on the Hub.
HUB = {
    "Qwen2.5-7B": ({"architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
                    "intermediate_size": 18944, "num_attention_heads": 28, "num_hidden_layers": 28,
                    "num_key_value_heads": 4, "vocab_size": 152064, "tie_word_embeddings": False,
                    "rms_norm_eps": 1e-06, "model_type": "qwen2"}, 7.62e9),
    "Qwen3-8B": ({"architectures": ["Qwen3ForCausalLM"], "hidden_act": "silu", "hidden_size": 4096, "head_dim": 128,
                  "intermediate_size": 12288, "num_attention_heads": 32, "num_hidden_layers": 36,
                  "num_key_value_heads": 8, "vocab_size": 151936, "tie_word_embeddings": False,
                  "rms_norm_eps": 1e-06, "model_type": "qwen3"}, 8.19e9),
    "Qwen2.5-0.5B-Instruct": ({"architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 896,
                               "intermediate_size": 4864, "num_attention_heads": 14, "num_hidden_layers": 24,
                               "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
                               "rms_norm_eps": 1e-06, "model_type": "qwen2"}, 0.494e9),
    "Qwen3-30B-A3B": ({"architectures": ["Qwen3MoeForCausalLM"], "hidden_act": "silu", "hidden_size": 2048,
                       "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
                       "num_experts_per_tok": 8, "num_attention_heads": 32, "num_hidden_layers": 48,
                       "num_key_value_heads": 4, "vocab_size": 151936, "tie_word_embeddings": False,
                       "rms_norm_eps": 1e-06, "model_type": "qwen3_moe"}, 30.5e9),
}


@pytest.mark.parametrize("name", sorted(HUB))
def test_parameter_count_from_the_model_config(name):
    """GQA attention, the MLP's intermediate size, tied embeddings and every expert counted: within 2% of the
    published size (12·L·h² + V·h gave 4.86B for Qwen2.5-7B)."""
    from doctor.launch.model_config import parameters, parse_model_config

    cfg, want = HUB[name]
    got = parameters(parse_model_config(cfg))
    assert got is not None and abs(got - want) / want < 0.02, (name, got)


def test_qwen25_7b_gets_the_large_model_defaults_and_the_index_total_size_wins(tmp_path):
    """The README's rule (a dense model of ≥ ~5B follows the large-model example) holds for Qwen2.5-7B; the
    safetensors index's total_size (bytes / dtype size) is the count when it is there."""
    from doctor.launch.examples import LARGE, SMALL, closest
    from doctor.launch.model_config import load_model_config, parameters

    d = tmp_path / "Qwen2.5-7B"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({**HUB["Qwen2.5-7B"][0], "torch_dtype": "bfloat16"}))
    assert closest(load_model_config(d)) is LARGE
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 2 * 3_000_000_000}}))
    m = load_model_config(d)
    assert parameters(m) == 3e9 and closest(m) is SMALL


# --- what kept entry points of verl main from being linted: bash semantics the walker missed ----------------

def test_walker_joins_an_array_in_a_scalar_assignment_and_splits_it_again():
    """verl main's run_nemotron_nano_v3_megatron.sh: `E="${A[@]}"` joins with spaces, `${E}` splits again
    (it gave one word `engine=megatronoptim=…`, a false launch-override-syntax)."""
    from doctor.launch.script_parser import parse_script

    text = 'b=${B:-megatron}\nA=(\n  engine=${b}\n  optim=${b}\n)\nE="${A[@]}"\n' \
           'torchrun --nproc_per_node=8 -m verl.trainer.sft_trainer ${E} trainer.x=1\n'
    assert parse_script(text).invocations[0].args == ["engine=megatron", "optim=megatron", "trainer.x=1"]


def test_walker_takes_both_ways_of_an_arithmetic_condition_on_unknown_values_and_of_the_argument_count():
    """`if ((N <= 0)); then exit 1; fi` with N from the environment, and `[ "$#" -lt 2 ] && exit` (verl v0.5.0's
    SFT example): the entry point after them is reached (they were taken as always true)."""
    from doctor.launch.script_parser import parse_script

    arith = 'N=${N:-$((G / 2))}\nif ((N <= 0)); then\n  exit 1\nfi\npython3 -m verl.trainer.main_ppo a.b=1\n'
    assert len(parse_script(arith).invocations) == 1
    argc = 'if [ "$#" -lt 2 ]; then\n  exit 1\nfi\ntorchrun -m verl.trainer.fsdp_sft_trainer a.b=$1\n'
    assert len(parse_script(argc).invocations) == 1
    known = 'if ((2 > 3)); then\n  exit 1\nfi\npython3 -m verl.trainer.main_ppo a.b=1\nif ((1)); then exit 1; fi\n' \
            'python3 -m verl.trainer.main_ppo a.b=2\n'
    assert [c.args for c in parse_script(known).invocations] == [["a.b=1"]]


# --- items 9, 10: per release, what upstream's NPU examples set and install ------------------------------------

def test_launch_writes_the_releases_npu_quick_start_rollout_settings(tmp_path, verl_config_dir):
    """verl 0.9.x's tests/special_npu/quick_start sets enable_chunked_prefill=False and cudagraph_mode=
    FULL_AND_PIECEWISE on the vLLM rollout: launch writes them for the small-model defaults (cited), the composed
    config accepts them; a release whose NPU examples do not set them gets none."""
    from tests.launch.helpers import QWEN3_06B, write_model

    model = write_model(tmp_path, "Qwen3-0.6B", QWEN3_06B)
    r = CliRunner().invoke(cli, ["launch", "--model", model, "--tp", "2", "--verl-version", "0.9.1",
                                 "--format", "overrides"])
    assert r.exit_code == 0, r.output
    assert "actor_rollout_ref.rollout.enable_chunked_prefill=False" in r.stdout.splitlines()
    assert "+actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode=FULL_AND_PIECEWISE" \
        in r.stdout.splitlines()
    r = CliRunner().invoke(cli, ["--json", "launch", "--model", model, "--tp", "2", "--verl-version", "0.9.1",
                                 "-o", str(tmp_path / "run.sh")])
    ex = next(f for f in json.loads(r.stdout)["findings"] if f["id"] == "launch-defaults-from-example")
    assert ex["evidence"]["rollout_tuning_source"].endswith("tests/special_npu/quick_start")
    from doctor.launch.features import npu_rollout_settings

    assert npu_rollout_settings("0.8.0", "vllm")[0] == ()


def test_vanilla_mbridge_decided_by_the_releases_npu_install(verl_config_dir):
    """verl 0.9.x's Ascend images install Megatron-Bridge: vanilla_mbridge=False is not a warning there (info,
    citing the install); with --no-megatron-bridge it is still an error."""
    text = ("python3 -m verl.trainer.main_ppo model_engine=megatron trainer.device=npu "
            "actor_rollout_ref.actor.megatron.vanilla_mbridge=False "
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 "
            "+actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True\n")
    _, report = lint(text, "--verl-version", "0.9.1")
    f = [x for x in report["findings"] if x["id"] == "launch-vanilla-mbridge"]
    assert [x["severity"] for x in f] == ["info"] and "Dockerfile.ascend" in f[0]["source"]
    _, report = lint(text, "--verl-version", "0.9.1", "--no-megatron-bridge")
    assert [x["severity"] for x in report["findings"] if x["id"] == "launch-vanilla-mbridge"] == ["error"]


def test_walker_keeps_the_blank_between_two_expansions_in_a_double_quoted_string():
    """verl main's tests/special_e2e/sft/run_sft_engine.sh: COMMAND="torchrun --nproc-per-node=${N:-1} ${ENTRYPOINT}"
    (tree-sitter puts that blank inside the second expansion's token; it was lost: `=1-m`, no entry point)."""
    from doctor.launch.script_parser import parse_script

    text = 'E=${E:-"-m verl.trainer.sft_trainer"}\nC="torchrun --nproc-per-node=${N:-1} ${E}"\n$C a.b=1\n' \
           'python3 -m verl.trainer.main_ppo "x.y=${N:-1} ${N:-2}"\n'
    calls = parse_script(text).invocations
    assert [c.args for c in calls] == [["a.b=1"], ["x.y=1 2"]]


def test_a_word_where_only_a_numeric_yaml_default_says_number_is_a_warning(verl_config_dir):
    """A word where only a numeric yaml default says a number is a warning, not an error; verl's SFT trainer's own
    trainer.test_freq=after_each_epoch (its code compares the key with that word: verl main
    tests/special_e2e/sft/run_sft_engine.sh) is no finding at all (tests/launch/test_lint_sft.py)."""
    text = "torchrun -m verl.trainer.sft_trainer trainer.test_freq=after_each_epoch trainer.total_epochs=two\n"
    _, report = lint(text, "--verl-version", "0.9.1")
    sev = {f["key"]: f["severity"] for f in report["findings"] if f["id"] == "launch-value-type"}
    assert sev == {"trainer.total_epochs": "warning"}
    _, report = lint(text.replace("trainer.total_epochs=two", "data.micro_batch_size_per_gpu=two"), "--verl-version",
                     "0.9.1")  # a batch size verl divides by: an integer whatever the default says
    assert ("launch-value-type", "data.micro_batch_size_per_gpu", "error") in \
        [(f["id"], f["key"], f["severity"]) for f in report["findings"]]


def test_a_generation_server_is_not_held_to_the_trainers_batch_rules(verl_config_dir):
    """verl v0.9.0 examples/generation/run_deepseek_llm_7b.sh runs main_generation_server, which starts rollout
    servers and generates: no actor is trained, so no micro batch size is needed (it drew two errors). The
    rollout's own rules still apply."""
    def ids(entry: str, tp: int) -> set[str]:
        _, report = lint(f"#!/bin/bash\npython3 -m {entry} trainer.device=npu trainer.n_gpus_per_node=8 \\\n"
                         f"    actor_rollout_ref.rollout.tensor_model_parallel_size={tp}\n")
        return {f["id"] for f in report["findings"] if f["severity"] == "error"}

    assert {"launch-micro-batch-missing", "launch-log-prob-micro-batch-missing"} <= ids("verl.trainer.main_ppo", 2)
    assert ids("verl.trainer.main_generation_server", 2) == set()
    assert "launch-rollout-tp-indivisible" in ids("verl.trainer.main_generation_server", 3)


def test_an_actor_from_config_not_here_leaves_the_engine_unknown_not_fsdp(verl_config_dir, tmp_path, monkeypatch):
    """verl v0.9.0's Megatron Lite examples select `actor@actor_rollout_ref.actor=mlite_actor` from
    pkg://verl_mlite.config: where that package is not installed, verl's default actor (FSDP) was composed in its place
    and lint said "engine fsdp". The engine is what the outside actor says: unknown here, known where it is."""
    def engine(package: str) -> dict:
        _, report = lint(f"#!/bin/bash\npython3 -m verl.trainer.main_ppo hydra.searchpath=[pkg://{package}.config] \\\n"
                         "    actor@actor_rollout_ref.actor=lite_actor trainer.device=npu trainer.n_gpus_per_node=8\n")
        return next(f for f in report["findings"] if f["id"] == "lint-engine")

    absent = engine("absent_lite_engine_xyz")
    assert absent["evidence"]["engine"] == "unknown"
    assert "actor@actor_rollout_ref.actor=lite_actor" in absent["title"] and "fsdp" not in absent["title"]
    pkg = tmp_path / "present_lite_engine_xyz" / "config" / "actor"
    pkg.mkdir(parents=True)
    (pkg.parent.parent / "__init__.py").write_text("")
    (pkg.parent / "__init__.py").write_text("")
    (pkg / "lite_actor.yaml").write_text("strategy: megatron\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert engine("present_lite_engine_xyz")["evidence"]["engine"] == "megatron"
