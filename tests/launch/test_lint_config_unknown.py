"""A `--config-name` whose value only the run knows is not a config to compose: upstream verl's
tests/special_e2e/run_test.sh (v0.6.1 to v0.7.1, and volcengine/verl main b178a3cd5) is `CONFIG_NAME="$1"` then
`python3 -m verl.trainer.main_ppo --config-name "$CONFIG_NAME" "$@"`, which its CI runs with a config name.

Before, lint composed a config literally named `$1` and said "verl's config does not compose"
(launch-compose-failed, an error) on upstream's own script.
"""

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


def lint(path: Path, version: str) -> dict:
    config = CONFIGS / version / "verl" / "trainer" / "config"
    if not config.is_dir():
        pytest.skip(f"needs {config}")
    r = CliRunner().invoke(cli, ["--json", "lint", str(path), "--verl-version", version, "--verl-config", str(config)])
    return json.loads(r.stdout)


@pytest.mark.parametrize("flag", ['--config-name "$1"', '--config-name="$(cat name)"', "-cn $1"])
def test_a_config_flag_only_the_run_knows_is_not_composed(tmp_path, flag):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\npython3 -m verl.trainer.main_ppo {flag} trainer.total_epochs=1 \"$@\"\n",
                      encoding="utf-8")
    report = lint(script, "0.7.1")
    assert [f["id"] for f in report["findings"] if f["severity"] == "error"] == []
    said = [f for f in report["findings"] if f["id"] == "lint-entry-not-composed"]
    assert len(said) == 1 and "a value only the run knows" in said[0]["title"] and said[0]["severity"] == "warning"


@pytest.mark.parametrize("tag", ["v0.6.1", "v0.7.1"])
def test_upstreams_run_test_sh_is_not_an_error(tmp_path, tag):
    git_dir = mirror_git_dir("verl-project+verl")
    if git_dir is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    script = tmp_path / "tests" / "special_e2e" / "run_test.sh"
    script.parent.mkdir(parents=True)
    script.write_bytes(subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{tag}:tests/special_e2e/run_test.sh"],
                                      check=True, capture_output=True).stdout)
    report = lint(script, tag[1:])
    assert [(f["id"], f["title"]) for f in report["findings"] if f["severity"] == "error"] == []
    assert any(f["id"] == "lint-entry-not-composed" and "--config-name $1" in f["title"] for f in report["findings"])


def test_a_config_name_the_release_does_not_ship_names_the_configs_it_has(tmp_path: Path) -> None:
    """verl 0.7.1's verl/experimental/fully_async_policy/shell/dapo_30b_a3b_base_math_fsdp.sh names
    `--config-name fully_async_dapo_trainer`, which its tag does not ship: Hydra's "Cannot find primary config" blames
    no override, and the fix said "Fix the override named in the message". It names the config name and the primary
    configs there instead (the real 0.7.1 wheel's config directory)."""
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo --config-name ppo_trainr trainer.total_epochs=1\n")
    report = lint(script, "0.7.1")
    (f,) = [f for f in report["findings"] if f["id"] == "launch-compose-failed"]
    assert "Cannot find primary config" in f["detail"], f
    assert "--config-name ppo_trainr names no yaml" in f["fix"]["text"] and "ppo_trainer" in f["fix"]["text"], f
