"""package-chip-unsupported: a training package's own docs for its release against the host's chip family
(profiles/chip-support.toml). Every family against releases before and after their docs change."""

from __future__ import annotations

from typing import Any

import pytest

from tests.stacks import CHIP_ROWS, bare, diagnose_dict

ID = "package-chip-unsupported"
DEVICES: dict[str, list[dict[str, Any]]] = {
    "A2": CHIP_ROWS["A2"], "A3": CHIP_ROWS["A3"], "950": CHIP_ROWS["950"],
    "910": [{"id": i, "chip": "910A", "hbm_total_mb": 32768} for i in range(8)],
    "310P": [{"id": i, "chip": "310P3"} for i in range(4)],
    "310": [{"id": 0, "chip": "310B4"}],
}


def _snap(fam: str | None, packages: dict[str, str], modules: dict[str, Any] | None = None,
          cann: str | None = None) -> dict[str, Any]:
    ascend: dict[str, Any] = {"devices": DEVICES[fam]} if fam else {}
    if cann:
        ascend["toolkit"] = {"version": cann}
    d = bare(packages={k: {"version": v} for k, v in packages.items()}, ascend=ascend or None)
    if modules:
        d["modules"] = modules
    return d


def _chip(d: dict[str, Any]) -> list[Any]:
    return [f for f in diagnose_dict(d).findings if f.id == ID]


def _sev(d: dict[str, Any]) -> str | None:
    fs = _chip(d)
    return fs[0].severity.value if fs else None


def _ms(branch: str | None, version: str = "0.12.1") -> tuple[dict[str, str], dict[str, Any]]:
    return {"mindspeed": version}, {"mindspeed": {"git": {"branch": branch}} if branch else {}}


# verl: 0.5.0 lists A2 only, 0.6.0 adds the Atlas 800T A3, 0.9.0 the A5 (950) guide; 0.9.1 is not read
VERL = [
    ("0.5.0", {"A2": None, "A3": None, "950": None, "910": "warning", "310P": "error", "310": "error"}),
    ("0.6.0", {"A2": None, "A3": None, "950": None, "910": "warning", "310P": "error", "310": "error"}),
    ("0.7.1", {"A2": None, "A3": None, "950": None, "910": "warning", "310P": "error", "310": "error"}),
    ("0.9.0", {"A2": None, "A3": None, "950": None, "910": "warning", "310P": "error", "310": "error"}),
    ("0.9.1", dict.fromkeys(DEVICES)),
    ("0.3.0.post1", dict.fromkeys(DEVICES)),
]


@pytest.mark.parametrize(("version", "fam", "want"), [(v, f, w) for v, table in VERL for f, w in table.items()])
def test_verl_release_against_every_family(version: str, fam: str, want: str | None) -> None:
    assert _sev(_snap(fam, {"verl": version})) == want


# MindSpeed by branch: the 910 is left out of the 2.0.0_core_r0.8.0 table, unmentioned by "Atlas 800T A2等" (2.1.0),
# marked √ on core_r0.15.3 / core_r0.16.0 and x from 26.0.0_core_r0.12.1 / core_r0.17.0 on
MINDSPEED = [
    ("2.0.0_core_r0.8.0", "0.8.0", {"A2": None, "A3": None, "910": "warning", "310P": "error", "310": "error"}),
    ("2.1.0_core_r0.8.0", "0.8.0", {"A2": None, "A3": None, "910": None, "310P": "error", "310": "error"}),
    ("core_r0.16.0", "0.16.0", {"A2": None, "A3": None, "910": None, "310P": "error", "310": "error"}),
    ("core_r0.17.0", "0.12.1", {"A2": None, "A3": None, "950": None, "910": "error", "310P": "error", "310": "error"}),
    ("26.0.0_core_r0.12.1", "0.12.1", {"A2": None, "A3": None, "950": None, "910": "error", "310P": "error"}),
    ("26.1.0_core_r0.12.1", "0.12.1", {"A2": None, "A3": None, "950": None, "910": "error", "310P": "error"}),
]


@pytest.mark.parametrize(("branch", "version", "fam", "want"),
                         [(b, v, f, w) for b, v, table in MINDSPEED for f, w in table.items()])
def test_mindspeed_branch_against_every_family(branch: str, version: str, fam: str, want: str | None) -> None:
    pkgs, mods = _ms(branch, version)
    assert _sev(_snap(fam, pkgs, mods)) == want


def test_mindspeed_without_its_branch_is_judged_only_where_every_branch_of_its_version_agrees() -> None:
    pkgs, mods = _ms(None)
    assert _sev(_snap("310P", pkgs, mods)) == "error"  # every branch reporting 0.12.1 names training hardware only
    assert _sev(_snap("910", pkgs, mods)) is None  # 2.x say "Atlas 800T A2等", 26.x mark it x
    assert _sev(_snap("310P", {"mindspeed": "0.8.0"})) == "error"
    assert _sev(_snap("910", {"mindspeed": "0.8.0"})) is None


def test_mindspeed_26_on_a_first_generation_910_names_the_branches_that_support_it() -> None:
    pkgs, mods = _ms("26.0.0_core_r0.12.1")
    f = _chip(_snap("910", pkgs, mods))[0]
    assert f.severity.value == "error" and f.components == ("mindspeed", "npu")
    assert "26.0.0_core_r0.12.1" in f.title and "first-generation" in f.title
    assert "Atlas 训练系列产品 x" in f.detail
    assert "core_r0.15.3" in f.fix.text and "core_r0.16.0" in f.fix.text
    assert f.source == ("https://github.com/Ascend/MindSpeed/blob/3c44c134f396fc14a22a38934c7d5d8bedb37ff5/"
                        "docs/zh/user-guide/install_guide.md")
    assert f.evidence["chip_family"] == "910" and f.evidence["docs_list"] == ["A3", "A2"]


def test_verl_on_a_310p_says_what_its_docs_list_and_where() -> None:
    f = _chip(_snap("310P", {"verl": "0.7.1"}))[0]
    assert f.severity.value == "error" and f.components == ("verl", "npu")
    assert f.title.startswith("verl 0.7.1 does not support training on the 310P")
    assert "Atlas A2 / Atlas A3" in f.title
    assert "Atlas 800T A3" in f.detail and "Inferred:" in f.detail
    assert "train on Atlas A2 / A3" in f.fix.text
    assert f.source == ("https://github.com/verl-project/verl/blob/bec9ef74768dd201881cd4e54cd0385e87caae27/"
                        "docs/ascend_tutorial/ascend_quick_start.rst")


@pytest.mark.parametrize(("version", "fam", "want"), [
    ("2.3.0", "910", None), ("2.3.0", "310P", "error"), ("2.3.0", "A3", None),
    ("26.0.0.dev0", "910", "error"), ("26.0.0.dev0", "310", "error"), ("26.0.0.dev0", "A2", None),
    ("26.0.0.dev0", "950", None), ("0.0.1", "310P", None),
])
def test_mindspeed_llm(version: str, fam: str, want: str | None) -> None:
    assert _sev(_snap(fam, {"mindspeed-llm": version})) == want


def test_mindspeed_rl_on_an_inference_chip() -> None:
    f = _chip(_snap("310", {"mindspeed-rl": "2.1.0"}))[0]
    assert f.severity.value == "error" and f.title.startswith("mindspeed-rl 2.1.0 ") and f.components == ("mindspeed", "npu")
    assert _sev(_snap("A3", {"mindspeed-rl": "2.1.0"})) is None


def test_torch_npu_docs_list_the_first_generation_910() -> None:
    # Ascend/pytorch's README at v7.0.0-pytorch2.5.1 lists the Atlas training series (Atlas 800 model 9000) as training
    # environments: the table supports it, so torch-npu alone on a 910A is not a chip-support finding
    assert _chip(_snap("910", {"torch-npu": "2.5.1"}, cann="8.1.RC1")) == []


def test_inference_packages_on_a_310p_stay_out_of_the_training_rule() -> None:
    d = _snap("310P", {"vllm-ascend": "0.10.0rc1", "vllm": "0.10.0", "torch-npu": "2.7.1", "torch": "2.7.1"})
    assert _chip(d) == []


def test_unknown_family_or_version_is_silent() -> None:
    assert _chip(_snap(None, {"verl": "0.7.1"})) == []
    assert _chip(bare(packages={"verl": {"version": None}}, ascend={"devices": DEVICES["310P"]})) == []
    assert _chip(_snap("310P", {"verl": "0.10.0.dev20260822"})) == []


def test_two_training_packages_are_two_findings() -> None:
    fs = _chip(_snap("310P", {"verl": "0.7.1", "mindspeed": "0.12.1"}))
    assert sorted(f.evidence["package"] for f in fs) == ["mindspeed", "verl"]


def test_the_table_is_read_only_where_the_family_is_known_and_a_malformed_one_still_fails_that_check(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A live check preloads the tables every host with packages reads (`load_tables`); this one is read only where the
    chip family is known, so a host without one never parses it, and where the family is known a malformed copy still
    fails the check that reads it, naming the file."""
    from doctor.checks.runner import load_all, load_tables
    from doctor.knowledge import chip_support

    monkeypatch.setattr(chip_support, "_TABLES", {})
    load_tables(load_all())
    (r,) = [c for c in diagnose_dict(_snap(None, {"verl": "0.9.0"})).checks if c.id == "package-chip-support"]
    assert r.status.value == "skip" and r.reason == "the chip family is not known"
    assert chip_support._TABLES == {}
    assert _sev(_snap("310P", {"verl": "0.9.0"})) == "error" and list(chip_support._TABLES) == [chip_support.table_path(
        chip_support.FILE)]
    bad = tmp_path / "chip-support.toml"
    bad.write_text("schema = 1\n[broken\n")
    monkeypatch.setattr(chip_support, "table_path", lambda name, path=None: str(bad))
    (f,) = [f for f in diagnose_dict(_snap("A2", {"verl": "0.9.0"})).findings if f.check == "package-chip-support"]
    assert f.id == "check-crashed" and str(bad) in f.title
