"""verl 0.8.0 deleted the legacy megatron worker, and its engine asserts `use_mbridge must be True`; a 0.8.0.dev build
from before that deletion still has `trainer.use_legacy_worker_impl: auto` in its config, and its main_ppo then runs
the legacy worker (verl/workers/megatron_workers.py), which takes use_mbridge=False. volcengine/verl main b178a3cd5
(version file 0.8.0.dev) is such a build: upstream's tests/special_e2e/run_ppo_trainer_megatron.sh
(`USE_MBRIDGE=${USE_MBRIDGE:-False}`) got launch-mbridge-required from the version number alone. The release's own
composed config decides now; with `trainer.use_legacy_worker_impl=disable` (the engine worker) the error stands."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.realworld.upstream import mirror_git_dir

COMMIT = "b178a3cd56f58b2d502255daba591e92833930a7"
SCRIPT = "tests/special_e2e/run_ppo_trainer_megatron.sh"
MBRIDGE_LINE = "actor_rollout_ref.actor.megatron.use_mbridge=${USE_MBRIDGE} \\\n"


def _ids(script: Path, config: Path) -> list[str]:
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", "0.8.0.dev", "--verl-config",
                                 str(config)])
    return [f["id"] for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]


def test_a_dev_build_with_the_legacy_worker_takes_mbridge_off(tmp_path):
    git_dir = mirror_git_dir("volcengine+verl")
    if git_dir is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/volcengine+verl")
    tar = subprocess.run(["git", f"--git-dir={git_dir}", "archive", COMMIT, "verl/trainer/config", "verl/version"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(tmp_path, filter="data")
    assert (tmp_path / "verl" / "version" / "version").read_text().strip() == "0.8.0.dev"
    text = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{COMMIT}:{SCRIPT}"], check=True,
                          capture_output=True, text=True).stdout
    assert MBRIDGE_LINE in text
    config = tmp_path / "verl" / "trainer" / "config"
    script = tmp_path / "run.sh"
    script.write_text(text, encoding="utf-8")
    assert "launch-mbridge-required" not in _ids(script, config)
    engine = tmp_path / "engine.sh"
    engine.write_text(text.replace(MBRIDGE_LINE, MBRIDGE_LINE + "    trainer.use_legacy_worker_impl=disable \\\n", 1),
                      encoding="utf-8")
    assert "launch-mbridge-required" in _ids(engine, config)
