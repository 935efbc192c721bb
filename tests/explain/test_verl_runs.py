"""`doctor explain` on real logs of verl 0.9.1's own entry points (tests/explain/verl_runs/runs.toml: the command,
the verl version, the finding expected first): `python -m verl.trainer.main_ppo` with the config mistakes users make
— batch sizes that do not divide, both forms of a micro batch size, an override Hydra cannot parse or place, a value
of the wrong type, a config name or group option that does not exist — and `verl.trainer.sft_trainer` started
without torchrun or on a host with no NPU. verl's and Hydra's real code raised each error; the logs are kept as
the runs wrote them. Each log's first finding names the cause, and it is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.explain.stream import explain_path
from doctor.report import Severity
from doctor.tomlfile import read_toml

HERE = Path(__file__).parent / "verl_runs"
RUNS = read_toml(HERE / "runs.toml")["run"]


@pytest.mark.parametrize("run", RUNS, ids=[r["name"] for r in RUNS])
def test_a_real_verl_run_is_explained_by_its_cause(run):
    assert run["verl"] == "0.9.1" and run["command"].split()[0] in ("python", "torchrun") and run["exit"] != 0
    found, _ = explain_path(str(HERE / f"{run['name']}.log"))
    said = [(f.id, f.severity.value) for f in found]
    assert (found[0].id, found[0].severity) == (run["expect"], Severity.ERROR), said
    # a handled notice (a Python warning the run went on after) is never an error beside the cause
    assert all(f.severity is not Severity.ERROR or not f.evidence.get("handled") for f in found), said


def test_the_hydra_wrong_type_signature_needs_hydra():
    # the same TypeError outside a Hydra job is no config value's: the signature's context is Hydra's own header
    lines = (HERE / "ppo_batch_size_text.log").read_text().splitlines()
    assert lines[2].startswith("Error executing job with overrides: ")
    found, _ = explain_path(str(HERE / "ppo_batch_size_text.log"))
    assert found[0].id == "hydra-value-wrong-type"
    # the assert over the TypeError is where it failed, not an assert that failed
    assert "python-assert-statement-failed" not in [f.id for f in found]
    from doctor.explain.stream import explain_lines

    bare = [line for line in lines if not line.startswith("Error executing job")]
    assert "hydra-value-wrong-type" not in [f.id for f in explain_lines(bare)]


def test_every_log_is_in_the_manifest():
    assert sorted(p.stem for p in HERE.glob("*.log")) == sorted(r["name"] for r in RUNS)


@pytest.mark.parametrize("name", ["sft_uvicorn_missing", "sft_torchrun_no_npu", "ppo_v0_data_path_tilde"])
def test_a_signature_only_on_python_warnings_is_no_error(name):
    # verl warns `mindspeed engine is not available: ModuleNotFoundError("No module named 'megatron'")` and goes on;
    # the Ray worker repeats it, after the log's first Python warnings (more than the events keep): each time a warning
    found, _ = explain_path(str(HERE / f"{name}.log"))
    megatron = [f for f in found if f.id == "megatron-not-installed"]
    assert [(f.severity, f.evidence.get("handled")) for f in megatron] == [(Severity.WARNING, "warned")]
