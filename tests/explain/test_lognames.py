"""Which names a directory's walk reads: live logs, their rotated copies (logrotate, Python's RotatingFileHandler as
Ray's own components use it) and compressed ones; and the node a rotated copy belongs to."""

from __future__ import annotations

import pytest

from doctor.explain.lognames import log_stem, split_log_name


@pytest.mark.parametrize(("name", "parts"), [
    ("train.log", ("train.log", "", "")),
    ("train.log.1", ("train.log", ".1", "")),  # logrotate, RotatingFileHandler
    ("train.log.2.gz", ("train.log", ".2", ".gz")),  # logrotate with compress
    ("train.log-20261207.gz", ("train.log", "-20261207", ".gz")),  # logrotate dateext
    ("app.log.2026-12-07", ("app.log", ".2026-12-07", "")),  # TimedRotatingFileHandler
    ("monitor.log.12", ("monitor.log", ".12", "")),  # Ray's monitor.log past 9 backups
    ("worker-01000000-42.err.xz", ("worker-01000000-42.err", "", ".xz")),
    ("debug_state.txt", ("debug_state.txt", "", "")),
    ("logs.tar.gz", None),  # an archive of many files is no log
    ("model.1", None),
    ("notes.md", None),
    ("x.gz", None),
])
def test_log_names_live_rotated_and_compressed(name, parts):
    assert split_log_name(name) == parts


def test_a_rotated_copy_belongs_to_the_same_node_as_the_live_log():
    assert {log_stem(n) for n in ("rank3.log", "rank3.log.1", "rank3.log.2.gz", "rank3.log-20261207.xz")} == {"rank3"}
    assert log_stem("dashboard.log.1") == "dashboard"
