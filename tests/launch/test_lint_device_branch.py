"""A script that holds a GPU and an NPU path (`case "${DEVICE}" in gpu) … npu) …`, `[ "$DEVICE" = npu ]`, …), linted
with `--target npu`: a path only another device takes is not the NPU run's, so it is not linted as one
(`lint-paths-off-target` names the branch instead). Each way of writing the test is read from what the walker
records at the branch (`Choice.said`), not from the label's text: `[[ $DEVICE == npu* ]]`, `test`, `!=`, `case`
arms with `|` and patterns, the arm after `npu)`, `elif` / `else`. Real scripts: verl v0.9.0's
run_qwen3_235b_a22b_megatron.sh (shared/realworld) and verl main's tests/special_e2e/run_ppo_trainer_megatron.sh
(from the git mirror, skipped without it)."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.lint_script import _device_branch
from doctor.launch.script_parser import parse_script
from tests.conftest import SHARED
from tests.realworld.upstream import mirror_git_dir

# what verl v0.9.0's device-picking examples write: the device from a torch_npu probe, unless the environment sets it
HEAD = ("#!/bin/bash\n"
        "DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}\n"
        "ROLLOUT=vllm\n")
CALL = "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=$ROLLOUT\n"
# each form sets the GPU-only rollout engine (launch-rollout-not-on-npu) on the path an NPU run does not take
OFF_NPU = {
    "double-bracket glob, else arm": 'if [[ $DEVICE == npu* ]]; then :; else ROLLOUT=trtllm; fi\n',
    "double-bracket quoted word": 'if [[ "$DEVICE" == "cuda" ]]; then ROLLOUT=trtllm; fi\n',
    "test command": 'if test "$DEVICE" = gpu; then ROLLOUT=trtllm; fi\n',
    # bash's test takes `==` for `=`; the base lost the `==` (`test "$DEVICE" gpu`), so no side named a device
    "test command with ==": 'if test "$DEVICE" == gpu; then ROLLOUT=trtllm; fi\n',
    "not equal": 'if [ "$DEVICE" != npu ]; then ROLLOUT=trtllm; fi\n',
    "and-list": '[ "$DEVICE" = npu ] || ROLLOUT=trtllm\n',
    "case alternatives and patterns": 'case "$DEVICE" in\n  npu*|ascend) ;;\n  gpu|cuda) ROLLOUT=trtllm ;;\nesac\n',
    "case arm after npu)": 'case "${DEVICE}" in\n  npu) ;;\n  *) ROLLOUT=trtllm ;;\nesac\n',
    "elif and else": ('if [ "$DEVICE" = cuda ]; then ROLLOUT=trtllm\nelif [ "$DEVICE" = npu ]; then :\n'
                      'else echo "Unknown device: $DEVICE"; exit 1; fi\n'),  # as verl main's e2e scripts end it
}


def lint(*args: str, input: str | None = None) -> dict:
    r = CliRunner().invoke(cli, ["--json", "lint", *args], input=input)
    assert r.stdout.strip(), r.output
    return json.loads(r.stdout)


def _ids(report: dict, id_: str) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == id_]


@pytest.mark.parametrize("form", OFF_NPU)
def test_with_target_npu_a_path_only_another_device_takes_is_not_linted(form: str):
    """On the base, `--target npu` linted every path as an NPU run: the trtllm path's finding was a warning
    ("on the 1 of 2 paths where …: rollout engine trtllm does not run on Ascend NPUs"), for a path an NPU host
    never takes."""
    report = lint("-", "--no-compose", "--verl-version", "0.9.0", "--target", "npu", input=HEAD + OFF_NPU[form] + CALL)
    assert _ids(report, "launch-rollout-not-on-npu") == [], [f["title"] for f in report["findings"]]
    (f,) = _ids(report, "lint-paths-off-target")
    assert f["severity"] == "info" and f["title"].startswith("--target npu: ") and "an NPU run does not take" in f["title"]
    assert f["evidence"]["target"] == "npu" and f["evidence"]["branches"]


@pytest.mark.parametrize(("head", "branch", "severity"), [
    (HEAD, 'if [ "$DEVICE" = gpu ]; then :; else ROLLOUT=trtllm; fi\n', "error"),  # the NPU run takes the else arm
    (HEAD, 'case "$DEVICE" in\n  gpu|npu) ROLLOUT=trtllm ;;\nesac\n', "error"),  # and this arm
])
def test_a_test_that_does_not_rule_out_an_npu_keeps_its_path(head: str, branch: str, severity: str):
    """`= gpu` false says only "not a GPU", `gpu|npu)` names no one device: an NPU run takes those paths, so their
    finding stays — an error, as the NPU run's only path has it."""
    report = lint("-", "--no-compose", "--verl-version", "0.9.0", "--target", "npu", input=head + branch + CALL)
    (f,) = _ids(report, "launch-rollout-not-on-npu")
    assert f["severity"] == severity, f["title"]


def test_the_walker_records_what_each_form_says_of_the_device():
    """_device_branch reads the walker's record, per path: False on the path an NPU run does not take, True where
    the test names an NPU, None where it says nothing of one (the base read the label's text by regex: it
    recognised none of these forms). Paths that reach the same state are one path with the choices they share,
    unless their devices differ: `npu*|ascend)` and no arm taken both keep ROLLOUT=vllm, and stay two paths (an NPU
    one, and one that matched neither arm: not an NPU)."""
    want = {"double-bracket glob, else arm": [False, True], "test command": [False, None], "not equal": [False, True],
            "case alternatives and patterns": [False, True, False], "case arm after npu)": [False, True],
            "not a device": [None, None]}
    forms = {**OFF_NPU, "not a device": 'if [ "$MODE" = fast ]; then ROLLOUT=trtllm; fi\n'}
    for form, said in want.items():
        (call,) = parse_script(HEAD + forms[form] + CALL, "t.sh", None).invocations
        got = [b[0] if (b := _device_branch(inv.label)) is not None else None for inv in call.alternatives]
        assert sorted(got, key=str) == sorted(said, key=str), (form, got)


def test_without_target_the_path_is_linted_as_a_gpu_run():
    """No --target: as before, both paths are linted; the one an NPU run does not take counts as a GPU run, so
    its NPU-only finding is info ("if run on NPU"), not the warning the base gave (it did not read `!=`)."""
    report = lint("-", "--no-compose", "--verl-version", "0.9.0", input=HEAD + OFF_NPU["not equal"] + CALL)
    (f,) = _ids(report, "launch-rollout-not-on-npu")
    assert f["severity"] == "info" and _ids(report, "lint-paths-off-target") == []


SCRIPTS_DIR = SHARED / "realworld" / "verl-scripts"
B235 = SCRIPTS_DIR / "v0.9.0/scripts/examples/grpo_trainer/run_qwen3_235b_a22b_megatron.sh"


@pytest.mark.skipif(not B235.is_file(), reason=f"no {B235}")
def test_the_gpu_arm_of_an_upstream_script_is_not_an_npu_run_with_target_npu():
    """verl v0.9.0's run_qwen3_235b_a22b_megatron.sh: `case "${DEVICE}" in gpu) … npu) …`. With --target npu the
    base judged its 4 GPU paths (8 GPUs per node) as NPU runs: "64 NPUs are not divisible by EP*ETP*PP", a warning
    (status warnings). The NPU paths (16 per node) divide; the GPU paths are not linted, and the report says so."""
    report = lint(str(B235), "--verl-version", "0.9.0", "--verl-config", str(SCRIPTS_DIR / "v0.9.0" / "config"),
                  "--target", "npu")
    assert _ids(report, "launch-expert-world-indivisible") == []
    (f,) = _ids(report, "lint-paths-off-target")
    assert f["title"] == ('--target npu: 4 of 6 paths were not linted; an NPU run does not take line 56: case '
                          '"${DEVICE}" → gpu)'), f["title"]
    assert len(f["evidence"]["paths"]) == 4 and report["status"] == "ok"


MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"
E2E = "tests/special_e2e/run_ppo_trainer_megatron.sh"


def test_a_call_only_the_gpu_side_runs_is_not_linted_with_target_npu(tmp_path: Path):
    """verl main's run_ppo_trainer_megatron.sh runs main_ppo under `if [ -n "$device_name" ] && [ "$device_name" ==
    "cuda" ]` (line 316) and again under `elif … == "npu"` (line 322). With --target npu the base gave both calls
    the NPU error (mbridge with VPP); only the NPU one is the NPU run's — and that one is no error either: main runs
    the engine worker, which runs mbridge with VPP (upstream's Ascend CI runs this script with its defaults PP=2, VPP=2,
    .github/workflows/e2e_ppo_trainer_megatron_sglang_ascend.yml lines 161 and 231)."""
    verl = mirror_git_dir("verl-project+verl")
    if verl is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    data = subprocess.run(["git", f"--git-dir={verl}", "archive", MAIN, "verl", "setup.py", E2E], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(tmp_path, filter="data")
    report = lint(str(tmp_path / E2E), "--verl-config", str(tmp_path / "verl/trainer/config"), "--target", "npu")
    errors = [(f["id"], f["evidence"].get("line")) for f in report["findings"] if f["severity"] == "error"]
    assert errors == [], errors
    f, uv = _ids(report, "lint-paths-off-target")
    assert f["title"] == ('line 316: --target npu: the entry-point call was not linted; an NPU run does not take '
                          'line 315: `[ "$device_name" == "cuda" ]` true'), f["title"]
    # line 25 runs under uv when `[ "${DEVICE:-gpu}" = gpu ]`: DEVICE's default, which an NPU run takes unless its job
    # sets DEVICE=npu or VERL_USE_UV=0 (the base said an NPU run does not take it)
    assert uv["title"] == ('line 322: --target npu: 1 of 3 paths were not linted; line 25: `[ "${DEVICE:-gpu}" = gpu ]` '
                           "true is another device's side, which an NPU run takes unless its job sets DEVICE=npu or "
                           "VERL_USE_UV=0 (lint-device-default)"), uv["title"]
