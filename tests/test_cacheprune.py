"""The cache policy (doctor.cacheprune): each directory keeps its most recently used entries up to a byte budget, the
entry in use and the two used last whatever their size; a killed write's temp file goes once its writer is gone and
an hour has passed; nothing that is not the doctor's own, or that a live writer may still rename, is ever deleted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor import cacheprune
from tests.cachefakes import MB, dead_pid
from tests.cachefakes import cache_entry as _entry

ENTRY = re.compile(r"[0-9a-f]{8}\.marshal")
ROOT = Path(__file__).resolve().parents[1]


def _names(d):
    return sorted(p.name for p in d.iterdir())


def test_the_most_recently_used_entries_stay_up_to_the_budget_and_nothing_that_is_not_an_entry_is_touched(tmp_path):
    d = tmp_path / "signatures"
    in_use = _entry(d, "00000000.marshal", 10_000, 5 * MB)  # the oldest mark, but the one this run uses
    recent = [_entry(d, f"0000000{i}.marshal", i, 5 * MB) for i in range(1, 6)]  # 6 x 5 MB: 30 MB fit in 32
    old = [_entry(d, f"0000000{i}.marshal", 100 * i, 5 * MB) for i in range(6, 9)]
    writing = _entry(d, f".doctor-{os.getpid()}-0123456789ab", 99_999)  # this process's write in progress
    other = _entry(d, "notes.txt", 99_999, 64 * MB)
    newer_form = _entry(d, "00000009.marshal2", 99_999, 64 * MB)  # a doctor naming its entries otherwise
    outside = _entry(tmp_path, "precious.marshal", 99_999)
    (d / "0000000a.marshal").symlink_to(outside)  # an entry-like symlink pointing elsewhere
    (d / "0000000b.marshal").mkdir()  # entries here are files: a directory of that name is not one
    cacheprune.prune(str(d), ENTRY, str(in_use))
    assert _names(d) == sorted([in_use.name, *(p.name for p in recent), writing.name, other.name, newer_form.name,
                                "0000000a.marshal", "0000000b.marshal"])
    assert not any(p.exists() for p in old)
    assert outside.exists()


def test_the_entry_in_use_and_the_two_used_last_stay_whatever_their_size(tmp_path):
    d = tmp_path / "message_owners"
    in_use = _entry(d, "00000000.marshal", 10_000, 40 * MB)
    kept = [_entry(d, f"0000000{i}.marshal", i, 40 * MB) for i in (1, 2)]
    _entry(d, "00000003.marshal", 3, 1)
    cacheprune.prune(str(d), ENTRY, str(in_use))
    assert _names(d) == sorted([in_use.name, *(p.name for p in kept)])


def test_a_hit_makes_its_entry_the_most_recently_used_and_a_fresh_mark_is_not_written_again(tmp_path):
    d = tmp_path / "c"
    used_daily = _entry(d, "00000001.marshal", 10_000, 20 * MB)  # written long ago, read by another release daily
    for i in (2, 3, 4):
        _entry(d, f"0000000{i}.marshal", i, 20 * MB)
    cacheprune.touch(str(used_daily))
    marked = used_daily.stat().st_mtime_ns
    time.sleep(0.01)
    cacheprune.touch(str(used_daily))  # marked a moment ago: nothing is written
    assert used_daily.stat().st_mtime_ns == marked
    new = _entry(d, "00000005.marshal", 0, 1)
    cacheprune.prune(str(new), ENTRY, str(new))  # not a directory: nothing happens
    cacheprune.prune(str(d), ENTRY, str(new))
    assert _names(d) == ["00000001.marshal", "00000002.marshal", "00000005.marshal"]


def test_a_symlinked_cache_directory_or_a_missing_one_deletes_nothing_and_never_fails(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    victims = [_entry(elsewhere, f"0000000{i}.marshal", 100 * i, 20 * MB) for i in range(6)]
    link = tmp_path / "signatures"
    link.symlink_to(elsewhere, target_is_directory=True)
    cacheprune.prune(str(link), ENTRY, str(link / "00000000.marshal"))
    assert all(p.exists() for p in victims)
    cacheprune.prune(str(tmp_path / "gone"), ENTRY, str(tmp_path / "gone" / "00000000.marshal"))
    cacheprune.touch(str(tmp_path / "gone" / "00000000.marshal"))


def test_sharded_entries_are_pruned_across_shards_and_a_symlinked_shard_is_not_entered(tmp_path):
    root = tmp_path / "toml"
    in_use = _entry(root / "0c", "a40769-10f1-030b07f0.marshal", 0, 1 * MB)
    recent = [_entry(root / f"{i:02x}", f"00000{i}-10f1-030b07f0.marshal", 10 + i, 10 * MB) for i in (1, 2, 3)]
    old = [_entry(root / f"{i:02x}", f"00000{i}-10f1-030b07f0.marshal", 1000 + i, 10 * MB) for i in (4, 5)]
    elsewhere = _entry(tmp_path / "elsewhere", "000006-10f1-030b07f0.marshal", 99_999, 10 * MB)
    (root / "ff").symlink_to(elsewhere.parent, target_is_directory=True)
    (root / "empty").mkdir()
    cacheprune.prune(str(root), re.compile(r"[0-9a-f]{6}-[0-9a-f]+-[0-9a-f]{8}\.marshal"), str(in_use), shards=True)
    assert in_use.exists() and all(p.exists() for p in recent) and elsewhere.exists()
    assert not any(p.exists() for p in old)
    assert _names(root) == ["01", "02", "03", "04", "05", "0c", "empty", "ff"]  # shard directories stay


def test_directory_entries_count_every_byte_under_them_and_go_whole_without_following_a_symlink(tmp_path):
    root = tmp_path / "verl"
    outside = _entry(tmp_path / "outside", "keep.yaml", 0)
    versions = ("0.7.1", "0.6.0", "0.5.0", "0.4.1", "0.4.0", "0.3.0")
    for i, version in enumerate(versions):
        _entry(root / version / "verl" / "trainer" / "config", "ppo_trainer.yaml", 0, 8 * MB)
        (root / version / "verl" / "link").symlink_to(outside.parent, target_is_directory=True)
        os.utime(root / version, (time.time() - 100 * i,) * 2)
    release = re.compile(r"[0-9][0-9A-Za-z.+!-]*")
    cacheprune.prune(str(root), release, str(root / "0.3.0"))  # entries are files here: no directory goes
    assert _names(root) == sorted(versions)
    cacheprune.prune(str(root), release, str(root / "0.7.1"), directories=True)
    assert _names(root) == sorted(versions[:4])  # 32 MB; the fifth would make 40
    assert outside.exists()


def test_a_killed_writes_temp_file_goes_once_its_writer_is_gone_and_an_hour_has_passed(tmp_path):
    d = tmp_path / "signatures"
    dead, live = dead_pid(), os.getppid()
    _entry(d, f".doctor-{dead}-0123456789ab", 3700)
    _entry(d / f".doctor-{dead}-ba9876543210", "f", 0)  # a killed unpacking's directory
    os.utime(d / f".doctor-{dead}-ba9876543210", (time.time() - 3700,) * 2)
    stays = [_entry(d, f".doctor-{dead}-00000000000a", 60),  # gone writer, but a minute ago: maybe another host's
             _entry(d, f".doctor-{live}-00000000000b", 86_400),  # a live writer (stopped, say): it may still rename
             _entry(d, f".doctor-{dead}-shortname", 86_400),  # not the atomic writer's name
             _entry(d, "00000000.marshal", 0)]
    cacheprune.prune(str(d), ENTRY, str(stays[-1]))
    assert _names(d) == sorted(p.name for p in stays)


def test_a_write_killed_between_create_and_rename_is_cleaned_by_the_next_write_after_the_bound(tmp_path):
    """A real process killed (SIGKILL) inside doctor.atomic's write leaves its temp file; a later run's write into that
    directory (doctor.keptfile + the prune its callers run) removes it once it is an hour old, not before."""
    from doctor import keptfile

    d = tmp_path / "cache" / "signatures"
    d.mkdir(parents=True)
    writer = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom doctor.atomic import atomic_binary\n"
         "with atomic_binary(sys.argv[1]) as fh:\n    fh.write(b'half'); fh.flush(); print('in', flush=True); "
         "time.sleep(60)\n", str(d / "00000001.marshal")],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert writer.stdout is not None and writer.stdout.readline() == "in\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    [left] = list(d.iterdir())
    assert left.name.startswith(f".doctor-{writer.pid}-")

    def write_and_prune():
        path = str(d / "00000002.marshal")
        keptfile.write(path, ("k",), "v")
        cacheprune.prune(str(d), ENTRY, path)

    write_and_prune()
    assert left.exists()  # a killed write a moment ago: it may be another host's live one
    os.utime(left, (time.time() - 3700,) * 2)
    write_and_prune()
    assert _names(d) == ["00000002.marshal"]


def test_an_entry_written_again_between_the_scan_and_its_deletion_stays(tmp_path, monkeypatch):
    """The race two processes run into: one prunes an old entry that the other, meanwhile, writes anew."""
    from doctor import keptfile

    d = tmp_path / "signatures"
    old = _entry(d, "00000001.marshal", 1000, 40 * MB)  # the fourth most recent, over the budget: to be deleted
    for i in (2, 3, 4):
        _entry(d, f"0000000{i}.marshal", i, 1)
    scanned = cacheprune.stale

    def writer_acts_after_the_scan(*args, **kwargs):
        keptfile.write(str(old), ("k",), "written now")
        return scanned(*args, **kwargs)

    monkeypatch.setattr(cacheprune, "stale", writer_acts_after_the_scan)
    cacheprune.prune(str(d), ENTRY, str(d / "00000000.marshal"))
    assert keptfile.read(str(old), ("k",)) == "written now"
    assert _names(d) == ["00000001.marshal", "00000002.marshal", "00000003.marshal", "00000004.marshal"]


_RUN = r"""
import os, re, sys, time
from doctor import cacheprune, keptfile

role, root, go, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
entry = re.compile(r"[0-9a-f]{6}-[0-9a-f]+-[0-9a-f]{8}\.marshal")
while not os.path.exists(go):
    time.sleep(0.001)
if role == "writer":  # a release's first run: an entry for each file, oldest first, and one prune
    for n in names:
        keptfile.write(os.path.join(root, n[:2], n[2:]), ("k",), "written")
    cacheprune.prune(root, entry, os.path.join(root, names[0][:2], names[0][2:]), shards=True)
    open(go + ".done", "w").close()
else:  # another release's runs meanwhile: each writes its own entry and prunes
    own = os.path.join(root, "ff", "ffffff-1-030b07f0.marshal")
    while not os.path.exists(go + ".done"):
        keptfile.write(own, ("k",), "own")
        cacheprune.prune(root, entry, own, shards=True)
"""


def test_two_processes_writing_and_pruning_at_once_lose_nothing_either_wrote(tmp_path):
    """Real processes, as two doctor runs sharing a home: one writes its entries over names whose old entries (300 MB
    of them, over the budget) the other's prunes delete meanwhile, oldest first while they delete the newest
    first; every entry written is there at the end, and no temp name is left."""
    from doctor import keptfile

    names = [f"{i % 16:x}{i:07x}-10-030b07f0.marshal" for i in range(300)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for trial in range(4):
        root = tmp_path / f"toml{trial}"
        for i, n in enumerate(names):
            _entry(root / n[:2], n[2:], 10_000 - i, 1 * MB)  # the first name the oldest
        go = tmp_path / f"go{trial}"
        procs = [subprocess.Popen([sys.executable, "-c", _RUN, role, str(root), str(go), *names], env=env)
                 for role in ("writer", "pruner")]
        time.sleep(0.5)
        go.write_text("")
        assert [p.wait(timeout=300) for p in procs] == [0, 0]
        lost = [n for n in names if keptfile.read(str(root / n[:2] / n[2:]), ("k",)) != "written"]
        assert lost == [], (trial, len(lost))
        assert not [p for p in root.rglob("*") if p.name.startswith(".doctor-")]


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40), st.text("ab", min_size=1, max_size=3)),
                unique_by=lambda e: e[2]), st.integers(-1, 6), st.integers(0, 100))
def test_stale_keeps_a_most_recently_used_prefix_within_the_budget(entries, keep, budget):
    gone = set(cacheprune.stale(entries, keep, budget))
    order = sorted(entries, reverse=True)
    left = [e for e in order if e[2] not in gone]
    assert left == order[:len(left)]  # nothing older stays once one goes
    assert len(left) >= min(len(entries), max(keep, 0))
    if len(left) > max(keep, 0):
        assert sum(size for _, size, _ in left) <= budget
    if gone:
        assert len(left) < max(keep, 0) or sum(size for _, size, _ in order[:len(left) + 1]) > budget


def test_leftovers_are_the_old_temp_files_of_writers_not_alive():
    hour = cacheprune.TEMP_AGE_NS
    temps = [(0, 1, "old-dead"), (0, 2, "old-live"), (hour, 1, "new-dead")]
    assert cacheprune.leftovers(temps, hour + 1, lambda pid: pid == 2) == ["old-dead"]
