"""DCMI return codes: the NPU driver's device-management interface (npu-smi, the NPU exporter, device plugins and
runtimes that query the card through libdcmi) reports failures as `ret is -80xx`.

The codes and their meanings are the driver's own table ("Return Codes" of the Ascend 910B DCMI API reference,
grouped there as: invalid input / abnormal device or environment; permission or function not supported; retry upon
timeout; internal execution exception). Each row names the component to look at first, read from that meaning: a
device id the caller passed (config), a device missing or held elsewhere (npu), a permission or container limit
(system / env), the driver itself. A line is read only when it names DCMI, so other tools' -80xx numbers are not.
Pure data and one lookup.
"""

from __future__ import annotations

import re

DCMI_SOURCE = ("https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/docs/en/"
               "Ascend_910B_DCMI_API/Ascend_910B_DCMI_API/return-codes.md")

# code -> (DCMI name, meaning as documented, components to look at first)
DCMI_CODES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "-8001": ("DCMI_ERR_CODE_INVALID_PARAMETER", "incorrect input parameter", ("config", "driver")),
    "-8002": ("DCMI_ERR_CODE_OPER_NOT_PERMITTED", "permission error: the user may not call this API",
              ("system", "env")),
    "-8003": ("DCMI_ERR_CODE_MEM_OPERATE_FAIL", "a memory operation failed: user-space memory", ("system",)),
    "-8004": ("DCMI_ERR_CODE_SECURE_FUN_FAIL", "a secure function failed inside the driver", ("driver",)),
    "-8005": ("DCMI_ERR_CODE_INNER_ERR", "internal error of the driver", ("driver", "npu")),
    "-8006": ("DCMI_ERR_CODE_TIME_OUT", "the device did not answer in time", ("npu", "driver")),
    "-8007": ("DCMI_ERR_CODE_INVALID_DEVICE_ID", "invalid device id: no such device for this process",
              ("config", "npu")),
    "-8008": ("DCMI_ERR_CODE_DEVICE_NOT_EXIST", "device not found: not present or not running", ("npu", "driver")),
    "-8009": ("DCMI_ERR_CODE_IOCTL_FAIL", "an ioctl to the driver failed", ("driver",)),
    "-8010": ("DCMI_ERR_CODE_SEND_MSG_FAIL", "a message to the device could not be sent", ("driver", "npu")),
    "-8011": ("DCMI_ERR_CODE_RECV_MSG_FAIL", "a message from the device was not received", ("driver", "npu")),
    "-8012": ("DCMI_ERR_CODE_NOT_REDAY", "the device is not ready", ("npu", "driver")),
    "-8013": ("DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER", "this API is not supported in a container",
              ("env", "driver")),
    "-8015": ("DCMI_ERR_CODE_RESET_FAIL", "the device reset failed", ("npu", "driver")),
    "-8016": ("DCMI_ERR_CODE_ABORT_OPERATE", "the device reset was cancelled", ("npu", "driver")),
    "-8017": ("DCMI_ERR_CODE_IS_UPGRADING", "a firmware upgrade is in progress", ("firmware", "driver")),
    "-8020": ("DCMI_ERR_CODE_RESOURCE_OCCUPIED", "the device is occupied by another container or process",
              ("npu", "env")),
    "-8023": ("DCMI_ERR_CODE_CONFIG_INFO_NOT_EXIST", "the requested configuration was never set",
              ("config", "driver")),
    "-8255": ("DCMI_ERR_CODE_NOT_SUPPORT", "the device or feature is not supported", ("npu", "driver")),
}

# The pre-filter's phrases for such lines (doctor.explain.events.EVENT_PHRASES) and the code on a line naming DCMI.
PHRASES: tuple[tuple[str, ...], ...] = (("dcmi",), ("DCMI",))
_DCMI_CODE = re.compile(r"(?i:dcmi).*?(?<![\w-])(?P<code>-8(?:0\d\d|255))(?!\d)")


def dcmi_code(text: str) -> str | None:
    """The DCMI return code on a line that names DCMI (`dcmi module initialize failed. ret is -8005` -> -8005)."""
    m = _DCMI_CODE.search(text)
    return m.group("code") if m and m.group("code") in DCMI_CODES else None


def owner_of_dcmi_code(code: str) -> tuple[tuple[str, ...], str, str] | None:
    """(components, meaning, source) of a DCMI return code; None for a number the table does not hold."""
    row = DCMI_CODES.get(code)
    if row is None:
        return None
    name, meaning, comps = row
    return comps, f"DCMI {name}: {meaning}", DCMI_SOURCE
