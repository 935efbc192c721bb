"""The fresh snapshot set (tests/fresh/snapshots.toml) loads, every report is valid and carries a snapshot with
its check labels, and none of it comes from the mined corpus or the fresh log set (no rate asserted:
tests/fresh/score_check.py measures it)."""

from __future__ import annotations

import re
import sys

import pytest

from doctor.snapshot.model import snapshot_from_dict
from tests.corpus.corpus import CATEGORIES, load, load_file, unread_keys
from tests.fresh import score_check
from tests.fresh.score_check import (
    SNAPSHOTS,
    SNAPSHOTS2,
    SNAPSHOTS5,
    SNAPSHOTS6,
    SNAPSHOTS7,
    SNAPSHOTS8,
    SNAPSHOTS9,
    SNAPSHOTS10,
    SNAPSHOTS11,
    SNAPSHOTS12,
    SNAPSHOTS13,
    SNAPSHOTS14,
    SNAPSHOTS15,
    SNAPSHOTS16,
    SNAPSHOTS17,
    SNAPSHOTS18,
    SNAPSHOTS19,
    SNAPSHOTS20,
    SNAPSHOTS21,
    SNAPSHOTS22,
    SNAPSHOTS23,
    SNAPSHOTS24,
)

SNAPSHOTS3 = SNAPSHOTS.parent / "snapshots3.toml"
FLOOR8 = 19  # snapshots8's size when mined (a tuning set since 2026-12-06; 1/19 before that day)
FLOOR10 = 3  # snapshots10's size when mined; its figure then was 0/3 (python -m tests.fresh.score_check snapshots10.toml)
FLOOR11 = 10  # snapshots11's size when mined (python -m tests.fresh.score_check snapshots11.toml gives its figure)
FLOOR12 = 10  # snapshots12's size when mined (4/10 then)
FLOOR13 = 10  # snapshots13's size when mined (1/10 then)
FLOOR14 = 4  # snapshots14's size when mined (2/4 then)
FLOOR15 = 8  # snapshots15's size when mined (never tuned: a count, not a rate)
FLOOR16 = 5  # snapshots16's size when mined (python -m tests.fresh.score_check snapshots16.toml gives its figure)
FLOOR17 = 9  # snapshots17's size when mined (python -m tests.fresh.score_check snapshots17.toml gives its figure)
FLOOR18 = 7  # snapshots18's size when mined (never tuned: a count, not a rate)
FLOOR19 = 4  # snapshots19's size when mined (never tuned: a count, not a rate)
FLOOR20 = 4  # snapshots20's size when mined (python -m tests.fresh.score_check snapshots20.toml gives its figure)
FLOOR21 = 4  # snapshots21's size when mined (python -m tests.fresh.score_check snapshots21.toml gives its figure)
FLOOR22 = 3  # snapshots22's size when mined (never tuned: a count, not a rate)
FLOOR23 = 4  # snapshots23's size when mined (python -m tests.fresh.score_check snapshots23.toml gives its figure)
FLOOR24 = 2  # snapshots24's size when mined (python -m tests.fresh.score_check snapshots24.toml gives its figure)
PAGE_SETS = (SNAPSHOTS17, SNAPSHOTS18)  # mined from stored web pages and vendor documentation, not GitHub threads
SNAPSHOTS4 = SNAPSHOTS.parent / "snapshots4.toml"

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.mark.parametrize(("path", "size"), [(SNAPSHOTS, 15), (SNAPSHOTS2, 14), (SNAPSHOTS3, 12), (SNAPSHOTS4, 10),
                                            (SNAPSHOTS5, 11), (SNAPSHOTS6, 11), (SNAPSHOTS7, 19), (SNAPSHOTS8, FLOOR8),
                                            (SNAPSHOTS9, 9), (SNAPSHOTS10, FLOOR10), (SNAPSHOTS11, FLOOR11),
                                            (SNAPSHOTS12, FLOOR12), (SNAPSHOTS13, FLOOR13), (SNAPSHOTS14, FLOOR14),
                                            (SNAPSHOTS15, FLOOR15), (SNAPSHOTS16, FLOOR16), (SNAPSHOTS17, FLOOR17),
                                            (SNAPSHOTS18, FLOOR18), (SNAPSHOTS19, FLOOR19), (SNAPSHOTS20, FLOOR20),
                                            (SNAPSHOTS21, FLOOR21), (SNAPSHOTS22, FLOOR22), (SNAPSHOTS23, FLOOR23),
                                            (SNAPSHOTS24, FLOOR24)],
                         ids=["set1", "set2", "set3", "set4", "set5", "set6", "set7", "set8", "set9", "set10",
                              "set11", "set12", "set13", "set14", "set15", "set16", "set17", "set18", "set19",
                              "set20", "set21", "set22", "set23", "set24"])
def test_fresh_snapshots_load_and_are_valid(path, size):
    reports = load_file(path)
    assert len(reports) >= size
    for r in reports:
        assert r.snapshot is not None and r.check_components, r.id
        assert r.category in CATEGORIES and 1 <= len(r.check_components) <= 3, r.id
        # every other set's reports are GitHub threads; the page sets' are web pages (a vendor FAQ, a forum or blog
        # page) or a vendor document at a commit, never an issue or PR thread
        if path in PAGE_SETS:
            assert r.url.startswith("https://") and len(_thread(r.url)) == 1, r.id
        else:
            assert r.url.startswith("https://github.com/"), r.id
        snap = snapshot_from_dict(r.snapshot_document(), source=r.id)  # a valid doctor.snapshot/1
        assert not unread_keys(snap), (r.id, unread_keys(snap))  # every stated fact under a key a check reads
    assert len({r.url for r in reports}) == len(reports)


@pytest.mark.parametrize("path", [SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6, SNAPSHOTS7,
                                  SNAPSHOTS8, SNAPSHOTS9, SNAPSHOTS10, SNAPSHOTS11, SNAPSHOTS12, SNAPSHOTS13, SNAPSHOTS14,
                                  SNAPSHOTS15, SNAPSHOTS16, SNAPSHOTS17, SNAPSHOTS18, SNAPSHOTS19, SNAPSHOTS20,
                                  SNAPSHOTS21, SNAPSHOTS22, SNAPSHOTS23, SNAPSHOTS24],
                         ids=["set1", "set2", "set3", "set4", "set5", "set6", "set7", "set8", "set9", "set10",
                              "set11", "set12", "set13", "set14", "set15", "set16", "set17", "set18", "set19",
                              "set20", "set21", "set22", "set23", "set24"])
def test_fresh_snapshots_are_not_in_the_corpus_nor_the_fresh_log_sets(path):
    fresh = load_file(path)
    mined = load()
    logs = [e for name in ("reports.toml", "reports2.toml", "reports3.toml")
            for e in tomllib.loads((SNAPSHOTS.parent / name).read_text(encoding="utf-8")).get("report", [])]
    seen_urls = {r.url for r in mined} | {e["url"] for e in logs}
    seen_ids = {r.id for r in mined} | {e["id"] for e in logs}
    assert not {r.url for r in fresh} & seen_urls
    assert not {r.id for r in fresh} & seen_ids


def test_the_two_snapshot_sets_do_not_overlap_and_the_scorer_takes_either():
    first, second = load_file(SNAPSHOTS), load_file(SNAPSHOTS2)
    assert not {r.url for r in first} & {r.url for r in second}
    assert not {r.id for r in first} & {r.id for r in second}
    assert score_check.main(["nope.toml"]) == 2 and score_check.main(["a", "b"]) == 2


def test_the_third_snapshot_set_overlaps_neither_earlier_set():
    third = load_file(SNAPSHOTS3)
    earlier = load_file(SNAPSHOTS) + load_file(SNAPSHOTS2)
    assert not {r.url for r in third} & {r.url for r in earlier}
    assert not {r.id for r in third} & {r.id for r in earlier}


def test_the_fourth_snapshot_set_overlaps_no_earlier_set():
    fourth = load_file(SNAPSHOTS4)
    earlier = load_file(SNAPSHOTS) + load_file(SNAPSHOTS2) + load_file(SNAPSHOTS3)
    assert not {r.url for r in fourth} & {r.url for r in earlier}
    assert not {r.id for r in fourth} & {r.id for r in earlier}


def test_the_fifth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set():
    """snapshots5 (the never-tuned measure of `doctor check` until 2026-12-04, a tuning set since): none of its threads
    may come from an earlier snapshot set or any fresh log set (reports*.toml, including the never-tuned
    reports3/4/5), by URL or by id."""
    fifth = load_file(SNAPSHOTS5)
    earlier = load_file(SNAPSHOTS) + load_file(SNAPSHOTS2) + load_file(SNAPSHOTS3) + load_file(SNAPSHOTS4)
    logs = [e for path in sorted(SNAPSHOTS.parent.glob("reports*.toml"))
            for e in tomllib.loads(path.read_text(encoding="utf-8")).get("report", [])]
    assert not {r.url for r in fifth} & ({r.url for r in earlier} | {e["url"] for e in logs})
    assert not {r.id for r in fifth} & ({r.id for r in earlier} | {e["id"] for e in logs})


def _thread(url: str) -> tuple[str, ...]:
    """A thread by repository name + issue/PR number (an owner move or a pull/issues spelling is the same thread)."""
    parts = url.lower().rstrip("/").split("/")
    return (parts[4], parts[6]) if len(parts) > 6 and parts[5] in ("issues", "pull") else (url.lower(),)


def _fresh_logs() -> list[dict]:
    return [e for path in sorted(SNAPSHOTS.parent.glob("reports*.toml"))
            for e in tomllib.loads(path.read_text(encoding="utf-8")).get("report", [])]


def test_the_sixth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set():
    """snapshots6 (issue 22's tuning set) shares no thread with snapshots1-5 or any fresh log set (reports*.toml),
    by URL, by id, or by repository + issue/PR number (an owner move or a pull/issues spelling is the same thread)."""
    sixth = load_file(SNAPSHOTS6)
    earlier = [r for p in (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5) for r in load_file(p)]
    logs, mined = _fresh_logs(), load()
    seen = {_thread(r.url) for r in earlier + mined} | {_thread(e["url"]) for e in logs}
    assert not {_thread(r.url) for r in sixth} & seen
    assert not {r.id for r in sixth} & ({r.id for r in earlier + mined} | {e["id"] for e in logs})


def _overlaps_nothing_before(new: list, before: tuple) -> None:
    """No thread of `new` is in the sets `before`, the corpus or any fresh log set: by URL, by id, or by repository
    name + issue/PR number (an owner move or a pull/issues spelling is the same thread)."""
    earlier = [r for p in before for r in load_file(p)]
    logs, mined = _fresh_logs(), load()
    seen = {_thread(r.url) for r in earlier + mined} | {_thread(e["url"]) for e in logs}
    assert not {_thread(r.url) for r in new} & seen
    assert not {r.id for r in new} & ({r.id for r in earlier + mined} | {e["id"] for e in logs})


def _cited_nowhere(reports: list) -> None:
    """No thread of `reports` is cited by the doctor's code, profiles, docs or README (a rule written from it would
    make it a tuned report)."""
    root = SNAPSHOTS.parent.parent.parent
    cited = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                      for d in ("doctor", "profiles", "docs") for p in sorted((root / d).rglob("*"))
                      if p.is_file() and p.suffix in (".py", ".toml", ".json", ".md", ".yaml", ".txt"))
    cited += (root / "README.md").read_text(encoding="utf-8")
    for r in reports:
        thread = _thread(r.url)
        if len(thread) == 1:  # a web page: cited by its address (scheme and trailing slash aside)
            page = r.url.lower().split("://", 1)[1].rstrip("/")
            assert page not in cited.lower(), r.id
            continue
        repo, number = thread
        assert not re.search(rf"{re.escape(repo)}/(issues|pull)/{number}(?!\d)", cited, re.IGNORECASE), r.id


def test_the_seventh_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots7 (never tuned until 2026-12-04, issue 22) shares no thread with snapshots1-6, any fresh log set or
    the corpus, and none of its threads is cited by the doctor."""
    seventh = load_file(SNAPSHOTS7)
    _overlaps_nothing_before(seventh, (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6))
    _cited_nowhere(seventh)


def test_the_eighth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots8 (never tuned until 2026-12-06, a tuning set since; issue 22, hsnap14) shares no thread with snapshots1-7, any fresh log set or the
    corpus, and none of its threads is cited by the doctor."""
    eighth = load_file(SNAPSHOTS8)
    _overlaps_nothing_before(eighth, (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6,
                                      SNAPSHOTS7))
    _cited_nowhere(eighth)


def test_the_ninth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots9 (htune15's Ascend-focused tuning set, issue 22) shares no thread with snapshots1-8 (vllm-ascend
    14928, mined into both at once, was kept in 8, then never tuned), any fresh log set or the corpus."""
    _overlaps_nothing_before(load_file(SNAPSHOTS9), (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5,
                                                     SNAPSHOTS6, SNAPSHOTS7, SNAPSHOTS8))


def test_the_tenth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots10 (hmine21, issue 22: real ImportError threads for the import-surface check) shares no thread with
    snapshots1-9, any fresh log set or the corpus, and none of its threads is cited by the doctor."""
    tenth = load_file(SNAPSHOTS10)
    _overlaps_nothing_before(tenth, (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6,
                                     SNAPSHOTS7, SNAPSHOTS8, SNAPSHOTS9))
    _cited_nowhere(tenth)


def test_the_eleventh_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots11 (hmine22, issue 22: vLLM Ascend device, communication and version-mismatch threads) shares no
    thread with snapshots1-10, any fresh log set or the corpus. It is a tuning set: the torch-pin rule for main builds
    (doctor/checks/vllm.py) cites its vllm-ascend-15035, the known-bad row for transformers beside vLLM 0.10.0 its
    vllm-ascend-2034 and the CANN pre-release check its vllm-ascend-3137."""
    eleventh = load_file(SNAPSHOTS11)
    _overlaps_nothing_before(eleventh, (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6,
                                        SNAPSHOTS7, SNAPSHOTS8, SNAPSHOTS9, SNAPSHOTS10))


def test_the_twelfth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots12 (hmine23, issue 22: Ascend threads outside the vLLM Ascend tracker) shares no thread with
    snapshots1-11, any fresh log set or the corpus, and none of its threads is cited by the doctor."""
    twelfth = load_file(SNAPSHOTS12)
    _overlaps_nothing_before(twelfth, (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6,
                                       SNAPSHOTS7, SNAPSHOTS8, SNAPSHOTS9, SNAPSHOTS10, SNAPSHOTS11))
    _cited_nowhere(twelfth)


def test_the_thirteenth_and_fourteenth_snapshot_sets_overlap_no_earlier_set_nor_the_corpus():
    """snapshots13 and snapshots14 (hmine25 / hmine26, issue 22: version-mismatch threads, mined at the same time)
    share no thread with snapshots1-12, any fresh log set, the corpus, or each other. They are tuning sets: the
    known-bad row for torch-npu 2.10.0.post4 cites three of snapshots13's threads, the transformers 'aimv2' row its
    vllm-ascend-2046, and the NPU rotary-embedding row snapshots14's transformers-38189."""
    earlier = (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6, SNAPSHOTS7, SNAPSHOTS8,
               SNAPSHOTS9, SNAPSHOTS10, SNAPSHOTS11, SNAPSHOTS12)
    _overlaps_nothing_before(load_file(SNAPSHOTS13), earlier)
    _overlaps_nothing_before(load_file(SNAPSHOTS14), (*earlier, SNAPSHOTS13))


def test_the_fifteenth_snapshot_set_is_never_tuned_and_overlaps_nothing():
    """snapshots15 (hnever27, issue 22: environment values that broke an Ascend run) is NEVER TUNED: it shares no
    thread with snapshots1-14, any fresh log set or the corpus, and none of its threads is cited by the doctor."""
    fifteenth = load_file(SNAPSHOTS15)
    _overlaps_nothing_before(fifteenth, (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6,
                                         SNAPSHOTS7, SNAPSHOTS8, SNAPSHOTS9, SNAPSHOTS10, SNAPSHOTS11, SNAPSHOTS12,
                                         SNAPSHOTS13, SNAPSHOTS14))
    _cited_nowhere(fifteenth)


def test_the_sixteenth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots16 (hsnap60, issue 22: Ascend device and version-mismatch threads) shares no thread with
    snapshots1-15, any fresh log set or the corpus. It is a tuning set: class rules may cite its threads."""
    _overlaps_nothing_before(load_file(SNAPSHOTS16), (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5,
                                                      SNAPSHOTS6, SNAPSHOTS7, SNAPSHOTS8, SNAPSHOTS9, SNAPSHOTS10,
                                                      SNAPSHOTS11, SNAPSHOTS12, SNAPSHOTS13, SNAPSHOTS14,
                                                      SNAPSHOTS15))


def test_the_page_sets_overlap_no_earlier_set_and_the_never_tuned_one_is_cited_nowhere():
    """snapshots17 (a tuning set) and snapshots18 (NEVER TUNED) (hpages92, issue 22: vendor FAQ / troubleshooting pages,
    a blog post, mined from the search tool's stored web pages and documentation and split by alternation) share no
    page with snapshots1-16, any fresh log set, the corpus, or each other; none of snapshots18's pages is cited by the
    doctor (a rule written from one would make it a tuned report)."""
    earlier = (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6, SNAPSHOTS7, SNAPSHOTS8,
               SNAPSHOTS9, SNAPSHOTS10, SNAPSHOTS11, SNAPSHOTS12, SNAPSHOTS13, SNAPSHOTS14, SNAPSHOTS15, SNAPSHOTS16)
    _overlaps_nothing_before(load_file(SNAPSHOTS17), earlier)
    _overlaps_nothing_before(load_file(SNAPSHOTS18), (*earlier, SNAPSHOTS17))
    _cited_nowhere(load_file(SNAPSHOTS18))


def test_the_nineteenth_and_twentieth_snapshot_sets_overlap_nothing_and_the_never_tuned_one_is_cited_nowhere():
    """snapshots19 (NEVER TUNED) and snapshots20 (a tuning set) (h103, issue 22: GitHub threads mined together and split
    by alternation) share no thread with snapshots1-18, any fresh log set, the corpus, or each other, by URL, id or
    repository + issue/PR number; none of snapshots19's threads is cited by the doctor (a rule written from one would
    make it a tuned report)."""
    earlier = (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6, SNAPSHOTS7, SNAPSHOTS8,
               SNAPSHOTS9, SNAPSHOTS10, SNAPSHOTS11, SNAPSHOTS12, SNAPSHOTS13, SNAPSHOTS14, SNAPSHOTS15, SNAPSHOTS16,
               SNAPSHOTS17, SNAPSHOTS18)
    _overlaps_nothing_before(load_file(SNAPSHOTS19), earlier)
    _overlaps_nothing_before(load_file(SNAPSHOTS20), (*earlier, SNAPSHOTS19))
    _cited_nowhere(load_file(SNAPSHOTS19))


def test_the_twenty_first_and_twenty_second_snapshot_sets_overlap_nothing_and_the_never_tuned_one_is_cited_nowhere():
    """snapshots21 (a tuning set) and snapshots22 (NEVER TUNED) (h129, issue 22: Hugging Face transformers / accelerate
    threads mined together and split by alternation) share no thread with snapshots1-20, any fresh log set, the corpus,
    or each other, by URL, id or repository + issue/PR number; none of snapshots22's threads is cited by the doctor (a
    rule written from one would make it a tuned report)."""
    earlier = (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6, SNAPSHOTS7, SNAPSHOTS8,
               SNAPSHOTS9, SNAPSHOTS10, SNAPSHOTS11, SNAPSHOTS12, SNAPSHOTS13, SNAPSHOTS14, SNAPSHOTS15, SNAPSHOTS16,
               SNAPSHOTS17, SNAPSHOTS18, SNAPSHOTS19, SNAPSHOTS20)
    _overlaps_nothing_before(load_file(SNAPSHOTS21), earlier)
    _overlaps_nothing_before(load_file(SNAPSHOTS22), (*earlier, SNAPSHOTS21))
    _cited_nowhere(load_file(SNAPSHOTS22))


# every set before snapshots23, in order: each later set is checked against these and the sets after them
BEFORE23 = (SNAPSHOTS, SNAPSHOTS2, SNAPSHOTS3, SNAPSHOTS4, SNAPSHOTS5, SNAPSHOTS6, SNAPSHOTS7, SNAPSHOTS8, SNAPSHOTS9,
            SNAPSHOTS10, SNAPSHOTS11, SNAPSHOTS12, SNAPSHOTS13, SNAPSHOTS14, SNAPSHOTS15, SNAPSHOTS16, SNAPSHOTS17,
            SNAPSHOTS18, SNAPSHOTS19, SNAPSHOTS20, SNAPSHOTS21, SNAPSHOTS22)


def test_the_twenty_third_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots23 (h131, issue 22: communication and device threads, a tuning set) shares no thread with
    snapshots1-22, any fresh log set or the corpus, by URL, id or repository + issue/PR number."""
    _overlaps_nothing_before(load_file(SNAPSHOTS23), BEFORE23)


def test_the_twenty_fourth_snapshot_set_overlaps_no_earlier_set_nor_any_fresh_log_set_nor_the_corpus():
    """snapshots24 (h140, issue 22: version-mismatch and device threads, a tuning set) shares no thread with
    snapshots1-23, any fresh log set or the corpus, by URL, id or repository + issue/PR number."""
    _overlaps_nothing_before(load_file(SNAPSHOTS24), (*BEFORE23, SNAPSHOTS23))
