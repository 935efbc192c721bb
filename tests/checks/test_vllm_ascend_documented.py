"""Stacks vllm-ascend's own release notes and release matrix document (read whole at main 182b75e) are not reported;
the same packages off what they document still are."""

from __future__ import annotations

from typing import Any

import pytest

from tests.stacks import CHIP_ROWS, ascend_stack, found

_stack = ascend_stack


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
    """One word for the pair: vllm-ascend's metadata pins the build, so the error says it; the matrix's 'same base,
    another build: usually works' warning, which advised the opposite beside it, stands down."""
    got = found(_stack(_va("0.18.0", "0.18.0", "2.9.0", "2.9.0.post3"), "8.5.1"))
    assert got.get("requirement-version-unmet") == "error"
    assert "vllm-ascend-torch-npu-pairing" not in got


@pytest.mark.parametrize("ignore", [("declared-requirements",), ("requirement-version-unmet",)])
def test_a_waived_declaration_leaves_the_pairing_warning_to_say_it(ignore: tuple[str, ...]) -> None:
    """Real (a --from-report of torch_npu 2.5.1 + vllm-ascend 0.9.1rc1, whose wheel declares
    torch-npu==2.5.1.post1.dev20250528): with the declared-requirements finding waived, the pair is still named."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1",
                               "packages": {"torch-npu": {"version": "2.5.1"}, "vllm-ascend": {"version": "0.9.1rc1"}}})
    got = {f.id: f.severity.value for f in diagnose([(None, snap, None)], ignore=ignore).findings}
    assert got.get("vllm-ascend-torch-npu-pairing") == "warning" and "requirement-version-unmet" not in got
    both = {f.id: f.severity.value for f in diagnose([(None, snap, None)]).findings}
    assert both.get("requirement-version-unmet") == "error" and "vllm-ascend-torch-npu-pairing" not in both


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


# -- CANNs a release documents for part of its hosts (matrix.CannAlt): a chip family, an arch, the builds cut for it --

def _host(pkgs: dict[str, str], cann: str, chip: str = "A2", arch: str = "aarch64") -> dict[str, Any]:
    """A complete snapshot of the stack (with CANN's own Python dependencies), judged without any verl profile.
    protobuf as pip leaves it after vLLM's VLLM_TARGET_DEVICE=empty build (0.18.0 on: protobuf>=5.29.6)."""
    deps = {"attrs": "24.2.0", "decorator": "5.1.1", "sympy": "1.13.3", "cffi": "1.17.1", "psutil": "6.1.0",
            "scipy": "1.13.1", "pyyaml": "6.0.2", "protobuf": "5.29.6", "numpy": "1.26.4"}
    devices = CHIP_ROWS[chip] if chip in CHIP_ROWS else [
        {"id": i, "chip_index": 0, "phy_id": i, "chip": chip, "soc": f"Ascend{chip}", "health": "OK"} for i in range(2)]
    d = _stack({**deps, **pkgs}, cann)
    d["complete"] = True
    d["host"]["arch"] = arch
    d["ascend"]["toolkit"]["arch"] = arch
    d["ascend"]["devices"] = devices
    return d


def _findings(d: dict[str, Any]) -> list[Any]:
    """The findings with no verl profile chosen (a profile's known deviations would hide the matrix's own)."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    return list(diagnose([(None, snapshot_from_dict(d), None)], profiles=[]).findings)


def _issues(d: dict[str, Any]) -> dict[str, str]:
    """Warnings and errors: finding id -> severity."""
    return {f.id: f.severity.value for f in _findings(d) if f.severity.value != "info"}


def _one(d: dict[str, Any], fid: str) -> Any:
    (f,) = [f for f in _findings(d) if f.id == fid]
    return f


# Dockerfile.310p builds vllm-ascend's 310P image FROM quay.io/ascend/cann:9.1.0-beta.1-310p-... at these tags (its
# requirements.txt supplies the release's own torch-npu pin; it uninstalls triton-ascend); v0.21.0rc1's release notes:
# "310P uses CANN 9.1.0 beta"; v0.24.0rc1's / v0.25.1rc1's installation guides: "CANN == 9.1.0-beta.1" for them.
BETA_310P = [("0.20.2rc1", "0.20.2", "2.10.0"), ("0.21.0rc1", "0.21.0", "2.10.0"), ("0.22.1rc1", "0.22.1", "2.10.0"),
             ("0.23.0rc1", "0.23.0", "2.10.0.post2"), ("0.24.0rc1", "0.24.0", "2.10.0.post2"),
             ("0.25.1rc1", "0.25.1", "2.10.0.post2")]


@pytest.mark.parametrize(("va", "vllm", "tn"), BETA_310P, ids=[b[0] for b in BETA_310P])
def test_the_310p_image_on_the_cann_beta_its_dockerfile_names_is_clean(va: str, vllm: str, tn: str) -> None:
    stack = _va(va, vllm, "2.10.0+cpu", tn)
    assert _issues(_host(stack, "9.1.0-beta.1", "310P3")) == {}
    # the same stack on A2, whose matrix CANN is 9.0.0 / 9.0.1: the beta is documented for 310P only
    got = _issues(_host(stack, "9.1.0-beta.1", "A2"))
    for fid in ("vllm-ascend-cann-pairing", "torch-npu-cann-pairing", "vllm-ascend-cann-prerelease"):
        assert got.get(fid) == "warning", (fid, got)


def test_another_cann_pre_release_on_310p_is_still_untested() -> None:
    got = _issues(_host(_va("0.21.0rc1", "0.21.0", "2.10.0+cpu", "2.10.0"), "9.1.0-beta.2", "310P3"))
    assert got.get("vllm-ascend-cann-prerelease") == "warning", got
    # v0.23.0's 310P image moved to the CANN 9.1.0 release: the beta is not documented for it
    got = _issues(_host(_va("0.23.0", "0.23.0", "2.10.0+cpu", "2.10.0.post4"), "9.1.0-beta.1", "310P3"))
    assert got.get("vllm-ascend-cann-prerelease") == "warning", got


# v0.18.0's Known Issue: "there is a known issue on x86 arch, and this issue has been resolved with CANN 9.0.0, if you
# want to deploy vllm-ascend on x86, please upgrade CANN version manually"; with 9.0.0, torch-npu 2.9.0.post2 and
# triton-ascend 3.2.1 ("synchronously", its Dependencies).
_0180_900 = _va("0.18.0", "0.18.0", "2.9.0+cpu", "2.9.0.post2", "3.2.1")
_0180_851 = _va("0.18.0", "0.18.0", "2.9.0+cpu", "2.9.0.post1+git4c901a4", "3.2.0.dev20260322")


def test_vllm_ascend_0_18_0_on_x86_wants_the_cann_its_known_issues_name() -> None:
    assert _issues(_host(_0180_900, "9.0.0", arch="x86_64")) == {}
    got = _issues(_host(_0180_851, "8.5.1", arch="x86_64"))
    assert got == {"vllm-ascend-arch-needs-cann": "warning"}, got
    f = _one(_host(_0180_851, "8.5.1", arch="x86_64"), "vllm-ascend-arch-needs-cann")
    assert "9.0.0" in f.title and "x86_64" in f.title and "release_notes.md" in f.source and "issues/7993" in f.source
    assert "torch-npu 2.9.0.post2" in f.fix.text
    # the documented 8.5.1 stack on aarch64, and v0.19.1rc1 on x86 (whose notes say nothing of it), are clean
    assert _issues(_host(_0180_851, "8.5.1")) == {}
    assert "vllm-ascend-arch-needs-cann" not in _issues(
        _host(_va("0.19.1rc1", "0.19.1", "2.9.0+cpu", "2.9.0.post1+git4c901a4", "3.2.0.dev20260322"), "8.5.1",
              arch="x86_64"))


def test_vllm_ascend_0_18_0_on_310p_still_needs_cann_9_and_is_clean_on_it() -> None:
    got = _issues(_host(_va("0.18.0", "0.18.0", "2.9.0+cpu", "2.9.0.post2"), "9.0.0", "310P3"))
    assert got == {}, got
    got = _issues(_host(_va("0.18.0", "0.18.0", "2.9.0+cpu", "2.9.0.post1+git4c901a4"), "8.5.1", "310P3"))
    # its notes: 310P "need upgrades CANN version to 9.0.0"; its own 310P image still runs 8.5.1: a warning
    assert got.get("vllm-ascend-chip-needs-cann") == "warning", got


# CANN 9.0.0 is documented for v0.18.0 / v0.19.1rc1 only with the builds cut for it
CANN_900 = [
    ("0.18.0 with 2.9.0.post2 and 3.2.1", _0180_900, True),
    ("0.19.1rc1 with 2.9.0.post2", _va("0.19.1rc1", "0.19.1", "2.9.0+cpu", "2.9.0.post2"), True),
    ("0.18.0 with its 8.5.1-era builds", _0180_851, False),
    ("0.18.0 with its requirements' pins", _va("0.18.0", "0.18.0", "2.9.0+cpu", "2.9.0", "3.2.0"), False),
    ("0.18.0 with 2.9.0.post2 but triton-ascend 3.2.0", _va("0.18.0", "0.18.0", "2.9.0+cpu", "2.9.0.post2", "3.2.0"), False),
    ("0.19.1rc1 with torch-npu 2.9.0", _va("0.19.1rc1", "0.19.1", "2.9.0+cpu", "2.9.0"), False),
]


@pytest.mark.parametrize(("label", "pkgs", "documented"), CANN_900, ids=[c[0] for c in CANN_900])
def test_cann_9_0_0_is_documented_only_with_the_builds_cut_for_it(label: str, pkgs: dict[str, str], documented: bool) -> None:
    got = _issues(_host(pkgs, "9.0.0"))
    if documented:
        assert got == {}, (label, got)
        return
    assert got.get("vllm-ascend-cann-pairing") == "warning", (label, got)
    f = _one(_host(pkgs, "9.0.0"), "vllm-ascend-cann-pairing")
    assert "documented for it only with torch-npu 2.9.0.post2" in f.title and "pip install --no-deps" in f.fix.text


def test_a_torch_npu_build_named_for_one_cann_is_not_taken_for_another() -> None:
    # v0.23.0's own matrix gives 2.10.0.post2 with CANN 9.0.1 (the rc1 stack), not with 9.1.0
    assert _issues(_host(_va("0.23.0", "0.23.0", "2.10.0+cpu", "2.10.0.post2", "3.2.2"), "9.1.0")).get(
        "torch-npu-cann-pairing") == "warning"
    assert "torch-npu-cann-pairing" not in _issues(
        _host(_va("0.23.0", "0.23.0", "2.10.0+cpu", "2.10.0.post2", "3.2.1"), "9.0.1"))
