"""PCI probe: Ascend NPUs from sysfs (vendor 0x19e5, class 0x1200xx), NICs and other vendors excluded."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from doctor.knowledge.chips import PCI_FAMILY
from doctor.probes._fs import RootFS
from doctor.probes.pci import device_id, is_npu, probe_pci
from tests.fakes import EXPECTED, make_ascend_root, write


def test_a3_root_lists_16_functions_and_maps_to_a3(tmp_path: Path) -> None:
    found, errors = probe_pci(RootFS(str(make_ascend_root(tmp_path, "a3-cann9.1.0-new-layout"))))
    assert errors == []
    assert len(found) == EXPECTED["a3-cann9.1.0-new-layout"]["pci_count"]
    assert {PCI_FAMILY[d["device_id"]] for d in found} == {"A3"}
    assert "0000:7d:00.0" not in {d["address"] for d in found}  # the Huawei NIC
    assert "0000:00:1f.0" not in {d["address"] for d in found}  # another vendor's accelerator


def test_sysfs_symlinks_are_followed(tmp_path: Path) -> None:
    real = tmp_path / "sys/devices/pci0000:00/0000:c1:00.0"
    write(real / "vendor", "0x19e5\n")
    write(real / "device", "0xd802\n")
    write(real / "class", "0x120000\n")
    link = tmp_path / "sys/bus/pci/devices/0000:c1:00.0"
    link.parent.mkdir(parents=True)
    link.symlink_to("../../../devices/pci0000:00/0000:c1:00.0")
    found, _ = probe_pci(RootFS(str(tmp_path)))
    assert found == [{"address": "0000:c1:00.0", "device_id": "d802"}]


def test_no_sysfs_is_unknown_not_empty(tmp_path: Path) -> None:
    found, errors = probe_pci(RootFS(str(tmp_path)))
    assert found is None and errors


def test_pure_helpers() -> None:
    assert is_npu("0x19e5\n", "0x120000\n") and not is_npu("0x19e5", "0x020000") and not is_npu(None, "0x1200")
    assert device_id("0xD803\n") == "d803" and device_id("zz") is None and device_id("") is None


@given(st.text(), st.text())
def test_helpers_never_raise(a: str, b: str) -> None:
    assert isinstance(is_npu(a, b), bool)
    d = device_id(a)
    assert d is None or len(d) <= 4
