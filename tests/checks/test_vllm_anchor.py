"""vllm-ascend-vllm-anchor: a vllm-ascend checkout is judged by the vLLM its own tree names
(https://github.com/vllm-project/vllm-ascend/pull/9801), and vllm-ascend-matrix does not judge the same pair again
from the nearest release's row."""

from __future__ import annotations

from typing import Any

import pytest

from tests.stacks import bare, diagnose_dict, found

VA_SHA = "5cb98caaadeff42b5b62b996e34bb2aaa29d20fd"  # tag v0.23.0 of vllm-ascend
MAIN = "cdc4824a21eaa986d4d1fee90a7e6465c9f706e6"  # vllm-ascend main's vllm-main-verified.commit, 2026-08-22
PAIR = {"vllm-ascend-vllm-anchor-mismatch", "vllm-ascend-vllm-main-unverified", "vllm-ascend-vllm-mismatch"}


def snap(vllm: str, va: str | None = "0.23.0", **git: Any) -> dict[str, Any]:
    packages: dict[str, Any] = {"vllm": {"version": vllm}}
    if va is not None:
        packages["vllm-ascend"] = {"version": va, "editable": True}
    g = {"commit": VA_SHA, "branch": None, "tag": None, "dirty": False, "root": "/src/vllm-ascend", **git}
    return bare(packages=packages, modules={"vllm_ascend": {"origins": ["/src/vllm-ascend/vllm_ascend"], "git": g}})


def pair(d: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in found(d).items() if k in PAIR}


def test_another_vllm_release_than_the_tree_names_is_an_error_naming_both_the_file_and_the_fix() -> None:
    (f,) = [f for f in diagnose_dict(snap("0.27.1+empty", vllm_release_tag="v0.23.0")).findings if f.id in PAIR]
    assert f.id == "vllm-ascend-vllm-anchor-mismatch" and f.severity.value == "error"
    assert set(f.components) == {"vllm", "vllm-ascend"}
    assert "0.27.1+empty" in f.title and "v0.23.0" in f.title and ".github/vllm-release-tag.commit" in f.title
    assert "git clone --depth 1 --branch v0.23.0 https://github.com/vllm-project/vllm" in f.fix.text
    assert "VLLM_TARGET_DEVICE=empty pip install -e ." in f.fix.text and "vLLM 0.23.0" in f.fix.text
    assert f.source.split("; ")[0] == (f"https://github.com/vllm-project/vllm-ascend/blob/{VA_SHA}/"
                                       ".github/vllm-release-tag.commit")
    assert f.evidence["vllm_release_tag"] == "v0.23.0" and f.evidence["vllm"] == "0.27.1+empty"


def test_without_the_checkouts_commit_the_source_is_the_repository() -> None:
    (f,) = [f for f in diagnose_dict(snap("0.26.0", commit=None, vllm_release_tag="v0.27.1")).findings if f.id in PAIR]
    assert f.source.split("; ")[0] == "https://github.com/vllm-project/vllm-ascend"


@pytest.mark.parametrize("vllm", ["0.27.1", "0.27.1+empty", "0.27.1+cpu"])
def test_versions_are_compared_as_versions_local_label_ignored(vllm: str) -> None:
    assert pair(snap(vllm, va="0.19.1rc2.dev1570+gd5daa8258", vllm_release_tag="v0.27.1")) == {}


def test_the_anchor_takes_precedence_over_the_nearest_releases_row() -> None:
    """A main build 1570 commits past v0.19.1rc2 beside vLLM 0.27.1: the matrix, from 0.19.1rc1's row, can only
    warn; the tree's own v0.27.1 says the pair is right, so nothing about it. The same main build beside 0.19.1
    (the row's vLLM) under a tree naming v0.27.1: the tree's error, not the row's silence."""
    main_build = "0.19.1rc2.dev1570+gd5daa8258"
    assert pair(snap("0.27.1", va=main_build)) == {"vllm-ascend-vllm-mismatch": "warning"}  # no anchor: the row
    assert pair(snap("0.27.1", va=main_build, vllm_release_tag="v0.27.1")) == {}
    assert pair(snap("0.19.1", va=main_build, vllm_release_tag="v0.27.1")) == {"vllm-ascend-vllm-anchor-mismatch": "error"}
    # a tagged release beside another series: one error per pair, the anchor's
    assert pair(snap("0.27.1", vllm_release_tag="v0.23.0")) == {"vllm-ascend-vllm-anchor-mismatch": "error"}


def test_a_checkout_without_a_version_is_still_judged() -> None:
    """A clone on the path (no dist-info) has no version for the matrix; its tree still names its vLLM."""
    assert pair(snap("0.23.0", va=None, vllm_release_tag="v0.27.1")) == {"vllm-ascend-vllm-anchor-mismatch": "error"}


@pytest.mark.parametrize(("vllm", "git", "want"), [
    ("0.27.2.dev37+gcdc4824a.empty", {}, {}),  # the verified main commit (prefix of the full sha)
    ("0.27.2.dev37+gcdc4824a21.d20260901", {}, {}),  # a dirty build of it
    ("0.27.2.dev41+g1a2b3c4d.empty", {}, {"vllm-ascend-vllm-main-unverified": "warning"}),
    ("0.1.dev1+g1a2b3c4d", {}, {"vllm-ascend-vllm-main-unverified": "warning"}),  # a shallow clone without tags
])
def test_a_main_build_of_vllm_is_compared_with_the_verified_main_commit(vllm: str, git: dict, want: dict) -> None:
    assert pair(snap(vllm, va=None, vllm_release_tag="v0.27.1", vllm_main_verified=MAIN, **git)) == want


def test_the_main_commit_of_a_vllm_checkout_comes_from_its_own_git_facts() -> None:
    d = snap("0.27.2.dev37", va=None, vllm_main_verified=MAIN)
    d["modules"]["vllm"] = {"origins": ["/src/vllm/vllm"], "git": {"commit": MAIN, "branch": "main", "dirty": False}}
    assert pair(d) == {}
    d["modules"]["vllm"]["git"]["commit"] = "1a2b3c4d" + MAIN[8:]
    (f,) = [f for f in diagnose_dict(d).findings if f.id in PAIR]
    assert f.severity.value == "warning" and "untested" in f.detail and "not known to be broken" in f.detail
    assert MAIN in f.fix.text


@pytest.mark.parametrize("git", [
    {},  # a checkout before v0.21.0rc1: no anchor
    {"vllm_release_tag": "main"},  # a hand-written value that is no release
    {"vllm_main_verified": MAIN},  # a release vLLM, only a main anchor
])
def test_unknown_is_silent(git: dict) -> None:
    d = snap("0.27.1", va=None, **git)
    assert pair(d) == {}
    st = {r.id: r for r in diagnose_dict(d).checks}["vllm-ascend-vllm-anchor"]
    assert st.status.value == "skip"


def test_a_dev_vllm_whose_commit_is_unknown_leaves_the_pair_to_the_matrix() -> None:
    d = snap("0.13.1.dev3", va="0.13.1.dev12+gabcdef0", vllm_release_tag="v0.27.1", vllm_main_verified=MAIN)
    assert "vllm-ascend-vllm-anchor-mismatch" not in found(d) and "vllm-ascend-vllm-main-unverified" not in found(d)


def test_no_checkout_no_verdict() -> None:
    d = bare(packages={"vllm": {"version": "0.27.1"}, "vllm-ascend": {"version": "0.23.0"}})
    assert pair(d) == {"vllm-ascend-vllm-mismatch": "error"}


def test_a_release_tree_beside_a_main_build_of_another_series_stays_an_error() -> None:
    """vllm-ascend v0.23.0 (a release: its tag at HEAD, or a release version) beside a vLLM main build past
    v0.27.1: another commit than the verified one, and another series than the release it pairs with; the matrix
    called that an error before the anchor took the pair, and so does the anchor."""
    off = snap("0.27.2.dev41+g1a2b3c4d.empty", vllm_release_tag="v0.23.0", vllm_main_verified=MAIN)
    assert pair(off) == {"vllm-ascend-vllm-main-unverified": "error"}
    (f,) = [f for f in diagnose_dict(off).findings if f.id in PAIR]
    assert "--branch v0.23.0" in f.fix.text and "release tree" in f.detail
    off_by_tag = snap("0.27.2.dev41+g1a2b3c4d.empty", va=None, tag="v0.23.0", vllm_release_tag="v0.23.0",
                      vllm_main_verified=MAIN)
    assert pair(off_by_tag) == {"vllm-ascend-vllm-main-unverified": "error"}
    # the same series as the release: unverified only; a main tree (no tag, a dev version): unverified only
    assert pair(snap("0.23.1.dev4+g1a2b3c4d.empty", vllm_release_tag="v0.23.0", vllm_main_verified=MAIN)) == {
        "vllm-ascend-vllm-main-unverified": "warning"}
    assert pair(snap("0.28.0.dev4+g1a2b3c4d.empty", va="0.19.1rc2.dev1637+g182b75ea8", vllm_release_tag="v0.27.1",
                     vllm_main_verified=MAIN)) == {"vllm-ascend-vllm-main-unverified": "warning"}
