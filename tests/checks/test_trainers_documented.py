"""Stacks the other trainers' own Ascend install guides document (ms-swift's NPU guide, MindSpeed-RL's install guide,
LLaMA-Factory's NPU images, MindSpeed-LLM's tables) draw no finding about the pairing they document; the same builds on
a CANN no source pairs them with still do."""

from __future__ import annotations

from typing import Any

import pytest

from tests.stacks import CHIP_ROWS, bare, found


def _stack(pkgs: dict[str, str], cann: str, py: str = "3.11.9") -> dict[str, Any]:
    return bare(python={"version": py, "implementation": "CPython"}, host={"arch": "aarch64"},
                packages={k: {"version": v} for k, v in pkgs.items()},
                ascend={"toolkit": {"version": cann, "path": f"/usr/local/Ascend/ascend-toolkit/{cann}", "arch": "aarch64"},
                        "devices": CHIP_ROWS["A2"], "driver": {"version": "26.0.rc1"}})


DOCUMENTED = [
    # ms-swift v4.1.0-v4.2.3, docs/source_en/BestPractices/NPU-support.md: CANN == 8.5.1, torch_npu == 2.7.1.post2
    ("ms-swift 4.2.3", {"ms-swift": "4.2.3", "torch": "2.7.1", "torch-npu": "2.7.1.post2"}, "8.5.1", "3.11.9"),
    # MindSpeed-RL's install guide (v2.3.0 tag): 2.2.0 on 8.3.RC1, 2.3.0 on 8.5.0 with torch_npu 2.5.1; master 2.7.1
    ("MindSpeed-RL 2.2.0", {"mindspeed-rl": "2.2.0", "torch": "2.5.1", "torch-npu": "2.5.1"}, "8.3.RC1", "3.10.9"),
    ("MindSpeed-RL 2.3.0", {"mindspeed-rl": "2.3.0", "torch": "2.5.1", "torch-npu": "2.5.1"}, "8.5.0", "3.10.9"),
    ("MindSpeed-RL master", {"torch": "2.7.1", "torch-npu": "2.7.1"}, "8.5.0", "3.10.9"),
    # LLaMA-Factory main's NPU images: cann:9.1.0-*-py3.12 with requirements/npu.txt (torch-npu 2.10.0.post2)
    ("LLaMA-Factory main image", {"torch": "2.10.0", "torch-npu": "2.10.0.post2", "torchvision": "0.25.0"}, "9.1.0",
     "3.12.9"),
    # LLaMA-Factory v0.9.5's image: cann:9.0.0-910b-py3.11, requirements/npu.txt torch-npu 2.7.1.post4
    ("LLaMA-Factory 0.9.5 image", {"llamafactory": "0.9.5", "torch": "2.7.1", "torch-npu": "2.7.1.post4",
                                   "torchvision": "0.22.1", "torchaudio": "2.7.1"}, "9.0.0", "3.11.9"),
]


@pytest.mark.parametrize(("label", "pkgs", "cann", "py"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED])
def test_a_torch_npu_cann_pairing_a_trainer_documents_is_neither_error_nor_warning(
        label: str, pkgs: dict[str, str], cann: str, py: str) -> None:
    got = found(_stack(pkgs, cann, py))
    assert not {k for k, sev in got.items() if sev in ("error", "warning")}, (label, got)


@pytest.mark.parametrize(("pkgs", "cann"), [
    ({"torch": "2.7.1", "torch-npu": "2.7.1.post2"}, "8.3.RC1"),  # ms-swift's build on a CANN nobody pairs it with
    ({"torch": "2.5.1", "torch-npu": "2.5.1"}, "9.0.0"),
    ({"torch": "2.10.0", "torch-npu": "2.10.0.post2"}, "8.5.0"),
])
def test_the_same_builds_on_a_cann_no_source_pairs_them_with_still_warn(pkgs: dict[str, str], cann: str) -> None:
    assert found(_stack(pkgs, cann)).get("torch-npu-cann-pairing") == "warning"


def test_with_vllm_ascend_installed_its_own_release_notes_bind_the_build_to_a_cann() -> None:
    """LLaMA-Factory's images run 2.10.0.post2 on CANN 9.1.0; vllm-ascend v0.23.0 gives that build with 9.0.1 and 9.1.0
    with 2.10.0.post4: beside vllm-ascend 0.23.0 the pairing stays a warning."""
    pkgs = {"torch": "2.10.0", "torch-npu": "2.10.0.post2"}
    assert "torch-npu-cann-pairing" not in found(_stack(pkgs, "9.1.0", "3.12.9"))
    with_va = found(_stack({**pkgs, "vllm-ascend": "0.23.0", "vllm": "0.23.0"}, "9.1.0", "3.12.9"))
    assert with_va.get("torch-npu-cann-pairing") == "warning"
