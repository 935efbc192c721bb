"""Every real failure case in shared/cases/ that has a snapshot is diagnosed: a finding with one of the
expected components at the expected severity or worse."""

from __future__ import annotations

import json

import pytest

from doctor.checks.diagnose import diagnose
from doctor.snapshot.model import load_document
from tests.conftest import SHARED

RANK = {"info": 0, "warning": 1, "error": 2}


def _cases():
    manifest = SHARED / "cases" / "manifest.json"
    if not manifest.is_file():
        return []
    return [c for c in json.loads(manifest.read_text())["cases"] if c.get("snapshot")]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_case_is_diagnosed(case, shared_dir):
    snap = load_document(str(shared_dir / "cases" / case["snapshot"]))
    report = diagnose([(None, snap, None)])
    want = case["expect"]
    hits = [f for f in report.findings
            if RANK[f.severity.value] >= RANK[want["min_severity"]] and set(f.components) & set(want["components"])]
    assert hits, (case["id"], [(f.id, f.severity.value, f.components) for f in report.findings])
    assert report.exit_code() == (1 if want["min_severity"] == "error" else 0)


def test_there_are_cases(shared_dir):
    assert len(_cases()) >= 15
