"""`doctor lint` on real upstream input: every verl NPU example script at v0.6.1, v0.7.1 and v0.9.0 (in
shared/realworld/verl-scripts, with each tag's own config) lints with no error finding except the verified
upstream mistakes in KNOWN_BAD, and always gives one report; bash itself agrees with what the walker says each entry-point call
receives; and the issue's five defects each have a test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.script_parser import parse_script
from tests.conftest import SHARED
from tests.launch import bash_oracle

SCRIPTS_DIR = SHARED / "realworld" / "verl-scripts"
SCRIPTS = sorted(SCRIPTS_DIR.glob("v*/scripts/**/*.sh")) if SCRIPTS_DIR.is_dir() else []
KNOWN_BAD = {"v0.7.1/scripts/examples/grpo_trainer/run_qwen3_4b_grpo_vllm_1k_npu.sh": [("launch-override-syntax",
                                                                                       "trainer.experiment_name")],
             # `+actor_rollout_ref.actor.policy_loss.tau_pos/tau_neg`: 0.9.0's PolicyLossConfig (a `_target_`
             # dataclass) has no such fields (ActorConfig has tau_pos/tau_neg), and engine_workers.py builds the
             # actor with omega_conf_to_dataclass(config.actor) -> hydra instantiate -> PolicyLossConfig(**…):
             # TypeError at start-up. Seen once the release's dataclass source is read beside a bare config dir.
             "v0.9.0/scripts/examples/sapo_trainer/run_qwen3_8b_fsdp.sh": [
                 ("launch-key-not-in-config", "actor_rollout_ref.actor.policy_loss.tau_pos"),
                 ("launch-key-not-in-config", "actor_rollout_ref.actor.policy_loss.tau_neg")]}
needs_scripts = pytest.mark.skipif(not SCRIPTS, reason=f"no upstream scripts at {SCRIPTS_DIR}")


def _rel(p: Path) -> str:
    return str(p.relative_to(SCRIPTS_DIR))


def lint(*args: str, input: str | None = None) -> tuple[int, dict]:
    r = CliRunner().invoke(cli, ["--json", "lint", *args], input=input)
    assert r.stdout.strip(), r.output  # always one report
    return r.exit_code, json.loads(r.stdout)


def errors(report: dict) -> list[tuple[str, str | None]]:
    return [(f["id"], f["key"]) for f in report["findings"] if f["severity"] == "error"]


@needs_scripts
@pytest.mark.parametrize("script", SCRIPTS, ids=_rel)
def test_upstream_script_lints_against_its_own_tag(script):
    from doctor.launch.verl_release import release_config

    tag = script.relative_to(SCRIPTS_DIR).parts[0]
    cached = release_config(tag[1:])[0] is not None  # the release's dataclass source, for the bare config dir
    code, report = lint(str(script), "--verl-version", tag[1:], "--verl-config", str(SCRIPTS_DIR / tag / "config"))
    want = [w for w in KNOWN_BAD.get(_rel(script), []) if cached or w[0] != "launch-key-not-in-config"]
    assert errors(report) == want, [f["title"] for f in report["findings"] if f["severity"] == "error"]
    assert code == (1 if want else code) and report["invocations"]


@needs_scripts
@pytest.mark.parametrize("script", SCRIPTS, ids=_rel)
def test_bash_agrees_with_the_walker(script, tmp_path):
    """Oracle: bash runs the script in a sandbox where nothing real runs (tests/launch/bash_oracle.py); every
    entry-point call it makes matches one of the paths the walker found, word for word, and starts with the
    exported variables the walker says it does."""
    parsed = parse_script(script.read_text(encoding="utf-8"), str(script), str(script))
    envs = [{}] + [bash_oracle.environment_for(a.label) for c in parsed.invocations for a in c.alternatives]
    ran = 0
    for i, env in enumerate({json.dumps(e, sort_keys=True): e for e in envs}.values()):
        calls = bash_oracle.run_bash(script, tmp_path / str(i), env)
        environments = bash_oracle.environment_of_calls(tmp_path / str(i))
        ran += len(calls)
        for k, call in enumerate(calls):
            theirs = bash_oracle.after_entry(call)
            alts = [a for a in parsed.invocations[k].alternatives
                    if bash_oracle.matches(a, theirs) or _trailing_backslash(a.args, theirs)]
            assert alts, (env, theirs, [a.args for a in parsed.invocations[k].alternatives])
            # the exported variables the walker hands the call (what `doctor lint` judges) are bash's too
            assert any(bash_oracle.exports_agree(a, environments[k]) for a in alts), \
                (env, [a.exports for a in alts], {n: environments[k].get(n) for a in alts for n in a.exports})
    assert ran, "bash made no entry-point call"


def _trailing_backslash(ours: list[str], theirs: list[str]) -> bool:
    """A script whose last line ends in a backslash with no newline: bash passes a lone `\\` word the grammar
    drops (v0.7.1 run_qwen3_vl_30b_vllm_fsdp_npu.sh)."""
    return theirs[-1:] == ["\\"] and len(ours) == len(theirs) - 1


# --- the five defects ---------------------------------------------------------------------------

EXPANSION = r"""#!/usr/bin/env bash
set -euo pipefail
RAY_DATA_HOME=${RAY_DATA_HOME:-"${HOME}/verl"}
ROLLOUT_NAME=${1:-vllm}
ROLLOUT_CONFIG="actor_rollout_ref.rollout.n=4 actor_rollout_ref.rollout.gpu_memory_utilization=0.6"
cat > /tmp/never-run.sh <<EOF
python3 -m verl.trainer.main_ppo this=is data
EOF
python3 -m verl.trainer.main_ppo model_engine=megatron \
    data.max_response_length=$((1024 * 2)) \
    trainer.experiment_name=run_$(date +%Y%m%d)_`hostname` \
    data.train_files="$PWD"/data/gsm8k/train.parquet \
    data.val_files=${RAY_DATA_HOME}/data/test.parquet \
    actor_rollout_ref.rollout.name=${ROLLOUT_NAME} \
    $ROLLOUT_CONFIG \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \
    trainer.device=npu "$@"
"""


def test_defect_shell_expansion_is_bash_s(verl_config_dir):
    """Arithmetic, $(…), backticks, quotes inside ${…:-"…"}, partly quoted words, word splitting, positional
    defaults and a heredoc: no override-syntax error, the values bash would give, the heredoc is data."""
    code, report = lint("-", "--verl-version", "0.9.1", input=EXPANSION)
    assert [c["line"] for c in report["invocations"]] == [9]
    ovs = report["invocations"][0]["overrides"]
    assert "data.max_response_length=2048" in ovs and "actor_rollout_ref.rollout.name=vllm" in ovs
    assert "actor_rollout_ref.rollout.n=4" in ovs and "actor_rollout_ref.rollout.gpu_memory_utilization=0.6" in ovs
    assert "data.train_files=$PWD/data/gsm8k/train.parquet" in ovs
    assert "data.val_files=${HOME}/verl/data/test.parquet" in ovs
    assert not [f for f in report["findings"] if f["id"] == "launch-override-syntax"]
    assert errors(report) == []


BRANCHES = """#!/usr/bin/env bash
DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}
case "${DEVICE}" in
    gpu) export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ;;
    npu) export HCCL_CONNECT_TIMEOUT=1500 ;;
    *) exit 1 ;;
esac
case "${DEVICE}" in
    gpu) PP=${PP:-2}; n_devices=8 ;;
    npu) PP=${PP:-4}; n_devices=16 ;;
esac
if [ "$DEVICE" = npu ]; then EXTRA=trainer.device=npu; else EXTRA=trainer.device=cuda; fi
python3 -m verl.trainer.main_ppo model_engine=megatron \\
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=$PP \\
    trainer.n_gpus_per_node=$n_devices trainer.nnodes=16 data.train_batch_size=64 \\
    actor_rollout_ref.actor.ppo_mini_batch_size=32 actor_rollout_ref.rollout.n=5 \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 $EXTRA
"""


def test_defect_branches_are_alternatives(verl_config_dir):
    """PP and the NPU count come from the same branch (no false launch-mini-batch-dp on 16x16 NPUs with PP=4),
    and an error on one path only is a warning naming it."""
    code, report = lint("-", "--verl-version", "0.9.1", input=BRANCHES)
    assert errors(report) == []
    paths = report["invocations"][0]["paths"]
    assert len(paths) == 2 and any("npu)" in p["path"] for p in paths) and any("gpu)" in p["path"] for p in paths)
    npu = next(p for p in paths if "npu)" in p["path"])
    assert "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=4" in npu["overrides"]
    assert "trainer.n_gpus_per_node=16" in npu["overrides"] and "trainer.device=npu" in npu["overrides"]
    one_path = BRANCHES.replace("npu) PP=${PP:-4}", "npu) PP=${PP:-3}")  # 256 NPUs % (2*3) != 0 on npu only
    code, report = lint("-", "--verl-version", "0.9.1", input=one_path)
    hit = next(f for f in report["findings"] if f["id"] == "launch-world-size-indivisible")
    assert hit["severity"] == "warning" and "npu)" in hit["title"] and errors(report) == []


def test_defect_scope_like_main_ppo(verl_config_dir, tmp_path):
    """No --config-name is ppo_trainer (FSDP): no megatron rule, no config-name error; model_engine=mindspeed
    is accepted; a recipe entry point gives a report; NPU-only rules are info without an NPU target."""
    fsdp = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.fsdp_config.param_offload=True "
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1\n")
    code, report = lint("-", "--verl-version", "0.9.1", input=fsdp)
    assert errors(report) == [] and code == 0
    engine = next(f for f in report["findings"] if f["id"] == "lint-engine")
    assert engine["evidence"]["engine"] == "fsdp" and engine["evidence"]["config_name"] == "ppo_trainer"
    ms = ("python3 -m verl.trainer.main_ppo --config-path=config --config-name='ppo_trainer.yaml' model_engine=mindspeed "
          "actor_rollout_ref.actor.mindspeed.tensor_model_parallel_size=2 trainer.device=npu "
          "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 "
          "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1\n")
    code, report = lint("-", "--verl-version", "0.9.1", input=ms)  # 0.9.1 dropped model_engine/mindspeed
    assert errors(report) == [("launch-group-removed", "model_engine")]  # one finding, not one per mindspeed key
    old_configs = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent")) / "0.9.0" / "verl" / "trainer" / "config"
    if old_configs.is_dir():
        code, report = lint("-", "--verl-version", "0.9.0", "--verl-config", str(old_configs), input=ms)
        assert errors(report) == []
        assert next(f for f in report["findings"] if f["id"] == "lint-engine")["evidence"]["engine"] == "mindspeed"
    recipe = "python3 -m recipe.dapo.main_dapo --config-name=dapo_trainer data.train_batch_size=8\n"
    code, report = lint("-", "--verl-version", "0.9.1", input=recipe)
    assert code in (0, 1) and "lint-entry-not-composed" in [f["id"] for f in report["findings"]]
    old = "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer data.train_batch_size=8\n"
    code, report = lint("-", "--verl-version", "0.6.1", "--no-compose", input=old)
    gated = {f["id"]: f["severity"] for f in report["findings"]}  # the device is not said: warnings (issue 26)
    assert gated["launch-trainer-device"] == "warning" and gated["launch-fa-missing"] == "warning"
    code, report = lint("-", "--verl-version", "0.6.1", "--no-compose", "--target", "gpu", input=old)
    gated = {f["id"]: f["severity"] for f in report["findings"]}
    assert gated["launch-trainer-device"] == "info" and gated["launch-fa-missing"] == "info"


def test_defect_advice_helps(verl_config_dir):
    """Did-you-mean from the composed config; no '+' for a near miss; model_engine as the global group."""
    text = ("python3 -m verl.trainer.main_ppo model_engine=megatron trainer.device=npu "
            "actor_rollout_ref.actor.megatron.tensor_parallel_size=4 actor_rollout_ref.actor.model_engine=megatron "
            "actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True\n")
    code, report = lint("-", "--verl-version", "0.9.1", input=text)
    by_key = {f["key"]: f for f in report["findings"] if f["severity"] == "error"}
    tp = by_key["actor_rollout_ref.actor.megatron.tensor_parallel_size"]
    assert tp["id"] == "launch-key-not-in-config"
    assert tp["evidence"]["did_you_mean"][0] == "actor_rollout_ref.actor.megatron.tensor_model_parallel_size"
    assert "+actor_rollout_ref" not in tp["fix"]["text"]
    me = by_key["actor_rollout_ref.actor.model_engine"]
    assert "Write model_engine=megatron" in me["fix"]["text"]
    fa = by_key["actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn"]
    assert fa["id"] == "launch-key-needs-plus" and "+actor_rollout_ref" in fa["fix"]["text"]


def test_defect_without_verl_installed(tmp_path, monkeypatch):
    """No verl here and no wheel to be had: a warning that nothing was composed, never "ok"; the version comes
    from launch's own header."""
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "empty"))
    monkeypatch.setattr("doctor.launch.hydra_compose.installed_verl", lambda: (None, None))
    text = ("# verl + MindSpeed launch script written by doctor 0.1.0 for verl 0.7.1.\n"
            "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer "
            "actor_rollout_ref.actor.megatron.grad_offload=True trainer.device=npu "
            "+actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True\n")
    code, report = lint("-", input=text.replace("0.7.1", "0.9.3"))
    assert report["verl_version"] == "0.9.3" and report["status"] != "ok"
    assert "launch-schema-not-composed" in [f["id"] for f in report["findings"] if f["severity"] == "warning"]
    code, report = lint("-", input=text.replace("0.7.1", "0.9.1"))
    assert ("launch-key-removed", "actor_rollout_ref.actor.megatron.grad_offload") in errors(report)


@needs_scripts
def test_a_finding_on_some_paths_names_the_choice_that_tells_them_apart():
    """verl v0.9.0's run_qwen3_235b_a22b_megatron.sh branches on `case "${DEVICE}"` (line 56 gpu, line 59 npu) and on
    two `if`s; its expert-layout warning holds on the four GPU paths. The title listed the four paths, each with
    both `if` choices (four times `line 56: case "${DEVICE}" → gpu)`, ~700 characters); the one choice they share
    and no other path took says which they are. evidence.paths still lists them."""
    script = SCRIPTS_DIR / "v0.9.0/scripts/examples/grpo_trainer/run_qwen3_235b_a22b_megatron.sh"
    _, report = lint(str(script), "--verl-version", "0.9.0", "--verl-config", str(SCRIPTS_DIR / "v0.9.0" / "config"))
    (f,) = [f for f in report["findings"] if f["id"] == "launch-expert-world-indivisible"]
    assert f["title"].startswith('on the 4 of 6 paths where line 56: case "${DEVICE}" → gpu): 64 GPUs'), f["title"]
    assert f["title"].count("line 176") == 0 and len(f["evidence"]["paths"]) == 4


@needs_scripts
def test_the_gpu_branch_of_a_script_that_picks_its_device_is_a_gpu_run():
    """The same script's `case "${DEVICE}" in gpu) … npu) …`: on its GPU paths (8 nodes x 8 GPUs) the expert layout does
    not divide; on its NPU paths (16 per node) it does. Those paths were judged as NPU runs ("64 NPUs are not
    divisible …", a warning). They count GPUs, and what only the GPU branch has is info: an NPU run takes the other."""
    script = SCRIPTS_DIR / "v0.9.0/scripts/examples/grpo_trainer/run_qwen3_235b_a22b_megatron.sh"
    _, report = lint(str(script), "--verl-version", "0.9.0", "--verl-config", str(SCRIPTS_DIR / "v0.9.0" / "config"))
    (f,) = [f for f in report["findings"] if f["id"] == "launch-expert-world-indivisible"]
    assert f["severity"] == "info" and "64 GPUs are not divisible" in f["title"] and "NPU" not in f["title"]
    assert f["fix"]["text"] == "Choose EP, ETP and PP whose product divides the GPU count."
    assert "the script's NPU paths do not" in f["detail"]
    assert report["status"] == "ok"


@needs_scripts
def test_a_device_test_in_a_condition_list_picks_the_device_too():
    """v0.9.0's run_qwen3_8b_fsdp.sh: `case "${DEVICE}" in gpu | npu)`, `if [ "${DEVICE}" = npu ] && [ … = trtllm ]`,
    then `case "${DEVICE}" in gpu)`: the path through `= npu` true is an NPU run, those through `= npu` false are GPU
    runs (DEVICE was gpu or npu, and is not npu: the later case takes gpu) only). The base merged the NPU path with
    another and lost the choice that says so (None)."""
    from doctor.launch.lint_script import _device_branch

    script = SCRIPTS_DIR / "v0.9.0/scripts/examples/grpo_trainer/run_qwen3_8b_fsdp.sh"
    (call,) = parse_script(script.read_text(encoding="utf-8"), str(script), str(script)).invocations
    said = [_device_branch(inv.label) for inv in call.alternatives]
    npu_true, npu_false = 'line 60: `[ "${DEVICE}" = npu ]` true', 'line 60: `[ "${DEVICE}" = npu ]` false'
    assert said == [(True, npu_true), (False, npu_false)], said
    assert not any("line 69" in choice for inv in call.alternatives for choice in inv.label)


@needs_scripts
def test_the_paths_are_said_by_their_branches_and_listed_only_with_v():
    """lint-paths listed every path of the call in full in its title: the 235B script's 6 paths, ~900 characters,
    each `if` repeated on every path. The title names the 3 branches once, each with the choices taken; the paths
    are in the detail, which `-v` prints, and in evidence."""
    script = SCRIPTS_DIR / "v0.9.0/scripts/examples/grpo_trainer/run_qwen3_235b_a22b_megatron.sh"
    args = [str(script), "--verl-version", "0.9.0", "--verl-config", str(SCRIPTS_DIR / "v0.9.0" / "config")]
    _, report = lint(*args)
    (f,) = [f for f in report["findings"] if f["id"] == "lint-paths"]
    assert f["title"].endswith('the call on line 190 on 6 paths, from 3 branches: case "${DEVICE}" → gpu) at line 56 '
                               '/ npu) at line 59; line 176: if `[ -n "${ROLLOUT_DP}" ]` true / false; line 180: if '
                               '`[ -n "$MCORE_MODEL_PATH" ]` true / false'), f["title"]
    assert len(f["evidence"]["calls"]["190"]) == 6 and f["detail"].count(" | ") == 5
    plain = CliRunner().invoke(cli, ["lint", *args], env={"NO_COLOR": "1"}).output
    verbose = CliRunner().invoke(cli, ["lint", "-v", *args], env={"NO_COLOR": "1"}).output
    assert "The paths: line 190:" not in plain and "The paths: line 190:" in verbose
