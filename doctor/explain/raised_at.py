"""Where native code raised an error: the `function:file:line` a C++ check prints, read for what that code does.

torch_npu's checks print the C++ function, file and line that raised (NPUException.h, `NPU_CHECK_ERROR`:
`__func__:__FILE__:__LINE__ NPU function error: ..., error code is N`; older releases `... NPU error, error code is N`).
The code N names CANN's family (doctor.explain.codes); the place says more when it is the caching allocator's
allocation path: NPUCachingAllocator.cpp's `DeviceCachingAllocator::malloc` (Ascend/pytorch 9e73e70) raises
OutOfMemoryError when the runtime has no memory left and `NPU_CHECK_ERROR(params.err)` for any other error of the
allocation it just tried. Either way the device memory the run asked for could not be allocated: the model, batch
or cache sizes the configuration sets, on this NPU. Pure logic.
"""

from __future__ import annotations

import re

from doctor.explain.attributed import Attribution
from doctor.report import Severity

ALLOCATOR_SOURCE = ("https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/"
                    "core/npu/NPUCachingAllocator.cpp#L1389")
# `malloc:/path/NPUCachingAllocator.cpp:293` (the function, then the allocator's source file and line)
_ALLOCATOR_AT = re.compile(r"(?<![\w:])(?P<func>malloc|alloc\w*|raw_alloc\w*):(?P<file>\S*?(?P<dev>NPU|CUDA|XPU)?"
                           r"CachingAllocator\.(?:cpp|cc|h)):(?P<line>\d+)\b")


def allocation_failed(text: str) -> Attribution | None:
    """The error was raised in a caching allocator's allocation function: device memory could not be allocated."""
    m = _ALLOCATOR_AT.search(text)
    if m is None:
        return None
    device = "npu" if (m.group("dev") or "NPU") == "NPU" else "torch"
    where = f"{m.group('func')}:{m.group('file').rsplit('/', 1)[-1]}:{m.group('line')}"
    return Attribution(
        "device-allocation-failed", Severity.ERROR, ("config", device),
        "Device memory could not be allocated (the error was raised in the caching allocator's malloc)",
        f"Read: {where}, the caching allocator's allocation path. It raises when the block the run asked for cannot "
        "be allocated on the device: the memory the model, batch and caches need is more than the device has free "
        "(or another process holds it); the error code says which runtime call refused it.",
        "Lower what the run keeps on the device (micro batch size, sequence length, the rollout's "
        "gpu_memory_utilization / KV cache, offload), or use more devices; check that no other process holds the "
        "NPU (npu-smi info).", ALLOCATOR_SOURCE, f"{where} -> the caching allocator's allocation path")
