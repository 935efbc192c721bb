"""The synthetic dataset: verl's parquet schema, deterministic, and scored by verl's own gsm8k reward."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from doctor.smoke import dataset


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dataset.DatasetFiles:
    return dataset.write_dataset(tmp_path_factory.mktemp("data"), n_train=32, n_val=8, seed=7)


def _verl_file(rel: str) -> Path:
    spec = importlib.util.find_spec("verl")  # finds the package without importing it (verl imports torch)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("verl is not installed (pip install --no-deps verl==0.9.1)")
    path = Path(list(spec.submodule_search_locations)[0]) / rel
    if not path.is_file():
        pytest.fail(f"installed verl has no {rel}")
    return path


@pytest.fixture(scope="module")
def gsm8k():
    path = _verl_file("utils/reward_score/gsm8k.py")
    spec = importlib.util.spec_from_file_location("verl_gsm8k_reward", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_loads_with_pandas_and_pyarrow_with_verl_columns(files: dataset.DatasetFiles) -> None:
    df = pd.read_parquet(files.train)
    assert list(df.columns) == list(dataset.COLUMNS)
    assert len(df) == 32 and len(pd.read_parquet(files.val)) == 8
    assert set(df["data_source"]) == {"openai/gsm8k"} and set(df["ability"]) == {"math"}
    row = pq.read_table(files.train).to_pylist()[0]
    assert row["prompt"][0]["role"] == "user" and "####" in row["prompt"][0]["content"]
    assert row["reward_model"]["style"] == "rule" and row["reward_model"]["ground_truth"].lstrip("-").isdigit()
    assert set(row["extra_info"]) == {"split", "index", "answer", "question"}
    assert dataset.validate_dataset(files.train) == [] and dataset.validate_dataset(files.val) == []


def test_deterministic_from_seed_and_splits_differ() -> None:
    a, b, c = dataset.make_rows(16, 4, 1), dataset.make_rows(16, 4, 1), dataset.make_rows(16, 4, 2)
    assert a == b and a != c
    assert [r["prompt"] for r in a["train"][:4]] != [r["prompt"] for r in a["test"]]


def test_same_seed_writes_identical_bytes(tmp_path: Path) -> None:
    x = dataset.write_dataset(tmp_path / "x", 8, 2, 3)
    y = dataset.write_dataset(tmp_path / "y", 8, 2, 3)
    assert x.train.read_bytes() == y.train.read_bytes()


def test_verl_routes_this_data_source_to_the_gsm8k_scorer() -> None:
    text = _verl_file("utils/reward_score/__init__.py").read_text()
    assert f'data_source == "{dataset.DATA_SOURCE}"' in text and "gsm8k.compute_score" in text


def test_verl_reward_scores_correct_1_and_wrong_0(files: dataset.DatasetFiles, gsm8k) -> None:
    rows = pq.read_table(files.train).to_pylist()
    for r in rows:
        gt = r["reward_model"]["ground_truth"]
        assert gsm8k.compute_score(r["extra_info"]["answer"], gt) == 1.0  # the worked solution
        assert gsm8k.compute_score(f"Let me think.\n#### {gt}", gt) == 1.0
        assert gsm8k.compute_score(f"#### {int(gt) + 1}", gt) == 0.0
        assert gsm8k.compute_score(f"The answer is {gt}", gt) == 0  # strict: needs '#### '


def test_validate_reports_a_broken_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    assert "cannot read as parquet" in dataset.validate_dataset(bad)[0]
    pd.DataFrame({"data_source": ["x"]}).to_parquet(tmp_path / "cols.parquet")
    assert "missing verl column" in dataset.validate_dataset(tmp_path / "cols.parquet")[0]
