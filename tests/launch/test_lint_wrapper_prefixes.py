"""A wrapper that starts the script through `timeout`, `setsid`, `stdbuf`, `nice` (or `nohup … &`, as verl's own
docs/sglang_multiturn/search_tool_example.rst does) is followed like `bash other.sh`: the command after the prefix
and its options is what runs. The callee is upstream's tests/special_e2e/sft/run_sft_engine.sh
(tests/fixtures/verl-main/README.md).

Before, only `exec`, `nohup`, `command`, `time` and `env` were looked through: `timeout 2h bash run.sh` was "no verl
entry point is run here" and nothing of the callee was checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.launch.script_parser import parse_script
from doctor.launch.shell.values import Str
from tests.launch.helpers import shell_script

CALLEE = Path(__file__).resolve().parents[1] / "fixtures" / "verl-main" / "tests" / "special_e2e" / "sft" / \
    "run_sft_engine.sh"


def calls(tmp_path: Path, line: str):
    wrapper = tmp_path / "wrapper.sh"
    wrapper.write_text(f"#!/bin/bash\nexport BACKEND=megatron\n{line}\n", encoding="utf-8")
    return parse_script(wrapper.read_text(encoding="utf-8"), str(wrapper), str(wrapper))


@pytest.mark.parametrize("prefix", [
    "timeout 2h", "timeout -s KILL -k 60 3600", "timeout --preserve-status 10m", "setsid", "setsid -w",
    "stdbuf -oL -eL", "stdbuf -o L", "nice -n 10", "nice -10", "nohup timeout 1d", "timeout 1h env mode=ray",
])
def test_a_script_started_through_a_prefix_command_is_followed(tmp_path, prefix):
    p = calls(tmp_path, f"{prefix} bash {CALLEE}")
    assert len(p.invocations) == 1, p.notes
    call = p.invocations[0]
    assert Path(call.file).name == "run_sft_engine.sh" and call.via[0][1] == 3
    ov = {o.key: o.value for o in call.overrides}
    assert ov["engine"] == "megatron"  # the wrapper's export reaches the callee
    assert call.entry == ("verl.trainer.sft_trainer_ray" if "mode=ray" in prefix else "verl.trainer.sft_trainer")


def test_the_nohup_form_of_verls_docs_is_followed(tmp_path):
    """docs/sglang_multiturn/search_tool_example.rst (main 1dda039b9): `nohup bash examples/….sh \\ ….
    > logs/….log 2>&1 &` (followed on the base too: a control)."""
    p = calls(tmp_path, f"nohup bash {CALLEE} \\\n  trainer.experiment_name=x-$(now) \\\n  > logs/x$(now).log 2>&1 &")
    assert len(p.invocations) == 1 and p.invocations[0].via[0][1] == 3


def test_which_prefixes_run_what_follows():
    def argv(*words: str) -> list[Str]:
        return [Str.of(w) for w in words]

    assert shell_script(argv("timeout", "-s", "TERM", "5", "bash", "x.sh")) == (5, [])
    assert shell_script(argv("/usr/bin/timeout", "5", "sh", "-x", "x.sh")) == (4, [])
    assert shell_script(argv("stdbuf", "--output=L", "bash", "x.sh")) == (3, [])
    assert shell_script(argv("nohup", "env", "A=1", "bash", "x.sh")) == (4, ["A=1"])
    assert shell_script(argv("command", "-v", "bash", "x.sh")) is None  # prints where bash is; runs nothing
    assert shell_script(argv("timeout", "5")) is None
    assert shell_script(argv("xargs", "bash", "x.sh")) == (2, [])  # its input adds arguments (see below)


# Launchers that start the script on the job's nodes or as another user (their manuals: Slurm srun(1), Open MPI
# mpirun(1), MPICH mpiexec, sudo(8), GNU xargs(1), Ray's `ray job submit`): the command after their options runs.
@pytest.mark.parametrize("prefix", [
    "srun --overlap --nodes=1 --ntasks 1 -w \"$head_node\"", "srun -N 2 -J bash", "srun --export=ALL,X=1",
    "mpirun -np 8 --mca btl tcp,self -x PATH", "mpiexec -n 2 -genv A 1", "sudo -E", "sudo --preserve-env=BACKEND",
    "nohup srun -N1 timeout 1d",
])
def test_a_script_started_by_a_launcher_is_followed_with_the_exports(tmp_path, prefix):
    p = calls(tmp_path, f"{prefix} bash {CALLEE}")
    assert len(p.invocations) == 1, p.notes
    call = p.invocations[0]
    assert Path(call.file).name == "run_sft_engine.sh" and call.via[0][1] == 3
    assert {o.key: o.value for o in call.overrides}["engine"] == "megatron"  # BACKEND=megatron reached it


@pytest.mark.parametrize(("prefix", "why"), [
    ("sudo", "sudo resets the environment"), ("sudo -u root", "sudo resets the environment"),
    ("srun --export=NONE", "srun --export=NONE passes only what it names"),
    ("ray job submit --no-wait --runtime-env=r.yaml --", "a Ray job runs in the job's runtime environment"),
])
def test_a_launcher_that_resets_the_environment_does_not_hand_on_the_exports(tmp_path, prefix, why):
    """sudo's env_reset (no -E), `srun --export=NONE`, a Ray job's entrypoint: the wrapper's `export BACKEND=megatron`
    does not reach the script, which then runs its own default (`backend=${BACKEND:-fsdp}`)."""
    p = calls(tmp_path, f"{prefix} bash {CALLEE}")
    assert len(p.invocations) == 1, p.notes
    assert {o.key: o.value for o in p.invocations[0].overrides}["engine"] == "fsdp"
    assert any(why in n and "not passed" in n for n in p.notes), p.notes


def test_sudo_sets_the_variables_written_before_the_command(tmp_path):
    p = calls(tmp_path, f"sudo -u train BACKEND=veomni bash {CALLEE}")
    assert {o.key: o.value for o in p.invocations[0].overrides}["engine"] == "veomni"


@pytest.mark.parametrize("line", [f"printf 'a\\n' | xargs bash {CALLEE}", f"ls | xargs -n1 -P4 bash {CALLEE}",
                                  f"ls | xargs -I {{}} bash {CALLEE} {{}}"])
def test_a_script_xargs_starts_is_followed(tmp_path, line):
    p = calls(tmp_path, line)
    assert len(p.invocations) == 1, p.notes
    assert {o.key: o.value for o in p.invocations[0].overrides}["engine"] == "megatron"


@pytest.mark.parametrize(("args", "expect"), [("", ["trainer.total_epochs=1"]), ("-n1 ", ["trainer.total_epochs=1"]),
                                              ("-I @ ", ["trainer.total_epochs=1"])])
def test_the_words_xargs_reads_are_arguments_only_the_run_knows(tmp_path, args, expect):
    """`xargs bash run.sh` appends what it reads (`-I STR`: puts it where STR is): run.sh's "$@" holds words the
    lint cannot know, said as unknown arguments, never taken as overrides."""
    run = tmp_path / "run.sh"
    run.write_text('#!/bin/bash\npython3 -m verl.trainer.main_ppo trainer.total_epochs=1 "$@"\n', encoding="utf-8")
    p = calls(tmp_path, f"cat list | xargs {args}bash {run}" + (" @" if "-I" in args else ""))
    call = p.invocations[0]
    assert [o.text for o in call.overrides] == expect and call.unknown_args == ["<xargs input>"]


def test_what_launchers_do_not_run():
    def argv(*words: str) -> list[Str]:
        return [Str.of(w) for w in words]

    assert shell_script(argv("sudo", "-l", "bash", "x.sh")) is None  # lists what may run
    assert shell_script(argv("srun", "hostname", "bash", "x.sh")) is None  # hostname runs; bash is its argument
    assert shell_script(argv("ray", "start", "--head")) is None
    assert shell_script(argv("srun", "-N", "2", "-J", "bash", "bash", "x.sh")) == (6, [])  # -J's value is a name
    assert shell_script(argv("mpirun", "--mca", "btl", "tcp", "bash", "x.sh")) == (5, [])


@pytest.mark.parametrize(("prefix", "engine"), [("env -u BACKEND", "fsdp"), ("env --unset=BACKEND", "fsdp"),
                                                ("env -i PATH=/usr/bin", "fsdp"), ("env -i BACKEND=veomni", "veomni"),
                                                ("env -u BACKEND BACKEND=veomni", "veomni"),
                                                ("srun -N1 env -u ROCR_VISIBLE_DEVICES", "megatron")])
def test_env_options_decide_what_reaches_the_script(tmp_path, prefix, engine):
    """GNU env(1): `-u NAME` unsets NAME, `-i` starts from an empty environment, then `NAME=value` sets (as
    recipe/nemo_gym's `srun … env -u ROCR_VISIBLE_DEVICES …`). Before, `env -u …` stopped the wrapper from being
    followed at all."""
    p = calls(tmp_path, f"{prefix} bash {CALLEE}")
    assert len(p.invocations) == 1, p.notes
    assert {o.key: o.value for o in p.invocations[0].overrides}["engine"] == engine
