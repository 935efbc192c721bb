"""The composition cache (doctor.launch.compose_cache): one entry per composition, held to the cache policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.launch import compose_cache, hydra_compose
from doctor.launch.override_list import parse_override
from tests.cachefakes import MB, age, cache_entry


def test_a_composition_written_keeps_the_directory_within_the_budget_and_a_hit_marks_its_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """35 MB of compositions in a day were never pruned: a write keeps the most recently used up to 32 MB."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    composed: list[int] = []

    def compose(ovs, cdir, name):  # noqa: ANN001, ANN202
        composed.append(1)
        return hydra_compose.ComposeResult(config_dir=str(cdir), flat={"trainer.total_epochs": 1})

    monkeypatch.setattr(hydra_compose, "compose", compose)
    cfg = tmp_path / "config"
    cfg.mkdir()
    (cfg / "ppo_trainer.yaml").write_text("trainer:\n  total_epochs: 1\n")
    root = tmp_path / "cache" / "verl-ascend-doctor" / "compose"
    old = [cache_entry(root / f"{i:02x}", f"{i:02x}" + "0" * 62 + ".json", 3600 + i, 10 * MB) for i in range(6)]
    ovs = [o for o in [parse_override("trainer.total_epochs=1")] if o is not None]
    res = compose_cache.compose_cached(ovs, cfg, "ppo_trainer", "0.7.1")
    assert res.flat == {"trainer.total_epochs": 1} and composed == [1]
    assert [p.exists() for p in old] == [True, True, True, False, False, False]  # 30 MB fit beside it, 40 do not
    [entry] = set(root.rglob("*.json")) - set(old)
    age(entry, 86_400)
    assert compose_cache.compose_cached(ovs, cfg, "ppo_trainer", "0.7.1").flat == res.flat and composed == [1]
    assert entry.stat().st_mtime > old[0].stat().st_mtime  # the hit marked it used
