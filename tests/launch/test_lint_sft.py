"""`doctor lint` judges verl's engine SFT trainer (`verl.trainer.sft_trainer`, `sft_trainer_ray`) by its own rules:
the words its code takes in a numeric key (`trainer.test_freq=after_each_epoch`), and the engine its `engine` group
selects. The scripts are upstream's (tests/fixtures/verl-main/README.md); the config and source are the real verl
0.9.1 wheel's.

Before, upstream's run_sft_engine.sh drew "trainer.test_freq=after_each_epoch: verl's config expects a number
here", and BACKEND=megatron was "engine fsdp (sft_trainer_engine defaults to the FSDP engine)".
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.sentinels import sentinel_words
from tests.launch.helpers import require_verl_config, verl_tree

SFT = Path(__file__).resolve().parents[1] / "fixtures" / "verl-main" / "tests" / "special_e2e" / "sft"


def lint(path: Path, *args: str) -> dict:
    r = CliRunner().invoke(cli, ["--json", "lint", str(path), *args])
    assert r.stdout.strip(), r.output
    return json.loads(r.stdout)


def value_findings(report: dict) -> list[tuple[str, str | None]]:
    return [(f["severity"], f.get("key")) for f in report["findings"] if f["id"] == "launch-value-type"]


def test_the_sft_trainers_own_word_for_test_freq_is_not_a_type_mistake():
    require_verl_config()
    assert value_findings(lint(SFT / "run_sft_engine.sh", "--verl-version", "0.9.1")) == []


def test_the_words_come_from_the_entry_modules_code():
    cdir = require_verl_config()
    root = cdir.parents[2]  # …/site-packages (verl/trainer/config)
    words = sentinel_words(root, "verl.trainer.sft_trainer")
    assert words["trainer.test_freq"] == {"after_each_epoch"} and words["trainer.save_freq"] == {"after_each_epoch"}
    assert "trainer.test_freq" in sentinel_words(root, "verl.trainer.sft_trainer_ray")
    assert "trainer.test_freq" not in sentinel_words(root, "verl.trainer.main_ppo")
    assert sentinel_words(None, "verl.trainer.sft_trainer") == {} == sentinel_words(root, "verl.no_such_module")


def test_another_word_or_another_trainer_is_still_judged(tmp_path):
    require_verl_config()
    sft = tmp_path / "sft.sh"
    sft.write_text("torchrun --nproc-per-node=8 -m verl.trainer.sft_trainer trainer.test_freq=each_epoch\n")
    assert value_findings(lint(sft, "--verl-version", "0.9.1")) == [("warning", "trainer.test_freq")]
    ppo = tmp_path / "ppo.sh"  # main_ppo's trainer does `global_steps % test_freq`: the word is not its own
    ppo.write_text("python3 -m verl.trainer.main_ppo trainer.test_freq=after_each_epoch\n")
    assert ("warning", "trainer.test_freq") in value_findings(lint(ppo, "--verl-version", "0.9.1"))


def test_the_sft_megatron_engine_is_told_apart():
    """The engine SFT trainer's engine is its `engine` group: megatron.yaml names McoreEngineConfig and has no
    `strategy` key, so the composed config's `_target_` says it (test_sft_engine_all.sh's BACKEND=megatron calls,
    followed into run_sft_engine.sh)."""
    require_verl_config()
    report = lint(SFT / "test_sft_engine_all.sh", "--verl-version", "0.9.1")
    engines = [f["evidence"]["engine"] for f in report["findings"] if f["id"] == "lint-engine"]
    assert engines == ["fsdp", "fsdp", "fsdp", "fsdp", "veomni", "megatron", "megatron"]


MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"
MLITE = "examples/sft/gsm8k/run_deepseek_v4_megatron_lite.sh"


def test_the_megatron_lite_sft_example_is_the_sft_trainer_on_the_mlite_engine(tmp_path):
    """verl main's Megatron Lite example runs `torchrun … -m verl_mlite.launch verl.trainer.sft_trainer …` with
    `engine=mlite` from `hydra.searchpath=[pkg://verl_mlite.config]`. The base found no entry point ("no verl entry
    point"); read as the SFT trainer, the default engine composed in place of the one not here is not the run's."""
    verl_tree(tmp_path, MAIN, MLITE)
    report = lint(tmp_path / MLITE, "--verl-version", "0.10.0.dev20260822", "--verl-config",
                  str(tmp_path / "verl/trainer/config"))
    by_id = {f["id"]: f for f in report["findings"]}
    assert "lint-no-invocation" not in by_id, report["findings"]
    assert by_id["lint-engine"]["title"].startswith(
        "verl.trainer.sft_trainer composes sft_trainer_engine (verl.trainer.sft_trainer's default config "
        "sft_trainer_engine); engine mlite (engine=mlite, whose config is not on this machine)"), by_id["lint-engine"]
    assert "launch-config-outside" in by_id
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
