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


# Run as uid/gid 65534 after the imports: root creates files in any directory, so only a real non-root process
# sees the kernel refuse the temp file.
_WRITE_AS_NOBODY = """
import json, os, signal, stat, sys, threading  # what atomic_binary imports lazily: the stdlib may be root's only
from doctor.atomic import write_text_atomic
os.setgroups([]); os.setegid(65534); os.seteuid(65534)
try:
    write_text_atomic(sys.argv[1], "snapshot\\n")
    print(json.dumps({"ok": True}))
except OSError as e:
    print(json.dumps({"strerror": e.strerror, "filename": e.filename}))
"""


def test_a_directory_that_refuses_the_temp_file_is_named() -> None:
    """A non-root user may own (and write) a file in a directory it cannot create files in; the atomic write
    needs a temp file beside the destination, so the error names that directory, not only "Permission denied"
    beside a file the user can see it may write."""
    import json
    import shutil
    import subprocess
    import sys
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="doctor-atomic-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)  # root's: uid 65534 may enter, not create
        mine = base / "s.json"
        mine.write_text("old\n")
        os.chown(mine, 65534, 65534)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        out = json.loads(subprocess.run([sys.executable, "-c", _WRITE_AS_NOBODY, str(mine)], env=env, cwd="/",
                                        capture_output=True, text=True, check=True).stdout)
        assert out.get("strerror", "").startswith("Permission denied"), out
        assert f"cannot create a file in {base}" in out["strerror"], out
        assert mine.read_text() == "old\n" and sorted(p.name for p in base.iterdir()) == ["s.json"]
    finally:
        shutil.rmtree(base)
