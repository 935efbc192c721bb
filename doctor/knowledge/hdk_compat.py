"""Whether the installed NPU firmware and driver accept each other, by the rule the driver itself applies.

The Ascend driver's DCMI (what `npu-smi` shows as the device's compatibility) decides it in
dcmi_get_device_compatibility: firmware older than "6.4." is never compatible; otherwise the pair is compatible when
the firmware's version falls in the driver's `compatible_version_fw` list (its version.info), or else the driver's
version falls in the firmware's `compatible_version_drv` list. A list is `[start,end],[start,end]...`; a version is
in a range when its first max(len(start), len(end)) characters compare (as bytes) between start and end inclusive
(dcmi_judge_compatibility / dcmi_verison_compat_cmp), so `[24.1,24.1.]` holds every 24.1.x release. Pure logic:
the snapshot's driver and firmware facts come in, True / False / None (cannot tell) goes out.
"""

from __future__ import annotations

import re

FIRST_COMPATIBLE_FW = "6.4."  # COMPAT_VERSION_START_FW, dcmi_common.h
SOURCE = ("https://github.com/hicann/driver/blob/v8.5.0/src/custom/dev_prod/user/dcmi/dcmi_interface/src/"
          "dcmi_basic_info_intf.c#L1405; https://github.com/hicann/driver/blob/v8.5.0/src/custom/dev_prod/user/dcmi/"
          "dcmi_inner/src/dcmi_permission_judge.c#L164")


def ranges(compat_list: str) -> list[tuple[str, str]]:
    """`[7.0.0,8.9.9]` or `[23.0.0,23.0.0.],[24.1,24.1.]` as (start, end) pairs; tokens are split on any of `],[`
    as the driver's strtok does, and taken two by two."""
    tokens = [t for t in re.split(r"[\],\[]", compat_list.strip()) if t]
    return [(tokens[i], tokens[i + 1]) for i in range(0, len(tokens) - 1, 2)]


def in_list(version: str, compat_list: str) -> bool:
    """Is `version` in one of the list's ranges (byte-wise on its first max(len(start), len(end)) characters)?"""
    for start, end in ranges(compat_list):
        cut = version[:max(len(start), len(end))]
        if start <= cut <= end:
            return True
    return False


def compatible(firmware: str, driver: str | None, fw_list: str | None, drv_list: str | None) -> bool | None:
    """The driver's verdict on this firmware; None when a list it needs is not known."""
    if firmware < FIRST_COMPATIBLE_FW:
        return False
    if fw_list and in_list(firmware, fw_list):
        return True
    if not (fw_list and drv_list and driver):
        return None
    return in_list(driver, drv_list)
