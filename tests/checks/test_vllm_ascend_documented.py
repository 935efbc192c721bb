"""Stacks vllm-ascend's own release notes and release matrix document (read whole at main 182b75e) are not reported;
the same packages off what they document still are."""

from __future__ import annotations

from typing import Any

import pytest

from tests.stacks import CHIP_ROWS, bare, found


def _stack(pkgs: dict[str, str], cann: str, py: str = "3.11.9") -> dict[str, Any]:
    return bare(python={"version": py, "implementation": "CPython"}, host={"arch": "aarch64"},
                packages={k: {"version": v} for k, v in pkgs.items()},
                ascend={"toolkit": {"version": cann, "path": f"/usr/local/Ascend/ascend-toolkit/{cann}", "arch": "aarch64"},
                        "devices": CHIP_ROWS["A2"], "driver": {"version": "26.0.rc1"}})


def _va(va: str, vllm: str, torch: str, torch_npu: str, triton: str | None = None) -> dict[str, str]:
    pkgs = {"vllm-ascend": va, "vllm": vllm, "torch": torch, "torch-npu": torch_npu}
    if triton:
        pkgs["triton-ascend"] = triton
    return pkgs


# v0.18.0 (Dependencies): torch-npu "Upgraded to 2.9.0.post1+git4c901a4 ... please upgrade manually", triton-ascend to
# 3.2.0.dev20260322; "If CANN has been upgraded to version 9.0.0, please upgrade TorchNPU version to 2.9.0.post2" and
# triton-ascend "to 3.2.1 synchronously". v0.19.1rc1 (Known Issues): the same torch-npu upgrades.
DOCUMENTED = [
    ("0.18.0 on CANN 8.5.1", _va("0.18.0", "0.18.0", "2.9.0", "2.9.0.post1+git4c901a4", "3.2.0.dev20260322"), "8.5.1"),
    ("0.18.0 on CANN 9.0.0", _va("0.18.0", "0.18.0", "2.9.0", "2.9.0.post2", "3.2.1"), "9.0.0"),
    ("0.19.1rc1 on CANN 8.5.1", _va("0.19.1rc1", "0.19.1", "2.9.0", "2.9.0.post1+git4c901a4", "3.2.0.dev20260322"), "8.5.1"),
    ("0.19.1rc1 on CANN 9.0.0", _va("0.19.1rc1", "0.19.1", "2.9.0", "2.9.0.post2"), "9.0.0"),
    # v0.11.0 "TorchNPU is upgraded to 2.7.1.post1 ... Please install it by yourself" (its requirements pin 2.7.1)
    ("0.11.0 with torch-npu 2.7.1.post1", _va("0.11.0", "0.11.0", "2.7.1", "2.7.1.post1"), "8.3.RC2"),
]


@pytest.mark.parametrize(("label", "pkgs", "cann"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED])
def test_documented_torch_npu_upgrades_are_neither_errors_nor_warnings(label: str, pkgs: dict[str, str], cann: str) -> None:
    got = found(_stack(pkgs, cann))
    assert got.get("requirement-version-unmet") in (None, "info"), (label, got)
    assert "vllm-ascend-torch-npu-pairing" not in got, (label, got)
    assert "vllm-ascend-triton-ascend-pairing" not in got, (label, got)


def test_a_torch_npu_build_no_upstream_names_stays_an_error() -> None:
    got = found(_stack(_va("0.18.0", "0.18.0", "2.9.0", "2.9.0.post3"), "8.5.1"))
    assert got.get("requirement-version-unmet") == "error"
    assert got.get("vllm-ascend-torch-npu-pairing") == "warning"


# The release matrix pairs these torch-npu pins with CANN 8.5.1; Ascend/pytorch's table (no 8.5.1 row) says 8.5.0.
MATRIX_851 = [
    ("0.13.0rc3", _va("0.13.0rc3", "0.13.0", "2.8.0", "2.8.0.post2", "3.2.0")),
    ("0.16.0rc1", _va("0.16.0rc1", "0.16.0", "2.9.0", "2.9.0", "3.2.0")),
    ("0.17.0rc1", _va("0.17.0rc1", "0.17.0", "2.9.0", "2.9.0", "3.2.0")),
]


@pytest.mark.parametrize(("label", "pkgs"), MATRIX_851, ids=[m[0] for m in MATRIX_851])
def test_torch_npu_on_the_cann_the_vllm_ascend_matrix_pairs_it_with(label: str, pkgs: dict[str, str]) -> None:
    assert "torch-npu-cann-pairing" not in found(_stack(pkgs, "8.5.1")), label


def test_torch_npu_on_a_cann_no_table_pairs_it_with_still_warns() -> None:
    assert found(_stack({"torch": "2.9.0", "torch-npu": "2.9.0"}, "8.3.RC1")).get("torch-npu-cann-pairing") == "warning"
    # 2.9.0.post2 is v0.18.0's build for CANN 9.0.0, not for the 8.5.1 of its matrix row
    assert found(_stack({"torch": "2.9.0", "torch-npu": "2.9.0.post2"}, "8.5.1")).get("torch-npu-cann-pairing") == "warning"
