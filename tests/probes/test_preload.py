"""What the loader preloads (LD_PRELOAD, /etc/ld.so.preload), read through the root prefix: which absolute entries
exist, the machine their ELF header names, and the same-named files a missing one could be replaced with."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from doctor.probes._fs import RootFS
from doctor.probes.preload import elf_machine, entries, probe_preload
from tests.fakes import write


def _real_elf_head() -> bytes:
    """The first 20 bytes of this interpreter: a real ELF file built for this machine."""
    with open(os.path.realpath(sys.executable), "rb") as fh:
        return fh.read(20)


def test_entries_are_read_in_the_loaders_order_and_split_as_it_splits():
    assert entries({"LD_PRELOAD": "/a.so:/b.so  libc.so.6"}, "# comment\n/c.so /d.so # tail\n") == [
        ("/a.so", "LD_PRELOAD"), ("/b.so", "LD_PRELOAD"), ("libc.so.6", "LD_PRELOAD"),
        ("/c.so", "/etc/ld.so.preload"), ("/d.so", "/etc/ld.so.preload")]
    assert entries({}, None) == [] and entries({"LD_PRELOAD": " : "}, "") == []


def test_elf_machine_of_real_and_made_up_headers():
    assert elf_machine(_real_elf_head()) == os.uname().machine
    aarch64 = b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x03\x00\xb7\x00"  # ET_DYN, EM_AARCH64 (183), little-endian
    assert elf_machine(aarch64) == "aarch64"
    assert elf_machine(b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x03\x00\x99\x00") == "EM_153"
    assert elf_machine(b"/* GNU ld script */\nGROUP(") is None and elf_machine(b"") is None


def test_missing_wrong_machine_and_healthy_entries_under_a_root(tmp_path: Path):
    """/etc/ld.so.preload's entries are the root's machine's; the shell's LD_PRELOAD is only judged live (below)."""
    arch = os.uname().machine
    other = "aarch64" if arch != "aarch64" else "x86_64"
    write(tmp_path / "usr/lib64/libjemalloc.so.2", _real_elf_head())  # openEuler's place
    write(tmp_path / "opt/lib/libgood.so", _real_elf_head())
    number = 183 if other == "aarch64" else 62
    write(tmp_path / "opt/lib/libother.so", b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x03\x00" + number.to_bytes(2, "little"))
    write(tmp_path / "opt/lib/libtext.so", "INPUT(-lfoo)\n")
    write(tmp_path / "etc/ld.so.preload", f"/usr/lib/{arch}-linux-gnu/libjemalloc.so.2 /opt/lib/libgood.so\n"
                                          "/opt/lib/libother.so /opt/lib/libtext.so libtcmalloc.so.4 /opt/$LIB/libx.so\n"
                                          "/opt/lib/libgone.so\n")
    items, errors = probe_preload(RootFS(str(tmp_path)), {"LD_PRELOAD": "/opt/lib/libgone.so"}, arch)
    assert errors == []
    assert items[0] == {"entry": "/opt/lib/libgone.so", "source": "LD_PRELOAD"}  # the collector's shell: unjudged
    by = {i["entry"]: i for i in items[1:]}
    assert by[f"/usr/lib/{arch}-linux-gnu/libjemalloc.so.2"] == {
        "entry": f"/usr/lib/{arch}-linux-gnu/libjemalloc.so.2", "source": "/etc/ld.so.preload", "exists": False,
        "alternatives": ["/usr/lib64/libjemalloc.so.2"]}
    assert by["/opt/lib/libgood.so"] == {"entry": "/opt/lib/libgood.so", "source": "/etc/ld.so.preload", "exists": True,
                                         "machine": arch}
    assert by["/opt/lib/libother.so"]["machine"] == other and by["/opt/lib/libtext.so"]["machine"] is None
    assert by["libtcmalloc.so.4"] == {"entry": "libtcmalloc.so.4", "source": "/etc/ld.so.preload"}  # search path
    assert by["/opt/$LIB/libx.so"] == {"entry": "/opt/$LIB/libx.so", "source": "/etc/ld.so.preload"}  # ld.so expands it
    assert by["/opt/lib/libgone.so"] == {"entry": "/opt/lib/libgone.so", "source": "/etc/ld.so.preload",
                                         "exists": False, "alternatives": []}


def test_nothing_preloaded_is_an_empty_list(tmp_path: Path):
    assert probe_preload(RootFS(str(tmp_path)), {}, "x86_64") == ([], [])


def test_the_shells_ld_preload_is_judged_on_the_live_host():
    items, _ = probe_preload(RootFS("/"), {"LD_PRELOAD": "/nonexistent-doctor-test/libjemalloc.so.2"}, os.uname().machine)
    assert items[0]["exists"] is False and items[0]["source"] == "LD_PRELOAD"
