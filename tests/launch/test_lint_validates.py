"""Only verl's `validate_config` (called by verl.trainer.main_ppo's TaskRunner and the entries built on it) holds the
train batch against the actor's mini batch. verl's VLA trainer (verl/experimental/vla/main_ppo.py at v0.7.1,
recipe/vla at v0.7.0) never calls it, and upstream's own VLA scripts run with train_batch_size 8..64 against
ppo_mini_batch_size 128..2048: lint called each an error. Read from the entry's source: an entry that names neither
validate_config nor verl.trainer.main_ppo gets a warning that says so; main_ppo and the entries built on it keep the
error (an entry whose source is not here is judged as before)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli
from tests.realworld.upstream import mirror_git_dir

CONFIGS = Path(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", "/nonexistent"))
LAYOUT = ("data.train_batch_size=16 actor_rollout_ref.rollout.n=8 actor_rollout_ref.actor.ppo_mini_batch_size=128 "
          "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "
          "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 "
          "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2")


def mini_batch(script: Path, config: Path, version: str) -> list[tuple[str, str]]:
    r = CliRunner().invoke(cli, ["--json", "lint", str(script), "--verl-version", version, "--verl-config", str(config)])
    return [(f["severity"], f["title"]) for f in json.loads(r.stdout)["findings"]
            if f["id"] == "launch-mini-batch-too-large"]


def _tree(tmp_path: Path, entries: dict[str, str]) -> Path:
    src = CONFIGS / "0.7.1" / "verl" / "trainer" / "config"
    if not src.is_dir():
        pytest.skip(f"needs {src}")
    config = tmp_path / "verl" / "trainer" / "config"
    shutil.copytree(src, config)
    for module, text in entries.items():
        f = tmp_path / Path(*module.split(".")).with_suffix(".py")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return config


def test_an_entry_that_does_not_run_validate_config_gets_a_warning_others_the_error(tmp_path):
    """Entries beside verl's trainer config compose it (as verl.trainer.* modules do), so only the entry's source
    differs: one that never calls validate_config, one built on main_ppo's TaskRunner, and main_ppo itself."""
    config = _tree(tmp_path, {
        "verl.trainer.main_rob": "import hydra\n\n@hydra.main(config_path='config', config_name='ppo_trainer')\n"
                                 "def main(config):\n    run(config)\n",
        "verl.trainer.main_built_on": "from verl.trainer.main_ppo import TaskRunner\n"})
    found = {}
    for entry in ("verl.trainer.main_rob", "verl.trainer.main_built_on", "verl.trainer.main_ppo"):
        script = tmp_path / f"{entry}.sh"
        script.write_text(f"python3 -m {entry} {LAYOUT}\n", encoding="utf-8")
        found[entry] = mini_batch(script, config, "0.7.1")
    assert {e: [sev for sev, _t in v] for e, v in found.items()} == {
        "verl.trainer.main_rob": ["warning"], "verl.trainer.main_built_on": ["error"], "verl.trainer.main_ppo": ["error"]}
    assert found["verl.trainer.main_rob"][0][1].endswith("(under main_ppo; this entry point does not check it)")


def test_upstreams_vla_scripts_are_not_errors(tmp_path):
    git_dir = mirror_git_dir("verl-project+verl")
    if git_dir is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl")
    tar = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "v0.7.1", "verl"], check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(tmp_path, filter="data")
    scripts = sorted((tmp_path / "verl" / "experimental" / "vla").glob("run_*.sh"))
    assert len(scripts) == 4
    config = tmp_path / "verl" / "trainer" / "config"
    got = {s.name: mini_batch(s, config, "0.7.1") for s in scripts}
    assert all(len(v) == 1 and v[0][0] == "warning" and "this entry point does not check it" in v[0][1]
               for v in got.values()), got
