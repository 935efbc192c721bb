"""The tables as published on 2026-12-03 (issue: knowledge current to what is published): TorchNPU 26.2.0's
wheels pair with CANN 9.2.0, the 950 profile admits CANN 9.2.0 without capturing an A2, MindSpeed 26.2.0 pairs
with CANN 9.2.0 / torch 2.10.0, `doctor check` names the newest known releases, and the seed rule cites the
upstream that states it."""

from __future__ import annotations

import pytest

from doctor.knowledge import matrix, seed
from doctor.knowledge.profiles import load_profiles
from doctor.knowledge.requirements import load_requirements
from tests.stacks import diagnose_dict, stack_snapshot

PROFILES = load_profiles()


def _with(p_name: str, cann: str, **pkgs: str) -> dict:
    p = next(x for x in PROFILES if x.name == p_name)
    d = stack_snapshot(p)
    for part in ("toolkit", "kernels", "nnal"):
        d["ascend"][part]["version"] = cann
    for name, v in pkgs.items():
        d["packages"][name.replace("_", "-")]["version"] = v
    return d


@pytest.mark.parametrize("wheel", ["2.14.0", "2.13.0", "2.12.0.post3", "2.11.0.post3", "2.10.0.post7", "2.9.0.post9",
                                   "2.7.1.post11"])
def test_torch_npu_26_2_0_wheels_pair_with_cann_9_2_0(wheel: str) -> None:
    row = matrix.torch_npu_row(wheel)
    assert row is not None and row.cann == "9.2.0" and "release_notes.md" in row.source


def test_cann_9_2_0_with_torch_npu_2_14_0_is_not_off_the_table() -> None:
    report = diagnose_dict(_with("verl-0.9.1-cann9.1.0-a2", "9.2.0", torch_npu="2.14.0", torch="2.14.0"))
    pairing = [f for f in report.findings if f.id in ("torch-npu-cann", "torch-npu-cann-pairing")]
    assert not [f for f in pairing if f.severity.value != "info"], [(f.id, f.title) for f in pairing]
    # ... while the same wheel on CANN 9.1.0 (the old, wrong row) is what the tables now warn about
    report = diagnose_dict(_with("verl-0.9.1-cann9.1.0-a2", "9.1.0", torch_npu="2.14.0", torch="2.14.0"))
    assert any(f.id in ("torch-npu-cann", "torch-npu-cann-pairing") and f.severity.value == "warning"
               for f in report.findings)


def test_950_profile_admits_cann_9_2_0_but_an_a2_keeps_its_own_stacks() -> None:
    p950 = next(x for x in PROFILES if x.chips == ("950",))
    r = diagnose_dict(_with(p950.name, "9.2.0"))
    assert r.profile["name"] == p950.name
    assert not any(f.id == "cann-newer-than-profiles" for f in r.findings)
    a2 = diagnose_dict(_with("verl-0.9.1-cann9.1.0-a2", "9.2.0"))
    assert a2.profile["name"] == "verl-0.9.1-cann9.1.0-a2"
    assert any(f.id == "cann-newer-than-profiles" for f in a2.findings)


def test_mindspeed_26_2_0_pairs_with_cann_9_2_0_and_torch_2_10_0() -> None:
    (row,) = matrix.mindspeed_rows("26.2.0_core_r0.12.1")
    assert (row.cann, row.torch, row.checkout) == ("9.2.0", "2.10.0", "core_v0.12.1")


def test_check_names_the_newest_known_releases() -> None:
    p = next(x for x in PROFILES if x.name == "verl-0.9.1-cann9.1.0-a2")
    k = diagnose_dict(stack_snapshot(p)).to_dict()["knowledge"]
    assert k["newest"]["vllm"] == "0.34.0" and k["newest"]["verl"] == "0.9.1"
    assert k["pypi_read"] == load_requirements().read and k["copy"] == "packaged"


def test_seed_rule_cites_mindspeed_which_states_it() -> None:
    assert seed.SEED_RULE_SOURCE.startswith("https://github.com/Ascend/MindSpeed/blob/6810de8c")
    assert seed.cann_newer_than_seed("8.3.RC1") is False  # "higher than 8.3.RC1": 8.3.RC1 itself is excluded
