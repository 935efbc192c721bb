"""The smoke command body: preflight refusal and waiver, dry run, and the JUnit cases of a run."""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import pytest

from doctor.console import Console
from doctor.render import junit_xml
from doctor.report import finding
from doctor.smoke.session import SmokeOptions, run_smoke

FAKE = str(Path(__file__).with_name("fake_trainer.py"))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("verl") is None, reason="verl not installed")


def _console() -> Console:
    return Console(json_mode=True, out=io.StringIO(), err=io.StringIO())


def _broken_host(python: str):
    return [finding("npu-not-visible", "error", "npu", "No NPU is visible", evidence={"dev": []}, fix="Add devices."),
            finding("cann-old", "warning", "cann", "CANN is old", evidence={"cann": "8.0"}, fix="Upgrade.")]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("w")


def test_preflight_errors_refuse_before_building(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_TRAINER_MODE", "pass")
    rep = run_smoke(SmokeOptions(workdir=workdir / "refused", trainer_script=FAKE), _console(), preflight=_broken_host)
    assert rep.exit_code() == 1
    assert [f.id for f in rep.findings][:2] == ["smoke-preflight-failed", "npu-not-visible"]
    assert not (workdir / "refused").exists()
    assert "failure" in junit_xml(rep)


def test_ignore_preflight_runs_and_keeps_the_findings_visible(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_TRAINER_MODE", "pass")
    rep = run_smoke(SmokeOptions(workdir=workdir, trainer_script=FAKE, ignore_preflight=True, steps=2,
                                 python=sys.executable), _console(), preflight=_broken_host)
    assert rep.exit_code() == 0, [f.title for f in rep.findings]
    titles = [f.title for f in rep.findings if f.check == "smoke-preflight"]
    assert "(ignored) No NPU is visible" in titles
    assert rep.extra["preflight"] == {"ran": True, "errors": 1, "warnings": 1, "ignored": True}
    xml = junit_xml(rep, "doctor-smoke")
    for case in ("smoke-preflight", "smoke-workload", "smoke-launch-spec", "smoke-run", "smoke-step-1", "smoke-step-2"):
        assert f'name="{case}"' in xml
    assert "<failure" not in xml


def test_dry_run_with_a_broken_host_still_passes(workdir: Path) -> None:
    rep = run_smoke(SmokeOptions(workdir=workdir, dry_run=True), _console(), preflight=_broken_host)
    assert rep.exit_code() == 0 and rep.extra["preflight"]["ignored"] is True
    assert rep.extra["workload"]["valid"] and "run" not in rep.extra


def test_dry_run_says_a_real_run_would_be_refused_by_the_preflight_errors(workdir: Path) -> None:
    # the errors show as "(ignored)" warnings and the verdict counts none: the user must still learn the run would
    # not start (a smoke dry run on the doctor's own venv, verl 0.9.1 without its requirements, read "warnings")
    rep = run_smoke(SmokeOptions(workdir=workdir, dry_run=True), _console(), preflight=_broken_host)
    assert rep.extra["refused_without_waiver"].startswith("a real run would be refused: `doctor check` found 1 error(s)")
    run = next(c for c in rep.checks if c.id == "smoke-run")
    assert run.reason and "a real run would be refused" in run.reason
    waived = run_smoke(SmokeOptions(workdir=workdir, dry_run=True, ignore_preflight=True), _console(),
                       preflight=_broken_host)
    assert "refused_without_waiver" not in waived.extra


def test_check_unavailable_is_said_not_hidden(workdir: Path) -> None:
    rep = run_smoke(SmokeOptions(workdir=workdir, dry_run=True), _console(), preflight=lambda p: None)
    assert rep.extra["preflight"] == {"ran": False}
    assert "smoke-preflight-unavailable" in {f.id for f in rep.findings}


def test_user_model_that_does_not_fit_is_could_not_run(workdir: Path, tmp_path: Path) -> None:
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text('{"num_hidden_layers": 3, "num_attention_heads": 4, "hidden_size": 256}')
    (model / "tokenizer.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"")
    rep = run_smoke(SmokeOptions(workdir=workdir, dry_run=True, model=model, tp=1, pp=2), _console(),
                    preflight=lambda p: [])
    assert rep.exit_code() == 2
    assert "smoke-workload-invalid" in {f.id for f in rep.findings}


def test_old_run_directories_are_pruned_and_others_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_TRAINER_MODE", "pass")
    runs = tmp_path / "runs"
    for i in range(25):
        (runs / f"20260101-0000{i:02d}-{i:012x}").mkdir(parents=True)
    (runs / "my-notes").mkdir()
    rep = run_smoke(SmokeOptions(workdir=tmp_path, trainer_script=FAKE, ignore_preflight=True), _console(),
                    preflight=lambda p: [])
    assert rep.exit_code() == 0
    left = sorted(p.name for p in runs.iterdir())
    assert "my-notes" in left and len(left) == 21  # 20 of ours (19 old + this run) + the foreign one
    assert "20260101-000000-000000000000" not in left and Path(rep.extra["run_dir"]).name in left
