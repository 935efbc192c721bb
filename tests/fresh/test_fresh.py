"""The fresh test sets load, every report is valid, and none of it comes from the mined corpus or from another
fresh set (no rate asserted: tests/fresh/score.py measures it)."""

from __future__ import annotations

import pytest

from tests.corpus.corpus import CATEGORIES, load, load_file
from tests.fresh import score
from tests.fresh.score import (
    REPORTS,
    REPORTS2,
    REPORTS3,
    REPORTS4,
    REPORTS5,
    REPORTS6,
    REPORTS7,
    REPORTS8,
    REPORTS9,
    REPORTS10,
    REPORTS11,
    REPORTS12,
    REPORTS13,
)

# (file, the number of reports it was committed with): a set may grow, never shrink below what was measured
FRESH_SETS = [(REPORTS, 30), (REPORTS2, 40), (REPORTS3, 28), (REPORTS4, 25), (REPORTS5, 23), (REPORTS6, 16),
              (REPORTS7, 15), (REPORTS8, 15), (REPORTS9, 10), (REPORTS10, 7), (REPORTS11, 11),
              (REPORTS12, 8), (REPORTS13, 6)]
# where a fresh report may come from: GitHub threads, and (from the fourth set on) hiascend.com documentation pages
SOURCES = ("https://github.com/", "https://www.hiascend.com/")


@pytest.mark.parametrize(("path", "size"), FRESH_SETS, ids=[p.name for p, _ in FRESH_SETS])
def test_fresh_reports_load_and_are_valid(path, size):
    reports = load_file(path)
    assert len(reports) >= size
    for r in reports:
        assert r.log, r.id  # every fresh report is scored on its log lines
        assert r.category in CATEGORIES and 1 <= len(r.components) <= 3, r.id
        assert r.url.startswith(SOURCES), r.id
    assert len({r.url for r in reports}) == len(reports)


@pytest.mark.parametrize("path", [p for p, _ in FRESH_SETS], ids=[p.name for p, _ in FRESH_SETS])
def test_fresh_reports_are_not_in_the_corpus(path):
    fresh = load_file(path)
    mined = load()
    assert not {r.url for r in fresh} & {r.url for r in mined}
    assert not {r.id for r in fresh} & {r.id for r in mined}


@pytest.mark.parametrize(("a", "b"), [(REPORTS, REPORTS2), (REPORTS, REPORTS3), (REPORTS2, REPORTS3),
                                      (REPORTS, REPORTS4), (REPORTS2, REPORTS4), (REPORTS3, REPORTS4),
                                      (REPORTS, REPORTS5), (REPORTS2, REPORTS5), (REPORTS3, REPORTS5),
                                      (REPORTS4, REPORTS5), (REPORTS, REPORTS6), (REPORTS2, REPORTS6),
                                      (REPORTS3, REPORTS6), (REPORTS4, REPORTS6), (REPORTS5, REPORTS6),
                                      (REPORTS, REPORTS7), (REPORTS2, REPORTS7), (REPORTS3, REPORTS7),
                                      (REPORTS4, REPORTS7), (REPORTS5, REPORTS7), (REPORTS6, REPORTS7),
                                      (REPORTS, REPORTS8), (REPORTS2, REPORTS8), (REPORTS3, REPORTS8),
                                      (REPORTS4, REPORTS8), (REPORTS5, REPORTS8), (REPORTS6, REPORTS8),
                                      (REPORTS7, REPORTS8), (REPORTS, REPORTS9), (REPORTS2, REPORTS9),
                                      (REPORTS3, REPORTS9), (REPORTS4, REPORTS9), (REPORTS5, REPORTS9),
                                      (REPORTS6, REPORTS9), (REPORTS7, REPORTS9), (REPORTS8, REPORTS9),
                                      (REPORTS, REPORTS10), (REPORTS2, REPORTS10), (REPORTS3, REPORTS10),
                                      (REPORTS4, REPORTS10), (REPORTS5, REPORTS10), (REPORTS6, REPORTS10),
                                      (REPORTS7, REPORTS10), (REPORTS8, REPORTS10), (REPORTS9, REPORTS10),
                                      (REPORTS, REPORTS11), (REPORTS2, REPORTS11), (REPORTS3, REPORTS11),
                                      (REPORTS4, REPORTS11), (REPORTS5, REPORTS11), (REPORTS6, REPORTS11),
                                      (REPORTS7, REPORTS11), (REPORTS8, REPORTS11), (REPORTS9, REPORTS11),
                                      (REPORTS10, REPORTS11),
                                      (REPORTS, REPORTS12), (REPORTS2, REPORTS12), (REPORTS3, REPORTS12),
                                      (REPORTS4, REPORTS12), (REPORTS5, REPORTS12), (REPORTS6, REPORTS12),
                                      (REPORTS7, REPORTS12), (REPORTS8, REPORTS12), (REPORTS9, REPORTS12),
                                      (REPORTS10, REPORTS12), (REPORTS11, REPORTS12),
                                      *((other, REPORTS13) for other in (REPORTS, REPORTS2, REPORTS3, REPORTS4,
                                                                         REPORTS5, REPORTS6, REPORTS7, REPORTS8,
                                                                         REPORTS9, REPORTS10, REPORTS11, REPORTS12))],
                         ids=["1-2", "1-3", "2-3", "1-4", "2-4", "3-4", "1-5", "2-5", "3-5", "4-5", "1-6", "2-6", "3-6",
                              "4-6", "5-6", "1-7", "2-7", "3-7", "4-7", "5-7", "6-7", "1-8", "2-8", "3-8", "4-8", "5-8",
                              "6-8", "7-8", "1-9", "2-9", "3-9", "4-9", "5-9", "6-9", "7-9", "8-9", "1-10", "2-10",
                              "3-10", "4-10", "5-10", "6-10", "7-10", "8-10", "9-10", "1-11", "2-11", "3-11",
                              "4-11", "5-11", "6-11", "7-11", "8-11", "9-11", "10-11", "1-12", "2-12", "3-12",
                              "4-12", "5-12", "6-12", "7-12", "8-12", "9-12", "10-12", "11-12",
                              *(f"{n}-13" for n in range(1, 13))])
def test_the_fresh_sets_do_not_overlap(a, b):
    first, second = load_file(a), load_file(b)
    assert not {r.url for r in first} & {r.url for r in second}
    assert not {r.id for r in first} & {r.id for r in second}


def test_load_file_rejects_a_duplicate_id(tmp_path):
    entry = '[[report]]\nid = "x-1"\nurl = "https://example.org/1"\ncategory = "config"\ncomponents = ["config"]\n' \
            'log = "boom"\ncause = "c"\nfix = "f"\n'
    path = tmp_path / "dup.toml"
    path.write_text(entry + entry, encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate report id 'x-1'"):
        load_file(path)


def test_score_resolves_a_file_name_next_to_it_and_defaults_to_the_first_set():
    assert score.resolve(None) == REPORTS
    assert score.resolve("reports2.toml") == REPORTS2
    assert score.resolve(str(REPORTS2)) == REPORTS2


def test_score_refuses_a_missing_file_with_exit_2(tmp_path, capsys):
    assert score.main([str(tmp_path / "nope.toml")]) == 2
    assert "no reports file" in capsys.readouterr().err
    assert score.main(["a.toml", "b.toml"]) == 2
