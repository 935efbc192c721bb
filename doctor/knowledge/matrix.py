"""Vendor compatibility tables as data: what each upstream says pairs with what.

Every table names where it was read (shared/reference/*.md cites the upstream files). Checks turn a
mismatch against these tables into a *warning* unless the row documents an ABI break; verified stacks
(profiles) that deviate from a table list that as a known deviation.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from doctor.knowledge.versions import parse_pkg_version

SRC_VA_MATRIX = ("vllm-ascend docs/source/community/versioning_policy.md release matrix + per-tag requirements.txt "
                 "(shared/reference/cann_torchnpu_vllm.md §1.1)")
SRC_PT_COMPAT = "Ascend/pytorch COMPATIBILITY.en.md (shared/reference/cann_torchnpu_vllm.md §2.1)"
SRC_DRIVER = "Ascend/docs _static/package_info.js CANN -> driver mapping (shared/reference/cann_torchnpu_vllm.md §6.5)"
SRC_TORCHVISION = "pytorch/vision README compatibility table (torchvision 0.(N+15) pairs with torch 2.N)"


@dataclass(frozen=True)
class VllmAscendRow:
    """One vllm-ascend release and the stack its tag pins."""

    version: str
    vllm: str
    python: str
    cann: str | None
    torch: str  # requirement on torch as the tag's requirements say it
    torch_npu: str | None  # exact torch-npu pin, None when unpinned
    a3: bool  # A3 listed as supported (from v0.10.0rc1)


def _r(v: str, vllm: str, py: str, cann: str | None, torch: str, tn: str | None, a3: bool = True) -> VllmAscendRow:
    return VllmAscendRow(v, vllm, py, cann, torch, tn, a3)


_P39 = ">=3.9,<3.12"
_P310 = ">=3.10,<3.12"
_P313 = ">=3.10,<3.13"

# vllm-ascend release -> pinned stack (shared/reference/cann_torchnpu_vllm.md §1.1)
VLLM_ASCEND: tuple[VllmAscendRow, ...] = (
    _r("0.7.1rc1", "0.7.1", ">=3.9", "8.0.0", "==2.5.1", None, False),
    _r("0.7.3rc1", "0.7.3", ">=3.9", "8.0.0", ">=2.5.1", None, False),
    _r("0.7.3rc2", "0.7.3", ">=3.9", "8.0.0", ">=2.5.1", None, False),
    _r("0.7.3", "0.7.3", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.7.3.post1", "0.7.3", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.8.4rc1", "0.8.4", _P39, "8.0.0", ">=2.5.1", None, False),
    _r("0.8.4rc2", "0.8.4", _P39, "8.0.0", ">=2.5.1", "==2.5.1", False),
    _r("0.8.5rc1", "0.8.5.post1", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.9.0rc1", "0.9.0", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.9.0rc2", "0.9.0", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1", False),
    _r("0.9.1rc1", "0.9.1", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1.post1.dev20250528", False),
    _r("0.9.2rc1", "0.9.2", _P39, "8.1.RC1", ">=2.5.1", "==2.5.1.post1.dev20250619", False),
    _r("0.9.1rc2", "0.9.1", _P39, "8.2.RC1", ">=2.5.1", "==2.5.1.post1", False),
    _r("0.9.1rc3", "0.9.1", _P39, "8.2.RC1", ">=2.5.1", "==2.5.1.post1", False),
    _r("0.9.1", "0.9.1", _P39, "8.2.RC1", ">=2.5.1", "==2.5.1.post1", False),
    _r("0.10.0rc1", "0.10.0", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724"),
    _r("0.10.1rc1", "0.10.1", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724"),
    _r("0.10.2rc1", "0.10.2", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724"),
    _r("0.11.0rc0", "0.11.0rc3", _P39, "8.2.RC1", ">=2.7.1", "==2.7.1.dev20250724"),
    _r("0.11.0rc1", "0.11.0", _P39, "8.3.RC1", "==2.7.1", "==2.7.1"),
    _r("0.11.0rc2", "0.11.0", _P39, "8.3.RC2", "==2.7.1", "==2.7.1"),
    _r("0.11.0rc3", "0.11.0", _P39, "8.3.RC2", "==2.7.1", "==2.7.1"),
    _r("0.11.0", "0.11.0", _P39, "8.3.RC2", "==2.7.1", "==2.7.1"),
    _r("0.12.0rc1", "0.12.0", _P310, "8.3.RC2", "==2.8.0", "==2.8.0"),
    _r("0.13.0rc1", "0.13.0", _P310, "8.3.RC2", "==2.8.0", "==2.8.0"),
    _r("0.13.0rc2", "0.13.0", _P310, "8.5.0", "==2.8.0", "==2.8.0"),
    _r("0.13.0rc3", "0.13.0", _P310, "8.5.1", "==2.8.0", "==2.8.0.post2"),
    _r("0.13.0", "0.13.0", _P310, "8.5.0", "==2.8.0", "==2.8.0.post2"),
    _r("0.14.0rc1", "0.14.1", _P310, "8.5.0", "==2.9.0", "==2.9.0"),
    _r("0.15.0rc1", "0.15.0", _P310, "8.5.0", "==2.9.0", "==2.9.0"),
    _r("0.16.0rc1", "0.16.0", _P310, "8.5.1", "==2.9.0", "==2.9.0"),
    _r("0.17.0rc1", "0.17.0", _P310, "8.5.1", "==2.9.0", "==2.9.0"),
    _r("0.18.0rc1", "0.18.0", _P310, "8.5.1", "==2.9.0", "==2.9.0"),
    _r("0.18.0", "0.18.0", _P310, "8.5.1", "==2.9.0", "==2.9.0"),
    _r("0.19.1rc1", "0.19.1", _P310, "8.5.1", "==2.9.0", "==2.9.0"),
    _r("0.20.2rc1", "0.20.2", _P310, "9.0.0", "==2.10.0", "==2.10.0"),
    _r("0.21.0rc1", "0.21.0", _P313, "9.0.0", "==2.10.0", "==2.10.0"),
    _r("0.22.1rc1", "0.22.1", _P313, "9.0.0", "==2.10.0", "==2.10.0"),
    _r("0.23.0rc1", "0.23.0", _P313, "9.0.1", "==2.10.0", "==2.10.0.post2"),
    _r("0.24.0rc1", "0.24.0", _P313, "9.0.1", "==2.10.0", "==2.10.0.post2"),
    _r("0.23.0", "0.23.0", _P313, "9.1.0", "==2.10.0", "==2.10.0.post4"),
    _r("0.25.1rc1", "0.25.1", _P313, "9.0.1", "==2.10.0", "==2.10.0.post2"),
    _r("0.26.0rc1", "0.26.0", _P313, None, "==2.10.0", "==2.10.0.post4"),
)


def vllm_ascend_row(version: str | None) -> VllmAscendRow | None:
    """The matrix row for an installed vllm-ascend: exact public version first; for a branch / dev build
    (0.13.1.dev5+g…) the newest release row of the same major.minor at or below it."""
    v = parse_pkg_version(version)
    if v is None:
        return None
    pub = Version(v.public)
    for row in VLLM_ASCEND:
        if Version(row.version) == pub:
            return row
    same = [r for r in VLLM_ASCEND if Version(r.version).release[:2] == pub.release[:2] and Version(r.version) <= pub]
    if not same:
        return None
    return max(same, key=lambda r: Version(r.version))


# torch-npu release -> the CANN it is built and tested for (Ascend/pytorch COMPATIBILITY, §2.1)
TORCH_NPU_CANN: dict[str, str] = {
    "2.12.0": "9.1.0", "2.11.0": "9.1.0", "2.10.0.post4": "9.1.0", "2.9.0.post6": "9.1.0", "2.7.1.post8": "9.1.0",
    "2.9.0.post2": "9.0.0", "2.8.0.post4": "9.0.0", "2.7.1.post4": "9.0.0",
    "2.9.0": "8.5.0", "2.8.0.post2": "8.5.0", "2.7.1.post2": "8.5.0", "2.6.0.post5": "8.5.0",
    "2.8.0": "8.3.RC1", "2.7.1": "8.3.RC1", "2.6.0.post3": "8.3.RC1", "2.1.0.post17": "8.3.RC1",
    "2.6.0": "8.2.RC1", "2.5.1.post1": "8.2.RC1", "2.1.0.post13": "8.2.RC1",
    "2.5.1": "8.1.RC1", "2.4.0.post4": "8.1.RC1", "2.3.1.post6": "8.1.RC1", "2.1.0.post12": "8.1.RC1",
    "2.4.0.post2": "8.0.0", "2.3.1.post4": "8.0.0", "2.1.0.post10": "8.0.0",
    "2.4.0": "8.0.RC3", "2.3.1.post2": "8.0.RC3", "2.1.0.post8": "8.0.RC3",
    "2.3.1": "8.0.RC2", "2.2.0.post2": "8.0.RC2", "2.1.0.post6": "8.0.RC2",
    "2.2.0": "8.0.RC1", "2.1.0.post4": "8.0.RC1",
    "2.1.0": "7.0.0", "2.0.1.post1": "7.0.0",
}


def torch_npu_cann(version: str | None) -> str | None:
    v = parse_pkg_version(version)
    if v is None:
        return None
    return TORCH_NPU_CANN.get(str(Version(v.public)))


# CANN -> the oldest driver the official quick-install mapping pairs with it (verified rows only): a CANN at or
# above the key needs at least this driver (package_info.js, §6.5). Later CANNs only have observed pairings,
# used as recommendations (warnings) below.
DRIVER_MINIMUM: tuple[tuple[str, str], ...] = (
    ("7.0.RC1", "23.0.rc3"),
    ("8.0.RC1", "24.1.rc1"),
    ("8.0.RC3", "24.1.rc2"),
    ("8.2.RC1", "25.0.rc1"),
)
DRIVER_RECOMMENDED: tuple[tuple[str, str, str], ...] = (
    ("8.3.RC1", "25.2.0", "vllm-ascend issue (CANN 8.3.RC2 with HDK 25.2.x), §6.5 [observed]"),
    ("8.5.0", "25.5.0", "vllm-ascend v0.13 docs 'HDK 25.5 recommended'; verl pairs CANN 8.5.0 with HDK 25.5.0"),
    ("9.1.0", "26.0.rc1", "verl docs/ascend_tutorial/get_start/install_guidance.rst (HDK 26.0.rc1 with CANN 9.1.0)"),
)


def torchvision_for_torch(torch_version: str | None) -> str | None:
    """'2.8.0' -> '0.23': the torchvision minor line built against that torch (2.x only)."""
    v = parse_pkg_version(torch_version)
    if v is None or v.major != 2 or len(v.release) < 2:
        return None
    return f"0.{v.minor + 15}"
