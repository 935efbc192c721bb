"""`doctor lint` on every launch script of upstream verl, not only its NPU ones: every `.sh` under `examples/`,
`recipe/` and `tests/special_*` of the verl repository at each release tag whose config is here, read from a git
mirror ($DOCTOR_REALWORLD_MIRRORS/verl-project+verl, as the real-world install tier reads it) and linted against
that tag's own config. Upstream's scripts at their own tag are taken as valid: every error finding must be one of
the verified upstream mistakes below, and each of those must still be found (a lint that stops seeing them is as
wrong as one that invents others). Skipped where the mirror or the tag's config is not here (CI has neither).
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
TAGS = ("v0.8.0", "v0.9.0")

# Each verified by composing the override with real Hydra against the tag's config (ppo_trainer):
_ENGINE_KEY = ("actor_rollout_ref.actor.model_engine",)
# `actor_rollout_ref.actor.model_engine=megatron`: model_engine is a top-level config group (`model_engine=megatron`);
# Hydra: "Could not override 'actor_rollout_ref.actor.model_engine'", and the config stays the dp (FSDP) one, so
# every `…megatron.*` key is refused too: listed in that one error (advice.fold_engine), not errors of their own.
KNOWN_BAD: dict[str, tuple[str, ...]] = {
    "examples/router_replay/run_qwen3_30b_a3b_megatron.sh": _ENGINE_KEY,
    "examples/tuning/scaling/run_qwen2_5_32b_megatron.sh": _ENGINE_KEY,
    # `+actor_rollout_ref.actor.fsdp_config.model_dtype`: "Could not append to config. An item is already at …";
    # `…engine_kwargs.sglang.attention_backend` without '+': "Could not override …"
    "examples/grpo_trainer/run_gpt_oss_20b_fsdp.sh": ("actor_rollout_ref.actor.fsdp_config.model_dtype",
                                                      "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend"),
    # `+actor_rollout_ref.model.lora.merge`: "Could not append to config. An item is already at …"
    "examples/tuning/lora/run_qwen3_8b_merge_fsdp.sh": ("actor_rollout_ref.model.lora.merge",),
    # tests/special_e2e/run_ppo_trainer_megatron.sh is not here: its NPU call runs the defaults USE_MBRIDGE=True and
    # COMMON_VPP=2, which main_ppo's engine worker runs (upstream's Ascend CI does, at main); the base called it
    # launch-mbridge-vpp, whose IndexError is the legacy megatron worker's (test_rules.py)
}
# Seen where the release's dataclass source is here: PolicyLossConfig (a `_target_` dataclass) has no tau_pos /
# tau_neg at v0.8.0 nor v0.9.0 (they are actor-level keys, actor.yaml), and both tags ship the same sapo scripts
# appending `+actor_rollout_ref.actor.policy_loss.tau_*` (tests/launch/test_lint_upstream.py)
_SAPO = {"examples/sapo_trainer/run_qwen3_8b_fsdp.sh": ("actor_rollout_ref.actor.policy_loss.tau_",),
         "examples/sapo_trainer/run_qwen3_30b_a3b_fsdp.sh": ("actor_rollout_ref.actor.policy_loss.tau_",)}
# `python3 -m verl.trainer.main_ppo_sync`: 45632b5fa (before v0.9.0) moved main_ppo_sync.py to
# verl/trainer/ppo/v1/trainer_base.py, and the ReMax example still names it at v0.9.0 and main (git ls-tree: no such
# module): "No module named verl.trainer.main_ppo_sync", launch-entry-missing (no key: the prefix "" matches it).
# Seen where verl's Python files are beside the config (main's test below); a tag's config-only directory says nothing.
_REMAX = {"examples/remax_trainer/run_qwen2.5_math_7b_sync_fsdp.sh": ("",)}
KNOWN_BAD_AT = {"v0.8.0": _SAPO, "v0.9.0": _SAPO}


def _git_dir() -> Path | None:
    return mirror_git_dir("verl-project+verl")


def _scripts(git_dir: Path, tag: str) -> list[str]:
    """The launch scripts of `tag` (a tag or a commit)."""
    names = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", tag], check=True,
                           capture_output=True, text=True).stdout.split()
    return [n for n in names if n.endswith(".sh") and n.split("/", 1)[0] in ("examples", "recipe")
            or n.startswith("tests/special_") and n.endswith(".sh")]


def _write(git_dir: Path, rev: str, scripts: list[str], root: Path) -> None:
    """The scripts of `rev` under `root` at their repository paths (where a wrapper finds the script it runs)."""
    for name in scripts:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{rev}:{name}"], check=True,
                                        capture_output=True).stdout)


@pytest.mark.parametrize("tag", TAGS)
def test_every_upstream_script_lints_without_an_error_upstream_does_not_have(tag, tmp_path):
    git_dir = _git_dir()
    config = CONFIGS / tag[1:] / "verl" / "trainer" / "config"
    if git_dir is None or not config.is_dir():
        pytest.skip(f"needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl and {config}")
    scripts = _scripts(git_dir, tag)
    assert len(scripts) > 100, scripts  # the repository's examples, not a stray match
    from doctor.launch.verl_release import release_config

    # the release's dataclass source (from the local wheelhouse) decides the `+key`s of dataclass sections; without
    # it they are named as not checked, and the dataclass mistakes below cannot be seen
    known = {**KNOWN_BAD, **(KNOWN_BAD_AT.get(tag, {}) if release_config(tag[1:])[0] is not None else {})}
    unexpected, found = [], {name: set() for name in known}
    _write(git_dir, tag, scripts, tmp_path)  # all first: a wrapper is followed into the script it runs
    for name in scripts:
        path = tmp_path / name
        r = CliRunner().invoke(cli, ["--json", "lint", str(path), "--verl-version", tag[1:], "--verl-config",
                                     str(config)])
        assert r.stdout.strip(), (name, r.output)  # always one report
        report = json.loads(r.stdout)
        for f in report["findings"]:
            if f["severity"] != "error":
                continue
            prefixes = known.get(name, ())
            hit = [p for p in prefixes if (f.get("key") or "").startswith(p)]
            if hit:
                found[name].update(hit)
            else:
                unexpected.append((name, f["id"], f.get("key"), f["title"]))
    assert unexpected == []
    assert {n: set(p) for n, p in known.items()} == found  # every verified mistake is still seen


# verl main at the release table's snapshot row (0.10.0.dev20260822): newer than every tag above, linted against
# its own config and dataclass source, read from the same commit
MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"


def test_every_script_of_verl_main_lints_against_main_without_an_error_upstream_does_not_have(tmp_path):
    """As above, for main's own scripts and config. Before, every script selecting model_engine=megatron (35), veomni
    or torchtitan, and every SFT script selecting engine/optim/model options, was told main had removed them: the
    table's main (0.10.0.dev0) shares its release tuple with the version linted, and counted as the release that
    dropped them."""
    git_dir = _git_dir()
    if git_dir is None or subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{MAIN}^{{commit}}"],
                                         capture_output=True).returncode != 0:
        pytest.skip(f"needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl with {MAIN}")
    src = tmp_path / "verl-main"
    src.mkdir()
    tree = subprocess.run(["git", f"--git-dir={git_dir}", "archive", MAIN, "verl"], check=True,
                          capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=tree, check=True)
    config = src / "verl" / "trainer" / "config"
    scripts = _scripts(git_dir, MAIN)
    assert len(scripts) > 100, scripts
    known = {**KNOWN_BAD, **_SAPO, **_REMAX}  # PolicyLossConfig at main still has no tau_pos / tau_neg (ActorConfig does)
    unexpected, found = [], {name: set() for name in known}
    _write(git_dir, MAIN, scripts, tmp_path / "scripts")
    for name in scripts:
        path = tmp_path / "scripts" / name
        r = CliRunner().invoke(cli, ["--json", "lint", str(path), "--verl-version", "0.10.0.dev20260822",
                                     "--verl-config",
                                     str(config)])
        assert r.stdout.strip(), (name, r.output)
        for f in json.loads(r.stdout)["findings"]:
            if f["severity"] != "error":
                continue
            hit = [p for p in known.get(name, ()) if (f.get("key") or "").startswith(p)]
            if hit:
                found[name].update(hit)
            else:
                unexpected.append((name, f["id"], f.get("key"), f["title"]))
    assert unexpected == []
    assert {n: set(p) for n, p in known.items()} == found
