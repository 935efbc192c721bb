"""`doctor lint` follows a wrapper (`bash other.sh …`, `exec bash "${SCRIPT_DIR}/x.sh" "${params[@]}" "$@"`) to the
script it runs, with what reaches that process (exported variables, `NAME=value` prefixes, the arguments), and says
when it cannot. The scripts are upstream's (tests/fixtures/verl-main/README.md: repository, commit, paths).

Before, each of upstream's wrappers was "no verl entry point is run here", and nothing of them was checked.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from doctor.cli import cli
from doctor.launch.script_parser import parse_script
from doctor.launch.shell.values import Hole, Str
from doctor.launch.shell.wrapper import candidates, is_script_dir
from tests.launch.helpers import require_verl_config, shell_script

MAIN = Path(__file__).resolve().parents[1] / "fixtures" / "verl-main" / "tests" / "special_e2e"



def lint(path: Path, *args: str) -> dict:
    r = CliRunner().invoke(cli, ["--json", "lint", str(path), *args])
    assert r.stdout.strip(), r.output
    return json.loads(r.stdout)


def parsed(path: Path):
    return parse_script(path.read_text(encoding="utf-8"), str(path), str(path))


def overrides(call) -> dict[str, str]:
    return {o.key: o.value for o in call.overrides}


def test_the_ascend_wrapper_of_verl_main_is_followed_into_the_script_it_runs():
    """run_v1_separate_async_ascend.sh ends with `exec bash "${SCRIPT_DIR}/run_v1_separate_async.sh"
    "${params[@]}" "$@"`: the entry point of run_v1_separate_async.sh is linted with the wrapper's array as
    arguments and its exports as environment."""
    p = parsed(MAIN / "run_v1_separate_async_ascend.sh")
    assert len(p.invocations) == 1
    call = p.invocations[0]
    assert Path(call.file).name == "run_v1_separate_async.sh" and call.line == 125  # the callee's own line
    assert [(Path(f).name, n) for f, n in call.via] == [("run_v1_separate_async_ascend.sh", 73)]
    ov = overrides(call)
    assert ov["actor_rollout_ref.actor.optim.weight_decay"] == "0.1"  # the wrapper's params array
    assert ov["trainer.use_v1"] == "True"  # the callee's own common_params
    # exported by the wrapper, so the callee's `N=${N:-4}` keeps the wrapper's value: 16, not 4
    assert ov["actor_rollout_ref.rollout.n"] == "16"
    assert ov["actor_rollout_ref.rollout.gpu_memory_utilization"] == "0.50"  # exported in the fsdp2 branch
    assert call.passthrough  # both pass "$@" on


def test_the_wrappers_findings_are_at_the_callees_line_and_name_the_wrapper():
    require_verl_config()
    report = lint(MAIN / "run_v1_separate_async_ascend.sh", "--verl-version", "0.9.1")
    assert not [f for f in report["findings"] if f["id"] == "lint-no-invocation"]
    engine = next(f for f in report["findings"] if f["id"] == "lint-engine")
    assert engine["title"].startswith("run_v1_separate_async.sh line 125 (run by run_v1_separate_async_ascend.sh "
                                      "line 73): verl.trainer.main_ppo composes ppo_trainer")
    assert engine["evidence"]["via"][0]["line"] == 73
    inv = report["invocations"][0]
    assert inv["line"] == 125 and Path(inv["file"]).name == "run_v1_separate_async.sh"
    # the callee's `[ "${DEVICE:-gpu}" = gpu ]`: with DEVICE unset (the default) a GPU run under uv; set at launch, a
    # run the wrapper's name says is an NPU one (an *_ascend.sh)
    assert [any("run_v1_separate_async_ascend.sh" in h for h in p["npu_hints"]) for p in inv["paths"]] == [False, True]


def test_a_repository_relative_script_with_variable_prefixes_is_followed():
    """test_sft_engine_all.sh runs `BACKEND=megatron TP_SIZE=2 … bash tests/special_e2e/sft/run_sft_engine.sh` from
    the repository root: the path is found under a parent of the script's directory, and each prefix reaches the
    callee (BACKEND=megatron selects `engine=megatron`)."""
    p = parsed(MAIN / "sft" / "test_sft_engine_all.sh")
    assert [c.via[0][1] for c in p.invocations] == [12, 16, 20, 25, 29, 34, 38]
    megatron = [c for c in p.invocations if overrides(c).get("engine") == "megatron"]
    assert [c.via[0][1] for c in megatron] == [34, 38]
    assert overrides(megatron[0])["engine.tensor_model_parallel_size"] == "2"
    assert megatron[1].entry == "verl.trainer.sft_trainer_ray"  # mode=ray, a prefix of line 38
    assert overrides(p.invocations[0])["engine"] == "fsdp"


def test_a_script_that_is_not_here_is_said_and_not_judged(tmp_path):
    wrapper = tmp_path / "run.sh"
    wrapper.write_text('#!/bin/bash\nexport TP=2\nbash ./missing_npu.sh trainer.total_epochs=1 "$@"\n')
    report = lint(wrapper, "--verl-version", "0.9.1")
    ids = [f["id"] for f in report["findings"]]
    assert "lint-no-invocation" in ids
    note = next(f for f in report["findings"] if f["id"] == "lint-not-followed")
    assert "line 3: `bash ./missing_npu.sh" in note["title"] and "was not found" in note["title"]
    assert all(f["severity"] != "error" for f in report["findings"])


def test_a_cycle_is_followed_once(tmp_path):
    (tmp_path / "a.sh").write_text('bash "$(dirname "$0")/b.sh" "$@"\n')
    (tmp_path / "b.sh").write_text('python3 -m verl.trainer.main_ppo trainer.total_epochs=2 "$@"\nbash a.sh x=1\n')
    p = parsed(tmp_path / "a.sh")
    assert len(p.invocations) == 1 and overrides(p.invocations[0]) == {"trainer.total_epochs": "2"}
    assert any("a cycle" in n for n in p.notes)


def test_arguments_through_dollar_at_are_at_the_callees_line(tmp_path):
    (tmp_path / "inner.sh").write_text('set -x\n\npython3 -m verl.trainer.main_ppo \\\n  trainer.nnodes=1 "$@"\n')
    (tmp_path / "outer.sh").write_text('P=(trainer.total_epochs=3\n   trainer.save_freq=5)\nsh -x inner.sh "${P[@]}"\n')
    call = parsed(tmp_path / "outer.sh").invocations[0]
    assert overrides(call) == {"trainer.nnodes": "1", "trainer.total_epochs": "3", "trainer.save_freq": "5"}
    assert {o.key: o.line for o in call.overrides} == {"trainer.nnodes": 4, "trainer.total_epochs": 4,
                                                       "trainer.save_freq": 4}
    assert not call.passthrough  # outer.sh does not hand its own arguments on


def test_an_unexported_variable_does_not_reach_the_callee(tmp_path):
    (tmp_path / "inner.sh").write_text('N=${N:-4}\npython3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.n=$N\n')
    (tmp_path / "outer.sh").write_text('N=16\nbash inner.sh\nexport N\nbash inner.sh\nenv N=8 bash inner.sh\n')
    calls = parsed(tmp_path / "outer.sh").invocations
    assert [overrides(c)["actor_rollout_ref.rollout.n"] for c in calls] == ["4", "16", "8"]


def test_which_commands_run_a_script():
    def argv(*words: str) -> list[Str]:
        return [Str.of(w) for w in words]

    assert shell_script(argv("bash", "x.sh", "a=1")) == (1, [])
    assert shell_script(argv("exec", "bash", "-x", "x.sh")) == (3, [])
    assert shell_script(argv("/usr/bin/env", "A=1", "bash", "x.sh")) == (3, ["A=1"])
    assert shell_script(argv("bash", "-o", "pipefail", "x.sh")) == (3, [])
    assert shell_script(argv("bash", "-c", "python3 x.py")) is None
    assert shell_script(argv("bash", "-xc", "python3 x.py")) is None
    assert shell_script(argv("bash")) is None
    assert shell_script(argv("python3", "x.sh")) is None


def test_the_script_directory_idioms():
    for text in ('$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)', '$(dirname "$0")', "`dirname $0`",
                 '$(cd $(dirname $0); pwd)', '$(dirname "$(readlink -f "$0")")',
                 '$(cd "$(dirname "${BASH_SOURCE[0]}")" >/dev/null 2>&1 && pwd -P)'):
        assert is_script_dir(Hole(text, "command substitution")), text
    for text in ("$(pwd)", "$(git rev-parse --show-toplevel)", '$(dirname "$MODEL")'):
        assert not is_script_dir(Hole(text, "command substitution")), text
    here = Str((Hole('$(dirname "$0")', "command substitution"), "/x.sh"))
    assert candidates(here, "/r/a/b/run.sh") == ["/r/a/b/x.sh"]
    assert candidates(Str.of("t/x.sh"), "/r/a/run.sh") == ["/r/a/t/x.sh", "/r/t/x.sh", "/t/x.sh"]
    assert candidates(Str((Hole("$X", "environment"), "/x.sh")), "/r/run.sh") == []
