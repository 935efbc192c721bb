"""The workload cache: keyed on its parameters, reused when intact, rebuilt when damaged, atomic."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from doctor.errors import InputError
from doctor.smoke.workload import WorkloadParams, build_workload, default_workdir


def test_build_then_reuse(tmp_path: Path) -> None:
    a = build_workload(tmp_path, WorkloadParams(tp=2, pp=2))
    assert not a.reused and a.problems == ()
    names = {x.name for x in a.artifacts}
    assert {"data/train.parquet", "data/test.parquet", "model/model.safetensors", "model/tokenizer.json"} <= names
    for art in a.artifacts:
        assert Path(art.path).stat().st_size == art.bytes
    mtime = a.train_file.stat().st_mtime_ns
    b = build_workload(tmp_path, WorkloadParams(tp=2, pp=2))
    assert b.reused and b.key == a.key and b.train_file.stat().st_mtime_ns == mtime
    # Nothing half-built is left beside it.
    assert [p.name for p in tmp_path.iterdir()] == [f"workload-{a.key}"]


def test_changed_parameters_get_their_own_build(tmp_path: Path) -> None:
    a = build_workload(tmp_path, WorkloadParams(tp=1, pp=1))
    b = build_workload(tmp_path, WorkloadParams(tp=4, pp=1))
    c = build_workload(tmp_path, WorkloadParams(tp=1, pp=1, seed=5))
    assert len({a.key, b.key, c.key}) == 3
    cfg = json.loads((b.model_dir / "config.json").read_text())
    assert cfg["num_key_value_heads"] % 4 == 0
    # TP 2 needs nothing TP 1 does not already have (KV heads 2, vocab 1024): same bytes, same build.
    assert build_workload(tmp_path, WorkloadParams(tp=2, pp=1)).reused


def test_damaged_artifact_is_rebuilt(tmp_path: Path) -> None:
    a = build_workload(tmp_path, WorkloadParams())
    with open(a.model_dir / "model.safetensors", "r+b") as fh:
        fh.seek(100)
        fh.write(b"\xff\xff")  # same size, different bytes
    b = build_workload(tmp_path, WorkloadParams())
    assert not b.reused and b.problems == ()


def test_user_model_builds_only_the_dataset(tmp_path: Path) -> None:
    tiny = build_workload(tmp_path / "a", WorkloadParams(tp=2, pp=2))
    user = build_workload(tmp_path / "b", WorkloadParams(tp=2, pp=2, model_dir=str(tiny.model_dir)))
    assert user.model_dir == tiny.model_dir and user.problems == ()
    assert not any(a.name.startswith("model/") for a in user.artifacts)
    bad = build_workload(tmp_path / "b", WorkloadParams(tp=2, pp=3, model_dir=str(tiny.model_dir)))
    assert any("PP 3" in p for p in bad.problems)


def test_unwritable_workdir_is_an_input_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError) as e:
        build_workload(blocker / "sub", WorkloadParams())
    assert str(blocker / "sub") in str(e.value)


def test_default_workdir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_workdir() == tmp_path / "verl-ascend-doctor" / "smoke"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_workdir() == Path(os.path.expanduser("~")) / ".cache" / "verl-ascend-doctor" / "smoke"


def test_a_build_in_the_default_workdir_holds_it_to_the_budget_and_a_users_workdir_is_left_alone(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tests.cachefakes import MB, age, cache_entry, dead_pid

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    mine = tmp_path / "mine"
    for base in (default_workdir(), mine):
        for i in range(4):
            cache_entry(base / f"workload-{i:016x}" / "model", "model.safetensors", 0, 12 * MB)
            age(base / f"workload-{i:016x}", 86_400 + i)
        cache_entry(base, f".doctor-{dead_pid()}-0123456789ab", 7200)  # a killed build's
    wl = build_workload(default_workdir(), WorkloadParams())
    assert sorted(p.name for p in default_workdir().iterdir()) == sorted(
        [wl.root.name, f"workload-{0:016x}", f"workload-{1:016x}"])  # the two used last; 36 MB would not fit
    build_workload(mine, WorkloadParams())
    assert len(list(mine.iterdir())) == 6
