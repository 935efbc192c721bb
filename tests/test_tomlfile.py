"""tomlfile: a parsed document is kept in the cache by the file's bytes; validation and errors are unchanged."""

from __future__ import annotations

import pytest

from doctor.errors import InputError
from doctor.tomlfile import read_toml


def test_a_parsed_document_is_read_from_the_cache_by_its_bytes_and_a_damaged_cache_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("doctor.knowledge.location.packaged_dir", lambda: str(tmp_path))  # as if shipped
    f = tmp_path / "p.toml"
    f.write_text('name = "x"\n[pins]\ntorch = "==2.8.0"\n', encoding="utf-8")
    first = read_toml(f)
    (cached,) = (tmp_path / "cache").rglob("*.marshal")
    assert read_toml(f) == first == {"name": "x", "pins": {"torch": "==2.8.0"}}
    cached.write_bytes(b"\x00 not marshal")
    assert read_toml(f) == first
    # the file is named by a CRC of the bytes; the bytes kept in it decide: another file's document is never read
    import marshal
    import sys

    cached.write_bytes(marshal.dumps(("toml-document/2", sys.version, b'name = "z"\n', {"name": "z"})))
    assert read_toml(f) == first
    f.write_text('name = "y"\n', encoding="utf-8")  # other bytes: parsed again, never the old document
    assert read_toml(f) == {"name": "y"}


def test_a_file_that_does_not_parse_is_refused_every_time_and_never_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("doctor.knowledge.location.packaged_dir", lambda: str(tmp_path))
    f = tmp_path / "bad.toml"
    f.write_text("name = \n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(InputError, match="not valid TOML"):
            read_toml(f)
    assert not list((tmp_path / "cache").rglob("*.marshal"))
    # a TOML date is no marshal type: such a document is parsed each time, and read the same
    d = tmp_path / "d.toml"
    d.write_text("when = 2026-12-03\n", encoding="utf-8")
    assert str(read_toml(d)["when"]) == "2026-12-03" == str(read_toml(d)["when"])


def test_a_users_own_file_is_parsed_as_it_is_and_leaves_nothing_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    f = tmp_path / "waivers.toml"
    f.write_text('id = "x"\n', encoding="utf-8")
    assert read_toml(f) == {"id": "x"}
    assert not (tmp_path / "cache").exists()


def test_a_write_holds_the_toml_cache_to_the_budget_and_a_hit_marks_its_entry_used(tmp_path, monkeypatch):
    """The parsed-TOML cache gets ~20 entries per release and was never pruned: a write now keeps the most recently
    used up to 32 MB (once a run) and removes a killed write's temp file; a hit marks its entry used."""
    import os

    from doctor import tomlfile
    from tests.cachefakes import MB, age, cache_entry, dead_pid

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("doctor.knowledge.location.packaged_dir", lambda: str(tmp_path))
    monkeypatch.setattr(tomlfile, "_PRUNED", [])
    root = tmp_path / "cache" / "verl-ascend-doctor" / "toml"
    old = [cache_entry(root / f"{i:02x}", f"00000{i}-10f1-030b07f0.marshal", 86_400 + i, 10 * MB) for i in range(5)]
    killed = cache_entry(root / "aa", f".doctor-{dead_pid()}-0123456789ab", 7200)
    f = tmp_path / "p.toml"
    f.write_text('name = "x"\n', encoding="utf-8")
    assert read_toml(f) == {"name": "x"}
    [new] = set(root.rglob("*.marshal")) - set(old)
    assert [p.exists() for p in old] == [True, True, True, False, False]  # 30 MB of them fit beside the new one
    assert not killed.exists()
    age(new, 86_400 * 3)
    assert read_toml(f) == {"name": "x"}  # a hit
    assert new.stat().st_mtime > old[0].stat().st_mtime
    assert os.path.getsize(old[0]) == 10 * MB
