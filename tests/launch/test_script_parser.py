"""The script reader gives the argv Python would see, resolves what the script itself defines, and never
executes anything."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from doctor.errors import InputError
from doctor.launch.script_parser import parse_script


def args_of(text: str) -> list[str]:
    p = parse_script(text)
    assert p.invocations, text
    return p.invocations[0].args


LINES = [
    "a=1 'b=two words' \"c=it's\" d=x\\ y e='\"q\"' f=\"a\\\"b\" g=''",
    "k='$HOME' l=\"\\$X\" m=a'b'\"c\" n=\\$\\(nothing\\) o=back\\\\slash p=\"x\\y\"",
    "q=\"multi\nline\" r='tab\there'",
]


@pytest.mark.parametrize("line", LINES)
def test_words_match_what_bash_passes(line):
    """Oracle: bash itself (printf of its positional parameters; nothing in LINES expands or runs)."""
    text = f"python3 -m verl.trainer.main_ppo {line}\n"
    r = subprocess.run(["bash", "-c", f"set -- {line}; printf '%s\\0' \"$@\""], capture_output=True,
                       timeout=10, check=True)
    assert args_of(text) == r.stdout.decode().split("\0")[:-1]


def test_operator_tokens_are_words_bash_passes():
    """`==` and `=~` in a simple command are arguments to bash (tree-sitter-bash parses them as operator tokens, which
    the walker dropped)."""
    line = "a=1 == b =~ c"
    r = subprocess.run(["bash", "-c", f"set -- {line}; printf '%s\\0' \"$@\""], capture_output=True, timeout=10,
                       check=True)
    assert args_of(f"python3 -m verl.trainer.main_ppo {line}\n") == r.stdout.decode().split("\0")[:-1]


@pytest.mark.parametrize("launch", ["python3 -m verl_mlite.launch", "torchrun --nnodes=1 --nproc_per_node=8 -m verl_mlite.launch"])
def test_a_launcher_module_runs_the_entry_module_it_is_given(launch):
    """Megatron Lite's `verl_mlite.launch` runs its first argument as `__main__` with the rest as its argv
    (runpy.run_module after `sys.argv = [module, *sys.argv[2:]]`), as verl main's
    examples/sft/gsm8k/run_deepseek_v4_megatron_lite.sh starts the SFT trainer. The base found no entry point."""
    (call,) = parse_script(f"{launch} verl.trainer.sft_trainer engine=mlite trainer.nnodes=1\n").invocations
    assert (call.entry, call.args) == ("verl.trainer.sft_trainer", ["engine=mlite", "trainer.nnodes=1"])
    assert parse_script(f"{launch} my_tool verl.trainer.sft_trainer a=1\n").invocations == []  # its first argument only


def test_plain_words_match_shlex():
    line = "a=1 'b=two words' c=x\\ y"
    assert args_of(f"python3 -m verl.trainer.main_ppo {line}\n") == shlex.split(line)


def test_continuations_comments_config_name_and_passthrough():
    text = (
        "#!/bin/bash\nset -x\n# python3 -m verl.trainer.main_ppo commented=1\n"
        "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\\n"
        "    a.b=1 \\\n    +c.d=True \\\n    \"$@\"\n"
    )
    inv = parse_script(text).invocations[0]
    assert inv.config_name == "ppo_megatron_trainer"
    assert [o.text for o in inv.overrides] == ["a.b=1", "+c.d=True"]
    assert [o.line for o in inv.overrides] == [5, 6]
    assert inv.passthrough is True


def test_variables_defaults_and_arrays():
    text = """
export TP=${TP:-4}
MODEL_PATH=${MODEL_PATH:-$HOME/models/Qwen3-8B}
NAME="my run"
DATA=(
    data.train_batch_size=16   # comment inside an array
    "data.val_files=/d/test.parquet"
)
ACTOR=(actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$TP)
ACTOR+=(trainer.experiment_name="$NAME")
python3 -m verl.trainer.main_ppo --config-name ppo_megatron_trainer "${DATA[@]}" "${ACTOR[@]}" \\
    actor_rollout_ref.model.path=$MODEL_PATH x=${UNSET_VAR} y=${TP:+set} 2>&1 | tee log.txt
"""
    p = parse_script(text)
    assert [o.display for o in p.invocations[0].overrides] == [
        "data.train_batch_size=16", "data.val_files=/d/test.parquet",
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4", "trainer.experiment_name=my run",
        "actor_rollout_ref.model.path=$HOME/models/Qwen3-8B", "x=${UNSET_VAR}", "y=set",
    ]
    assert p.invocations[0].config_name == "ppo_megatron_trainer"
    assert "$HOME" in p.unresolved and "${UNSET_VAR}" in p.unresolved


def test_a_required_variable_is_what_only_the_run_knows_after_its_check():
    """verl v0.9.0's Megatron Lite example: `MODEL_PATH=${MODEL_PATH:-${KIMI_K2_6_MODEL_PATH:-}}` then
    `: "${MODEL_PATH:?set MODEL_PATH…}"` — bash stops there unless the environment set it, so the path the trainer
    gets is the run's, not the empty default (lint printed "Every Ray worker loads  from its own filesystem")."""
    p = parse_script("""
MODEL_PATH=${MODEL_PATH:-${OTHER_MODEL_PATH:-}}
: "${MODEL_PATH:?set MODEL_PATH}"
python3 -m verl.trainer.main_ppo trainer.nnodes=2 actor_rollout_ref.model.path="${MODEL_PATH}"
""")
    model = [o for o in p.invocations[0].overrides if o.key == "actor_rollout_ref.model.path"][0]
    assert model.display == "actor_rollout_ref.model.path=${MODEL_PATH:?set MODEL_PATH}"
    assert "${MODEL_PATH:?set MODEL_PATH}" in p.unresolved


def test_a_guard_on_a_variable_the_environment_may_set_does_not_end_every_path():
    """`X=${X:-}` then `[ -n "$X" ] || { echo …; exit 1; }`: the empty value is only the default the script gives
    when the environment does not set X, so the guard is the run's to decide. It was taken as always empty: every
    path exited there, and lint said "no verl entry point … is run here. Nothing was checked" — also of the
    multi-node script `doctor launch --nodes 2` writes without --head-address (its NODE_IP guard)."""
    for guard in ('[ -n "$NODE_IP" ] || { echo "set NODE_IP" >&2; exit 1; }',
                  'if [ -z "$NODE_IP" ]; then echo "set NODE_IP" >&2; exit 1; fi',
                  '[[ -n $NODE_IP ]] || exit 1'):
        p = parse_script(f'NODE_IP="${{NODE_IP:-}}"\n{guard}\n'
                         'python3 -m verl.trainer.main_ppo trainer.nnodes=2\n')
        assert [o.key for o in p.invocations[0].overrides] == ["trainer.nnodes"], guard
    # past the guard the variable is what the environment set, not the empty default (verl v0.9.0's
    # run_qwen3_235b_a22b_megatron.sh: `ROLLOUT_DP=${ROLLOUT_DP:-}` … `elif [ -n "${ROLLOUT_DP}" ]; then
    # EXTRA+=(…data_parallel_size=${ROLLOUT_DP})`, which read `data_parallel_size=` and was called not an integer)
    p = parse_script('DP=${DP:-}\nEXTRA=()\nif [ -n "${DP}" ]; then EXTRA+=(a.dp=${DP}); fi\n'
                     'python3 -m verl.trainer.main_ppo "${EXTRA[@]}"\n')
    dp = [o for inv in p.invocations for o in inv.overrides if o.key == "a.dp"]
    assert dp and all(o.unknown == ("$DP",) for o in dp), [(o.display, o.unknown) for o in dp]
    assert "${DP}" in p.unresolved
    # a value the script itself sets empty still decides its guard: nothing runs past it
    assert parse_script('NODE_IP=""\n[ -n "$NODE_IP" ] || exit 1\npython3 -m verl.trainer.main_ppo a=1\n'
                        ).invocations == []


def test_nothing_is_executed(tmp_path):
    marker = tmp_path / "pwned"
    text = (f"X=$(touch {marker})\nY=`touch {marker}`\n"
            f"python3 -m verl.trainer.main_ppo a=$(touch {marker}) b=\"`touch {marker}`\" c=$X\n")
    p = parse_script(text)
    assert not marker.exists()
    assert p.invocations[0].args[0] == f"a=$(touch {marker})"
    assert p.invocations[0].overrides[0].unknown == (f"$(touch {marker})",)
    assert any("touch" in u for u in p.unresolved)


def test_main_ppo_py_path_and_no_invocation():
    assert args_of("python verl/trainer/main_ppo.py k=v\n") == ["k=v"]
    assert parse_script("echo hello\n").invocations == []


@pytest.mark.parametrize("bad", ["python3 -m verl.trainer.main_ppo 'a=1\n", 'x="unterminated\n', "y=$(echo\n"])
def test_unterminated_quotes_are_input_errors_with_line(bad):
    with pytest.raises(InputError) as e:
        parse_script(bad, "run.sh")
    assert "run.sh: line" in str(e.value)


# verl v0.9.0's examples/grpo_trainer/run_qwen3_8b_fsdp.sh, in short: a first `case` that lets only gpu or npu
# through (one branch for both), then the device branches that set the values the call uses.
GUARDED_CASE = """DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}
case "${DEVICE}" in
    gpu | npu) ;;
    *) echo "DEVICE must be gpu or npu, got: ${DEVICE}" >&2; exit 1 ;;
esac
if [ "${DEVICE}" = npu ] && [ "${BACKEND}" = trtllm ]; then exit 1; fi
case "${DEVICE}" in
    gpu) tp=2 ;;
    npu) tp=4 ;;
esac
python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.tensor_model_parallel_size=$tp
"""


def test_a_case_branch_of_several_words_limits_a_later_case_to_them():
    """After `gpu | npu)` (every other value exits), a later `case` on the same variable takes gpu or npu:
    there is no path on which it matches no pattern and the call gets an empty value."""
    paths = parse_script(GUARDED_CASE).invocations[0].alternatives
    assert sorted(p.args[0] for p in paths) == ["actor_rollout_ref.rollout.tensor_model_parallel_size=2",
                                                "actor_rollout_ref.rollout.tensor_model_parallel_size=4"]
    assert not any("no pattern" in " ".join(p.label) for p in paths)
    # the limit is the branch's own words: a value the first case let through and the second does not name
    # still falls through, and a new assignment lifts the limit
    three = GUARDED_CASE.replace("gpu | npu) ;;", "gpu | npu | cpu) ;;")
    assert any("no pattern" in " ".join(p.label) for p in parse_script(three).invocations[0].alternatives)
    reset = GUARDED_CASE.replace("if [", "DEVICE=$(cat /etc/device)\nif [")
    assert any("no pattern" in " ".join(p.label) for p in parse_script(reset).invocations[0].alternatives)


@pytest.mark.parametrize(("test", "arms"), [('[ "${DEVICE}" = npu ]', "tp=4; else tp=2"),
                                             ('test "$DEVICE" = npu', "tp=4; else tp=2"),
                                             ('[ "$DEVICE" != npu ]', "tp=2; else tp=4"),
                                             # bash's test takes `==` for `=`; the walker lost it (tree-sitter makes
                                             # it an operator token, and the `case` after it an ERROR node)
                                             ('test "$DEVICE" == npu', "tp=4; else tp=2")])
def test_a_test_says_what_the_variable_holds_on_each_side(test: str, arms: str):
    """`[ "$DEVICE" = npu ]` after `gpu | npu)`: DEVICE is npu on its true side and gpu on its false side, so a later
    `case "$DEVICE"` takes that one arm. The base said nothing of the false side (of `test …`, of either): three or
    four paths, of which no run takes those with the NPU side's TP and the GPU arm's engine, or the reverse."""
    head = GUARDED_CASE.split("if [")[0]
    script = (head + f"if {test}; then {arms}; fi\n"
              'case "${DEVICE}" in\n    gpu) e=megatron ;;\n    npu) e=mindspeed ;;\nesac\n'
              "python3 -m verl.trainer.main_ppo x.tp=$tp model_engine=$e\n")
    paths = parse_script(script).invocations[0].alternatives
    assert sorted(p.args for p in paths) == [["x.tp=2", "model_engine=megatron"], ["x.tp=4", "model_engine=mindspeed"]]
