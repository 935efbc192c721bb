"""doctor/knowledge/later_bounds.py: the bounds later releases put on a dependency, derived from published metadata."""

from __future__ import annotations

import json

import pytest

from doctor.errors import InputError
from doctor.knowledge.later_bounds import Change, derive, document, excluded_later, load, parse
from doctor.knowledge.pipcheck import dev_only

ENV_312 = {"python_version": "3.12"}


def _applies(py: str = "3.12"):
    from doctor.knowledge.pipcheck import line_applies, runtime_extras

    env = {"python_version": py, "python_full_version": py + ".1", "sys_platform": "linux"}
    return lambda line: line_applies(line, env, runtime_extras(line))


RAY_LIKE = {
    "2.48.0": ["click>=7.0", "pytest>=8; extra == 'dev'"],
    "2.49.0": ["click>=7.0"],
    "2.50.0rc0": ["click!=8.2.*,>=7.0"],  # a pre-release's bound is not yet a statement
    "2.50.0": ["click!=8.3.0,>=7.0", "pytest<9; extra == 'dev'"],
    "2.52.0": ["click!=8.3.*,>=7.0"],
    "2.53.0": ["click>=7.0"],
}


def test_derive_keeps_the_changes_of_bounded_dependencies_of_final_releases_only():
    deps = derive(RAY_LIKE)
    assert list(deps) == ["click"]  # pytest is bounded only in the dev extra
    assert [(c.since, c.lines) for c in deps["click"]] == [
        ("2.48.0", ("click>=7.0",)), ("2.50.0", ("click!=8.3.0,>=7.0",)), ("2.52.0", ("click!=8.3.*,>=7.0",)),
        ("2.53.0", ("click>=7.0",))]
    assert dev_only("pytest<9; extra == 'dev'") and not dev_only("pydantic<2; extra == 'serve'")


def test_a_later_exclusion_is_found_with_the_release_that_admits_the_version_again():
    changes = derive(RAY_LIKE)["click"]
    ex = excluded_later(changes, "2.53.0", "2.49.0", "8.3.0", _applies())
    assert ex is not None and (ex.since, ex.clause, ex.readmitted) == ("2.50.0", "!=8.3.0", "2.53.0")
    ex = excluded_later(changes, "2.53.0", "2.49.0", "8.3.3", _applies())  # only !=8.3.* (2.52.0) excludes 8.3.3
    assert ex is not None and (ex.since, ex.clause) == ("2.52.0", "!=8.3.*")
    assert excluded_later(changes, "2.53.0", "2.49.0", "8.2.1", _applies()) is None  # nothing later excludes it
    assert excluded_later(changes, "2.53.0", "2.53.0", "8.3.0", _applies()) is None  # the newest read: no later
    assert excluded_later(changes, "2.53.0", "2.50.0", "8.3.0", _applies()) is None  # its own bound: pip check's


def test_a_readmission_that_still_excludes_the_bounded_release_is_a_readmission():
    rels = {"1.0": ["dep>=1"], "1.1": ["dep<2"], "1.2": ["dep!=2.0.*,<3"]}
    ex = excluded_later(derive(rels)["dep"], "1.2", "1.0", "2.5", _applies())
    assert ex is not None and (ex.since, ex.readmitted) == ("1.1", "1.2")


def test_lower_bounds_and_pins_of_later_releases_are_not_evidence():
    rels = {"1.0": ["dep>=1"], "1.1": ["dep>=2,<9"], "1.2": ["dep==3.0"]}
    assert excluded_later(derive(rels)["dep"], "1.2", "1.0", "1.5", _applies()) is None


def test_a_floor_raised_for_one_python_only_is_evidence_for_that_python():
    rels = {"2.55.0": ["pydantic<3,>=2.5.0; extra == 'default'"],
            "2.56.0": ["pydantic<3,>=2.5.0; python_version < '3.14' and extra == 'default'",
                       "pydantic<3,>=2.13.0; python_version >= '3.14' and extra == 'default'"]}
    changes = derive(rels)["pydantic"]
    ex = excluded_later(changes, "2.56.0", "2.55.0", "2.12.5", _applies("3.14"))
    assert ex is not None and ex.clause == ">=2.13.0" and ex.readmitted is None
    assert excluded_later(changes, "2.56.0", "2.55.0", "2.12.5", _applies("3.12")) is None


def test_a_floor_for_some_pythons_beside_a_disjoint_range_for_the_others_is_a_build_split_not_evidence():
    # opencv-python-headless's published Requires-Dist (https://pypi.org/project/opencv-python-headless/4.12.0.88/):
    # 4.12.0.88 wheels for Python >= 3.9 are built against numpy 2, those for older Pythons against numpy 1.
    # 4.11.0.86 with numpy 1.26.4 runs cv2.resize / cvtColor / GaussianBlur (a plain venv, Python 3.11).
    rels = {"4.11.0.86": ["numpy>=1.21.2; python_version >= '3.10'", "numpy>=1.23.5; python_version >= '3.11'"],
            "4.12.0.88": ["numpy<2.0; python_version < '3.9'", "numpy<2.3.0,>=2; python_version >= '3.9'"]}
    changes = derive(rels)["numpy"]
    assert excluded_later(changes, "4.12.0.88", "4.11.0.86", "1.26.4", _applies("3.11")) is None
    # the upper clause of the same line still counts: numpy 2.3.1 is above `<2.3.0`
    ex = excluded_later(changes, "4.12.0.88", "4.11.0.86", "2.3.1", _applies("3.11"))
    assert ex is not None and ex.clause == "<2.3.0"


def test_an_unknown_marker_fact_stays_silent():
    rels = {"1.0": ["dep>=1"], "1.1": ["dep<2; platform_machine == 'x86_64'"]}
    assert excluded_later(derive(rels)["dep"], "1.1", "1.0", "2.1", _applies()) is None  # no machine stated


def test_own_metadata_read_by_the_snapshot_wins_over_the_table():
    changes = derive(RAY_LIKE)["click"]
    assert excluded_later(changes, "2.53.0", "2.49.0", "8.3.0", _applies(), own=("click<8.3",)) is None
    assert excluded_later(changes, "2.53.0", "2.49.0", "8.3.0", _applies(), own=()) is None  # not declared


def test_a_malformed_file_names_the_file_and_the_key(tmp_path):
    doc = document("2026-12-03", {"ray": RAY_LIKE})
    assert parse(doc, "x").changes("ray", "click")[0] == Change("2.48.0", ("click>=7.0",))
    bad = json.loads(json.dumps(doc))
    bad["projects"]["ray"]["click"][1]["since"] = "2.40.0"
    with pytest.raises(InputError, match=r"projects\.ray\.click\[1\]\.since.*increasing"):
        parse(bad, "x").changes("ray", "click")
    p = tmp_path / "later-bounds.json"
    p.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON") as e:
        load(str(p))
    assert str(p) in str(e.value)


def test_the_shipped_file_is_what_the_shipped_requirements_table_gives():
    from tools.refresh_knowledge.later_bounds import ROOT, derived, text

    with open(f"{ROOT}/profiles/later-bounds.json", encoding="utf-8") as fh:
        assert fh.read() == text(derived(f"{ROOT}/profiles/requirements")), \
            "run `python -m tools.refresh_knowledge.later_bounds`"


def test_real_table_ray_and_click():
    """PyPI's own metadata: Ray 2.50.0 declares click!=8.3.0, 2.52.0 click!=8.3.*, 2.53.0 drops the bound."""
    t = load()
    ex = excluded_later(t.changes("ray", "click"), t.newest["ray"], "2.49.0", "8.3.0", _applies())
    assert ex is not None and ex.since == "2.50.0" and ex.clause == "!=8.3.0"
    assert ex.readmitted == "2.53.0"
