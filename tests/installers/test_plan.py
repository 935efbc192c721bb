"""installers.plan: the plan is frozen data that serialises to the JSON the report carries."""

from __future__ import annotations

import dataclasses
import json

import pytest

from doctor.installers.plan import CLONE, INSTALL, EnvSpec, GitSource, IndexOptions, Plan, Step, Target


def _plan() -> Plan:
    src = GitSource("Megatron-LM", "https://github.com/NVIDIA/Megatron-LM.git", "core_v0.12.1", module="megatron")
    steps = (
        Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",),
             index=IndexOptions(extra_index_urls=("https://download.pytorch.org/whl/cpu",))),
        Step("clone-megatron-lm", CLONE, "clone", source=src),
    )
    return Plan("p", "why", Target("/py", "3.11", "x86_64", "2.35"), steps, env=EnvSpec("/e.sh"))


def test_steps_are_frozen_and_kinds_are_checked() -> None:
    p = _plan()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.steps[0].requirements = ()  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown kind"):
        Step("x", "reboot", "no")


def test_plan_serialises_to_json_with_sources_and_indexes() -> None:
    d = json.loads(json.dumps(_plan().to_dict()))
    assert [s["id"] for s in d["steps"]] == ["torch-stack", "clone-megatron-lm"]
    assert d["steps"][0]["index"]["extra_index_urls"] == ["https://download.pytorch.org/whl/cpu"]
    assert d["steps"][1]["source"]["ref"] == "core_v0.12.1"
    assert d["target"]["arch"] == "x86_64"
    assert [s.name for s in _plan().sources()] == ["Megatron-LM"]


def test_index_options_merge_keeps_order_and_user_index_wins() -> None:
    a = IndexOptions(extra_index_urls=("A", "B"))
    m = a.merged(IndexOptions(index_url="M", extra_index_urls=("B", "C")))
    assert m.index_url == "M" and m.extra_index_urls == ("A", "B", "C")
