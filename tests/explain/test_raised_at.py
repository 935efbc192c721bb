"""An error raised in the NPU caching allocator's allocation path is device memory, ahead of the runtime code it
carries (doctor/explain/raised_at.py). torch_npu 9e73e70: NPUCachingAllocator.cpp's DeviceCachingAllocator::malloc
ends in `NPU_CHECK_ERROR(params.err)` for an allocation that failed with any code but the memory one; NPUException.h
prints `__func__:__FILE__:__LINE__ NPU function error: <call>, error code is N`. Read with the generic database."""

from __future__ import annotations

from tests.explain.generic import errors


def test_a_failure_raised_in_the_allocators_malloc_is_device_memory_not_the_codes_family():
    (f,) = errors(["RuntimeError: malloc:torch_npu/csrc/core/npu/NPUCachingAllocator.cpp:1389 NPU function error: "
                   "params.err, error code is 507033"])
    assert f.id == "device-allocation-failed" and f.components == ("config", "npu")
    assert "malloc:NPUCachingAllocator.cpp:1389" in f.evidence["read"]
    assert "NPUCachingAllocator.cpp" in f.source


def test_a_code_raised_elsewhere_keeps_its_family():
    (f,) = errors(["RuntimeError: synchronize:torch_npu/csrc/core/npu/NPUStream.cpp:380 NPU function error: "
                   "aclrtSynchronizeStream, error code is 507033"])
    assert f.id == "error-code-owner"
    # the allocator's free path is no allocation
    (g,) = errors(["RuntimeError: free:torch_npu/csrc/core/npu/NPUCachingAllocator.cpp:2010 NPU function error: "
                   "aclrtFree, error code is 507033"])
    assert g.id == "error-code-owner"
