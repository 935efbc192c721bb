"""New-user trial of `doctor lint` (items 1, 7, 8 of its report): keys under an open mapping (engine_kwargs.sglang,
which verl hands to SGLang whole) are never "removed"; `--verl-config DIR` without verl's dataclass source still
checks (or says it did not check) `+key` on a closed section; a script whose config group exists only in some
releases is linted against one that has it, and a group a release dropped is one finding, not a cascade.

The releases' configs come from their wheels in the local wheelhouse (DOCTOR_TEST_VERL_CONFIGS/wheels)."""

from __future__ import annotations

import pytest

# the same script head, wheelhouse fixture and lint runner as the round-3 lint tests
from tests.launch.test_lint_round3 import HEAD, WHEELS, _wheelhouse, lint, needs_wheels  # noqa: F401

SGLANG = "+actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend"
VLLM = "+actor_rollout_ref.rollout.engine_kwargs.vllm.disable_mm_preprocessor_cache"


def ids(report: dict, key: str | None = None) -> list[str]:
    return [f["id"] for f in report["findings"] if key is None or f["key"] == key]


# --- item 1: open mappings are handed on, not "removed" ------------------------------------------------------

@needs_wheels
@pytest.mark.parametrize("version", ["0.7.1", "0.9.0", "0.9.1"])
def test_engine_kwargs_keys_are_not_removed(version):
    """Upstream's NPU scripts set SGLang's attention backend through the open engine_kwargs.sglang mapping: no
    "Delete the override" (that would break SGLang on NPU)."""
    code, report = lint(HEAD + f"    {SGLANG}=ascend \\\n    {VLLM}=True\n", "--verl-version", version)
    assert "launch-key-removed" not in ids(report), [f["title"] for f in report["findings"]]
    assert code == 0


@needs_wheels
def test_composed_open_mapping_overrides_a_stale_table(monkeypatch):
    """Even a table that still lists such a key (one made before the rule) does not turn it into "removed": the
    composed target config says the section is open."""
    from doctor.launch import removed_keys

    monkeypatch.setattr(removed_keys, "_table", lambda config=None: (["0.5.0", "0.6.0"], {SGLANG[1:]: ["0.5.0"]}))
    _, report = lint(HEAD + f"    {SGLANG}=ascend\n", "--verl-version", "0.9.0")
    assert "launch-key-removed" not in ids(report)
    monkeypatch.setattr(removed_keys, "_table", lambda config=None: (["0.7.1", "0.8.0"],
                                                        {"trainer.use_legacy_worker_impl": ["0.7.1"]}))
    _, report = lint(HEAD + "    +trainer.use_legacy_worker_impl=disable\n", "--verl-version", "0.9.0")
    assert ids(report, "trainer.use_legacy_worker_impl") == ["launch-key-removed"]  # a closed section still is


def test_removed_table_has_no_key_under_an_open_mapping():
    """tools/verl_removed_keys.py drops a key that left the yaml default of a mapping which stays open, and keeps
    one whose section is a dataclass or a plain section of a release without dataclasses."""
    from doctor.launch.removed_keys import removed_in
    from tools.verl_removed_keys import dropped

    flat = {"a._target_": "verl.X", "a.kw.vllm.x": 1, "a.b._target_": "verl.B", "a.b.y": 1, "p.q": 1}
    dicts = {"": 2, "a": 2, "a.kw": 2, "a.kw.vllm": 1, "a.kw.sglang": 0, "a.b": 1, "p": 1}
    prev = {"a.kw.sglang.attention_backend", "a.kw.vllm.swap_space", "a.b.gone", "p.gone", "p.sec.z"}
    assert dropped(prev, (set(flat) | set(dicts), flat, dicts)) == {"a.b.gone", "p.gone", "p.sec.z"}
    for key in (SGLANG[1:], VLLM[1:], "actor_rollout_ref.rollout.engine_kwargs.vllm.swap_space"):
        assert removed_in(key, "0.9.1") is None
    assert removed_in("actor_rollout_ref.actor.profile.save_path", "0.9.1") is not None  # verl <= 0.5's section


# --- item 2 (report item 7): `--verl-config DIR` without verl's source never silences the closed-section rule --

SAVE_HF = """#!/bin/bash
python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer trainer.device=npu \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \\
    +actor_rollout_ref.actor.checkpoint.save_hf=True
"""
SAVE_HF_KEY = "actor_rollout_ref.actor.checkpoint.save_hf"


@needs_wheels
def test_bare_config_dir_checks_plus_keys_with_the_cached_release(tmp_path, monkeypatch):
    """A bare copy of 0.9.1's trainer config (no dataclass source beside it): while release 0.9.1 is not cached the
    unchecked '+key' is named (an info, not silence); once it is cached, its source gives the start-up error."""
    import shutil

    from doctor.launch.verl_release import release_config

    staging = tmp_path / "staging"
    monkeypatch.setenv("XDG_CACHE_HOME", str(staging))
    cfg, why = release_config("0.9.1")
    assert cfg is not None, why
    bare = tmp_path / "v0.9.1" / "config"
    shutil.copytree(cfg, bare)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    _, report = lint(SAVE_HF, "--verl-version", "0.9.1", "--verl-config", str(bare))
    notes = [f for f in report["findings"] if f["id"] == "launch-plus-keys-not-checked"]
    assert notes and SAVE_HF_KEY in notes[0]["title"] and notes[0]["severity"] == "info"
    monkeypatch.setenv("XDG_CACHE_HOME", str(staging))
    code, report = lint(SAVE_HF, "--verl-version", "0.9.1", "--verl-config", str(bare))
    assert ids(report, SAVE_HF_KEY) == ["launch-key-not-in-config"] and code == 1
    assert "launch-plus-keys-not-checked" not in ids(report)


# --- item 3 (report item 8): a script's config group names its release; a dropped group is one finding --------

MINDSPEED = """#!/bin/bash
python3 -m verl.trainer.main_ppo model_engine=mindspeed trainer.device=npu \\
    actor_rollout_ref.model.path=/models/Qwen3-8B \\
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1 \\
    actor_rollout_ref.actor.mindspeed.tensor_model_parallel_size=4 \\
    actor_rollout_ref.actor.mindspeed.pipeline_model_parallel_size=2 \\
    actor_rollout_ref.actor.mindspeed.param_offload=True \\
    actor_rollout_ref.actor.mindspeed.use_mbridge=True
"""


@needs_wheels
def test_unstated_version_is_the_newest_release_with_the_scripts_engine(monkeypatch):
    """No --verl-version, no header, no verl installed: model_engine=mindspeed exists in 0.8.0 and 0.9.0 only, so
    the script is linted against 0.9.0 (not the newest 0.9.1, where it would not compose) — and it is clean."""
    from doctor.launch import hydra_compose

    monkeypatch.setattr(hydra_compose, "installed_verl", lambda: (None, None))
    code, report = lint(MINDSPEED)
    unknown = [f for f in report["findings"] if f["id"] == "lint-verl-version-unknown"]
    assert unknown and unknown[0]["evidence"]["verl_version"] == "0.9.0", unknown
    assert "model_engine=mindspeed" in unknown[0]["title"]
    assert [f for f in report["findings"] if f["severity"] == "error"] == [] and code == 0


@needs_wheels
def test_a_dropped_engine_is_one_finding_not_a_delete_cascade():
    """Against 0.9.1 (which dropped model_engine/mindspeed) the removal is named once; its actor.mindspeed.* keys are
    listed in it, never each told "Delete" (that would drop the parallel layout)."""
    code, report = lint(MINDSPEED, "--verl-version", "0.9.1")
    errors = [f for f in report["findings"] if f["severity"] in ("error", "warning")]
    assert [f["id"] for f in errors] == ["launch-group-removed"], [f["title"] for f in errors]
    assert errors[0]["title"] == "model_engine=mindspeed: no such engine in verl 0.9.1 (last in verl 0.9.0)"
    assert "actor_rollout_ref.actor.mindspeed.use_mbridge" in errors[0]["evidence"]["keys"] and code == 1
    assert not any("Delete" in (f.get("fix") or {}).get("text", "") for f in report["findings"])


@needs_wheels
def test_a_dropped_engine_is_located_without_a_recompose_per_key(tmp_path, monkeypatch):
    """The trial's first lint of a v0.9.0 mindspeed script against 0.9.1 took 9.9 s: the failing group option made
    the one-pass locator give up, and each of its 22 keys was found by a full recompose. Now the bad group option is
    set aside and the rest located in one pass: a handful of composes, not one per rejected key."""
    import hydra

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no compose cache from an earlier test
    real = hydra.compose
    calls = []
    monkeypatch.setattr(hydra, "compose", lambda *a, **k: calls.append(1) or real(*a, **k))
    more = "".join(f"    actor_rollout_ref.actor.mindspeed.{k}=1 \\\n" for k in (
        "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", "seed",
        "virtual_pipeline_model_parallel_size", "optimizer_offload", "grad_offload", "vanilla_mbridge"))
    _, report = lint(MINDSPEED.replace("model_engine=mindspeed", "model_engine=mindspeed \\\n" + more), "--verl-version", "0.9.1")
    assert "launch-group-removed" in ids(report) and len(next(
        f for f in report["findings"] if f["id"] == "launch-group-removed")["evidence"]["keys"]) == 12
    assert len(calls) <= 8, len(calls)  # it was 5 + one per rejected key
