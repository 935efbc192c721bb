"""`source FILE` / `. FILE` is found the way `bash OTHER.sh` is (wrapper.candidates): beside the script, through its
SCRIPT_DIR idiom, or under one of its parent directories; where it cannot be, `lint-not-followed` says so. The
script is verl v0.6.1's examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh (tests/fixtures/verl-v0.6.1/README.md),
which does `[ -f "${SCRIPT_DIR}/env.sh" ] && source "${SCRIPT_DIR}/env.sh"`.

Before, only a literal path beside the script was read: `"${SCRIPT_DIR}/env.sh"` was "not a file beside the script"
and the settings in env.sh never reached the entry point.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from doctor.launch.script_parser import parse_script

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "verl-v0.6.1" / "examples" / "grpo_trainer" / \
    "run_qwen3-235b_megatron_96gb.sh"


def parsed(path: Path):
    return parse_script(path.read_text(encoding="utf-8"), str(path), str(path))


def values(call) -> dict[str, str]:
    return {o.key: o.value for o in call.overrides}


def test_the_env_file_beside_verls_script_is_read_through_script_dir(tmp_path):
    script = tmp_path / "examples" / "grpo_trainer" / UPSTREAM.name
    script.parent.mkdir(parents=True)
    shutil.copy(UPSTREAM, script)
    (script.parent / "env.sh").write_text("export NNODES=8\nTRAIN_BS=64\n", encoding="utf-8")
    p = parsed(script)
    assert {values(c)["trainer.nnodes"] for c in p.invocations} == {"8"}  # the script's own default is 4
    assert {values(c)["data.train_batch_size"] for c in p.invocations} == {"64"}  # 32
    assert not any("env.sh" in n for n in p.notes)


def test_without_the_env_file_the_scripts_defaults_hold(tmp_path):
    """env.sh is the user's (not in the repository): without it `[ -f … ]` is false and the defaults stand."""
    script = tmp_path / UPSTREAM.name
    shutil.copy(UPSTREAM, script)
    p = parsed(script)
    assert {values(c)["trainer.nnodes"] for c in p.invocations} == {"4"}


def test_a_repository_relative_source_is_found_under_a_parent_directory(tmp_path):
    """Run from the repository root (as upstream's CI runs its scripts): `source examples/env.sh`."""
    (tmp_path / "examples" / "grpo_trainer").mkdir(parents=True)
    (tmp_path / "examples" / "env.sh").write_text("export NNODES=2\n", encoding="utf-8")
    script = tmp_path / "examples" / "grpo_trainer" / "run.sh"
    script.write_text("source examples/env.sh\npython3 -m verl.trainer.main_ppo trainer.nnodes=$NNODES\n",
                      encoding="utf-8")
    assert values(parsed(script).invocations[0])["trainer.nnodes"] == "2"


def test_a_source_that_cannot_be_found_is_said(tmp_path):
    """verl-recipe's `source "${SLURM_SUBMIT_DIR}/config.env"`: a path only the run knows."""
    script = tmp_path / "run.sh"
    script.write_text('source "${SLURM_SUBMIT_DIR}/config.env"\n. ./missing.sh\n'
                      "python3 -m verl.trainer.main_ppo trainer.nnodes=1\n", encoding="utf-8")
    p = parsed(script)
    assert len(p.invocations) == 1
    notes = [n for n in p.notes if "was not read" in n]
    assert len(notes) == 2 and "line 1: `source ${SLURM_SUBMIT_DIR}/config.env`" in notes[0]
    assert all("not found beside the script or under its directories" in n for n in notes)


CALLEE = Path(__file__).resolve().parents[1] / "fixtures" / "verl-main" / "tests" / "special_e2e" / "sft" / \
    "run_sft_engine.sh"


def _cluster_and_job(tmp_path: Path, env_sh: str, job_body: str) -> Path:
    """cluster/env.sh (`env_sh`) beside cluster/nodes.sh (8 nodes); jobs/job.sh (`job_body`) beside jobs/nodes.sh (2)
    and upstream's callee, which takes --nnodes from NNODES."""
    (tmp_path / "cluster").mkdir()
    (tmp_path / "jobs").mkdir()
    (tmp_path / "cluster" / "env.sh").write_text(env_sh, encoding="utf-8")
    (tmp_path / "cluster" / "nodes.sh").write_text("export NNODES=8\n", encoding="utf-8")
    (tmp_path / "jobs" / "nodes.sh").write_text("export NNODES=2\n", encoding="utf-8")
    shutil.copy(CALLEE, tmp_path / "jobs" / CALLEE.name)
    job = tmp_path / "jobs" / "job.sh"
    job.write_text("#!/bin/bash\n" + job_body, encoding="utf-8")
    return job


def test_a_sourced_files_own_directory_is_bash_source_and_the_scripts_is_dollar_zero(tmp_path):
    """In a sourced file bash gives `${BASH_SOURCE[0]}` as that file and `$0` as the script that sources it: the
    cluster file's `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)` is cluster/, its `$(dirname "$0")` is jobs/.
    Before, both were the script's directory: jobs/nodes.sh (2 nodes) was read in place of cluster/nodes.sh (8)."""
    job = _cluster_and_job(tmp_path, 'CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
                                     'source "${CLUSTER_DIR}/nodes.sh"\nJOB_DIR="$(dirname "$0")"\n',
                           f'source ../cluster/env.sh\nexport BACKEND=megatron\nbash "$JOB_DIR/{CALLEE.name}"\n')
    p = parsed(job)
    assert len(p.invocations) == 1, p.notes
    call = p.invocations[0]
    assert Path(call.file) == tmp_path / "jobs" / CALLEE.name
    assert "--nnodes=8" in [w.text for w in call.launcher]  # torchrun --nnodes=${NNODES:-1}
    assert values(call)["engine"] == "megatron"


def test_bash_source_in_a_function_is_the_file_that_defined_it(tmp_path):
    """bash gives `${BASH_SOURCE[0]}` inside a function as the file that defined it, also when the script calls it
    after `source` has returned (checked with bash 5: a function of cluster/env.sh called from jobs/job.sh prints
    cluster). Before, it was the caller's file: jobs/nodes.sh (2 nodes) was read in place of cluster/nodes.sh (8)."""
    job = _cluster_and_job(tmp_path, 'load_cluster() {\n  local dir\n  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && '
                                     'pwd)"\n  source "${dir}/nodes.sh"\n}\n',
                           'source ../cluster/env.sh\nload_cluster\nexport BACKEND=megatron\n'
                           f'bash "$(dirname "$0")/{CALLEE.name}"\n')
    p = parsed(job)
    assert len(p.invocations) == 1, p.notes
    assert "--nnodes=8" in [w.text for w in p.invocations[0].launcher]  # torchrun --nnodes=${NNODES:-1}
