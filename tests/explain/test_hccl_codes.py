"""HCCL's return codes as torch_npu reports them (doctor/explain/hccl_codes.py): HCCLUtils.hpp's HCCL_CHECK_ERROR
prints " HCCL function error: <call>, error code is <N>", N an HcclResult of hccl_types.h (Ascend/pytorch 9e73e70).
Read with the generic database: the code names the layer."""

from __future__ import annotations

import pytest

from doctor.explain.hccl_codes import hccl_code
from doctor.explain.stream import explain_lines
from tests.explain.generic import errors


@pytest.mark.parametrize(("code", "name", "comps"), [
    (1, "HCCL_E_PARA", ("config", "hccl")),
    (9, "HCCL_E_TIMEOUT", ("hccl", "network")),
    (12, "HCCL_E_ROCE_CONNECT", ("network", "hccl")),
    (16, "HCCL_E_DRV", ("driver", "hccl")),
    (24, "HCCL_E_OOM", ("npu", "config")),
])
def test_an_hccl_result_names_the_layer_that_refused_the_collective(code, name, comps):
    line = (f"RuntimeError: allreduce:torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:4120 HCCL function error: "
            f"HcclAllReduce(inputDataPtr, outputDataPtr, numel, hcclType, hcclReduceOp, comm, stream.stream()), "
            f"error code is {code}")
    (f,) = errors([line])
    assert f.id == "hccl-code-owner" and f.components == comps and name in f.title
    assert "hccl_types.h" in f.source


def test_a_code_outside_hcclresult_or_another_libraries_code_is_not_read_as_hccls():
    assert hccl_code("HCCL function error: HcclAllReduce(...), error code is 99") is None
    assert hccl_code("NPU function error: aclrtSynchronizeStream, error code is 507035") is None


# With the whole database: a vLLM worker's HCCL failure as https://github.com/vllm-project/vllm-ascend/issues/2712
# quotes it (pipeline parallel on a 310P). The knock-on signature hccl-collective-failed matches the line and only says
# "read the HCCL code"; nothing in the log is a root cause, so the code's reading replaces it.
VLLM_PP = [
    "(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [multiproc_executor.py:522]     pg.recv([tensor], group_src_rank, "
    "tag).wait()",
    "(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [multiproc_executor.py:522] RuntimeError: create_config:build/"
    "CMakeFiles/torch_npu.dir/compiler_depend.ts:148 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo,"
    " rank, config, &(comm->hcclComm_)), error code is 1",
    "(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [multiproc_executor.py:522] [ERROR] 2025-09-03-03:02:37 "
    "(PID:7226, Device:1, RankID:-1) ERR02200 DIST call hccl api failed.",
    "(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [multiproc_executor.py:522] ",
]


def test_with_the_whole_database_the_code_replaces_the_knock_on_when_nothing_else_is_a_root_cause():
    found = [f for f in explain_lines(VLLM_PP) if f.severity.value == "error"]
    assert found[0].id == "hccl-code-owner" and found[0].components == ("config", "hccl"), [f.id for f in found]
    assert "HCCL_E_PARA" in found[0].title and found[0].evidence["line"] == 2
    assert "hccl-collective-failed" not in [f.id for f in found]


def test_a_root_cause_signature_in_the_log_keeps_the_knock_on_and_reads_no_code():
    # EJ0001 (HCCP could not start) explains the code-7 line above it: the code adds nothing
    lines = [VLLM_PP[1].replace("error code is 1", "error code is 7"),
             "EJ0001: [PID: 468348] 2025-04-24-16:14:56.975.866 Failed to initialize the HCCP process. Reason: Maybe "
             "the last training process is running."]
    ids = [f.id for f in explain_lines(lines) if f.severity.value == "error"]
    assert ids[0] == "hccp-init-failed" and "hccl-code-owner" not in ids, ids


def test_the_hccp_init_failure_is_read_from_its_error_type_too():
    # CANN 8.5 prints the error type before the code (`HCCP_Process_Initialization_Failure(EJ0001)`, its error-code
    # reference); a quote may keep only that: still EJ0001's reading, not the generic EI / EJ one
    lines = ["HCCL function error: hcclCommInitRootInfoConfig ... error code is 7",
             "[PID: 468348] 2026-04-24-16:14:56.975.866 HCCP_Process_Initialization_Failure(EJ0001)"]
    ids = [f.id for f in explain_lines(lines) if f.severity.value == "error"]
    assert ids[0] == "hccp-init-failed", ids


def test_a_call_that_creates_the_communicator_is_read_as_its_creation_not_a_collective():
    # hcclCommInitRootInfoConfig (torch_npu's wrapper of HcclCommInitRootInfoConfig, hccl.h): the ranks had not got as
    # far as a collective; the reading says so and what creation needs (every rank reaching it, a shared interface)
    found = [f for f in explain_lines(VLLM_PP) if f.severity.value == "error"]
    assert found[0].title == "Creating an HCCL communicator failed with 1 (HCCL_E_PARA: parameter error)", found[0].title
    assert "hccl.h" in found[0].source and "HCCL_SOCKET_IFNAME" in found[0].fix.text
    line = ("RuntimeError: allreduce:torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:4120 HCCL function error: "
            "HcclAllReduce(inputDataPtr, outputDataPtr, numel, hcclType, hcclReduceOp, comm, stream.stream()), "
            "error code is 1")
    (f,) = errors([line])
    assert f.title == "An HCCL call failed with 1 (HCCL_E_PARA: parameter error)" and "hccl.h" not in f.source
