"""The shipped signature database kept in the cache directory (doctor.explain.db over doctor.keptfile): read from there
only when the file and the code reading it are the same bytes as when it was kept."""

from __future__ import annotations

import pytest

import doctor.explain.db as db
from doctor.explain import anchors


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A copy of the shipped database standing for it, and an empty cache directory."""
    copy = tmp_path / "signatures.toml"
    copy.write_bytes(db.DEFAULT_DB.read_bytes())
    monkeypatch.setattr(db, "DEFAULT_DB", copy)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return copy


def _not_read(*args, **kwargs):
    raise AssertionError("the signature file was read and validated again")


def test_the_second_run_takes_the_database_from_the_cache_and_an_edit_reads_the_file_again(shipped, tmp_path,
                                                                                         monkeypatch):
    first = db._load_default.__wrapped__()
    kept = list((tmp_path / "cache").rglob("*.marshal"))
    assert len(kept) == 1
    with monkeypatch.context() as m:
        m.setattr(db, "_load", _not_read)
        again = db._load_default.__wrapped__()
    assert again == first and again.path == str(shipped)
    # the fixed phrases it carries are the ones the code works out (what the pre-filter searches for)
    patterns = {p.pattern for s in first.signatures for p in (*s.patterns, *(p for r in s.context for p in r))}
    remembered = dict(anchors._REMEMBERED)
    assert set(remembered) == patterns
    monkeypatch.setattr(anchors, "_REMEMBERED", {})
    anchors._required_runs.cache_clear()
    anchors._runs.cache_clear()
    assert {p: anchors.required_runs(p) for p in patterns} == {p: list(r) for p, r in remembered.items()}

    shipped.write_text(shipped.read_text().replace('title = "', 'title = "edited: ', 1))
    edited = db._load_default.__wrapped__()
    assert edited.signatures[0].title.startswith("edited: ") and edited.signatures[1:] == first.signatures[1:]
    with monkeypatch.context() as m:
        m.setattr(db, "_load", _not_read)
        assert db._load_default.__wrapped__() == edited


def test_a_changed_reader_a_damaged_or_an_unwritable_cache_reads_the_file(shipped, tmp_path, monkeypatch):
    first = db._load_default.__wrapped__()
    [kept] = (tmp_path / "cache").rglob("*.marshal")
    code = db._reading_code()
    with monkeypatch.context() as m:  # the code that reads the file changed: what it kept is not used
        m.setattr(db, "_reading_code", lambda: code + b"# edited")
        m.setattr(db, "_load", _not_read)
        with pytest.raises(AssertionError, match="read and validated again"):
            db._load_default.__wrapped__()
    blob = kept.read_bytes()
    for damaged in (blob[: len(blob) // 2], b"not marshal", b""):  # a write cut short, garbage, an empty file
        kept.write_bytes(damaged)
        assert db._load_default.__wrapped__() == first
        assert kept.read_bytes() == blob  # and written again, whole
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # no directory can be made there
    assert db._load_default.__wrapped__() == first


def test_older_versions_entries_go_when_one_is_written_and_one_read_lately_stays(shipped, tmp_path):
    """Each version of the file or its reader leaves an entry: writing one keeps the others used most recently while
    they fit in the cache policy's 32 MB, and the two used last whatever their size (a hit counts as a use, so a
    release another node of a shared home runs keeps its entry)."""
    import os

    d = tmp_path / "cache" / "verl-ascend-doctor" / "signatures"
    d.mkdir(parents=True)
    names = [f"0000000{i}-74228-030b07f0.marshal" for i in range(4)]
    for age, name in enumerate(names):
        with open(d / name, "wb") as fh:
            fh.truncate(16 << 20)  # an older version's entry, 16 MB (sparse)
        os.utime(d / name, (1_700_000_000 - age, 1_700_000_000 - age))
    first = db._load_default.__wrapped__()
    [kept] = set(d.iterdir()) - {d / n for n in names}
    assert sorted(p.name for p in d.iterdir()) == sorted([kept.name, *names[:2]])
    os.utime(kept, (1, 1))
    assert db._load_default.__wrapped__() == first  # a hit: its entry is the most recently used again
    (d / "ffffffff-1-030b07f0.marshal").write_bytes(b"a newer doctor's entry")
    shipped.write_text(shipped.read_text().replace('title = "', 'title = "edited: ', 1))
    db._load_default.__wrapped__()
    # the new entry, the newer doctor's, the one read lately, then 16 MB more fit; the next 16 MB do not
    assert kept.exists() and (d / "ffffffff-1-030b07f0.marshal").exists() and (d / names[0]).exists()
    assert not (d / names[1]).exists()
