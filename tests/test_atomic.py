"""Atomic writes replace regular files only: devices and FIFOs are written in place, symlinks written through."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.atomic import write_text_atomic
from doctor.cli import cli


def _char_device(path: Path) -> Path:
    """A private copy of /dev/null (char 1,3): the test never touches the machine's own."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as e:
        pytest.skip(f"cannot create a device node here: {e}")
    return path


def test_a_device_stays_a_device(tmp_path: Path) -> None:
    null = _char_device(tmp_path / "null")
    write_text_atomic(str(null), "snapshot\n")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temp file either


def test_collect_to_a_device_leaves_it_a_device(tmp_path: Path) -> None:
    """`doctor collect -o /dev/null` as root used to rename a regular file over /dev/null."""
    null = _char_device(tmp_path / "null")
    r = CliRunner().invoke(cli, ["collect", "-o", str(null)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_a_fifo_gets_the_bytes_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_text_atomic(str(fifo), "through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "snapshots" / "node0.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    write_text_atomic(str(link), "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    # a dangling link: its target is created, the link kept
    dangling = tmp_path / "next.json"
    dangling.symlink_to(tmp_path / "snapshots" / "node1.json")
    write_text_atomic(str(dangling), "first")
    assert dangling.is_symlink() and (tmp_path / "snapshots" / "node1.json").read_text() == "first"


def test_a_regular_file_is_replaced_whole_and_nothing_is_left_behind(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    out.write_text("previous")
    with pytest.raises(RuntimeError):
        from doctor.atomic import atomic_binary

        with atomic_binary(str(out)) as fh:
            fh.write(b"half")
            raise RuntimeError("interrupted")
    assert out.read_text() == "previous"
    write_text_atomic(str(out), "complete")
    assert out.read_text() == "complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~umask
