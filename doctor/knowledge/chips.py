"""Chip families and how to recognise them from any fact we have (npu-smi names, SOC strings, PCI ids).

Sources: vllm-ascend's SOC table
(https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/vllm_ascend/device/hardware.py)
and the PCI device ids of docs/ascend-install-layouts.md ("Chips without npu-smi").
"""

from __future__ import annotations

import re
from typing import Any

from doctor.snapshot.model import UNKNOWN, Snapshot, known

A2, A3, P310, A5, GEN1, P310B = "A2", "A3", "310P", "950", "910", "310"

# PCI device id (vendor 0x19e5, class 0x1200xx) -> family
PCI_FAMILY = {"d100": P310B, "d500": P310, "d801": GEN1, "d802": A2, "d803": A3, "d806": A5}

# NPUs (devices as torch_npu counts them) per node, by family: an A3 node shows 16 chips.
DEFAULT_NPUS_PER_NODE = {A2: 8, A3: 16, A5: 8, P310: 4, GEN1: 8}

# compiled on first use (re's own cache): only a host with an NPU name to read needs them
_SOC_PATTERNS = [
    (r"950", A5),
    (r"(?i)910_?93|910_?9[0-9]{3}|910c", A3),
    (r"(?i)910b", A2),
    (r"(?i)310p", P310),
    (r"(?i)310b", P310B),
    (r"(?i)910(a|prob|pro|premiuma)?$", GEN1),
]


def family_from_name(name: Any) -> str | None:
    """'910B3', 'Ascend910B3', 'ascend910_9391', '310P3', 'Ascend950DT' -> family; None if unrecognised.

    A bare 'Ascend910' / '910' is ambiguous: the A3 table of driver 24.1 prints 'Ascend910' for 910_93
    chips, and first-generation boards print '910'. It returns None; use PCI ids or chip counts to decide."""
    if not isinstance(name, str) or not name.strip():
        return None
    n = name.strip().lower().replace("ascend", "").replace(" ", "")
    if n in ("910", ""):
        return None
    for pat, fam in _SOC_PATTERNS:
        if re.search(pat, n):
            return fam
    return None


# First-generation Ascend 910 boards carry 32 GB of HBM (npu-smi: 32768 MB); no Atlas A2 chip that npu-smi names
# without its digit could hold more.
_GEN1_HBM_MB = 32768


def _bare_910b(name: Any, hbm_mb: Any) -> str | None:
    """GEN1 for a device named bare '910B' / 'Ascend910B' with at most a first-generation board's HBM, else None.

    torch_npu's SoC table (`socVersionMap` in torch_npu/csrc/core/npu/NpuVariables.cpp, every release in
    profiles/torch-npu-socs.toml) lists 'Ascend910B' beside 'Ascend910A' / 'Ascend910ProB' as a first-generation SoC,
    and the Atlas A2 SoCs only with their digit ('Ascend910B1' ... 'Ascend910B4'); npu-smi prints the same names
    without 'Ascend' ('910ProB', '910B3'). People still say '910B' for Atlas A2, so a bare name alone is read as A2
    (as `family_from_name` does, and as a kernels package's '910b' means); the HBM npu-smi lists decides. The
    Atlas A2 910B4 also has 32 GB, but npu-smi names it '910B4'."""
    if not isinstance(name, str) or name.strip().lower().replace("ascend", "").replace(" ", "") != "910b":
        return None
    return GEN1 if isinstance(hbm_mb, int) and 0 < hbm_mb <= _GEN1_HBM_MB else None


def family(snapshot: Snapshot) -> str | Any:
    """The chip family of a host: from device names, SOC strings, then PCI ids; None when the host has
    no Ascend device, UNKNOWN when nothing was probed. npu-smi names come first because they are
    per-chip; PCI decides when names are ambiguous ('Ascend910' on A3)."""
    asc = snapshot.ascend
    if asc is UNKNOWN:
        return UNKNOWN
    if asc is None:
        return None
    fams: list[str] = []
    if known(asc.devices):
        for d in asc.devices:
            for n in (d.soc, d.chip):
                f = family_from_name(n) if known(n) else None
                if f:
                    fams.append(_bare_910b(n, d.hbm_total_mb) or f)
                    break
    if not fams and known(asc.pci):
        fams = [PCI_FAMILY[p.device_id.lower().removeprefix("0x")] for p in asc.pci
                if known(p.device_id) and p.device_id.lower().removeprefix("0x") in PCI_FAMILY]
    if not fams and known(asc.devices) and asc.devices:
        names = {d.chip for d in asc.devices if known(d.chip)}
        if names and all(isinstance(n, str) and n.lower().replace("ascend", "") == "910" for n in names):
            # 'Ascend910' with two chips per NPU id is the A3 layout of driver 24.1 (fixture vllm-ascend-5111)
            per_id: dict[int, int] = {}
            for d in asc.devices:
                if known(d.id):
                    per_id[d.id] = per_id.get(d.id, 0) + 1
            return A3 if per_id and max(per_id.values()) >= 2 else GEN1
    if fams:
        return max(set(fams), key=fams.count)
    no_devices = known(asc.devices) and not asc.devices
    no_pci = known(asc.pci) and not asc.pci
    if no_devices and (no_pci or not known(asc.pci)):
        return None
    if no_pci and not known(asc.devices):
        return None
    return UNKNOWN


def soc_family(soc: Any) -> str | None:
    """Family of a SOC_VERSION / kernels-package SOC string (ascend910b1, ascend910_9391, ascend310p1)."""
    return family_from_name(soc)
