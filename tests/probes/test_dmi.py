"""The server model (`host.dmi`): the world-readable DMI strings under /sys/class/dmi/id, through the root prefix."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor.probes._fs import RootFS
from doctor.probes.dmi import dmi_value, probe_dmi
from doctor.probes.system import probe_system
from tests.fakes import symlink, write

# The kernel's layout: /sys/class/dmi/id is a symlink into /sys/devices/virtual/dmi/id, each attribute one line.
# The product name is the model CANN's HCCL_HOST_SOCKET_PORT_RANGE page names; the serial and UUID files are the
# root-only ones (mode 0400) the probe must never open.
ATLAS = {"sys_vendor": "Huawei\n", "product_name": "Atlas 800T A2\n", "board_name": "BC83AMDB\n",
         "product_version": "Not Specified  \n", "product_serial": "2102314FFF10N1000001\n",
         "product_uuid": "9c4d1e2a-0000-0000-0000-000000000000\n", "board_serial": "026ABC10N1000001\n",
         "bios_version": "1.31\n"}


def fake_dmi(root: Path, files: dict[str, str | bytes]) -> Path:
    real = root / "sys/devices/virtual/dmi/id"
    for name, text in files.items():
        write(real / name, text, 0o400 if name.endswith(("serial", "uuid")) else 0o444)
    symlink(root / "sys/class/dmi/id", "../../devices/virtual/dmi/id")
    return root


def test_the_server_model_is_read_through_the_root_prefix_without_serials(tmp_path: Path) -> None:
    fs = RootFS(str(fake_dmi(tmp_path, ATLAS)))
    host, _ = probe_system(fs, {}, "/")
    assert host["dmi"] == {"sys_vendor": "Huawei", "product_name": "Atlas 800T A2", "board_name": "BC83AMDB",
                           "product_version": "Not Specified"}
    assert not [p for p in fs.files_read if p.endswith(("serial", "uuid", "bios_version"))]


def test_a_machine_without_a_dmi_directory_records_null(tmp_path: Path) -> None:
    host, errors = probe_system(RootFS(str(tmp_path)), {}, "/")
    assert host["dmi"] is None
    assert not [e for e in errors if "/sys/class/dmi" in e]


def test_a_dmi_directory_that_cannot_be_read_leaves_the_model_unknown(tmp_path: Path) -> None:
    """Each attribute a directory (open fails with EISDIR, as a permission error would; CI runs as root): no
    field, no key (unknown, not null), no error."""
    for name in ("sys_vendor", "product_name", "board_name", "product_version"):
        (tmp_path / "sys/class/dmi/id" / name).mkdir(parents=True)
    host, errors = probe_system(RootFS(str(tmp_path)), {}, "/")
    assert "dmi" not in host
    assert not [e for e in errors if "/sys/class/dmi" in e]


def test_empty_and_unreadable_fields_are_left_out(tmp_path: Path) -> None:
    root = fake_dmi(tmp_path, {"sys_vendor": "Huawei\n", "product_name": "   \n", "board_name": b"\x00\x1b\n"})
    (root / "sys/devices/virtual/dmi/id/product_version").mkdir()
    assert probe_dmi(RootFS(str(root))) == {"sys_vendor": "Huawei"}


def test_dmi_value() -> None:
    assert dmi_value(b"Inspiron 1210   \n") == "Inspiron 1210"
    assert dmi_value(b"Atlas\x00 800T A2\n") == "Atlas 800T A2"
    assert dmi_value(b"\n") is None and dmi_value(None) is None and dmi_value(b"") is None
    assert dmi_value(b"x" * 500) == "x" * 128


@given(st.binary(max_size=300))
def test_dmi_value_of_any_bytes_is_a_printable_string_or_none(raw: bytes) -> None:
    v = dmi_value(raw)
    assert v is None or (v and v == v.strip() and v.isprintable() and len(v) <= 128)
