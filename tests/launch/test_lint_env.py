"""`doctor lint` judges the variables a script exports with `doctor check`'s own rules on values (the table of what
HCCL / torch_npu / vllm-ascend / verl take, HCCL's timeouts, an address where an interface name belongs, a misspelt
name): on the path where the value is set, as bash would hand it to the entry point."""

from __future__ import annotations

import json

from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.lint_script import documented_stack, environment_findings
from doctor.launch.script_parser import parse_script
from tests.conftest import SHARED

HEAD = """#!/bin/bash
set -e
"""
CALL = """python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\
    actor_rollout_ref.actor.strategy=megatron \\
    trainer.device=npu
"""


def lint(tmp_path, text: str) -> tuple[int, dict]:
    p = tmp_path / "run_npu.sh"
    p.write_text(text)
    r = CliRunner().invoke(cli, ["--json", "lint", "--verl-version", "0.7.1", "--no-compose", str(p)])
    return r.exit_code, json.loads(r.stdout)


def exported(report: dict) -> dict[str, str]:
    return {f["id"]: f["severity"] for f in report["findings"] if f.get("evidence", {}).get("exported")}


def test_bad_exports_are_findings_of_the_script(tmp_path):
    code, report = lint(tmp_path, HEAD + "export HCCL_CONNECT_TIMEOUT=abc\nexport GLOO_SOCKET_IFNAME=10.0.0.1\n"
                        "export ASCEBD_RT_VISIBLE_DEVICES=0,1\nTASK_QUEUE_ENABLE=true " + CALL)
    assert code == 1
    assert exported(report) == {"hccl-connect-timeout-invalid": "error", "socket-ifname-is-address": "error",
                                "env-var-misspelled": "warning", "env-value-ignored": "warning"}
    titles = [f["title"] for f in report["findings"] if f["id"] == "env-value-ignored"]
    assert titles and titles[0].startswith("exported by the script (line 6): torch-npu, every release read")
    assert "TASK_QUEUE_ENABLE='true'" in titles[0]  # set as a prefix of the call on line 6
    lines = {f["id"]: f["evidence"].get("set_at_line") for f in report["findings"] if f.get("evidence", {}).get("exported")}
    assert lines == {"hccl-connect-timeout-invalid": 3, "socket-ifname-is-address": 4, "env-var-misspelled": 5,
                     "env-value-ignored": 6}


def test_a_value_set_on_one_path_only_is_a_warning_naming_it_and_an_unknown_value_is_not_judged(tmp_path):
    code, report = lint(tmp_path, HEAD + 'if [ "$1" = multi ]; then export HCCL_CONNECT_TIMEOUT=abc; fi\n'
                        "export HCCL_EXEC_TIMEOUT=$MY_TIMEOUT\n" + CALL)
    assert exported(report) == {"hccl-connect-timeout-invalid": "warning"}


def test_good_exports_give_nothing(tmp_path):
    code, report = lint(tmp_path, HEAD + "export HCCL_CONNECT_TIMEOUT=1500\nexport TASK_QUEUE_ENABLE=2\n"
                        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True\nexport GLOO_SOCKET_IFNAME=eth0\n" + CALL)
    assert exported(report) == {}


def test_exports_that_upstream_says_break_the_run_together_are_a_finding_of_the_script(tmp_path):
    """HCCL's reference: strict (order-preserving) determinism supports only INF/NaN mode, not saturation mode; the
    guidance rows whose conditions are other variables hold for a script's exports as for a host."""
    code, report = lint(tmp_path, HEAD + "export HCCL_DETERMINISTIC=strict\nexport INF_NAN_MODE_ENABLE=0\n" + CALL)
    assert exported(report) == {"env-value-against-guidance": "warning"}
    f = next(f for f in report["findings"] if f["id"] == "env-value-against-guidance")
    assert f["evidence"]["rule"] == "hccl-deterministic-strict-saturation" and f["evidence"]["set_at_line"] == 3


def test_upstream_verl_npu_scripts_exports_pass_the_rules():
    """The 98 NPU example scripts of verl v0.6.1 / v0.7.1 / v0.9.0: most export settings with known values (bash
    agrees on each: tests/launch/test_lint_upstream.py), and none of them is a finding."""
    scripts = sorted((SHARED / "realworld" / "verl-scripts").glob("v*/scripts/**/*.sh"))
    if not scripts:
        import pytest

        pytest.skip("no upstream scripts")
    judged = assumed = 0
    for s in scripts:
        tag = s.relative_to(SHARED / "realworld" / "verl-scripts").parts[0].lstrip("v")
        stack = documented_stack(tag)  # 0.6.1, 0.7.1: their stacks agree; 0.9.0's (A2/A3 and 950) do not
        assumed += bool(stack)
        parsed = parse_script(s.read_text(encoding="utf-8"), str(s), str(s))
        for call in parsed.invocations:
            for inv in call.alternatives:
                judged += bool(inv.exports)
                assert environment_findings(inv.exports, inv.export_lines, stack) == [], (str(s), inv.exports)
    assert judged >= 50 and assumed >= 30


def test_the_target_verls_documented_stack_judges_what_only_newer_readers_refuse(tmp_path):
    """torch_npu before 2.1.0.post8-era releases let TASK_QUEUE_ENABLE=3 pass; the torch-npu every verl 0.9.1 stack
    pins (2.10.0.post4) refuses it. Lint assumes the documented stack's releases for what the script does not say,
    and says so, at warning: the cluster may run another build."""
    p = tmp_path / "run.sh"
    p.write_text(HEAD + "export TASK_QUEUE_ENABLE=3\n" + CALL)
    r = CliRunner().invoke(cli, ["--json", "lint", "--verl-version", "0.9.1", "--no-compose", str(p)])
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f.get("evidence", {}).get("exported")]
    assert (f["id"], f["severity"]) == ("env-value-invalid", "warning")
    assert f["title"].startswith("exported by the script (line 3) (with the documented stack's CANN 9.1.0, "
                                 "torch-npu 2.10.0.post4): torch-npu 2.10.0.post4:")
    assert f["evidence"]["assumed"] == {"torch-npu": "2.10.0.post4", "cann": "9.1.0"}
    assert documented_stack("0.1.0") == {}  # no documented stack: nothing assumed


def test_what_the_launchers_before_the_entry_point_hand_it(tmp_path):
    """The environment the entry point starts with, through what starts it: `env -u NAME` drops an export and
    `env NAME=value` sets one (recipe/nemo_gym's submit scripts start main_ppo with `srun … env -u
    ROCR_VISIBLE_DEVICES WANDB_API_KEY=… python3 -m verl.trainer.main_ppo`); sudo without -E resets the environment
    and a Ray job's entrypoint runs in the job's runtime environment, so the script's exports reach neither. Before,
    every export was judged as reaching the entry point, and `env NAME=value` words were not read."""
    bad = "export HCCL_CONNECT_TIMEOUT=abc\n"
    _, report = lint(tmp_path, HEAD + "srun --overlap -N 1 env TASK_QUEUE_ENABLE=true " + CALL)
    assert exported(report) == {"env-value-ignored": "warning"}
    _, report = lint(tmp_path, HEAD + bad + "srun --overlap -N 1 " + CALL)  # srun hands the environment on
    assert exported(report) == {"hccl-connect-timeout-invalid": "error"}
    for launcher in ("env -u HCCL_CONNECT_TIMEOUT ", "sudo ", "ray job submit --no-wait -- "):
        code, report = lint(tmp_path, HEAD + bad + launcher + CALL)
        assert exported(report) == {}, launcher
    _, report = lint(tmp_path, HEAD + bad + "sudo -E " + CALL)
    assert exported(report) == {"hccl-connect-timeout-invalid": "error"}
