"""triton-ascend releases and the CANN each is built for.

triton-ascend compiles kernels with the bisheng toolchain CANN ships, and its releases are cut per CANN: MindSpeed-LLM's
release notes say "Triton-Ascend版本与CANN版本强绑定，Triton-Ascend的使用应该与CANN版本一一对应" (the triton-ascend version
is bound to the CANN version and should be used with its CANN one to one). The rows come from triton-ascend's own
installation guide and MindSpeed-LLM's pairing table; every CANN a vllm-ascend release's matrix pairs with the
triton-ascend it pins is accepted too (`doctor/knowledge/matrix.py`), so a pairing an upstream documents is never
reported. Release and dev builds the rows do not name are not judged.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

import re
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


# Which chips a triton-ascend release compiles for. triton-ascend hands every kernel to `bishengir-compile
# --target=<the device's SoC name>` (third_party/ascend/backend/compiler.py), found on PATH: the BiSheng IR compiler
# of the CANN it runs on (AscendNPU-IR, "ascendnpu-ir-in-cann"), which rejects a SoC it has no target for ("for the
# --target option: Cannot find option named 'Ascend910B4-1'"). So the SoC list of a release is the A2 / A3 part of the
# `--target` list of the bishengir-compile in the CANN that release is paired with (TRITON_ASCEND_CANN above): Options.td
# also registers 950 targets (Ascend910_95xx at v1.0.0, Ascend950PR_* / 950DT_* from v1.1.0), which AscendNPU-IR's
# pairing table ships on other branches than these CANN releases; 950 hosts are not judged by these rows.
# triton-ascend's NPU backend: get_common_bishengir_compile_options passes `--target=<metadata target arch>`
SRC_TA_TARGET = ("https://github.com/triton-lang/triton-ascend/blob/8763c3161ad6968eb5e4fc6e7f8f56ece961eec9/"
                 "third_party/ascend/backend/compiler.py")
# AscendNPU-IR's version table: v1.0.0 -> CANN 8.5.0, v1.1.0 -> CANN 9.0.0, v1.2.0 -> CANN 9.1.0 (Atlas A2/A3; 950 only
# on other branches)
SRC_AIR_CANN = ("https://github.com/Ascend/AscendNPU-IR/blob/a19484940bbf2524379ba6ebab7e510b0ee2222e/"
                "docs/source/zh_cn/introduction/quick_start/version_compatibility.md")
# bishengir-compile's `--target` values (Options.td, def Target) at release/v1.0.0 (2026-01-08), tags v1.1.0 and v1.2.0
SRC_AIR_100 = ("https://github.com/Ascend/AscendNPU-IR/blob/3c20e046df7a54ea209b1177085f73bdc8c3621f/"
               "bishengir/include/bishengir/Tools/bishengir-compile/Options.td")
SRC_AIR_110 = ("https://github.com/Ascend/AscendNPU-IR/blob/bae4e582ce43fb18eabe55985c75dba133f191ad/"
               "bishengir/include/bishengir/Tools/bishengir-compile/Options.td")
SRC_AIR_120 = ("https://github.com/Ascend/AscendNPU-IR/blob/8796a8ac1508380d78128427c61ab47d03f05739/"
               "bishengir/include/bishengir/Tools/bishengir-compile/Options.td")
# the last Options.td before "add 910B2C target support" (f9794f785, 2025-11-24) and "add 910B4-1 target support"
# (2ef94d5f7, 2025-12-10), both after CANN 8.3.RC2 (2025-11-20, triton-ascend's installation guide)
SRC_AIR_PRE = ("https://github.com/Ascend/AscendNPU-IR/blob/e4633e70f812b7c483768fdcc850c6077a3727e1/"
               "bishengir/include/bishengir/Tools/bishengir-compile/Options.td")
# vLLM Ascend's Atlas 300I DUO (310P) notes: "Atlas 300I DUO does not support `triton` or `triton-ascend`" (v0.18.0
# tutorial; v0.23.0 installation guide: "triton / triton-ascend | Not supported | Uninstalled in Dockerfile.310p")
SRC_VA_310P = ("https://github.com/vllm-project/vllm-ascend/blob/v0.18.0/docs/source/tutorials/hardwares/310p.md; "
               "https://github.com/vllm-project/vllm-ascend/blob/v0.23.0/docs/source/installation.md; "
               "https://github.com/triton-lang/triton-ascend/issues/1002")

# bishengir-compile --target names (lower case, without "Ascend"): the A2 and A3 SoCs
_A2_A3 = ("910b1", "910b2", "910b3", "910b4", "910_9362", "910_9372", "910_9381", "910_9382", "910_9391", "910_9392")
_A2_A3_NEW = _A2_A3 + ("910b4-1", "910b2c")

# chips no triton-ascend release compiles for at all: no bishengir-compile release has a target for them, vLLM Ascend
# documents triton / triton-ascend as unsupported there, and triton-ascend's maintainers plan no 310P3 support
NO_TRITON_FAMILIES = ("310P",)


class TritonAscendChips(NamedTuple):
    versions: tuple[str, ...]  # triton-ascend releases / builds (public versions)
    families: tuple[str, ...] | None  # chip families its release matrix lists; None: no source lists them
    socs: tuple[str, ...] | None  # bishengir-compile --target names it compiles for; None: not known per SoC
    cann: str | None  # the CANN series whose bishengir-compile the SoC list is (the host's CANN decides when known)
    source: str
    inferred: str = ""  # what a source does not state outright


# one row per release; SoC lists where a source gives them, families otherwise
TRITON_ASCEND_CHIPS: tuple[TritonAscendChips, ...] = (
    # 3.2.0rc4 and vLLM Ascend 0.13.0rc1's dev build run CANN 8.3.RC1 / 8.3.RC2's bishengir-compile (the installation
    # guide; vLLM Ascend's v0.13.0rc1 Qwen3-Next tutorial sources CANN 8.3.RC2's bisheng_toolkit)
    TritonAscendChips(("3.2.0rc4", "3.2.0.dev2025110717"), None, _A2_A3, "8.3",
                      f"{SRC_AIR_PRE}; {SRC_TA_INSTALL}; https://github.com/vllm-project/vllm-ascend/issues/5690",
                      inferred="the target list of CANN 8.3's bishengir-compile is not published: it is read from "
                               "AscendNPU-IR's source before Ascend910B2C and Ascend910B4-1 were added (2025-11-24 and "
                               "2025-12-10, after CANN 8.3.RC2), and vLLM Ascend's maintainers fixed 910B4-1 on the "
                               "v0.13.0rc1 image by moving to the 0.13.0 image (CANN 8.5.0)"),
    TritonAscendChips(("3.2.0",), ("A2", "A3"), _A2_A3_NEW, "8.5", f"{SRC_TA_RELEASE}; {SRC_AIR_CANN}; {SRC_AIR_100}"),
    # the dev build vLLM Ascend 0.18.0 / 0.19.1rc1 name beside CANN 8.5.1 (their matrix and release notes)
    TritonAscendChips(("3.2.0.dev20260322",), None, _A2_A3_NEW, "8.5",
                      f"{SRC_AIR_CANN}; {SRC_AIR_100}; https://github.com/vllm-project/vllm-ascend/tree/v0.18.0",
                      inferred="the dev build is not in triton-ascend's CANN tables: it is taken to run the CANN 8.5 "
                               "bishengir-compile of the vLLM Ascend releases that name it (CANN 8.5.1)"),
    TritonAscendChips(("3.2.1",), None, _A2_A3_NEW, "9.0", f"{SRC_AIR_CANN}; {SRC_AIR_110}"),
    TritonAscendChips(("3.2.2",), None, _A2_A3_NEW, "9.1", f"{SRC_AIR_CANN}; {SRC_AIR_120}"),
)


def triton_ascend_chip_row(version: str | None) -> TritonAscendChips | None:
    v = parse_pkg_version(version)
    if v is None:
        return None
    want = Version(v.public)
    return next((r for r in TRITON_ASCEND_CHIPS if any(Version(x) == want for x in r.versions)), None)


def soc_key(name: object) -> str | None:
    """'Ascend910B4-1' / '910B4-1' / 'ascend910_9382' -> '910b4-1' / '910_9382': a name bishengir-compile's target list
    could hold (910B<n>[C|-1], 910_93xx, 310P<n>); None for a family or board name ('910B', 'Ascend910', '950DT')."""
    if not isinstance(name, str):
        return None
    n = name.strip().lower().replace(" ", "").removeprefix("ascend")
    return n if re.fullmatch(r"910b[1-4](c|-1)?|910_93[0-9]{2}|310p[0-9]", n) else None
