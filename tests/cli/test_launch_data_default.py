"""`doctor launch` without --train-files / --val-files writes verl's GSM8K example paths into the script.

Real run (2026-12-06, Qwen2.5-7B-Instruct's config.json, verl 0.9.1): `doctor launch --model M --verl-version 0.9.1
--chip A2 --tp 2 -o def.sh` wrote `data.train_files=${HOME}/data/gsm8k/train.parquet` and said "launch: ok — 3 info",
none of them about data; `--help` showed no default for either option. The script then fails on files nobody chose
(verl's data loader: the parquet file does not exist) unless verl's examples/data_preprocess/gsm8k.py wrote them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from doctor.cli import cli
from tests.launch.helpers import QWEN3_06B, write_model


def _launch(*args: str):
    return CliRunner().invoke(cli, ["--json", "launch", "--verl-version", "0.9.1", "--no-compose", *args],
                              catch_exceptions=False)


def test_data_files_nobody_gave_are_said(tmp_path):
    model = write_model(tmp_path / "models", "Qwen3-0.6B", QWEN3_06B)
    r = _launch("--model", model, "--tp", "2", "--format", "overrides")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    [f] = [f for f in report["findings"] if f["id"] == "launch-data-default"]
    assert f["severity"] == "info"
    assert f["evidence"] == {"train_files": "~/data/gsm8k/train.parquet", "val_files": "~/data/gsm8k/test.parquet"}
    assert "--train-files and --val-files" in f["title"]
    # one given: only the other is said; both given: nothing
    r = _launch("--model", model, "--tp", "2", "--format", "overrides", "--train-files", "/data/t.parquet")
    [g] = [g for g in json.loads(r.stdout)["findings"] if g["id"] == "launch-data-default"]
    assert g["evidence"] == {"val_files": "~/data/gsm8k/test.parquet"}
    r = _launch("--model", model, "--tp", "2", "--format", "overrides", "--train-files", "/data/t.parquet",
                "--val-files", "/data/v.parquet")
    assert not [h for h in json.loads(r.stdout)["findings"] if h["id"] == "launch-data-default"]


def test_help_names_the_default():
    out = CliRunner().invoke(cli, ["launch", "--help"], terminal_width=200).output
    assert "~/data/gsm8k/train.parquet" in out and "~/data/gsm8k/test.parquet" in out
