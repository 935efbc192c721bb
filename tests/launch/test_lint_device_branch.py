"""A script that holds a GPU and an NPU path (`case "${DEVICE}" in gpu) … npu) …`, `[ "$DEVICE" = npu ]`, …): each
way of writing the test is read from what the walker records at the branch (`Choice.said`), not from the label's
text: `[[ $DEVICE == npu* ]]`, `test`, `!=`, `case` arms with `|` and patterns, the arm after `npu)`, `elif` /
`else`."""

from __future__ import annotations

import json

from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.lint_script import _device_branch
from doctor.launch.script_parser import parse_script

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


def test_the_walker_records_what_each_form_says_of_the_device():
    """_device_branch reads the walker's record, per path: False on the path an NPU run does not take, True where
    the test names an NPU, None where it says nothing of one (the base read the label's text by regex: it
    recognised none of these forms). Paths that reach the same state are one path with the choices they share
    (`npu*|ascend)` and no arm taken both keep ROLLOUT=vllm: None)."""
    want = {"double-bracket glob, else arm": [False, True], "test command": [False, None], "not equal": [False, True],
            "case alternatives and patterns": [False, None], "case arm after npu)": [False, True],
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
