"""The triton-ascend chip table (doctor/knowledge/triton_ascend.py): one row per release, SoC names in bishengir-compile's
spelling, every row cited at a commit or tag."""

from __future__ import annotations

import re

from packaging.version import Version

from doctor.knowledge.chips import family_from_name
from doctor.knowledge.matrix import VLLM_ASCEND
from doctor.knowledge.triton_ascend import (
    NO_TRITON_FAMILIES,
    TRITON_ASCEND_CANN,
    TRITON_ASCEND_CHIPS,
    soc_key,
    triton_ascend_chip_row,
)


def test_every_row_names_socs_in_bishengir_spelling_and_cites_a_commit_or_tag():
    seen: set[Version] = set()
    for r in TRITON_ASCEND_CHIPS:
        for v in r.versions:
            assert Version(v) not in seen, v  # one row per release
            seen.add(Version(v))
        assert r.socs is not None or r.families is not None, r
        for s in r.socs or ():
            assert soc_key(s) == s and soc_key(f"Ascend{s.upper()}") == s, s
            assert family_from_name(s) in ("A2", "A3"), s
            assert not any(family_from_name(s) == f for f in NO_TRITON_FAMILIES)
        for url in r.source.split("; "):
            assert url.startswith("https://"), url
            if "/blob/" in url:
                assert re.search(r"/blob/([0-9a-f]{40}|v[0-9][^/]*)/", url), url
        # the SoC list is the bishengir-compile of the CANN the release is paired with (TRITON_ASCEND_CANN)
        if r.cann is not None:
            paired = [c for t in TRITON_ASCEND_CANN for c in t.cann if any(Version(t.version) == Version(v)
                                                                          for v in r.versions)]
            assert not paired or any(c.startswith(r.cann + ".") for c in paired), (r.versions, paired)


def test_an_inferred_row_says_what_it_infers():
    inferred = [r for r in TRITON_ASCEND_CHIPS if r.inferred]
    assert inferred and all(len(r.inferred) > 40 for r in inferred)
    assert not triton_ascend_chip_row("3.2.0").inferred


def test_the_triton_ascend_every_vllm_ascend_release_from_0_13_pins_has_a_chip_row():
    for row in VLLM_ASCEND:
        if row.triton_ascend and Version(row.version) >= Version("0.13.0rc1"):
            for pin in (row.triton_ascend, *row.triton_ascend_also):
                assert triton_ascend_chip_row(pin) is not None, (row.version, pin)


def test_soc_key_keeps_target_names_only():
    assert soc_key("Ascend910B4-1") == "910b4-1" and soc_key("910B2C") == "910b2c"
    assert soc_key("ascend910_9382") == "910_9382" and soc_key("310P3") == "310p3"
    for board in ("910B", "Ascend910", "950DT", "Ascend950PR", None, ""):
        assert soc_key(board) is None, board
