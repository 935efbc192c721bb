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
from doctor.launch.shell.wrapper import shell_script

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
    assert shell_script(argv("xargs", "bash", "x.sh")) is None  # its arguments come from standard input
