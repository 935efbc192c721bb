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
# The calls of HCCL's API that create a communicator rather than run a collective on one (hccl.h as torch_npu ships
# it: HcclCommInitClusterInfo[Config], HcclCreateSubCommConfig, HcclGetRootInfo, HcclCommInitRootInfo[Config]);
# torch_npu's check names the call as its code spells it (`hcclCommInitRootInfoConfig`, its wrapper of the Config one).
SETUP_SOURCE = ("https://github.com/Ascend/pytorch/blob/00ac88a97ec19e837903fc2276efd6b3b7eb87af/third_party/hccl/inc/"
                "hccl/hccl.h")
_SETUP_CALL = re.compile(r"HCCL function error: [\w:]*?[Hh]ccl(?:CommInit(?:RootInfo|ClusterInfo)(?:Config)?|GetRootInfo"
                         r"|CreateSubCommConfig)\b")
PHRASES = HCCL_PHRASES  # the scanner's pre-filter reads them from doctor.explain.class_phrases


def hccl_code(text: str) -> str | None:
    m = _HCCL_CHECK.search(text)
    return m.group("code") if m is not None and int(m.group("code")) in CODES else None


def creates_communicator(text: str) -> bool:
    """The HCCL call torch_npu reports as failed is one that creates a communicator (HcclCommInitRootInfo …)."""
    return _SETUP_CALL.search(text) is not None


def attribute_hccl(code: str, setup: bool = False) -> Attribution:
    """What HcclResult `code` names; `setup`: the failed call was creating the communicator, not running a collective
    (the ranks exchange the root rank's info over the host network, then link to their peers)."""
    name, words, comps = CODES[int(code)]
    what = "Creating an HCCL communicator" if setup else "An HCCL call"
    refused = "the communicator's creation" if setup else "the collective"
    return Attribution(
        "hccl-code-owner", Severity.ERROR, comps, f"{what} failed with {code} ({name}: {words})",
        f"Read: torch_npu's \"HCCL function error: …, error code is {code}\" — HcclResult {code} is {name} "
        f"(\"{words}\" in hccl_types.h): the layer that refused {refused} is the one it names."
        + (" The call creates the communicator (hccl.h): the ranks get the root rank's info over the host network "
           "and set up links to their peers, so every rank of the group must reach it with the same sizes."
           if setup else ""),
        "Read HCCL's own log for the call (ASCEND_GLOBAL_LOG_LEVEL=1, plog under ~/ascend/log) and check what the "
        "code names: the rank table / ranks / sizes given (parameter errors), the links (hccn_tool -net_health, "
        "HCCL_IF_IP; connect and transfer errors, error CQEs), the driver and runtime, the device's memory."
        + (" For a communicator's creation also: every rank of the group reached it (the other ranks' logs), and "
           "HCCL_IF_IP / HCCL_SOCKET_IFNAME name an interface the nodes share." if setup else ""),
        f"{SOURCE}; {SETUP_SOURCE}" if setup else SOURCE, f"HCCL error code {code} -> {name}"
        + (" (creating the communicator)" if setup else ""))
