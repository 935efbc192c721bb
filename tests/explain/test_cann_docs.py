"""`doctor explain` on the messages CANN's own documentation quotes (issue 23): the error-code reference, the runtime
FAQ, HCCL's error-code pages and troubleshooting guide, the driver FAQ. Each signature's own example is checked by
test_signatures; these check what a user's log shows: the code-prefixed line the error manager prints is explained by
the code's cause (not only by its module's family), the families CANN added (E5 / E6 / E9 / EA) have an owner, and the
lines the same pages call healthy stay quiet."""

from __future__ import annotations

import pytest

from doctor.explain.codes import owner_of_code
from doctor.explain.signatures import explain_lines

PREFIX = "[PID: 4242] 2025-01-01-00:00:00.000.000"


def top(lines: list[str]):
    found = explain_lines(lines, context_lines=0)
    assert found, lines
    return found[0]


@pytest.mark.parametrize(("line", "wanted", "first"), [
    # the runtime family (EE) says cann / npu; the code's own page names the driver, the variable, the device budget
    (f"EE1015: {PREFIX} rtsIpcMemImportByKey failed. Reason: The driver version capacity is insufficient. "
     "The driver interface halShmemInfoGet does not exist.", "cann-driver-too-old-for-runtime", "driver"),
    (f"EE2002: {PREFIX} Value 1,2,2 for environment variable ASCEND_RT_VISIBLE_DEVICES is invalid. "
     "Expected value: cannot be duplicated.", "ascend-rt-visible-devices-invalid", "env"),
    ("Resource_Error(EE1023): Alloc Stream resource failed. Reason: Too many streams are created.",
     "cann-device-task-resources-exhausted", "config"),
    (f"EH0010: {PREFIX} Failed to allocate 1024 bytes host memory for ACL.", "cann-host-resources-exhausted", "system"),
    # TE Fusion's family says cann / kernels; an old Python is the environment's
    (f"E40002: {PREFIX} Unsupported Python version: Python 2.7.18. Expected: Python 3.7.5 or later.",
     "cann-python-version-unsupported", "python"),
    # a TypeError inside CANN's own compiler is not the user's call
    (f"E40024: {PREFIX} Failed to call Python Method op_params_to_json. Reason: TypeError: op_params_to_json() "
     "takes 1 positional argument but 2 were given.", "cann-compiler-python-call-failed", "cann"),
    # EZ2001 is an execution fault with a RAS event, not an operator input error
    (f"EZ2001: {PREFIX} An error occurs on the device(chipId:0, dieId:0), the serial number is 3",
     "npu-hardware-fault-reported", "npu"),
    # HCCL's family says hccl / network; these codes' pages name the variable, the versions, the ranktable
    (f"EI0001: {PREFIX} Value 2147483648 for environment variable HCCL_EXEC_TIMEOUT is invalid. Expected value: a "
     "number greater than or equal to 0s and less than or equal to 2147483647s.", "hccl-environment-variable-invalid",
     "env"),
    (f"EI0008: {PREFIX} The ops (cann-hccl) versions are inconsistent. The local version is 9.2.0, while the remote "
     "version is 9.1.0.", "hccl-cann-versions-inconsistent", "cann"),
    (f"EI0014: {PREFIX} The ranktable information check failed, Reason:[device_ip mismatch].",
     "hccl-ranktable-check-failed", "config"),
    ("[ERROR] ROCE(2040034,alltoall_test):2025-09-15-08:38:12.776.612 [hns_roce_lite.c:630]"
     "hns_roce_lite_handle_error_cqe(630) : error cqe status: 0x15", "hccl-error-cqe", "network"),
    # the AI CPU family says model / cann; a lost device is the device's
    (f"E30005: {PREFIX} Failed to connect the device.", "npu-device-connection-lost", "npu"),
    (f"EZ3003: {PREFIX} No supported Ops kernel and engine are found for [MatMulV3], optype [MatMulV3].",
     "cann-operator-not-supported", "cann"),
    ("[ERROR] RUNTIME: operation not permitted when a stream is capturing and the specified capture mode is not "
     "relaxed, ret=107041", "aclgraph-capture-operation-not-permitted", "vllm-ascend"),
])
def test_a_documented_code_line_is_explained_by_its_own_cause(line, wanted, first):
    f = top([line])
    assert (f.id, f.components[0]) == (wanted, first)


@pytest.mark.parametrize(("code", "first"), [
    ("E60000", "model"), ("E50003", "model"), ("E69999", "kernels"), ("E90000", "kernels"), ("EA0000", "kernels"),
])
def test_the_operator_check_and_compile_families_have_an_owner(code, first):
    hit = owner_of_code(code)
    assert hit is not None and hit[0][0] == first


def test_an_operator_check_code_line_is_attributed():
    f = top([f"E60000: {PREFIX} The op[MatMul] input parameter[x1] should be [2D], actual the input is [3D]"])
    assert f.id == "error-code-owner" and f.components[:2] == ("model", "kernels")


@pytest.mark.parametrize("line", [
    # troubleshooting_0010: only compare_fail_num other than 0 is an iCache fault
    "[ERROR] TSCH(-1,null):2024-09-04-00:12:52.986.322 438 (dieid:0,cpuid:0) aicore_icache_plat.c:848 "
    "check_error_pc_icache_and_hbm_info: stat for dump pc start, aic_id=1, icache_miss_num=8176, hbm_miss_num=0, "
    "compare_num=17, compare_fail_num=0",
    "export HCCL_EXEC_TIMEOUT=1800",
    "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
])
def test_lines_the_pages_call_healthy_raise_no_error(line):
    assert all(f.severity.value != "error" for f in explain_lines([line], context_lines=0))


@pytest.mark.parametrize(("code", "wanted", "first"), [
    # aclError: the 2070xx range says config / npu (resources); these entries name the model, the device, the user
    ("207003", "npu-aicore-overflow", "model"), ("207004", "npu-device-unavailable", "npu"),
    ("207006", "npu-no-permission", "system"), ("207019", "cann-driver-too-old-for-runtime", "driver"),
    ("507056", "npu-device-link-error", "network"), ("107030", "aclgraph-capture-operation-not-permitted", "vllm-ascend"),
])
def test_an_acl_return_code_is_explained_by_its_own_entry(code, wanted, first):
    f = top([f"RuntimeError: InnerRun:torch_npu/csrc/framework/OpParamMaker.cpp:208 NPU function error: aclrtX, "
             f"error code is {code}"])
    assert (f.id, f.components[0]) == (wanted, first)


@pytest.mark.parametrize(("code", "first"), [
    ("145000", "model"), ("148049", "env"), ("148047", "config"), ("245002", "config"), ("300000", "system"), ("545000", "cann"),
])
def test_the_graph_engine_return_codes_have_an_owner(code, first):
    hit = owner_of_code(code)
    assert hit is not None and hit[0][0] == first


@pytest.mark.parametrize(("code", "wanted", "first"), [
    # HcclResult: memory and the error CQE name their layer; a code no signature of its own reads (9, timeout) is read
    # by the HcclResult table rather than the generic knock-on "HCCL function error" (hccl / network)
    ("11", "hccl-network-call-failed", "network"), ("24", "hccl-device-memory-exhausted", "config"),
    ("21", "hccl-error-cqe", "network"), ("9", "hccl-code-owner", "hccl"),
])
def test_an_hccl_result_code_is_explained_by_its_meaning(code, wanted, first):
    f = top([f"RuntimeError: HCCL function error: HcclAllReduce(sendBuf, recvBuf), error code is {code}"])
    assert (f.id, f.components[0]) == (wanted, first)


@pytest.mark.parametrize(("line", "wanted", "first"), [
    # the driver's DCMI return codes behind npu-smi's "ret is -80xx"
    ("dcmi_get_device_info failed. ret is -8002", "dcmi-permission-denied", "system"),
    ("dcmi get device info failed. ret is -8013", "dcmi-not-supported-in-container", "env"),
    ("dcmi module initialize failed. ret is -8008", "dcmi-device-not-ready", "npu"),
    ("dcmi module initialize failed. ret is -8005", "npu-dcmi-init-failed", "npu"),
])
def test_a_dcmi_return_code_is_explained_by_its_entry(line, wanted, first):
    f = top([line])
    assert (f.id, f.components[0]) == (wanted, first)
