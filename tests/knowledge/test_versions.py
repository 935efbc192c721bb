"""Version types against the documented release order (docs/versions.md):
a total order that agrees with the release calendar, for CANN, driver and torch-npu strings."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doctor.knowledge.versions import (
    CannVersion,
    DriverVersion,
    base_version,
    parse_pkg_version,
    pkg_satisfies,
)

# Release order as documented (semantic order: alpha builds ship before their RC; T/weekly builds are dev).
CANN_ORDER = [
    "7.0.RC1", "7.0.0", "7.0.1.beta1", "7.0.1", "8.0.T13", "8.0.RC1", "8.0.RC2.alpha003", "8.0.RC2", "8.0.RC3",
    "8.0.0", "8.1.RC1", "8.2.RC1.alpha002", "8.2.RC1.alpha003", "8.2.RC1", "8.2.RC2", "8.3.RC1.alpha001", "8.3.RC1",
    "8.3.RC2", "8.5.0.alpha002", "8.5.0", "8.5.1", "8.5.2", "9.0.0~weekly.20260101.01", "9.0.0-alpha.1",
    "9.0.0-beta.1", "9.0.0-beta.2", "9.0.0-rc.1", "9.0.0", "9.0.1", "9.1.0-beta.1", "9.1.0", "9.2.0~weekly.20260902.01",
    "9.2.0-beta.2", "9.2.0",
]
DRIVER_ORDER = ["23.0.rc3", "23.0.0", "23.0.3", "24.1.rc1", "24.1.rc2", "24.1.rc2.2", "24.1.rc3", "24.1.rc3.5", "24.1.0",
                "25.0.rc1", "25.0.rc1.1", "25.2.0", "25.2.3", "25.3.rc1", "25.5.0", "25.5.2", "26.0.rc1", "26.0.rc2"]
# PEP 440 order, which is what pip resolves with: a .devN build sorts before the rcN of the same release.
TORCH_NPU_ORDER = ["2.1.0rc1", "2.1.0", "2.1.0.post10", "2.5.1.dev20250218", "2.5.1rc1", "2.5.1",
                   "2.5.1.post1.dev20250528", "2.5.1.post1", "2.7.1.dev20250724", "2.7.1rc1", "2.7.1", "2.7.1.post2",
                   "2.10.0rc2", "2.10.0", "2.10.0.post4"]


@given(st.lists(st.sampled_from(range(len(CANN_ORDER))), min_size=2, max_size=8))
def test_cann_sort_matches_release_order(idx):
    texts = [CANN_ORDER[i] for i in idx]
    got = sorted(texts, key=CannVersion)
    assert [CANN_ORDER.index(t) for t in got] == sorted(idx)


@given(st.sampled_from(CANN_ORDER), st.sampled_from(CANN_ORDER))
def test_cann_comparison_agrees_with_index_and_case(a, b):
    va, vb = CannVersion(a), CannVersion(b)
    ia, ib = CANN_ORDER.index(a), CANN_ORDER.index(b)
    assert (va < vb) == (ia < ib) and (va == vb) == (ia == ib)
    assert CannVersion(a.lower()) == va  # docker tags spell 8.3.rc1


@given(st.sampled_from(DRIVER_ORDER), st.sampled_from(DRIVER_ORDER))
def test_driver_comparison_agrees_with_release_order(a, b):
    assert (DriverVersion(a) < DriverVersion(b)) == (DRIVER_ORDER.index(a) < DRIVER_ORDER.index(b))


@given(st.sampled_from(TORCH_NPU_ORDER), st.sampled_from(TORCH_NPU_ORDER))
def test_torch_npu_order(a, b):
    assert (parse_pkg_version(a) < parse_pkg_version(b)) == (TORCH_NPU_ORDER.index(a) < TORCH_NPU_ORDER.index(b))


@pytest.mark.parametrize("text,base", [
    ("2.5.1+cpu", "2.5.1"), ("2.5.1.post1", "2.5.1"), ("2.7.1.dev20250724", "2.7.1"), ("2.1.0.rc1", "2.1.0"),
    ("0.9.1+empty", "0.9.1"), ("2.5.1+cpu.cxx11.abi", "2.5.1"), ("2.1", "2.1.0"), ("1.11.0.rc2 (beta)", "1.11.0"),
])
def test_base_version_of_local_and_post_builds(text, base):
    assert base_version(text) == base


def test_local_builds_satisfy_exact_pins():
    assert pkg_satisfies("2.5.1+cpu", "==2.5.1") is True
    assert pkg_satisfies("0.13.1.dev5+gabc", "==0.13.*") is True
    assert pkg_satisfies("nonsense", "==1.0") is None


def test_series_only_version_is_ambiguous_inside_its_series():
    assert CannVersion("8.3").is_ambiguous_against(CannVersion("8.3.RC1"))
    assert not CannVersion("8.3").is_ambiguous_against(CannVersion("8.2.RC1"))
    assert CannVersion("8.3") > CannVersion("8.2.RC1")


def test_cann_and_driver_do_not_compare():
    with pytest.raises(TypeError):
        _ = CannVersion("8.0.0") < DriverVersion("24.1.rc1")


@pytest.mark.parametrize(("cls", "version", "spec", "want"), [
    ("cann", "8.3.RC1", ">=8.1.RC1,<8.5.0", True),
    ("cann", "9.0.0-beta.1", ">=9.0.0", False),  # a pre-release sorts before its release
    ("cann", "8.5.0", "!=8.5.0", False),
    ("driver", "22.0.0", "<23.0.0", True),
    ("driver", "24.1.rc2", "<23.0.0", False),
    ("cann", "8.5.0", ">=banana", None),
    ("cann", "8.5.0", "~=8.5", None),  # only the comparison operators read as Ascend versions
])
def test_ascend_satisfies_reads_each_clause_as_a_version_of_the_same_kind(cls, version, spec, want) -> None:
    from doctor.knowledge.versions import CannVersion, DriverVersion, ascend_satisfies

    v = (CannVersion if cls == "cann" else DriverVersion)(version)
    assert ascend_satisfies(v, spec) is want


def test_a_cann_pre_release_is_an_alpha_beta_t_weekly_or_rc_build_not_an_rc_era_release():
    from doctor.knowledge.versions import CannVersion

    for pre in ("8.3.RC1.alpha002", "8.0.RC2.alpha003", "8.0.T13", "9.0.0-beta.1", "9.0.0-rc.1", "7.0.1.beta1",
                "9.2.0~weekly.20260902.01"):
        assert CannVersion(pre).is_prerelease, pre
    for rel in ("8.3.RC1", "8.2.RC1", "8.5.0", "9.0.0", "8.5.0.1", "8.3"):
        assert not CannVersion(rel).is_prerelease, rel
