"""Pruning of the doctor's cache entries (doctor.cacheprune): the entry in use and the ones used most recently stay;
nothing that is not one of the doctor's own entries, or that may be mid-write, is ever deleted."""

from __future__ import annotations

import os
import re

from hypothesis import given
from hypothesis import strategies as st

from doctor import cacheprune

ENTRY = re.compile(r"[0-9a-f]{8}\.marshal")


def _entry(directory, name, age_s):
    path = directory / name
    path.write_bytes(b"kept")
    t = 1_700_000_000 - age_s
    os.utime(path, (t, t))
    return path


def test_the_entry_in_use_and_the_two_used_last_stay_and_nothing_that_is_not_an_entry_is_touched(tmp_path):
    d = tmp_path / "signatures"
    d.mkdir()
    in_use = _entry(d, "00000000.marshal", 10_000)  # the oldest mtime, but the one this run uses
    recent = [_entry(d, f"0000000{i}.marshal", i) for i in (1, 2)]
    old = [_entry(d, f"0000000{i}.marshal", 100 * i) for i in (3, 4, 5)]
    writing = d / ".doctor-4242-0123456789ab"  # another process's atomic write, mid-way
    writing.write_bytes(b"half")
    other = _entry(d, "notes.txt", 99_999)
    newer_form = _entry(d, "00000006.marshal2", 99_999)  # a doctor naming its entries otherwise
    outside = tmp_path / "precious.marshal"
    outside.write_bytes(b"not the doctor's")
    os.utime(outside, (1, 1))
    (d / "0000000a.marshal").symlink_to(outside)  # an entry-like symlink pointing elsewhere
    (d / "0000000b.marshal").mkdir()
    cacheprune.prune(str(in_use), ENTRY)
    assert sorted(p.name for p in d.iterdir()) == sorted(
        [in_use.name, *(p.name for p in recent), writing.name, other.name, newer_form.name, "0000000a.marshal",
         "0000000b.marshal"])
    assert not any(p.exists() for p in old)
    assert outside.read_bytes() == b"not the doctor's"


def test_a_hit_makes_its_entry_the_most_recently_used(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    used_daily = _entry(d, "00000001.marshal", 10_000)  # written long ago, read by another release every day
    for i in (2, 3):
        _entry(d, f"0000000{i}.marshal", i)
    cacheprune.touch(str(used_daily))
    new = _entry(d, "00000004.marshal", 0)
    cacheprune.prune(str(new), ENTRY)
    assert sorted(p.name for p in d.iterdir()) == ["00000001.marshal", "00000002.marshal", "00000004.marshal"]


def test_a_symlinked_cache_directory_or_a_missing_one_deletes_nothing_and_never_fails(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victims = [_entry(elsewhere, f"0000000{i}.marshal", 100 * i) for i in range(6)]
    link = tmp_path / "signatures"
    link.symlink_to(elsewhere, target_is_directory=True)
    cacheprune.prune(str(link / "00000000.marshal"), ENTRY)
    assert all(p.exists() for p in victims)
    cacheprune.prune(str(tmp_path / "gone" / "00000000.marshal"), ENTRY)  # no directory: nothing, no error
    cacheprune.touch(str(tmp_path / "gone" / "00000000.marshal"))


@given(st.lists(st.tuples(st.integers(0, 5), st.text("ab", min_size=1, max_size=3)), unique_by=lambda e: e[1]),
       st.integers(-1, 6))
def test_stale_leaves_exactly_the_most_recently_used(entries, keep):
    gone = cacheprune.stale(entries, keep)
    left = [e for e in entries if e[1] not in gone]
    assert len(left) == min(len(entries), max(keep, 0))
    assert all(g_mtime <= l_mtime for g_mtime, g in entries if g in gone for l_mtime, _ in left)
