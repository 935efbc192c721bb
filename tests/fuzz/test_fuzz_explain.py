"""The log matcher: arbitrary text and bytes never raise; every finding is well-formed."""

import io

from hypothesis import given
from hypothesis import strategies as st

from doctor.explain.signatures import explain_lines, load_signatures, scan_stream

from ._budget import fuzz

DB = load_signatures()
EXAMPLES = [s.example for s in DB.signatures if getattr(s, "example", None)]


@fuzz
@given(st.lists(st.one_of(st.text(max_size=120), st.sampled_from(EXAMPLES)), max_size=12))
def test_lines(lines):
    for f in explain_lines(lines, db=DB):
        assert f.id and f.components and f.title


@fuzz
@given(st.binary(max_size=600))
def test_bytes(raw):
    findings, n = scan_stream(io.BytesIO(raw), db=DB)
    assert n >= 0 and findings
