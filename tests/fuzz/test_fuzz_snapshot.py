"""Snapshot/cluster loader: arbitrary bytes and arbitrary JSON either load or raise InputError."""

import json

from hypothesis import given
from hypothesis import strategies as st

from doctor.errors import InputError
from doctor.snapshot.model import parse_document

from ._budget import fuzz

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=30,
)
keys = st.sampled_from(["host", "python", "packages", "modules", "ascend", "env", "imports", "network", "ray",
                        "complete", "toolkit", "devices", "id", "version", "origins", "nodes", "snapshot", "node"])
shaped = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=25,
)


def _load(raw):
    try:
        doc = parse_document(raw, "fuzz.json")
    except InputError as e:
        assert str(e).startswith("fuzz.json")
        return
    json.dumps(doc.to_dict())  # whatever loads can be written back


@fuzz
@given(st.binary(max_size=200))
def test_arbitrary_bytes(raw):
    _load(raw)


@fuzz
@given(st.one_of(json_values, shaped), st.sampled_from(["doctor.snapshot/1", "doctor.cluster/1", None]))
def test_arbitrary_json(body, schema):
    if isinstance(body, dict) and schema:
        body = {**body, "schema": schema}
    _load(json.dumps(body))
