"""HCCL's return codes (HcclResult) as torch_npu reports them: the component each code points at.

torch_npu checks every HCCL call and raises " HCCL function error: <call>, error code is <N>" (Ascend/pytorch 9e73e70,
torch_npu/csrc/distributed/HCCLUtils.hpp, HCCL_CHECK_ERROR). N is an HcclResult (the hccl_types.h it ships,
third_party/hccl/inc/hccl/hccl_types.h): 1 parameter error ... 9 timeout, 11 / 12 TCP / RoCE connect failed, 16 a
driver call failed, 21 an error CQE from the remote end, 24 out of memory. The code says which layer refused the
collective: the configuration it was given, the links, the runtime or driver below it, the device's memory. Pure
logic.
"""

from __future__ import annotations

import re

from doctor.explain.attributed import Attribution
from doctor.explain.class_phrases import HCCL_PHRASES
from doctor.report import Severity

SOURCE = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/third_party/hccl/inc/hccl/"
          "hccl_types.h#L23")
# code -> (HcclResult name, the header's words, components)
CODES: dict[int, tuple[str, str, tuple[str, ...]]] = {
    1: ("HCCL_E_PARA", "parameter error", ("config", "hccl")),
    2: ("HCCL_E_PTR", "empty pointer", ("hccl", "torch-npu")),
    3: ("HCCL_E_MEMORY", "memory error", ("npu", "config")),
    4: ("HCCL_E_INTERNAL", "internal error", ("hccl", "cann")),
    5: ("HCCL_E_NOT_SUPPORT", "not support feature", ("hccl", "config")),
    6: ("HCCL_E_NOT_FOUND", "not found specific resource", ("hccl", "config")),
    7: ("HCCL_E_UNAVAIL", "resource unavailable", ("hccl", "npu")),
    8: ("HCCL_E_SYSCALL", "call system interface error", ("system", "hccl")),
    9: ("HCCL_E_TIMEOUT", "timeout", ("hccl", "network")),
    10: ("HCCL_E_OPEN_FILE_FAILURE", "open file fail", ("system", "config")),
    11: ("HCCL_E_TCP_CONNECT", "tcp connect fail", ("network", "hccl")),
    12: ("HCCL_E_ROCE_CONNECT", "roce connect fail", ("network", "hccl")),
    13: ("HCCL_E_TCP_TRANSFER", "tcp transfer fail", ("network", "hccl")),
    14: ("HCCL_E_ROCE_TRANSFER", "roce transfer fail", ("network", "hccl")),
    15: ("HCCL_E_RUNTIME", "call runtime api fail", ("cann", "hccl")),
    16: ("HCCL_E_DRV", "call driver api fail", ("driver", "hccl")),
    17: ("HCCL_E_PROFILING", "call profiling api fail", ("hccl", "cann")),
    18: ("HCCL_E_CCE", "call cce api fail", ("cann", "hccl")),
    19: ("HCCL_E_NETWORK", "call network api fail", ("network", "hccl")),
    20: ("HCCL_E_AGAIN", "try again", ("hccl", "network")),
    21: ("HCCL_E_REMOTE", "error cqe", ("network", "hccl")),
    22: ("HCCL_E_SUSPENDING", "error communicator suspending", ("hccl", "npu")),
    23: ("HCCL_E_OPRETRY_FAIL", "retry constraint", ("hccl", "network")),
    24: ("HCCL_E_OOM", "out of memory", ("npu", "config")),
}
_HCCL_CHECK = re.compile(r"HCCL function error: .{0,300}?, error code is (?P<code>\d{1,2})(?!\d)")
PHRASES = HCCL_PHRASES  # the scanner's pre-filter reads them from doctor.explain.class_phrases


def hccl_code(text: str) -> str | None:
    m = _HCCL_CHECK.search(text)
    return m.group("code") if m is not None and int(m.group("code")) in CODES else None


def attribute_hccl(code: str) -> Attribution:
    name, words, comps = CODES[int(code)]
    return Attribution(
        "hccl-code-owner", Severity.ERROR, comps, f"An HCCL call failed with {code} ({name}: {words})",
        f"Read: torch_npu's \"HCCL function error: …, error code is {code}\" — HcclResult {code} is {name} "
        f"(\"{words}\" in hccl_types.h): the layer that refused the collective is the one it names.",
        "Read HCCL's own log for the call (ASCEND_GLOBAL_LOG_LEVEL=1, plog under ~/ascend/log) and check what the "
        "code names: the rank table / ranks / sizes given (parameter errors), the links (hccn_tool -net_health, "
        "HCCL_IF_IP; connect and transfer errors, error CQEs), the driver and runtime, the device's memory.",
        SOURCE, f"HCCL error code {code} -> {name}")
