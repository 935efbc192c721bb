"""A recipe's entry point linted against a verl checkout whose recipe/ is empty: from v0.7.1 on, recipe/ is a git
submodule (verl's .gitmodules: verl-project/verl-recipe) that a plain clone or `git archive` leaves empty. Lint said
"recipe configs are not part of the verl wheel" there, which is not what applies to a checkout; it names the
submodule and how to check it out. Real trees: verl main 1dda039b9 and the verl-recipe commit it pins, from the git
mirrors ($DOCTOR_REALWORLD_MIRRORS); skipped without them."""

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

MAIN = "1dda039b9c6311889a9c9a26040677e1254814f9"
SCRIPT = "tests/special_npu/nightly_ci_ascend/run_dapo_moonlight-16b_megatron_npu.sh"  # recipe.dapo.main_dapo


def _unpack(git_dir: Path, rev: str, dest: Path, *paths: str) -> None:
    data = subprocess.run(["git", f"--git-dir={git_dir}", "archive", rev, *paths], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")


def _not_composed(root: Path) -> list[dict]:
    r = CliRunner().invoke(cli, ["lint", str(root / SCRIPT), "--verl-config", str(root / "verl/trainer/config"),
                                 "--json"])
    assert r.exit_code in (0, 1), r.output
    return [f for f in json.loads(r.stdout)["findings"] if f["id"] == "lint-entry-not-composed"]


def test_a_checkout_whose_recipe_submodule_is_not_checked_out_is_told_so(tmp_path: Path):
    verl, recipe = mirror_git_dir("verl-project+verl"), mirror_git_dir("verl-project+verl-recipe")
    if verl is None or recipe is None:
        pytest.skip("needs $DOCTOR_REALWORLD_MIRRORS/verl-project+verl and verl-project+verl-recipe")
    root = tmp_path / "verl"
    _unpack(verl, MAIN, root, "verl", "setup.py", ".gitmodules", SCRIPT)
    (root / "recipe").mkdir()  # as a clone without --recurse-submodules leaves it
    [f] = _not_composed(root)
    assert "wheel" not in f["title"]
    assert "git submodule (https://github.com/verl-project/verl-recipe.git) that is not checked out" in f["title"]
    assert f"git -C {root} submodule update --init recipe" in f["fix"]["text"]
    # what the fix says: the recipe commit main pins, in recipe/, gives the entry point its config
    pinned = subprocess.run(["git", f"--git-dir={verl}", "rev-parse", f"{MAIN}:recipe"], check=True,
                            capture_output=True, text=True).stdout.strip()
    _unpack(recipe, pinned, root / "recipe", "dapo")
    assert _not_composed(root) == []
