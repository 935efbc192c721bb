"""The device a path runs on, as lint reads it from the script's branches (doctor/launch/device_branch.py), kept
through the walk:

- two arms that reach the same state were one path labelled with the choices they share, so a GPU arm and the
  arm for any other value (`else`, `*)` after `npu)`) became a path that said nothing of its device, and `--target
  npu` linted it as the NPU run;
- a device default the script's user overrides at launch (`DEVICE=${DEVICE:-gpu}`, verl main's
  `[ "${DEVICE:-gpu}" = gpu ]`) was taken as the script's constant: one arm, the default's, linted whatever the
  target. It is the user's choice: both arms are paths, and `--target` picks its own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.launch.helpers import verl_tree
from tests.launch.test_lint_device_branch import CALL, _ids
from tests.launch.test_lint_device_branch import (
    HEAD as PROBE,  # the device from a torch_npu probe; ROLLOUT=vllm
)
from tests.launch.test_lint_device_branch import lint as lint_json
from tests.realworld.upstream import mirror_git_dir

HEAD = "#!/bin/bash\n"
# the GPU arm and the arm for any other value set the same GPU-only rollout engine: the same state
MERGED = {
    "elif and else": ('if [ "$DEVICE" = gpu ]; then ROLLOUT=trtllm\nelif [ "$DEVICE" = npu ]; then ROLLOUT=vllm\n'
                      'else ROLLOUT=trtllm; fi\n'),
    "case arm after npu)": 'case "$DEVICE" in\n  gpu) ROLLOUT=trtllm ;;\n  npu) ;;\n  *) ROLLOUT=trtllm ;;\nesac\n',
}
# the user's default: a GPU run unless DEVICE is set at launch
# (the form, the paths an NPU run does not take of all paths): a `case` also has the path of a value no arm names
DEFAULTED = {
    "assigned default, if": ('DEVICE=${DEVICE:-gpu}\nif [ "$DEVICE" = npu ]; then ROLLOUT=vllm; else ROLLOUT=trtllm; fi\n',
                             (1, 2)),
    "assigned default, case": ('DEVICE=${DEVICE:-gpu}\ncase "$DEVICE" in\n  gpu) ROLLOUT=trtllm ;;\n  npu) ROLLOUT=vllm ;;\n'
                               # a default whose arms name no device (`*)` matches any value): the script's
                               'esac\nVARIANT=${VARIANT:-ta}\ncase "$VARIANT" in\n  global) ROLLOUT=vllm ;;\n  *) ;;\nesac\n', (2, 3)),
    "inline default in a list": ('ROLLOUT=vllm\nif [ "${VERL_USE_UV:-1}" != 0 ] && [ "${DEVICE:-gpu}" = gpu ]; then '
                                 'ROLLOUT=trtllm; fi\n', (1, 2)),
}


def lint(script: str, *args: str) -> dict:
    return lint_json("-", "--no-compose", "--verl-version", "0.9.0", *args, input=script)


@pytest.mark.parametrize("form", MERGED)
def test_the_gpu_arm_and_the_other_arm_stay_off_an_npu_run(form: str):
    """The base merged them into one path with no device choice, linted for --target npu: "on the 1 of 2 paths …:
    rollout engine trtllm does not run on Ascend NPUs" (a warning, for two arms an NPU run never takes)."""
    report = lint(PROBE + MERGED[form] + CALL, "--target", "npu")
    assert _ids(report, "launch-rollout-not-on-npu") == [], [f["title"] for f in report["findings"]]
    (f,) = _ids(report, "lint-paths-off-target")
    assert f["title"].startswith("--target npu: 2 of 3 paths were not linted"), f["title"]
    assert len(f["evidence"]["paths"]) == 2


@pytest.mark.parametrize("form", DEFAULTED)
def test_a_device_default_the_user_overrides_is_a_choice_that_target_makes(form: str):
    """The base linted the default's arm only, as the script's constant: with --target npu an error on the GPU
    arm ("rollout engine trtllm does not run on Ascend NPUs"), and no path an NPU run takes."""
    script, (off, total) = DEFAULTED[form]
    report = lint(HEAD + script + CALL, "--target", "npu")
    assert _ids(report, "launch-rollout-not-on-npu") == [], [f["title"] for f in report["findings"]]
    (f,) = _ids(report, "lint-paths-off-target")
    assert f["title"].startswith(f"--target npu: {off} of {total} paths were not linted; "), f["title"]
    # the default's side is one an NPU run takes unless its job says otherwise (lint-device-default): the base said
    # "an NPU run does not take line 3: …" of it, beside the warning that it does
    (d,) = _ids(report, "lint-device-default")
    branch = d["evidence"]["branch"]
    assert f"{branch} is another device's side, which an NPU run takes unless its job sets DEVICE=npu" in f["title"]
    assert "does not take" not in f["title"].split(branch)[0].rsplit(";", 1)[-1], f["title"]
    (paths,) = _ids(report, "lint-paths")
    # one branch: `${VERL_USE_UV:-1}` is a default too, but its test names no device, so the script's value decides it
    assert f"on {total} paths ({total - off} linted for --target npu), from 1 branch: " in paths["title"], paths


@pytest.mark.parametrize("form", DEFAULTED)
def test_without_target_both_arms_are_linted_and_the_gpu_one_says_so(form: str):
    """No --target: both arms; the GPU engine, only on the GPU arm where the script's other arm is an NPU's (or
    says nothing of one), is not an NPU error. The base gave it with the severity of the script's only path."""
    script, (_, total) = DEFAULTED[form]
    report = lint(HEAD + script + CALL)
    (f,) = _ids(report, "launch-rollout-not-on-npu")
    assert f["severity"] != "error" and f["title"].startswith(f"on the 1 of {total} paths where line "), f["title"]


MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"
UV_SCRIPT = "examples/grpo_trainer/run_qwen3_30b_a3b_megatron.sh"


def test_verl_mains_uv_launch_is_the_gpu_default_not_the_npu_run(tmp_path: Path):
    """verl main's GPU examples run under `uv` when `[ "${VERL_USE_UV:-1}" != 0 ] && [ "${DEVICE:-gpu}" = gpu ] &&
    …`: the base took DEVICE's default as fixed and linted only the uv launch, whose
    `ray_kwargs.ray_init.runtime_env.py_executable="uv -v run …"` an NPU run never gets. With --target npu the uv
    path is the one not linted."""
    verl = mirror_git_dir("verl-project+verl")
    if verl is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    data = subprocess.run(["git", f"--git-dir={verl}", "archive", MAIN, "verl", UV_SCRIPT], check=True,
                          capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=data, check=True)
    r = CliRunner().invoke(cli, ["--json", "lint", str(tmp_path / UV_SCRIPT), "--verl-version", "0.10.0.dev20260822",
                                 "--verl-config", str(tmp_path / "verl/trainer/config"), "--target", "npu"])
    report = json.loads(r.stdout)
    (f,) = _ids(report, "lint-paths-off-target")
    assert "`[ \"${DEVICE:-gpu}\" = gpu ]` true" in f["title"], f["title"]
    (call,) = report["invocations"]
    uv = "ray_kwargs.ray_init.runtime_env.py_executable=uv -v run"
    linted = [p for p in call["paths"] if p["path"] not in f["evidence"]["paths"]]
    assert linted and all(not any(o.startswith(uv) for o in p["overrides"]) for p in linted), linted
    assert all(any(o.startswith(uv) for o in p["overrides"]) for p in call["paths"] if p not in linted)


@pytest.mark.parametrize("form", DEFAULTED)
def test_an_npu_run_is_told_the_gpu_side_is_its_default(form: str):
    """The GPU side is the one the script's own default takes: an NPU run takes it unless its job sets the variable,
    which lint's --target npu assumed silently. Not said on a GPU run, nor where a wrapper sets the variable (the test
    is then decided), nor for verl's `DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' …)}`, which probes the host."""
    script, _ = DEFAULTED[form]
    report = lint(HEAD + script + CALL, "--target", "npu")
    (f,) = _ids(report, "lint-device-default")
    assert f["severity"] == "warning" and f["evidence"]["variables"] == ["DEVICE"], f
    assert f["title"].startswith("DEVICE is not set by the script: an NPU run takes line "), f["title"]
    assert _ids(lint(HEAD + script + CALL, "--target", "gpu"), "lint-device-default") == []
    assert _ids(lint(HEAD + "DEVICE=npu\n" + script + CALL, "--target", "npu"), "lint-device-default") == []
    probe = PROBE + 'if [ "$DEVICE" = npu ]; then :; else ROLLOUT=trtllm; fi\n' + CALL
    assert _ids(lint(probe, "--target", "npu"), "lint-device-default") == []


# (the script, what lint-device-default tells an NPU run's job to set): the word the script's NPU side names, and the
# value that makes false another test of a default that the same `&&` list reads, in either order
SETTINGS = {
    "device test first": ('ROLLOUT=vllm\nif [ "${DEVICE:-gpu}" = gpu ] && [ "${VERL_USE_UV:-1}" != 0 ]; then '
                          'ROLLOUT=trtllm; fi\n', ["DEVICE=npu", "VERL_USE_UV=0"]),
    "the NPU arm's word": ('DEVICE=${DEVICE:-gpu}\ncase "$DEVICE" in\n  gpu) ROLLOUT=trtllm ;;\n  ascend) ROLLOUT=vllm ;;\n'
                           'esac\n', ["DEVICE=ascend"]),
    # `= 1` false names no value that makes it so: only DEVICE is named
    "a test that names no value": ('ROLLOUT=vllm\nif [ "${USE_UV:-1}" = 1 ] && [ "${DEVICE:-gpu}" = gpu ]; then '
                                   'ROLLOUT=trtllm; fi\n', ["DEVICE=npu"]),
}


@pytest.mark.parametrize("form", SETTINGS)
def test_the_warning_names_every_setting_that_keeps_an_npu_run_off_the_gpu_side(form: str):
    """The base's fix said "Export DEVICE with the value of the script's NPU side", naming neither the value nor
    another variable the same `&&` list tests by its default (verl main's VERL_USE_UV=0, which upstream's Ascend
    workflow sets)."""
    script, settings = SETTINGS[form]
    report = lint(HEAD + script + CALL, "--target", "npu")
    (f,) = _ids(report, "lint-device-default")
    assert f["title"].endswith("unless its job sets " + " or ".join(settings)), f["title"]
    assert f["fix"]["text"].startswith(f"Export {settings[0]} for an NPU run"), f["fix"]
    assert all(s in f["fix"]["text"] for s in settings), f["fix"]


ASCEND = "tests/special_e2e/run_v1_separate_async_ascend.sh"


def test_verl_mains_ascend_wrapper_leaves_device_unset_and_an_npu_run_takes_uv(tmp_path: Path):
    """verl main's run_v1_separate_async_ascend.sh runs run_v1_separate_async.sh without DEVICE, whose line 25 then
    launches through `uv run … --extra vllm --extra fsdp` (CUDA extras) on `[ "${DEVICE:-gpu}" = gpu ]` (upstream's
    Ascend workflow sets VERL_USE_UV=0 to avoid it). The base said nothing; --target npu left that path out as one
    an NPU run does not take. Both settings that avoid it are named, and the left-out path is said to be taken by
    default."""
    verl_tree(tmp_path, MAIN, ASCEND, "tests/special_e2e/run_v1_separate_async.sh")
    args = ["--json", "lint", str(tmp_path / ASCEND), "--verl-version", "0.10.0.dev20260822", "--verl-config",
            str(tmp_path / "verl/trainer/config")]
    for target in ("auto", "npu"):  # the wrapper's name says Ascend: its other path is linted as the NPU run
        report = json.loads(CliRunner().invoke(cli, [*args, "--target", target]).stdout)
        (f,) = _ids(report, "lint-device-default")
        assert f["title"] == ('run_v1_separate_async.sh line 125 (run by run_v1_separate_async_ascend.sh line 73): '
                              'DEVICE is not set by the script: an NPU run takes line 25: `[ "${DEVICE:-gpu}" = gpu ]` '
                              "true — another device's side — unless its job sets DEVICE=npu or VERL_USE_UV=0"), f["title"]
        # both ways the script offers: the base's fix named DEVICE alone, with no value
        assert f["fix"]["text"].startswith("Export DEVICE=npu for an NPU run") and "export VERL_USE_UV=0" in f["fix"]["text"]
    # the path --target npu leaves out is the one the warning says an NPU run takes: the base said it "does not take" it
    (off,) = _ids(report, "lint-paths-off-target")
    assert off["title"].endswith('--target npu: 1 of 2 paths were not linted; line 25: `[ "${DEVICE:-gpu}" = gpu ]` '
                                 "true is another device's side, which an NPU run takes unless its job sets DEVICE=npu "
                                 "or VERL_USE_UV=0 (lint-device-default)"), off["title"]
    report = json.loads(CliRunner().invoke(cli, [*args, "--target", "gpu"]).stdout)
    assert _ids(report, "lint-device-default") == []
