"""MindSpeed-LLM releases and the stack their pairing table ("软件版本配套表") documents.

A MindSpeed-LLM install is known by the version its setup.py reports: 2.2.0 and 2.3.0 report themselves; the
26.0.0 and 26.1.0 branches (and master) all report 26.0.0dev0, so that row is the union of their table rows and their
compatibility tables (CANN 8.3 to 9.1); 2.1.0 and older report 0.0.1 and are not judged. MindSpeed-LLM patches
Megatron-LM through MindSpeed's patch manager, which patches Megatron attributes by name.
"""

from __future__ import annotations

from typing import NamedTuple

from packaging.version import Version

from doctor.knowledge.versions import parse_pkg_version

# MindSpeed-LLM's README on the 2.3.0 branch: the table with the 2.1.0, 2.2.0 and 2.3.0 rows
SRC_LLM_README_230 = "https://github.com/Ascend/MindSpeed-LLM/blob/62d4640b977443db69121fcabf71ea40c98de063/README.md"
# its release notes on master (2026-08-21): table 1 (26.0.0, 26.1.0) and the TorchNPU / CANN compatibility tables
SRC_LLM_NOTES = ("https://github.com/Ascend/MindSpeed-LLM/blob/c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91/"
                 "docs/zh/release_notes_llm.md")
# its release notes at tag v26.0.0 (read 2026-12-06): table 3 ("MindSpeed LLM与CANN版本兼容") still has the 2.3.0 and
# 2.2.0 rows master dropped, each with every CANN it pairs with ("Y"), beyond the one of its row in table 1
SRC_LLM_NOTES_2600 = ("https://github.com/Ascend/MindSpeed-LLM/blob/57c33296592ed12f59396e59461a5bd8d0d589d0/"
                      "docs/zh/release_notes_llm.md")


class MindSpeedLlmRow(NamedTuple):
    reports: str  # the version its setup.py reports
    branches: tuple[str, ...]  # the MindSpeed-LLM branches that report it
    mindspeed: tuple[str, ...]  # the MindSpeed branches the table pairs them with
    megatron: str  # the Megatron-core release ("core_v0.12.1" -> 0.12.1)
    torch: str
    cann: tuple[str, ...]  # compared by series: the table row's CANN, then the others its compatibility table pairs
    source: str


MINDSPEED_LLM: tuple[MindSpeedLlmRow, ...] = (
    MindSpeedLlmRow("2.2.0", ("2.2.0",), ("2.2.0_core_r0.12.1",), "0.12.1", "2.7.1",
                    ("8.3.RC1", "8.2.RC1", "8.1.RC1", "8.0.0", "8.0.RC3", "8.0.RC2"),
                    f"{SRC_LLM_README_230}; {SRC_LLM_NOTES_2600}"),
    MindSpeedLlmRow("2.3.0", ("2.3.0",), ("2.3.0_core_r0.12.1",), "0.12.1", "2.7.1",
                    ("8.5.0", "8.3.RC1", "8.2.RC1", "8.1.RC1", "8.0.0"), f"{SRC_LLM_README_230}; {SRC_LLM_NOTES_2600}"),
    MindSpeedLlmRow("26.0.0.dev0", ("26.0.0", "26.1.0", "master"),
                    ("26.0.0_core_r0.12.1", "26.1.0_core_r0.12.1", "master"), "0.12.1", "2.7.1",
                    ("8.3.RC1", "8.5.0", "9.0.0", "9.1.0"), SRC_LLM_NOTES),
)


def mindspeed_llm_row(version: str | None) -> MindSpeedLlmRow | None:
    v = parse_pkg_version(version)
    if v is None:
        return None
    want = Version(v.public)
    return next((r for r in MINDSPEED_LLM if Version(r.reports) == want), None)
