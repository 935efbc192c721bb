"""Version parsers: any text parses or is refused with InvalidVersion; parsed values order totally."""

from hypothesis import given
from hypothesis import strategies as st
from packaging.version import InvalidVersion

from doctor.knowledge.versions import (
    CannVersion,
    DriverVersion,
    base_version,
    parse_pkg_version,
    pkg_satisfies,
)

from ._budget import fuzz

_parts = st.sampled_from(["8", "9", "0", "1", "3", "5", "RC1", "RC2", "rc3", "T13", "alpha003", "beta1", "-beta.1",
                          "~weekly", "20260902", "01", "B028", "post1", "+cpu", "dev20250724", "x", ""])
version_like = st.lists(_parts, min_size=1, max_size=7).map(".".join)


@fuzz
@given(st.one_of(st.text(max_size=40), version_like))
def test_cann_and_driver_parse_or_refuse(text):
    for cls in (CannVersion, DriverVersion):
        try:
            v = cls(text)
        except InvalidVersion:
            assert cls.try_parse(text) is None
            continue
        assert v == cls(text) and not v < v and str(v) == text.strip()


@fuzz
@given(st.lists(version_like, min_size=3, max_size=3))
def test_cann_order_is_total_and_transitive(texts):
    vs = [v for v in (CannVersion.try_parse(t) for t in texts) if v is not None]
    for a in vs:
        for b in vs:
            assert (a < b) + (b < a) + (a == b) == 1
            for c in vs:
                if a < b and b < c:
                    assert a < c


@fuzz
@given(st.one_of(st.text(max_size=40), version_like), st.text(max_size=20))
def test_package_version_helpers_never_raise(text, spec):
    parse_pkg_version(text)
    base_version(text)
    pkg_satisfies(text, spec)


@fuzz
@given(version_like, st.one_of(st.text(max_size=30), st.lists(st.sampled_from(
    [">=", "<=", "==", "!=", ">", "<", "~=", "", " "]), min_size=1, max_size=2).map("".join).flatmap(
    lambda op: version_like.map(lambda v: op + v))), st.booleans())
def test_ascend_clauses_answer_or_say_unreadable(text, spec, driver):
    """A CANN or driver version against any clause text: True, False, or None (a clause it cannot read); never raises."""
    from doctor.knowledge.versions import ascend_satisfies

    v = (DriverVersion if driver else CannVersion).try_parse(text)
    if v is None:
        return
    assert ascend_satisfies(v, spec) in (True, False, None)
    assert ascend_satisfies(v, f"{spec},{spec}") in (True, False, None)
