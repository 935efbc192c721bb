"""The mined corpus loads, is big enough, and the held-out half is explained and diagnosed at the stated rates."""

from __future__ import annotations

from collections import Counter

import pytest

from doctor.snapshot.model import snapshot_from_dict
from tests.corpus.corpus import half, load, unread_keys
from tests.corpus.score import scores, summary

# The goal (issue 17) for the held-out half: reached for logs, not yet for snapshots (the xfail test below).
EXPLAIN_TARGET = 0.75
CHECK_TARGET = 0.85
# What the held-out half measured when the signatures and rules of the fitting half were written (84/166 logs,
# 8/18 snapshots), rounded down: a signature or rule change that loses held-out reports fails here. The snapshot
# floor fell from 61 % to 44 % when 5 more held-out reports got the snapshots their stated versions imply.
# Issue 23 (attribution by ownership, 3 inferred reports dropped): 90/164 logs.
# Re-reading fixed samples of reports against their pages dropped 5 more held-out reports (a log line not on
# the page, causes the page does not state, a snapshot fact the thread does not state) and one held-out snapshot
# whose facts the page does not state: 86/160 logs, 6/16 snapshots; the floors follow the measured rates down.
# Issue 23, second round (failure classes, message owners, the last resort; no held-out report read): 96/160 logs.
# The re-read of the other three fixed samples dropped 3 more held-out reports (a log line the page does not quote,
# a cause the thread does not state, a snapshot pairing only in a screenshot) and one held-out snapshot whose device
# ids the thread contradicts: 95/158 logs, 4/14 snapshots; the floors follow the measured rates.
# This session's documentation harvest (vllm-ascend, torch_npu, CANN and the frameworks' FAQs, read whole) and the
# check rules from the projects' own tables: 114/158 logs, 5/14 snapshots. Most of the log gain is on reports whose
# page a signature now cites (a harvested FAQ's other entries): `python -m tests.corpus.score --by-page` prints the
# split; the reports whose page no signature cites went 55/80 -> 57/80.
# The fifth session's class-level rounds (no held-out report read; `--by-page` not-cited 57/80 -> 59/80) and check's
# class rules: 118/158 logs (74.7 %), 6/14 snapshots; the floors follow the measured rates up.
# The sixth session's class rules (attribution from primary sources and real runs; no held-out report read):
# 119/158 logs (75.3 %): the logs' goal holds, by one report, and is now asserted.
# The seventh session's rules read from the stack's own sources (torch_npu's SoC table per release moved one, measured
# by bisecting the aggregate over the merges; no held-out report read for a rule): 7/14 snapshots.
EXPLAIN_FLOOR = 0.75
CHECK_FLOOR = 0.50


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


def test_every_snapshot_fact_is_under_a_key_the_model_reads():
    # keys doctor.snapshot/1 does not know load into `extra`, which no check reads: such a snapshot would be scored
    # on less than its report states (ids only for a report that has such a key; no verdict is computed)
    unread = {r.id: keys for r in load() if r.snapshot is not None
              and (keys := unread_keys(snapshot_from_dict(r.snapshot_document(), source=r.id)))}
    assert not unread


def test_held_out_logs_are_explained():
    s = scores()[("held-out", "logs")]
    print(summary())
    assert s.total >= 60
    assert s.rate >= EXPLAIN_FLOOR, f"held-out explain rate {s} (held-out ids are never printed)"


def test_held_out_snapshots_are_diagnosed():
    s = scores()[("held-out", "snapshots")]
    assert s.total >= 10
    assert s.rate >= CHECK_FLOOR, f"held-out check rate {s} (held-out ids are never printed)"


def test_fitting_half_is_explained_and_diagnosed():
    # One fitting snapshot (ascend-pytorch-99: torch-npu 2.7.1 with CANN 8.3.RC1) stays missed on purpose: its
    # thread calls a pairing incompatible that Ascend/pytorch's own table lists, so no rule may contradict the table.
    assert scores()[("fit", "logs")].rate >= 0.9 and scores()[("fit", "snapshots")].rate >= 0.85


def test_held_out_logs_reach_the_goal():
    assert scores()[("held-out", "logs")].rate >= EXPLAIN_TARGET


@pytest.mark.xfail(reason="held-out check rate is 50 % (7/14), the goal is 85 % (README, explain section)",
                   strict=False)
def test_held_out_snapshots_reach_the_goal():
    assert scores()[("held-out", "snapshots")].rate >= CHECK_TARGET


def test_by_category_prints_aggregates_only():
    from tests.corpus.score import category_table

    table = category_table()
    assert "version-mismatch" in table and "held-out" in table
    assert not any(r.id in table for r in load())


def test_a_page_is_the_same_at_every_commit_and_an_issue_is_its_pull_request():
    from tests.corpus.score import page_key

    a = page_key("https://github.com/vllm-project/vllm-ascend/blob/v0.9.1/docs/source/faqs.md")
    b = page_key("https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff/docs/source/faqs.md#section")
    assert a == b and a != page_key("https://github.com/vllm-project/vllm-ascend/blob/v0.9.1/README.md")
    assert page_key("https://github.com/Ascend/pytorch/issues/99") == page_key("https://github.com/ascend/pytorch/pull/99")
    assert page_key("https://www.hiascend.com/document/detail/zh/canncommercial/80RC2/troubleshooting_0019.html") == \
        page_key("https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/900/troubleshooting_0019.html")


def test_the_fit_flag_runs_and_names_only_the_fitting_half(monkeypatch):
    from tests.corpus import score

    ran = []
    monkeypatch.setattr(score, "explained", lambda r: ran.append(r) or False)
    text = score.fit_summary()
    assert ran and all(r.half == "fit" for r in ran)
    assert not any(r.id in text for r in load() if r.half == "held-out")
    assert all(r.id in text for r in ran)
