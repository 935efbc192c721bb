"""Facts about the local environment that `launch` defaults depend on, read without importing anything
heavy: the installed verl (hydra_compose.installed_verl), whether Megatron-Bridge is importable, and the
chip family (NPUs per node) from PCI ids in sysfs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from doctor.knowledge.chips import DEFAULT_NPUS_PER_NODE, PCI_FAMILY

HUAWEI_VENDOR = "0x19e5"


def megatron_bridge_installed() -> bool:
    """True when `megatron.bridge` can be found. find_spec('megatron.bridge') would import `megatron`
    (and with it possibly MindSpeed patches), so look for the sub-package directory instead."""
    try:
        spec = importlib.util.find_spec("megatron")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    return any((Path(loc) / "bridge").is_dir() or (Path(loc) / "bridge.py").is_file()
               for loc in spec.submodule_search_locations)


def chip_family_from_sysfs(root: str | Path = "/") -> str | None:
    """The Ascend family of the first Huawei accelerator in /sys/bus/pci/devices (None when none)."""
    base = Path(root) / "sys" / "bus" / "pci" / "devices"
    try:
        devices = sorted(base.iterdir())
    except OSError:
        return None
    for d in devices:
        try:
            vendor = (d / "vendor").read_text().strip().lower()
            device = (d / "device").read_text().strip().lower().removeprefix("0x")
        except OSError:
            continue
        if vendor == HUAWEI_VENDOR and device in PCI_FAMILY:
            return PCI_FAMILY[device]
    return None


def default_npus_per_node(chip: str | None, root: str | Path = "/") -> tuple[int, str]:
    """(NPUs per node, how it was decided): --chip, else the PCI family here, else 8 (A2)."""
    fam = chip or chip_family_from_sysfs(root)
    if fam and fam in DEFAULT_NPUS_PER_NODE:
        return DEFAULT_NPUS_PER_NODE[fam], f"chip {fam}" + ("" if chip else " (detected from PCI ids)")
    return 8, "no Ascend chip detected here; assumed A2 (8 per node)"
