"""An SFT trainer's key that a later release added is named with that release, from its own config's table
(removed_keys.json `added_in_by_config`, tools/verl_removed_keys.py): the SFT trainers' `data.*` / `engine.*` are not
the PPO trainer's. The scripts are upstream's (tests/fixtures/verl-main/README.md): main's test_sft_engine_all.sh
runs run_sft_engine.sh with BACKEND=megatron, which sets `engine.vanilla_mbridge` (engine/megatron.yaml from 0.7.0).

Before, `added_in` covered the PPO trainer configs only: linted for 0.6.1 that key was "engine is McoreEngineConfig,
which has no field vanilla_mbridge", with nothing to say the script was written for a newer verl.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.removed_keys import added_after, removed_in

ROOT = Path(__file__).resolve().parents[2]
WRAPPER = ROOT / "tests" / "fixtures" / "verl-main" / "tests" / "special_e2e" / "sft" / "test_sft_engine_all.sh"
CONFIGS = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent"))


def config(version: str) -> Path:
    d = CONFIGS / version / "verl" / "trainer" / "config"
    if not d.is_dir():
        pytest.skip(f"needs DOCTOR_TEST_VERL_CONFIGS/{version} (verl {version}'s config)")
    return d


def test_an_sft_engine_key_of_a_later_release_names_it_and_the_target():
    r = CliRunner().invoke(cli, ["--json", "lint", str(WRAPPER), "--verl-version", "0.6.1", "--verl-config",
                                 str(config("0.6.1"))])
    report = json.loads(r.stdout)
    mbridge = [f for f in report["findings"] if f.get("key") == "engine.vanilla_mbridge"]
    assert [f["evidence"]["via"][0]["line"] for f in mbridge] == [34, 38]  # the two BACKEND=megatron runs
    for f in mbridge:
        assert f["id"] == "launch-key-added-later" and f["severity"] == "error"
        assert f["title"].endswith("engine.vanilla_mbridge was added in verl 0.7.0 (the target is verl 0.6.1)")
        assert f["evidence"]["added_in"] == "0.7.0"


def test_each_sft_config_has_its_own_table():
    assert added_after("engine.vanilla_mbridge", "0.6.1", "sft_trainer_engine") == ("engine.vanilla_mbridge", "0.7.0")
    assert added_after("data.ignore_input_ids_mismatch", "0.6.1", "sft_trainer_engine") == (
        "data.ignore_input_ids_mismatch", "0.7.0")
    assert added_after("engine.vanilla_mbridge", "0.7.0", "sft_trainer_engine") is None  # the target has it
    # the PPO table does not speak for the SFT trainers, nor theirs for PPO
    assert added_after("data.ignore_input_ids_mismatch", "0.6.1") is None
    assert added_after("data.ignore_input_ids_mismatch", "0.6.1", "ppo_trainer") is None
    assert added_after("ray_kwargs.ray_init.runtime_env.py_executable", "0.9.0", "sft_trainer_engine") is None


def test_the_sft_tables_start_at_each_configs_first_release():
    data = json.loads((ROOT / "doctor" / "launch" / "removed_keys.json").read_text(encoding="utf-8"))
    tables = data["added_in_by_config"]
    assert set(tables) == {"sft_trainer", "sft_trainer_engine"}
    releases = data["releases"]
    # sft_trainer_engine.yaml first ships in 0.6.0: nothing is "added" in or before it
    assert min(tables["sft_trainer_engine"].values(), key=releases.index) == "0.6.1"
    for table in tables.values():
        assert set(table.values()) <= set(releases[1:])


def test_the_tool_composes_each_sft_engine_option():
    pytest.importorskip("hydra")
    from tools.verl_removed_keys import sft_keys_of

    old, new = sft_keys_of(config("0.6.1")), sft_keys_of(config("0.7.0"))
    assert set(old) == {"sft_trainer", "sft_trainer_engine"}
    assert "engine.vanilla_mbridge" in new["sft_trainer_engine"][0] - old["sft_trainer_engine"][0]  # engine=megatron
    assert "engine.ulysses_parallel_size" in new["sft_trainer_engine"][0]  # engine=veomni, new in 0.7.0


def test_a_later_releases_key_that_would_take_a_plus_is_not_told_to_add_one():
    """data.ignore_input_ids_mismatch (verl 0.7.0's SFT data config) in a script linted for 0.6.1, whose `data`
    section would take it with '+': the fix is the target release, and the '+' only if 0.6.1's code reads the key
    (it does not: v0.6.1 names it nowhere) — before: launch-key-needs-plus, "write +data.ignore_input_ids_mismatch"."""
    r = CliRunner().invoke(cli, ["--json", "lint", str(WRAPPER), "--verl-version", "0.6.1", "--verl-config",
                                 str(config("0.6.1"))])
    report = json.loads(r.stdout)
    found = [f for f in report["findings"] if f.get("key") == "data.ignore_input_ids_mismatch"]
    assert found and {f["id"] for f in found} == {"launch-key-added-later"}, [(f["id"], f["title"]) for f in found]
    for f in found:
        assert f["title"].endswith("was added in verl 0.7.0 (the target is verl 0.6.1)")
        assert "declares no such key" in f["detail"]
        assert f["fix"]["text"].endswith("(+data.ignore_input_ids_mismatch only if verl 0.6.1's own code reads it).")


def test_what_an_sft_config_dropped_comes_from_its_own_table():
    """`present_in_by_config`: v0.7.0's engine/fsdp.yaml has `data_parallel_mode`, v0.7.1's does not (sft_trainer_engine
    composed with each engine option, tools/verl_removed_keys.py); the PPO table's stories are not the SFT trainer's:
    data.sampler was in ppo_trainer.yaml from v0.5.0 to v0.7.1, and in no SFT trainer config."""
    assert removed_in("engine.data_parallel_mode", "0.7.1", "sft_trainer_engine") == (
        "engine.data_parallel_mode", "0.7.0", "0.7.1")
    assert removed_in("engine.data_parallel_mode", "0.7.0", "sft_trainer_engine") is None  # the target has it
    assert removed_in("data.sampler.class_name", "0.9.0") == ("data.sampler.class_name", "0.7.1", "0.8.0")  # PPO
    assert removed_in("data.sampler.class_name", "0.9.0", "sft_trainer_engine") is None
    assert removed_in("data.sampler.class_name", "0.9.0", "my_sft") is None  # no table: no story
    assert added_after("engine.vanilla_mbridge", "0.6.1", "my_sft") is None


def test_an_sft_script_is_not_told_a_ppo_keys_history(tmp_path):
    """Linted for 0.9.0, an engine SFT run's `data.sampler.class_name` was "removed in verl 0.8.0 (last in verl 0.7.1)"
    — the PPO trainer's history (ppo_trainer.yaml's data.sampler, 0.5.0 to 0.7.1); no sft_trainer_engine.yaml or
    sft_trainer.yaml of any tag has a `sampler` (git show vX:verl/trainer/config/sft_trainer*.yaml). Hydra refuses the
    key either way (an error), now without a story that is not true of the SFT trainer."""
    script = tmp_path / "sft.sh"
    script.write_text("torchrun --standalone --nnodes=1 --nproc-per-node=8 -m verl.trainer.sft_trainer \\\n"
                      "    data.sampler.class_name=x trainer.total_epochs=1\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", "0.9.0", "--verl-config",
                                 str(config("0.9.0"))])
    found = [f for f in json.loads(r.stdout)["findings"] if f.get("key") == "data.sampler.class_name"]
    assert [(f["id"], f["severity"]) for f in found] == [("launch-key-not-in-config", "error")], found
    assert "removed" not in found[0]["title"] and "removed_in" not in found[0]["evidence"]
