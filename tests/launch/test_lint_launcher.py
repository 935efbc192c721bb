"""`doctor lint` on the launcher of an entry point: torchrun's rendezvous address, judged by `doctor check`'s own
master-addr-loopback (doctor/checks/network.py) on what the script fixes. A loopback address is an error only when
the script also says the job spans several nodes (torchrun's --nnodes above 1, --node_rank 1 or more, or their
PET_* twins); a default the environment replaces is the job's to set; Ray's entry points get MASTER_ADDR from verl."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.script_parser import parse_script

HEAD = "#!/bin/bash\nset -e\n"
SFT = "    -m verl.trainer.sft_trainer \\\n    trainer.total_epochs=1\n"


def lint(tmp_path, text: str) -> tuple[int, dict]:
    p = tmp_path / "run_sft.sh"
    p.write_text(text)
    r = CliRunner().invoke(cli, ["--json", "lint", "--verl-version", "0.9.0", "--no-compose", str(p)])
    return r.exit_code, json.loads(r.stdout)


def loopback(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == "master-addr-loopback"]


def test_a_multi_node_torchrun_script_with_a_loopback_master_addr_is_an_error_naming_its_lines(tmp_path):
    code, report = lint(tmp_path, HEAD + "MASTER_ADDR=127.0.0.1\nNNODES=2\n"  # lines 3, 4
                        "torchrun --nproc_per_node=8 \\\n"  # line 5
                        "    --nnodes=$NNODES --node_rank=0 \\\n"  # line 6
                        '    --master_addr="$MASTER_ADDR" --master_port=29500 \\\n' + SFT)  # line 7
    (f,) = loopback(report)
    assert code == 1 and f["severity"] == "error"
    assert f["title"] == ("--master_addr=127.0.0.1 (torchrun on line 7; MASTER_ADDR set on line 3) is a loopback "
                          "address on a multi-node job (--nnodes=2 on line 6; NNODES set on line 4)")
    assert f["evidence"]["line"] == 7 and f["evidence"]["set_at_line"] == 3
    assert "Set MASTER_ADDR (line 3) to rank 0's node address" in f["fix"]["text"]
    assert "single-node training" in f["detail"]


@pytest.mark.parametrize("launcher, why", [
    ("torchrun --nnodes 2 --node_rank 1 --master-addr localhost", "--node_rank=1 on line 3: this is not rank 0's node"),
    ("python3 -m torch.distributed.run --nnodes=1:4 --master_addr=[::1]", "--nnodes=1:4 on line 3"),
    ("torchrun --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:29400 --nnodes=2", "--nnodes=2 on line 3"),
])
def test_each_way_torchrun_is_told_the_job_spans_nodes_and_its_address(tmp_path, launcher, why):
    code, report = lint(tmp_path, HEAD + launcher + " \\\n" + SFT)
    (f,) = loopback(report)
    assert f["severity"] == "error" and f["title"].endswith(f"({why})"), f["title"]


def test_torchruns_pet_variables_exported_by_the_script_are_its_options(tmp_path):
    code, report = lint(tmp_path, HEAD + "export PET_MASTER_ADDR=localhost\nexport PET_NNODES=2\ntorchrun \\\n" + SFT)
    (f,) = loopback(report)
    assert f["title"] == ("PET_MASTER_ADDR=localhost (exported on line 3, for torchrun) is a loopback address on a "
                          "multi-node job (PET_NNODES=2 exported on line 4)")
    # the command line wins over PET_*: torchrun takes the variable only as the option's default
    code, report = lint(tmp_path, HEAD + "export PET_MASTER_ADDR=localhost\nexport PET_NNODES=2\n"
                        "torchrun --master_addr=10.0.0.1 \\\n" + SFT)
    assert loopback(report) == []


@pytest.mark.parametrize("text", [
    # one node: 127.0.0.1 is what torchrun's own help offers for it
    "MASTER_ADDR=127.0.0.1\ntorchrun --nnodes=1 --node_rank=0 --master_addr=$MASTER_ADDR \\\n" + SFT,
    "torchrun --nproc_per_node=8 --master_addr=127.0.0.1 \\\n" + SFT,  # nothing says the job spans nodes
    "torchrun --standalone --nnodes=2 --master_addr=127.0.0.1 \\\n" + SFT,  # --standalone: a local rendezvous
    # a c10d rendezvous ignores --master_addr: the endpoint is what every node dials
    "torchrun --rdzv_backend=c10d --rdzv_endpoint=10.0.0.1:29400 --nnodes=2 --master_addr=127.0.0.1 \\\n" + SFT,
    # the script's default only: the job's environment sets MASTER_ADDR on a multi-node run (upstream verl's
    # examples/sft/gsm8k/run_qwen3_5_397b_a17b_megatron.sh at v0.9.0 is written so)
    "MASTER_ADDR=${MASTER_ADDR:-localhost}\nNNODES=${NNODES:-16}\nNODE_RANK=${NODE_RANK:-0}\n"
    "torchrun --nnodes=${NNODES} --node_rank=${NODE_RANK} --master_addr=${MASTER_ADDR} \\\n" + SFT,
    # a function's `local` shadows the default and gives it back as it was: still the environment's to set
    "MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}\nf() { local MASTER_ADDR=10.0.0.1; }\nf\n"
    "torchrun --nnodes=2 --master_addr=$MASTER_ADDR \\\n" + SFT,
    # not read: a value only the run knows
    "torchrun --nnodes=2 --master_addr=$(hostname -I) \\\n" + SFT,
    # a Ray entry point: verl's RayWorkerGroup gives every worker MASTER_ADDR itself (the rank-0 node's Ray address)
    "export MASTER_ADDR=127.0.0.1\nexport NNODES=2\nexport NODE_RANK=1\n"
    "python3 -m verl.trainer.main_ppo trainer.nnodes=2 trainer.device=npu\n",
])
def test_a_single_node_script_a_default_or_a_ray_entry_point_gives_nothing(tmp_path, text):
    code, report = lint(tmp_path, HEAD + text)
    assert loopback(report) == [], [f["title"] for f in loopback(report)]


def test_a_node_count_the_environment_can_change_makes_it_a_warning_saying_so(tmp_path):
    code, report = lint(tmp_path, HEAD + "NNODES=${NNODES:-2}\n"
                        "torchrun --nnodes=$NNODES --master_addr=127.0.0.1 \\\n" + SFT)
    (f,) = loopback(report)
    assert f["severity"] == "warning"
    assert f["title"].endswith("the script's default when the environment does not set NNODES)")


def test_a_loopback_address_on_one_path_only_is_a_warning_naming_it(tmp_path):
    code, report = lint(tmp_path, HEAD + 'if [ "$1" = multi ]; then NNODES=2; else NNODES=1; fi\n'
                        "torchrun --nnodes=$NNODES --master_addr=127.0.0.1 \\\n" + SFT)
    (f,) = loopback(report)
    assert f["severity"] == "warning" and f["title"].startswith("on the 1 of 2 paths where line 3: if ")


def test_exported_visible_devices_and_event_timeout_are_judged_as_check_judges_them(tmp_path):
    code, report = lint(tmp_path, HEAD + "export ASCEND_RT_VISIBLE_DEVICES=3,2,1,0\nexport HCCL_EXEC_TIMEOUT=3600\n"
                        "export HCCL_EVENT_TIMEOUT=1800\npython3 -m verl.trainer.main_ppo trainer.device=npu\n")
    got = {f["id"]: (f["severity"], f["evidence"].get("set_at_line")) for f in report["findings"]
           if f.get("evidence", {}).get("exported")}
    assert got == {"visible-devices-unsorted": ("error", 3), "hccl-event-timeout-not-above-exec": ("warning", 5)}
    code, report = lint(tmp_path, HEAD + "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\nexport HCCL_EVENT_TIMEOUT=1800\n"
                        "python3 -m verl.trainer.main_ppo trainer.device=npu\n")  # HCCL_EXEC_TIMEOUT not known here
    assert not [f for f in report["findings"] if f.get("evidence", {}).get("exported")]


def test_the_walker_says_which_values_are_defaults_the_environment_replaces():
    text = ("#!/bin/bash\nA=${A:-1}\nB=$A\nC=${C:-x}\nC=fixed\nD=${D:=2}\nE=${E:+set}\nexport F=${F:-f}\n"
            "torchrun --a=$A --b=$B --c=$C --d=$D --e=$E --g=7 -m verl.trainer.sft_trainer x.y=$A\n")
    (call,) = parse_script(text).invocations
    inv = call.alternatives[0]
    assert {w.text: w.from_env for w in inv.launcher} == {
        "torchrun": (), "--a=1": ("A",), "--b=1": ("A",), "--c=fixed": (), "--d=2": ("D",), "--e=": ("E",),
        "--g=7": (), "-m": ()}
    assert inv.args_from_env == [("A",)] and inv.exports_from_env == {"F": ("F",)}
    assert {w.text: (w.ref, w.set_at) for w in inv.launcher if w.ref} == {
        "--a=1": ("A", 2), "--b=1": ("B", 3), "--c=fixed": ("C", 5), "--d=2": ("D", 6), "--e=": ("E", 7)}
