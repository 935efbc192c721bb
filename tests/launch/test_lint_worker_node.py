"""`doctor lint` of a worker node's script: `doctor launch --nodes 2 --node-rank 1` writes
`NODE_RANK="${NODE_RANK:-1}"` and `exec ray start … --block` unless NODE_RANK is 0, before the entry point. With the
script's own defaults no path reaches the entry point, and lint used to say only "no verl entry point … Nothing was
checked" of the launch's own output. When the defaults reach no entry point, the tests that read a default the
environment may replace are left to the run, and the entry point behind them is linted."""

from __future__ import annotations

import json

from click.testing import CliRunner

from doctor.cli import cli
from tests.launch.helpers import QWEN3_06B, require_verl_config, write_model


def _lint(path: str) -> dict:
    r = CliRunner().invoke(cli, ["--json", "lint", path])
    assert r.stdout.strip(), r.output
    return json.loads(r.stdout)


def test_the_launch_script_of_a_worker_node_is_linted(tmp_path):
    require_verl_config()
    model = write_model(tmp_path, "Qwen3-0.6B", QWEN3_06B)
    out = tmp_path / "worker.sh"
    r = CliRunner().invoke(cli, ["launch", "--model", model, "--tp", "2", "--nodes", "2", "--head-address", "10.0.0.1",
                                 "--node-rank", "1", "-o", str(out)])
    assert r.exit_code == 0, r.output
    ids = [f["id"] for f in _lint(str(out))["findings"]]
    assert "lint-no-invocation" not in ids and "launch-schema-composed" in ids, ids


def test_a_value_the_script_fixes_still_decides(tmp_path):
    """`NODE_RANK=1` (no default the environment can replace): the run never reaches the entry point."""
    script = tmp_path / "w.sh"
    script.write_text('#!/bin/bash\nNODE_RANK=1\nif [ "$NODE_RANK" != "0" ]; then\n  exec ray start --block\nfi\n'
                      "python3 -m verl.trainer.main_ppo trainer.device=npu\n", encoding="utf-8")
    assert [f["id"] for f in _lint(str(script))["findings"]] == ["lint-no-invocation"]
    script.write_text(script.read_text(encoding="utf-8").replace("NODE_RANK=1", 'NODE_RANK="${NODE_RANK:-1}"'),
                      encoding="utf-8")
    assert "lint-no-invocation" not in [f["id"] for f in _lint(str(script))["findings"]]


def test_what_the_multi_node_script_computes_itself_is_counted_not_listed(tmp_path):
    """The head node's script `launch --nodes 2` writes reads its node address (`$(ip route get …)`), waits for Ray
    (`$(seq 1 120)`, `$(python3 -c 'import ray; …')`): values only the run knows that reach no override. lint-unresolved
    listed every one of them as "not read"; they are counted, and only the values that decide an override (here
    `${HOME}` in the data paths) are named with their key. -v and evidence keep the full list."""
    from tests.launch.helpers import QWEN3_MOE

    require_verl_config()
    model = write_model(tmp_path, "Qwen3-30B-A3B", QWEN3_MOE)
    out = tmp_path / "head.sh"
    r = CliRunner().invoke(cli, ["launch", "--model", model, "--verl-version", "0.9.1", "--tp", "4", "--pp", "2",
                                 "--ep", "4", "--nodes", "2", "--head-address", "10.0.0.1", "-o", str(out)])
    assert r.exit_code == 0, r.output
    (f,) = [f for f in _lint(str(out))["findings"] if f["id"] == "lint-unresolved"]
    assert "$(" not in f["title"] and "$NODE_IP" not in f["title"], f["title"]
    assert f["title"] == ("2 override(s) take a value only the run knows, their rules skipped: data.train_files, "
                          "data.val_files; 5 other value(s) only the run knows reach no override (-v lists them)")
    assert "$(seq 1 120)" in f["evidence"]["reaches_no_override"] and "$(seq 1 120)" in f["detail"]
    assert f["evidence"]["decides"] == {"$HOME": ["data.train_files", "data.val_files"]}
    assert "$HOME (data.train_files, data.val_files)" in f["detail"]
