"""`doctor lint` and the model path: a call that sets no actor_rollout_ref.model.path over verl's placeholder
default gets launch's warning launch-model-missing (a script `doctor launch` wrote without --model, linted: the base
said nothing); a path lint cannot read here (a path on the cluster, a hub id, `$MODEL_PATH`) is named with what was
not checked (the base said "no model config", as for no path at all). And `lint-paths` with --target says how many
paths were linted beside lint-paths-off-target (the base counted every path)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.conftest import SHARED
from tests.launch.helpers import QWEN3_06B, require_verl_config, write_model


@pytest.fixture(autouse=True)
def _compose_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compositions are cached under the test's directory, never in ~/.cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def lint(*args: str, input: str | None = None) -> dict:
    r = CliRunner().invoke(cli, ["--json", "lint", *args], input=input, catch_exceptions=False)
    assert r.stdout.strip(), r.output
    return json.loads(r.stdout)


def _ids(report: dict, id_: str) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == id_]


def test_a_script_launch_wrote_without_model_is_linted_with_launch_model_missing(tmp_path: Path):
    """The script `doctor launch --verl-version 0.9.1` writes with no --model: launch warns, lint of that script
    said nothing (status ok on the base) though the run loads verl's placeholder ~/models/deepseek-llm-7b-chat."""
    require_verl_config()
    out = tmp_path / "run.sh"
    r = CliRunner().invoke(cli, ["launch", "--verl-version", "0.9.1", "-o", str(out)], catch_exceptions=False)
    assert out.is_file(), r.output
    report = lint(str(out), "--verl-version", "0.9.1", "--compose")
    (f,) = _ids(report, "launch-model-missing")
    assert f["severity"] == "warning" and f["key"] == "actor_rollout_ref.model.path"
    assert f["title"] == ("no actor_rollout_ref.model.path: the script runs verl's placeholder model, "
                          "~/models/deepseek-llm-7b-chat")
    assert '"$@"' not in f["detail"]  # launch's script passes its arguments on: the path can be appended


def test_a_call_that_passes_no_arguments_on_says_none_can_append_the_path():
    report = lint("-", "--verl-version", "0.9.1", "--compose",
                  input="python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8\n")
    (f,) = _ids(report, "launch-model-missing")
    assert "passes none of the script's arguments on" in f["detail"]


def test_arguments_only_the_run_knows_are_named_as_what_may_set_the_path():
    """`main_ppo $EXTRA_ARGS` (unquoted, unknown here): the path may be among them; the warning names them."""
    report = lint("-", "--verl-version", "0.9.1", "--compose",
                  input="python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8 $EXTRA_ARGS\n")
    (f,) = _ids(report, "launch-model-missing")
    assert f["detail"].endswith("appended when the script runs, or set by $EXTRA_ARGS (arguments only the run "
                                "knows)."), f["detail"]


def test_a_model_path_the_script_sets_or_another_config_names_is_not_missing(tmp_path: Path):
    """Set (even to a value only the run knows), or left to a config that does not hold the placeholder (the SFT
    trainer's has no actor_rollout_ref): no warning. With the warning's case in the same test so it fails on base."""
    require_verl_config()
    missing = lint("-", "--verl-version", "0.9.1", "--compose", input="python3 -m verl.trainer.main_ppo \"$@\"\n")
    assert len(_ids(missing, "launch-model-missing")) == 1
    for call in ("python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=$MODEL_PATH\n",
                 "python3 -m verl.trainer.main_ppo +actor_rollout_ref.model.path=/m\n",
                 "torchrun -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=/m\n"):
        assert _ids(lint("-", "--verl-version", "0.9.1", "--compose", input=call), "launch-model-missing") == [], call
    model = write_model(tmp_path, "q", QWEN3_06B)
    given = lint("-", "--verl-version", "0.9.1", "--compose", "--model", model,
                 input="python3 -m verl.trainer.main_ppo\n")
    assert _ids(given, "launch-model-missing") == []


@pytest.mark.parametrize(("value", "shown", "why"), [
    ("/data/models/Qwen3-8B", "/data/models/Qwen3-8B", "no such directory here"),
    ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "a Hugging Face model id; lint does not download it"),
    ("$MODEL_PATH", "$MODEL_PATH", "a value only the run knows"),
])
def test_a_model_path_not_readable_here_is_named_with_what_was_not_checked(value: str, shown: str, why: str):
    """The base said "no model config: model-dependent checks skipped" / "Pass --model DIR", as if the script set
    no path."""
    report = lint("-", "--verl-version", "0.9.1", "--no-compose",
                  input=f"python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path={value}\n")
    (f,) = _ids(report, "launch-model-unknown")
    assert f["severity"] == "info" and f["key"] == "actor_rollout_ref.model.path"
    assert f["title"] == (f"the script's model path {shown} is not readable here ({why}): heads/layers/experts "
                          "checks skipped")
    assert "attention and KV heads against TP" in f["detail"] and f["evidence"]["model"] == shown
    assert _ids(report, "launch-model-missing") == []


def test_a_readable_model_directory_without_config_json_says_so(tmp_path: Path):
    (tmp_path / "m").mkdir()
    report = lint("-", "--verl-version", "0.9.1", "--no-compose",
                  input=f"python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path={tmp_path / 'm'}\n")
    (f,) = _ids(report, "launch-model-unknown")
    assert "(it has no config.json)" in f["title"]


B235 = SHARED / "realworld" / "verl-scripts" / "v0.9.0/scripts/examples/grpo_trainer/run_qwen3_235b_a22b_megatron.sh"


@pytest.mark.skipif(not B235.is_file(), reason=f"no {B235}")
def test_lint_paths_counts_the_paths_linted_for_the_target():
    """verl v0.9.0's run_qwen3_235b_a22b_megatron.sh has 6 paths, 4 through `case "${DEVICE}" → gpu)`. With
    --target npu the base said "the call on line 190 on 6 paths" beside "4 of 6 paths were not linted"."""
    report = lint(str(B235), "--verl-version", "0.9.0", "--no-compose", "--target", "npu")
    (f,) = _ids(report, "lint-paths")
    assert f["title"].startswith("the script branches on values it cannot know; each path an NPU run can take was "
                                 "checked: the call on line 190 on 6 paths (2 linted for --target npu), from 3 "
                                 "branches"), f["title"]
    auto = lint(str(B235), "--verl-version", "0.9.0", "--no-compose")
    (g,) = _ids(auto, "lint-paths")
    assert "each path was checked: the call on line 190 on 6 paths, from 3 branches" in g["title"]
