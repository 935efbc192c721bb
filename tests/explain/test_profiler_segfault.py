"""A segfault banner other than the shell's, and a segfault as torch_npu's profiler is stopped.

`!!!!!!! Segfault encountered !!!!!!!` is what apache-tvm-ffi's SIGSEGV handler prints before re-raising the signal
(apache/tvm-ffi 4ca86a2 src/ffi/backtrace.cc, TVMFFISegFaultHandler, installed from a library constructor by every
process that loads tvm-ffi, e.g. through xgrammar under vLLM): it is a segmentation fault like the shell's
`Segmentation fault`. torch_npu's ProfActionController prints `Incorrect schedule: Stop profiler while current state is
...` exactly when the profiler is stopped (Ascend/pytorch 6ac763f torch_npu/profiler/_profiler_action_controller.py);
a segfault in such a log is the profiler-teardown crash vllm-ascend's torch-npu pin bump (pull 16042) is about.
Every log below is quoted from a real report.
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines

# https://github.com/vllm-project/vllm-omni/issues/6969 (profiling with with_stack on an Ascend host)
OMNI = [
    "(APIServer pid=292942) INFO 09-03 01:43:20 [diffusion_engine.py:1004] Stopping diffusion profiling...",
    "(DiffusionWorker_SP0 pid=292987) [2026-09-03 01:43:20] [WARNING] [292987] profiler.py: Incorrect schedule: Stop "
    "profiler while current state is RECORD which may result in incomplete parsed data.",
    "!!!!!!! Segfault encountered !!!!!!!",
    "",
    "!!!!!!! Segfault encountered !!!!!!!",
    "",
    "(APIServer pid=292942) ERROR 09-03 01:43:37 [multiproc_executor.py:403] Diffusion worker(s) died unexpectedly: "
    "['DiffusionWorker-3(exitcode=None)']",
]

# https://github.com/vllm-project/vllm-ascend/issues/16642 (POST /stop_profile, a Ray-style bracketed process tag)
STOP_PROFILE = [
    "[Worker_TP2_EP2 pid=492] [2026-09-15 10:08:00] [WARNING] [492] profiler.py: Incorrect schedule: Stop profiler "
    "while current state is RECORD which may result in incomplete parsed data.",
    "!!!!!!! Segfault encountered !!!!!!!!!",
    "!!!!!!! Segfault encountered !!!!!!!!!",
    "",
    "(EngineCore pid=457) ERROR 09-15 10:08:03 [multiproc_executor.py:284] Worker proc VllmWorker-0 died unexpectedly "
    "(exit code: None), shutting down executor.",
]

# https://github.com/vllm-project/vllm-ascend/issues/15411 (the banner and its frames, no profiler line quoted)
BANNER_ONLY = [
    "!!!!!!! Segfault encountered !!!!!!!",
    '  File "./Include/internal/pycore_pystate.h", line 133, in _PyInterpreterState_GET',
    '  File "Objects/obmalloc.c", line 866, in get_state',
    '  File "Objects/obmalloc.c", line 1850, in _PyObject_Free',
]


def _ids(lines: list[str]) -> list[str]:
    return [f.id for f in explain_lines(lines)]


def test_a_segfault_as_the_profiler_stops_is_torch_npus():
    fs = explain_lines(OMNI)
    assert fs[0].id == "torch-npu-profiler-segfault", [f.id for f in fs]
    assert fs[0].components[0] == "torch-npu"
    assert "process-segfault" not in [f.id for f in fs]


def test_the_stop_profile_form_with_a_longer_banner():
    assert _ids(STOP_PROFILE)[0] == "torch-npu-profiler-segfault", _ids(STOP_PROFILE)


def test_the_tvm_ffi_banner_is_a_segfault():
    assert _ids(BANNER_ONLY)[0] == "process-segfault", _ids(BANNER_ONLY)


def test_a_profiler_stop_without_a_crash_is_not_one():
    # the warning alone is torch_npu's note about incomplete data, not a failure
    assert "torch-npu-profiler-segfault" not in _ids(OMNI[:2]), _ids(OMNI[:2])


def test_a_segfault_without_the_profiler_stays_generic():
    ids = _ids(["Segmentation fault (core dumped)"])
    assert ids and ids[0] == "process-segfault", ids
