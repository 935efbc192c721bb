"""A synthetic arithmetic dataset in verl's GSM8K parquet schema, built from a seed.

Clusters are often air-gapped, so the smoke run cannot download GSM8K. Instead we write rows with exactly
the shape `examples/data_preprocess/gsm8k.py` produces (docs/verl-mindspeed.md, "Dataset"): `data_source="openai/gsm8k"` makes
verl's default reward manager route every row to `verl.utils.reward_score.gsm8k.compute_score`, which
extracts the text after `#### ` and compares it with `reward_model.ground_truth` as a string.

Pure logic (`make_rows`) is separate from I/O (`write_dataset`); pyarrow is imported only when writing.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The data_source string verl's default_compute_score maps to the gsm8k scorer (verl 0.5 … 0.9.1,
# `verl/utils/reward_score/__init__.py`: `if data_source == "openai/gsm8k"`).
DATA_SOURCE = "openai/gsm8k"
ABILITY = "math"
# The instruction suffix verl's gsm8k preprocessing appends (examples/data_preprocess/gsm8k.py).
INSTRUCTION = 'Let\'s think step by step and output the final answer after "####".'
COLUMNS = ("data_source", "prompt", "ability", "reward_model", "extra_info")

_OPS = ("+", "-", "*")


@dataclass(frozen=True)
class Problem:
    a: int
    op: str
    b: int

    @property
    def answer(self) -> int:
        if self.op == "+":
            return self.a + self.b
        if self.op == "-":
            return self.a - self.b
        return self.a * self.b

    @property
    def question(self) -> str:
        return f"What is {self.a} {self.op} {self.b}?"

    @property
    def solution(self) -> str:
        """A worked answer in GSM8K's style: reasoning, then `#### <number>` (what the scorer extracts)."""
        return f"{self.a} {self.op} {self.b} = {self.answer}\n#### {self.answer}"


def make_problems(n: int, seed: int) -> list[Problem]:
    """`n` problems from a private RNG, so the same seed always gives the same rows on every host."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        op = rng.choice(_OPS)
        hi = 12 if op == "*" else 99
        out.append(Problem(rng.randint(0, hi), op, rng.randint(0, hi)))
    return out


def make_row(problem: Problem, split: str, index: int) -> dict[str, Any]:
    """One row with the columns and nesting verl's RLHFDataset and reward manager read."""
    return {
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": f"{problem.question} {INSTRUCTION}"}],
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": str(problem.answer)},
        "extra_info": {
            "split": split,
            "index": index,
            "answer": problem.solution,
            "question": problem.question,
        },
    }


def make_rows(n_train: int, n_val: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Train and val rows; val uses a derived seed so the splits never share a problem sequence."""
    return {
        "train": [make_row(p, "train", i) for i, p in enumerate(make_problems(n_train, seed))],
        "test": [make_row(p, "test", i) for i, p in enumerate(make_problems(n_val, seed + 1_000_003))],
    }


def corpus(rows: dict[str, list[dict[str, Any]]]) -> Iterator[str]:
    """Every text the model will see (prompts and worked answers): what the tokenizer is trained on."""
    for split_rows in rows.values():
        for r in split_rows:
            for m in r["prompt"]:
                yield m["content"]
            yield r["extra_info"]["answer"]


@dataclass(frozen=True)
class DatasetFiles:
    train: Path
    val: Path
    n_train: int
    n_val: int


def write_dataset(out_dir: str | os.PathLike[str], n_train: int, n_val: int, seed: int) -> DatasetFiles:
    """Write `train.parquet` and `test.parquet` (verl's preprocessing names) atomically."""
    rows = make_rows(n_train, n_val, seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train = out / "train.parquet"
    val = out / "test.parquet"
    _write_parquet(rows["train"], train)
    _write_parquet(rows["test"], val)
    return DatasetFiles(train=train, val=val, n_train=n_train, n_val=n_val)


def _schema() -> Any:
    import pyarrow as pa

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(message)),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            (
                "extra_info",
                pa.struct(
                    [("split", pa.string()), ("index", pa.int64()), ("answer", pa.string()), ("question", pa.string())]
                ),
            ),
        ]
    )


def _write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=_schema())
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a parquet file back as Python rows (used to validate artifacts). `ParquetFile` reads the one file;
    `pq.read_table` would go through pyarrow.dataset, which imports pandas: ~0.4 s of a warm dry run."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as pf:
        return list(pf.read().to_pylist())


def validate_dataset(path: str | os.PathLike[str]) -> list[str]:
    """Problems with a dataset file, as sentences (empty = valid): columns, data_source, answer format."""
    try:
        rows = read_rows(path)
    except ModuleNotFoundError:
        raise  # the [smoke] extra is missing (the CLI names it): not a bad file, and deleting the cache cannot help
    except Exception as e:  # pyarrow raises several types for a bad file
        return [f"{path}: cannot read as parquet: {e}"]
    problems = []
    if not rows:
        problems.append(f"{path}: no rows")
    missing = [c for c in COLUMNS if rows and c not in rows[0]]
    if missing:
        problems.append(f"{path}: missing verl column(s) {missing}")
        return problems
    for i, r in enumerate(rows):
        gt = (r.get("reward_model") or {}).get("ground_truth")
        prompt = r.get("prompt") or []
        if r.get("data_source") != DATA_SOURCE:
            problems.append(f"{path}: row {i}: data_source {r.get('data_source')!r} is not {DATA_SOURCE!r}")
        elif not (isinstance(prompt, list) and prompt and prompt[0].get("role") and prompt[0].get("content")):
            problems.append(f"{path}: row {i}: prompt is not a chat message list")
        elif not isinstance(gt, str) or not gt.lstrip("-").isdigit():
            problems.append(f"{path}: row {i}: ground_truth {gt!r} is not an integer string")
        if len(problems) >= 5:
            break
    return problems
