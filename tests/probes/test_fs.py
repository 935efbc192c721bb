"""RootFS: chroot-style symlink resolution under a prefix, loops and ENOTDIR as recorded errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.probes._fs import FsError, RootFS
from tests.fakes import write


def test_absolute_links_stay_inside_the_root(tmp_path: Path) -> None:
    write(tmp_path / "usr/local/Ascend/cann-9.1.0/x", "inside")
    os.symlink("cann-9.1.0", tmp_path / "usr/local/Ascend/cann")
    os.symlink("/usr/local/Ascend/cann", tmp_path / "usr/local/Ascend/latest")
    fs = RootFS(str(tmp_path))
    assert fs.resolve("/usr/local/Ascend/latest/x") == "/usr/local/Ascend/cann-9.1.0/x"
    assert fs.read_text("/usr/local/Ascend/latest/x") == "inside"
    assert fs.files_read == {"/usr/local/Ascend/latest/x": b"inside"}
    os.symlink("../../../../../../etc", tmp_path / "escape")
    assert fs.resolve("/escape/passwd") == "/etc/passwd"  # '..' stops at the root, like a chroot
    assert fs.read_text("/escape/passwd") is None


def test_loop_and_enotdir(tmp_path: Path) -> None:
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    write(tmp_path / "file", "x")
    fs = RootFS(str(tmp_path))
    with pytest.raises(FsError, match="symlink loop"):
        fs.read_text("/a/version.info")
    with pytest.raises(FsError, match="not a directory"):
        fs.read_text("/file/version.info")
    with pytest.raises(FsError, match="is a directory"):
        fs.read_text("/")
    assert fs.listdir("/missing") == [] and not fs.exists("/a") and not fs.is_dir("/a")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from(["a", "b/c", "/a", "/b", "..", ".", "c/../a", "/", "e/x"])),
                max_size=6, unique_by=lambda t: t[0]))
def test_any_symlink_graph_resolves_or_reports(tmp_path_factory: pytest.TempPathFactory, links: list[tuple[str, str]]) -> None:
    base = tmp_path_factory.mktemp("links")
    (base / "c").mkdir(exist_ok=True)
    for name, target in links:
        if not (base / name).exists() and not (base / name).is_symlink():
            os.symlink(target, base / name)
    fs = RootFS(str(base))
    for start in ("/a/x", "/b/c/y", "/c/a", "/d", "/e/x/y"):
        try:
            resolved = fs.resolve(start)
        except FsError as e:
            assert "loop" in e.reason
            continue
        assert resolved.startswith("/")
        fs.exists(start)
