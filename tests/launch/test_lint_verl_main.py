"""`doctor lint` of verl main's own scripts for verl main: a dev version (`0.10.0.dev`, what main's version file
says, or the release table's dated `0.10.0.dev20260822`) is not older than the table's `0.10.0.dev0`, so a config
group option main has (`model_engine=megatron`) is never "removed"; a config the script composes against decides,
whatever the table says; and a verl checkout run from its root is linted as the version it is, not as the wheel
it shadows.

The script is upstream's (tests/fixtures/verl-main/README.md: repository, commit, path). CI has no verl main config:
the real verl 0.9.1 config stands in where the test needs one, and both have `model_engine/megatron.yaml`
(main at 1dda039b9: verl/trainer/config/model_engine/megatron.yaml). tests/launch/test_lint_upstream_repo.py lints
every script of main against main's own config where a mirror of the repository is here.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.launch.helpers import require_verl_config

SCRIPT = Path(__file__).resolve().parents[1] / "fixtures" / "verl-main" / "examples" / "grpo_trainer" / \
    "run_qwen3_8b_megatron.sh"


def lint(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(cli, ["--json", "lint", str(SCRIPT), *args])
    assert r.stdout.strip(), r.output
    return r.exit_code, json.loads(r.stdout)


def errors(report: dict) -> list[tuple[str, str]]:
    return [(f["id"], f["title"]) for f in report["findings"] if f["severity"] == "error"]


@pytest.mark.parametrize("version", ["0.10.0.dev", "0.10.0.dev0", "0.10.0.dev20260822"])
def test_main_keeps_the_engines_main_has(version):
    """verl main at 1dda039b9 has model_engine/megatron (the table's 0.10.0.dev0): main's dev versions, which share
    its release tuple, did not drop it. Before, 0.10.0.dev and 0.10.0.dev20260822 were told "verl main (0.10.0.dev0)
    removed model_engine/megatron.yaml (last in verl 0.9.1)"."""
    from doctor.launch.removed_keys import group_removed

    assert group_removed("model_engine/megatron", version) is None
    # what main really dropped (859c71295, "remove mindspeedllm backend engine support") is still named
    assert group_removed("model_engine/mindspeed", version) == ("0.9.0", "0.9.1")
    assert group_removed("model_engine/mindspeed", "0.9.1") == ("0.9.0", "0.9.1")


def test_upstream_main_script_for_main_has_no_error():
    """The upstream script, linted for verl main (the release table's snapshot row) against a config that has
    model_engine/megatron: no launch-group-removed error."""
    cdir = require_verl_config()
    code, report = lint("--verl-version", "0.10.0.dev20260822", "--verl-config", str(cdir))
    assert errors(report) == [] and code == 0
    assert report["verl_version"] == "0.10.0.dev20260822"


def test_the_composed_config_overrides_a_stale_group_table(monkeypatch):
    """A table that says no release after 0.9.0 has model_engine/megatron (a table older than the config) does not
    make an error of an option real Hydra just composed."""
    from doctor.launch import removed_keys

    cdir = require_verl_config()
    stale = {**removed_keys._groups(), "model_engine/megatron": ["0.8.0", "0.9.0"]}
    monkeypatch.setattr(removed_keys, "_groups", lambda: stale)
    assert removed_keys.group_removed("model_engine/megatron", "0.9.1") == ("0.9.0", "0.9.1")  # the table says so
    code, report = lint("--verl-version", "0.9.1", "--verl-config", str(cdir))
    assert errors(report) == [] and code == 0


def test_a_verl_checkout_run_from_its_root_is_its_own_version(tmp_path, monkeypatch):
    """Upstream's scripts run `python3 -m verl.trainer.main_ppo` from the verl checkout's root, where that checkout
    shadows a verl wheel in site-packages. The doctor run there composes the checkout's config, so it takes the
    checkout's version (its verl/version/version), not the wheel's metadata: before, it said 0.9.1 of main's
    config."""
    from doctor.launch.hydra_compose import installed_verl

    checkout = tmp_path / "verl-checkout"
    pkg = checkout / "verl"
    shutil.copytree(require_verl_config(), pkg / "trainer" / "config")  # stands in for main's (see above)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "version").mkdir()
    (pkg / "version" / "version").write_text("0.10.0.dev\n", encoding="utf-8")  # main at 1dda039b9
    monkeypatch.syspath_prepend(str(checkout))
    assert installed_verl() == ("0.10.0.dev", pkg / "trainer" / "config")
    code, report = lint()
    assert report["verl_version"] == "0.10.0.dev"
    assert errors(report) == [] and code == 0


def _checkout(tmp_path: Path) -> Path:
    """verl/trainer/config of a checkout of main (its version file; 0.9.1's config stands in for main's, see above)."""
    pkg = tmp_path / "verl-checkout" / "verl"
    shutil.copytree(require_verl_config(), pkg / "trainer" / "config")
    (pkg / "version").mkdir()
    (pkg / "version" / "version").write_text("0.10.0.dev\n", encoding="utf-8")  # main at 1dda039b9
    return pkg / "trainer" / "config"


@pytest.mark.parametrize("installed", [False, True])
def test_verl_config_of_a_checkout_states_the_version(tmp_path, monkeypatch, installed):
    """`doctor lint SCRIPT --verl-config ~/verl/verl/trainer/config` (a checkout of main) from the doctor's own venv,
    where no verl is installed: lint composed main's config and said "no verl version to lint against; the rules of
    0.9.1 were applied" (lint-verl-version-unknown, a warning on each of main's 28 NPU scripts). The tree named says
    which release it is; it also wins over a verl installed beside the doctor (here 0.9.1), whose config is not the
    one composed."""
    from doctor.launch import hydra_compose

    config = _checkout(tmp_path)
    if not installed:
        monkeypatch.setattr(hydra_compose, "installed_verl", lambda: (None, None))
    code, report = lint("--verl-config", str(config))
    assert report["verl_version"] == "0.10.0.dev"
    assert "lint-verl-version-unknown" not in [f["id"] for f in report["findings"]]
    assert errors(report) == [] and code == 0


V090 = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent")) / "0.9.0"
HY_V3 = SCRIPT.with_name("run_hy_v3_megatron.sh")


def test_a_nested_dataclass_field_is_typed_by_its_own_annotation():
    """`algorithm.rollout_correction` has no `_target_` of its own: verl builds it as AlgoConfig's
    `rollout_correction: Optional[RolloutCorrectionConfig]`, whose `rollout_is_threshold: str | float` takes the
    "lower_upper" word upstream writes (0.5_4.0, parsed by verl/trainer/ppo/rollout_corr_helper.py). Before, the yaml
    default 2.0 said "a number" and the script was warned. Against 0.9.1 the one error left is true: 0.9.1 removed
    megatron.grad_offload (its engine/megatron.yaml and McoreEngineConfig have no such key), and Hydra says "Could
    not override 'actor_rollout_ref.actor.megatron.grad_offload'"."""
    require_verl_config()
    r = CliRunner().invoke(cli, ["--json", "lint", str(HY_V3), "--verl-version", "0.9.1"])
    report = json.loads(r.stdout)
    keyed = {(f["id"], f["key"]): f["severity"] for f in report["findings"] if f["severity"] != "info"}
    assert keyed == {("launch-key-removed", "actor_rollout_ref.actor.megatron.grad_offload"): "error"}, keyed


def test_a_nested_dataclass_field_still_refuses_a_word_for_a_bool():
    """The same lookup keeps a wrong value an error: RolloutCorrectionConfig.bypass_mode is a bool."""
    require_verl_config()
    text = HY_V3.read_text(encoding="utf-8").replace("algorithm.rollout_correction.rollout_is=${rollout_is}",
                                                     "algorithm.rollout_correction.bypass_mode=maybe")
    r = CliRunner().invoke(cli, ["--json", "lint", "-", "--verl-version", "0.9.1"], input=text)
    bad = [f for f in json.loads(r.stdout)["findings"] if f["key"] == "algorithm.rollout_correction.bypass_mode"]
    assert [(f["id"], f["severity"]) for f in bad] == [("launch-value-type", "error")]


def test_launch_for_the_main_snapshot_row_writes_its_script(tmp_path):
    """`doctor launch --verl-version 0.10.0.dev20260822` (the release table's verl main row) used to stop with
    "model_engine=megatron: no such engine in verl 0.10.0.dev20260822 (last in verl 0.9.1)" and write nothing.
    Composed against verl 0.9.0's config: main at 1dda039b9 still has megatron.grad_offload, which launch writes for
    it and 0.9.1 removed."""
    from tests.launch.helpers import QWEN3_06B, write_model

    config = V090 / "verl" / "trainer" / "config"
    if not config.is_dir():
        pytest.skip(f"needs {config} (DOCTOR_TEST_VERL_CONFIGS)")
    model = write_model(tmp_path, "Qwen3-0.6B", QWEN3_06B)
    out = tmp_path / "run.sh"
    r = CliRunner().invoke(cli, ["--json", "launch", "--model", model, "--verl-version", "0.10.0.dev20260822",
                                 "--verl-config", str(config), "--tp", "2", "-o", str(out)])
    assert errors(json.loads(r.stdout)) == [] and r.exit_code == 0, r.output
    assert "model_engine=megatron" in out.read_text(encoding="utf-8")


def test_a_key_an_earlier_release_has_is_a_warning_when_no_version_is_stated(monkeypatch):
    """No --verl-version, no header, no verl here: lint assumes the newest release with the script's engine (0.9.1),
    where megatron.grad_offload is gone. The script may be for 0.9.0 or main at 1dda039b9, which have it: a warning
    naming the assumption, never an error on a guess. Stated (--verl-version 0.9.1) it stays an error (above)."""
    from doctor.launch import hydra_compose

    require_verl_config()
    monkeypatch.setattr(hydra_compose, "installed_verl", lambda: (None, None))
    r = CliRunner().invoke(cli, ["--json", "lint", str(HY_V3)])
    report = json.loads(r.stdout)
    gone = [f for f in report["findings"] if f["key"] == "actor_rollout_ref.actor.megatron.grad_offload"]
    assert [(f["id"], f["severity"]) for f in gone] == [("launch-key-removed", "warning")], gone
    assert "no verl version was stated" in gone[0]["title"] and "--verl-version" in gone[0]["fix"]["text"]
    assert errors(report) == [] and r.exit_code == 0
