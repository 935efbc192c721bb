"""HCCL's return codes as torch_npu reports them (doctor/explain/hccl_codes.py): HCCLUtils.hpp's HCCL_CHECK_ERROR
prints " HCCL function error: <call>, error code is <N>", N an HcclResult of hccl_types.h (Ascend/pytorch 9e73e70).
Read with the generic database: the code names the layer."""

from __future__ import annotations

import pytest

from doctor.explain.hccl_codes import hccl_code
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
