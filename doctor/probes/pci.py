"""Ascend NPUs on the PCI bus, read from sysfs, so the chip family is known even when npu-smi is
missing or hung.

See docs/ascend-install-layouts.md, "Chips without npu-smi": vendor 0x19e5 (Huawei) with class 0x1200xx
("Processing accelerators"); the class test separates NPUs from Huawei NICs, which share the vendor id.
Device id -> family lives in doctor.knowledge.chips.PCI_FAMILY (d500 310P, d801 910, d802 A2, d803 A3, d806 950).
"""

from __future__ import annotations

from typing import Any

from doctor.probes._fs import FsError, RootFS

HUAWEI = "0x19e5"
SYSFS = "/sys/bus/pci/devices"


def is_npu(vendor: str | None, pci_class: str | None) -> bool:
    """Pure test on the raw sysfs strings ('0x19e5\\n', '0x120000\\n')."""
    if not vendor or not pci_class:
        return False
    return vendor.strip().lower() == HUAWEI and pci_class.strip().lower().startswith("0x1200")


def device_id(raw: str | None) -> str | None:
    """'0xd802\\n' -> 'd802'."""
    if not raw:
        return None
    v = raw.strip().lower()
    v = v[2:] if v.startswith("0x") else v
    return v if v and all(c in "0123456789abcdef" for c in v) and len(v) <= 4 else None


def probe_pci(fs: RootFS) -> tuple[list[dict[str, Any]] | None, list[str]]:
    """[{address, device_id}] for every Ascend NPU function; None when sysfs cannot be read."""
    errors: list[str] = []
    try:
        names = fs.listdir(SYSFS)
    except FsError as e:
        return None, [str(e)]
    if not names and not fs.is_dir(SYSFS):
        return None, [f"{SYSFS}: not present"]
    found: list[dict[str, Any]] = []
    for name in names:
        base = f"{SYSFS}/{name}"
        try:
            vendor = _read_small(fs, f"{base}/vendor")
            if vendor is None or vendor.strip().lower() != HUAWEI:
                continue
            cls = _read_small(fs, f"{base}/class")
            dev = device_id(_read_small(fs, f"{base}/device"))
        except FsError as e:
            errors.append(str(e))
            continue
        if is_npu(vendor, cls) and dev:
            found.append({"address": name, "device_id": dev})
    return found, errors


def _read_small(fs: RootFS, path: str) -> str | None:
    # sysfs attributes are not worth keeping in the bundle byte for byte; read without recording.
    real = fs.host(fs.resolve(path))
    try:
        with open(real, encoding="ascii", errors="replace") as fh:
            return fh.read(64)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise FsError(path, e.strerror or str(e)) from None
