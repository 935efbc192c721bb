"""The dry run says, per clone the run would make, that a failed or interrupted run (or `--rollback`) removes it
again: a retry then clones again, which an operator planning a multi-GB vLLM clone over a slow link needs to know
before the run, not from the failure message. Through the CLI, on the real verl 0.9.1 A3 profile, with the paths
an operator gives: a venv still to be made (its directory is not one the clone creates: it stays), and an existing
venv with a `--src` directory that holds an empty MindSpeed directory and a clone of Megatron-LM already."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.test_install import doctor
from tests.installers import wheelkit

PROFILE = "verl-0.9.1-cann9.1.0-a3"
CLONES = ("vllm", "vllm-ascend", "Megatron-LM", "MindSpeed")  # the profile's git sources (verl comes from PyPI)
REMOVED = "a failed or interrupted run, or --rollback, removes it"


def plan_lines(*args: str) -> list[str]:
    cp = doctor("--no-color", "install", "--dry-run", "--profile", PROFILE, "--no-host-check", "--backend", "pip",
                *args)
    assert cp.returncode == 0, cp.stderr
    return cp.stderr.splitlines() + cp.stdout.splitlines()


def test_a_venv_still_to_be_made_names_each_new_clone_and_src_but_not_the_venv(tmp_path: Path) -> None:
    venv = tmp_path / "new" / "venv"
    lines = plan_lines("--venv", str(venv))
    for name in CLONES:
        want = f"new clone {venv}/src/{name}: {REMOVED} (and {venv}/src, which the run creates) unless it changed since"
        assert any(ln.strip() == want for ln in lines), (name, lines)
    assert not venv.exists()  # a dry run


def test_an_existing_src_dir_an_empty_clone_dir_and_a_clone_that_is_there(tmp_path: Path) -> None:
    py = wheelkit.make_venv(tmp_path / "v")
    src = tmp_path / "work"
    (src / "MindSpeed").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(src / "Megatron-LM")], check=True)
    lines = [ln.strip() for ln in plan_lines("--python", str(py), "--src", str(src))]
    for name in ("vllm", "vllm-ascend"):
        assert f"new clone {src}/{name}: {REMOVED} unless it changed since" in lines, lines
    assert (f"new clone in the empty directory {src}/MindSpeed: {REMOVED} (the directory stays) unless it changed "
            "since") in lines, lines
    assert not any(f"{src}/Megatron-LM: " in ln and REMOVED in ln for ln in lines)  # the user's: never removed
