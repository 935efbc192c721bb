"""triton-ascend releases and the CANN each is built for.

triton-ascend compiles kernels with the bisheng toolchain CANN ships, and its releases are cut per CANN: MindSpeed-LLM's
release notes say "Triton-Ascend版本与CANN版本强绑定，Triton-Ascend的使用应该与CANN版本一一对应" (the triton-ascend version
is bound to the CANN version and should be used with its CANN one to one). The rows come from triton-ascend's own
installation guide and MindSpeed-LLM's pairing table; every CANN a vllm-ascend release's matrix pairs with the
triton-ascend it pins is accepted too (`doctor/knowledge/matrix.py`), so a pairing an upstream documents is never
reported. Release and dev builds the rows do not name are not judged.
"""

from __future__ import annotations

from typing import NamedTuple

from packaging.version import Version

from doctor.knowledge.matrix import VLLM_ASCEND
from doctor.knowledge.versions import parse_pkg_version

# the installation guide on the release/3.2.1 branch (the mirror's newest release branch): its "CANN version" tables
SRC_TA_INSTALL = ("https://github.com/triton-lang/triton-ascend/blob/8763c3161ad6968eb5e4fc6e7f8f56ece961eec9/"
                  "docs/en/installation_guide.md")
# the release note on the same branch: its "Release Compatibility Matrix" (hardware products per release)
SRC_TA_RELEASE = ("https://github.com/triton-lang/triton-ascend/blob/8763c3161ad6968eb5e4fc6e7f8f56ece961eec9/"
                  "docs/en/release_note.md")
# MindSpeed-LLM master (2026-08-21): table 1 pairs 26.0.0 with CANN 9.0.0 / triton-ascend 3.2.1 and 26.1.0 with
# CANN 9.1.0 / triton-ascend 3.2.2, and its note binds triton-ascend to CANN one to one
SRC_LLM_NOTES = ("https://github.com/Ascend/MindSpeed-LLM/blob/c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91/"
                 "docs/zh/release_notes_llm.md")


class TritonAscendRow(NamedTuple):
    version: str
    cann: tuple[str, ...]  # the CANN releases the source pairs it with (compared by series: 8.3.RC1 ~ 8.3.RC2)
    source: str


TRITON_ASCEND_CANN: tuple[TritonAscendRow, ...] = (
    TritonAscendRow("3.2.0rc4", ("8.3.RC1", "8.3.RC2", "8.5.0.alpha001"), SRC_TA_INSTALL),
    TritonAscendRow("3.2.0", ("8.5.0",), SRC_TA_INSTALL),
    TritonAscendRow("3.2.1", ("9.0.0",), SRC_LLM_NOTES),
    TritonAscendRow("3.2.2", ("9.1.0",), SRC_LLM_NOTES),
)


def triton_ascend_canns(version: str | None) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the CANN releases documented for this triton-ascend release, their sources), or None when no source names
    the release. The vllm-ascend matrix rows that pin it add their CANN (and their tag) as accepted alternatives."""
    v = parse_pkg_version(version)
    if v is None:
        return None
    want = Version(v.public)
    rows = [r for r in TRITON_ASCEND_CANN if Version(r.version) == want]
    va = [r for r in VLLM_ASCEND if r.triton_ascend and Version(r.triton_ascend) == want]
    if not rows:
        return None
    canns = [c for r in rows for c in r.cann] + [c for r in va for c in r.cann_versions()]
    sources = [r.source for r in rows] + [r.source for r in va]
    return tuple(dict.fromkeys(canns)), tuple(dict.fromkeys(sources))


# triton-ascend release -> the chip families its release matrix lists ("Hardware Product: Atlas A2/A3")
TRITON_ASCEND_CHIPS: dict[str, tuple[str, ...]] = {"3.2.0": ("A2", "A3")}


def triton_ascend_chips(version: str | None) -> tuple[str, ...] | None:
    v = parse_pkg_version(version)
    return TRITON_ASCEND_CHIPS.get(v.public) if v is not None else None
