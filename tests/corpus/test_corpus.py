"""The mined corpus loads, is big enough, and the held-out half is explained and diagnosed at the stated rates."""

from __future__ import annotations

from collections import Counter

from tests.corpus.corpus import half, load
from tests.corpus.score import scores, summary

EXPLAIN_TARGET = 0.75
CHECK_TARGET = 0.85


def test_corpus_size_and_spread():
    reports = load()
    assert len(reports) >= 200
    trackers = Counter(r.tracker for r in reports)
    assert len(trackers) >= 10 and max(trackers.values()) < len(reports) / 3
    assert len({r.category for r in reports}) >= 10


def test_split_is_fixed_by_id():
    assert half("vllm-ascend-2674") == half("vllm-ascend-2674")
    halves = Counter(r.half for r in load())
    assert halves["fit"] >= 60 and halves["held-out"] >= 60


def test_every_snapshot_report_states_what_check_must_name():
    for r in load():
        if r.snapshot is not None:
            assert r.check_components, r.id


def test_held_out_logs_are_explained():
    s = scores()[("held-out", "logs")]
    print(summary())
    assert s.total >= 60
    assert s.rate >= EXPLAIN_TARGET, f"held-out explain rate {s}; missed {s.misses}"


def test_held_out_snapshots_are_diagnosed():
    s = scores()[("held-out", "snapshots")]
    assert s.total >= 10
    assert s.rate >= CHECK_TARGET, f"held-out check rate {s}; missed {s.misses}"
