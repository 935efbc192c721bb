"""The driver management interface's return codes (DCMI, libdcmi): which component each code points at.

npu-smi, the device plugins and the Ascend tools read the NPUs through libdcmi, whose calls return
DCMI_ERROR_CODE_BASE (-8000) minus a reason (hicann/driver, src/custom/include/dcmi_interface_api.h at ef377e9:
-8001 invalid parameter ... -8020 resource occupied, -8255 not supported). A line that names dcmi and such a code
says why the driver refused: the reason names the component to look at (the device, the driver, the container's
permissions, the configuration's device id). Pure logic.
"""

from __future__ import annotations

import re

from doctor.explain.attributed import Attribution
from doctor.explain.class_phrases import DCMI_PHRASES
from doctor.report import Severity

SOURCE = ("https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/src/custom/include/"
          "dcmi_interface_api.h#L1973")
# code -> (macro suffix, components, what to check)
CODES: dict[int, tuple[str, tuple[str, ...], str]] = {
    -8001: ("INVALID_PARAMETER", ("driver", "config"), "the device / card id and arguments the caller passed"),
    -8002: ("OPER_NOT_PERMITTED", ("system", "driver"), "that the caller runs as root or in the driver's group "
            "(HwHiAiUser) and that the container was given the device management nodes"),
    -8003: ("MEM_OPERATE_FAIL", ("driver", "system"), "host memory and the driver's state (dmesg)"),
    -8004: ("SECURE_FUN_FAIL", ("driver", "system"), "the driver's state (dmesg)"),
    -8005: ("INNER_ERR", ("driver", "npu"), "the device's state (npu-smi info; another process or container "
            "holding it) and the driver log (dmesg, /var/log/npu/)"),
    -8006: ("TIME_OUT", ("driver", "npu"), "whether the device answers (npu-smi info) and the driver log"),
    -8007: ("INVALID_DEVICE_ID", ("config", "npu"), "the device id asked for against the devices present"),
    -8008: ("DEVICE_NOT_EXIST", ("npu", "driver"), "that the device is present and visible (npu-smi info, "
            "/dev/davinci*; the container's device list)"),
    -8009: ("IOCTL_FAIL", ("driver", "system"), "that the driver is loaded and its device nodes are mounted "
            "(/dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc)"),
    -8010: ("SEND_MSG_FAIL", ("driver", "npu"), "the device's state and the driver log"),
    -8011: ("RECV_MSG_FAIL", ("driver", "npu"), "the device's state and the driver log"),
    -8012: ("NOT_REDAY", ("npu", "driver"), "that the device finished starting (npu-smi info)"),
    -8013: ("NOT_SUPPORT_IN_CONTAINER", ("system", "cluster"), "run the query on the host, or give the container "
            "the privileges the query needs"),
    -8014: ("FILE_OPERATE_FAIL", ("system", "driver"), "the files the driver reads and writes (permissions, space)"),
    -8015: ("RESET_FAIL", ("npu", "driver"), "the device's health (npu-smi info -t health) and the driver log"),
    -8016: ("ABORT_OPERATE", ("driver", "npu"), "what aborted the operation (the driver log)"),
    -8017: ("IS_UPGRADING", ("npu", "driver"), "wait for the firmware upgrade to finish"),
    -8020: ("RESOURCE_OCCUPIED", ("npu", "system"), "which process or container holds the device"),
    -8022: ("PARTITION_NOT_RIGHT", ("npu", "driver"), "the device's partition (vNPU) configuration"),
    -8023: ("CONFIG_INFO_NOT_EXIST", ("driver", "config"), "the driver's configuration the query reads"),
    -8255: ("NOT_SUPPORT", ("npu", "driver"), "that the query is supported on this chip and driver release"),
}
# a line that names dcmi (or npu-smi, which reports through it) and a code of the family
_DCMI_LINE = re.compile(r"\bdcmi|npu-smi", re.I)
_CODE = re.compile(r"(?<![\w.-])(?P<code>-8(?:0[0-2]\d|255))(?!\d)")
PHRASES = DCMI_PHRASES  # the scanner's pre-filter reads them from doctor.explain.class_phrases


def dcmi_code(text: str) -> str | None:
    """The DCMI return code on a line that names dcmi / npu-smi, if it is one of the family's."""
    if not _DCMI_LINE.search(text):
        return None
    m = _CODE.search(text)
    return m.group("code") if m is not None and int(m.group("code")) in CODES else None


def attribute_dcmi(code: str) -> Attribution:
    name, comps, check = CODES[int(code)]
    return Attribution(
        "dcmi-code-owner", Severity.ERROR, comps, f"The driver management interface returned {code} "
        f"(DCMI_ERR_CODE_{name})",
        f"Read: dcmi's return code {code} = DCMI_ERROR_CODE_BASE (-8000) - {-8000 - int(code)}, "
        f"DCMI_ERR_CODE_{name} in the driver's dcmi_interface_api.h: the driver refused the query for that reason.",
        f"Check {check}.", SOURCE, f"dcmi code {code} -> DCMI_ERR_CODE_{name}")
