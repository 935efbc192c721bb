"""`doctor lint` reads the model key of the entry point's own config (doctor/launch/model_key.py): the legacy FSDP SFT
trainer loads `model.partial_pretrain` (sft_trainer.yaml, default `~/models/gemma-1.1-7b-it`), the engine SFT
trainer and main_generation `model.path` (`~/models/deepseek-llm-7b-chat`, `~/models/Qwen2-7B-Instruct`), main_eval
no model at all. The base read only main_ppo's actor_rollout_ref.model.path: every such call got "no model config:
model-dependent checks skipped" (info) — also one that sets its model, and main_eval, which has none — and a call
that left the model to the yaml's placeholder got no launch-model-missing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.realworld.upstream import mirror_git_dir

CONFIGS = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent"))


@pytest.fixture(autouse=True)
def _compose_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compositions are cached under the test's directory, never in ~/.cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def config(version: str) -> Path:
    d = CONFIGS / version / "verl" / "trainer" / "config"
    if not d.is_dir():
        pytest.skip(f"needs DOCTOR_TEST_VERL_CONFIGS/{version} (verl {version}'s config)")
    return d


def lint(version: str, script: str, *args: str) -> dict:
    r = CliRunner().invoke(cli, ["--json", "lint", "-", "--verl-version", version, "--verl-config",
                                 str(config(version)), *args], input=script)
    assert r.stdout.strip(), r.output
    return json.loads(r.stdout)


def _model_findings(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["id"] in ("launch-model-missing", "launch-model-unknown")]


@pytest.mark.parametrize(("version", "call", "key", "placeholder"), [
    ("0.6.1", "torchrun --nproc_per_node=8 -m verl.trainer.fsdp_sft_trainer data.train_files=/d/train.parquet",
     "model.partial_pretrain", "~/models/gemma-1.1-7b-it"),
    ("0.9.0", "torchrun --nproc_per_node=8 -m verl.trainer.sft_trainer data.train_files=/d/train.parquet",
     "model.path", "~/models/deepseek-llm-7b-chat"),
    ("0.6.1", "python3 -m verl.trainer.main_generation data.path=/d/test.parquet",
     "model.path", "~/models/Qwen2-7B-Instruct"),
])
def test_a_call_that_leaves_its_model_to_the_yaml_runs_the_placeholder(version, call, key, placeholder):
    (f,) = _model_findings(lint(version, call + "\n"))
    assert (f["id"], f["severity"], f["key"]) == ("launch-model-missing", "warning", key)
    assert f["title"] == f"no {key}: the script runs verl's placeholder model, {placeholder}"
    assert f["fix"]["text"].startswith(f"Add {key}=DIR")


@pytest.mark.parametrize(("version", "call"), [
    ("0.6.1", "torchrun -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=/cluster/Qwen2.5-7B"),
    ("0.9.0", "torchrun -m verl.trainer.sft_trainer model.path=Qwen/Qwen3-8B"),
    ("0.6.1", "python3 -m verl.trainer.main_generation model.path=$MODEL"),
    ("0.9.0", "python3 -m verl.trainer.main_eval data.path=/d/generated.parquet"),  # evaluation.yaml: no model
])
def test_a_call_that_sets_its_model_or_has_none_is_not_told_it_has_no_model_config(version, call):
    """No rule of these entry points reads the model's config.json, so there is nothing to skip or say."""
    assert _model_findings(lint(version, call + "\n")) == []


MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"


def test_verl_mains_sft_examples_set_their_model(tmp_path: Path):
    """Every script of verl main's examples/sft sets `model.path` (`MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}` and the
    like): linted against main's own config, none gets a model finding; the base gave each "no model config"."""
    verl = mirror_git_dir("verl-project+verl")
    if verl is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    names = [n for n in subprocess.run(["git", f"--git-dir={verl}", "ls-tree", "-r", "--name-only", MAIN,
                                        "examples/sft"], check=True, capture_output=True, text=True).stdout.split()
             if n.endswith(".sh")]
    assert len(names) >= 10, names
    data = subprocess.run(["git", f"--git-dir={verl}", "archive", MAIN, "verl", *names], check=True,
                          capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=data, check=True)
    said = {}
    for name in names:
        r = CliRunner().invoke(cli, ["--json", "lint", str(tmp_path / name), "--verl-version", "0.10.0.dev20260822",
                                     "--verl-config", str(tmp_path / "verl/trainer/config")])
        report = json.loads(r.stdout)
        if any(f["id"] == "lint-engine" and "sft_trainer" in f["title"] for f in report["findings"]):
            said[name] = [f["title"] for f in _model_findings(report)]
    # run_deepseek_v4_megatron_lite.sh starts the trainer through `-m verl_mlite.launch verl.trainer.sft_trainer`,
    # which lint does not read as an entry point
    assert len(said) >= 10, sorted(said)
    assert said == {name: [] for name in said}
