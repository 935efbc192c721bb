"""The fresh test set loads, every report is valid, and none of it comes from the mined corpus (no rate asserted:
tests/fresh/score.py measures it)."""

from __future__ import annotations

import pytest

from tests.corpus.corpus import CATEGORIES, load, load_file
from tests.fresh.score import REPORTS


def test_fresh_reports_load_and_are_valid():
    reports = load_file(REPORTS)
    assert len(reports) >= 30
    for r in reports:
        assert r.log, r.id  # every fresh report is scored on its log lines
        assert r.category in CATEGORIES and 1 <= len(r.components) <= 3, r.id
        assert r.url.startswith("https://github.com/"), r.id
    assert len({r.url for r in reports}) == len(reports)


def test_fresh_reports_are_not_in_the_corpus():
    fresh = load_file(REPORTS)
    mined = load()
    assert not {r.url for r in fresh} & {r.url for r in mined}
    assert not {r.id for r in fresh} & {r.id for r in mined}


def test_load_file_rejects_a_duplicate_id(tmp_path):
    entry = '[[report]]\nid = "x-1"\nurl = "https://example.org/1"\ncategory = "config"\ncomponents = ["config"]\n' \
            'log = "boom"\ncause = "c"\nfix = "f"\n'
    path = tmp_path / "dup.toml"
    path.write_text(entry + entry, encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate report id 'x-1'"):
        load_file(path)
