"""`doctor explain` on the messages vllm-ascend's own documentation quotes (FAQ at v0.7.3 .. main, feature guides,
tutorials' troubleshooting, release notes' known issues): each is explained by the finding the doc's cause names,
and the outputs the docs show as healthy give no error."""

from __future__ import annotations

import pytest

from doctor.explain.signatures import explain_lines
from doctor.report import Severity

# (lines as the doc quotes them, the finding that must lead, its first component)
DOC_MESSAGES = [
    # faqs.md (main 182b75e; entries since removed read at v0.9.1 0740d10 and v0.18.0 e18643f)
    (["ImportError: libatb.so: cannot open shared object file: No such file or directory"],
     "nnal-libatb-missing", "nnal"),
    (["RuntimeError: Failed to infer device type"], "vllm-device-type-not-inferred", "torch-npu"),
    (["[rank0]: RuntimeError: EZ9999: Inner Error!",
      "[rank0]: EZ9999: [PID: 62938] 2025-05-27-06:52:12.455.807 numHeads / numKvHeads = 8, MLA only support "
      "{32, 64, 128}.[FUNC:CheckMlaAttrs][FILE:incre_flash_attention_tiling_check.cc][LINE:1218]"],
     "mla-graph-heads-per-kv-unsupported", "config"),
    (["ValueError: Invalid vllm version dev found. A dev version of vllm is installed probably. Set the environment "
      "variable VLLM_VERSION to control it by hand. And please make sure the vaule follows the format of x.y.z."],
     "vllm-version-invalid-dev-build", "env"),
    (["ImportError: Please install vllm[audio] for audio support"], "python-extra-missing", "python"),
    (["capture_begin:../torch_npu/csrc/core/npu/NPUGraph.cpp:230 NPU function error: "
      "c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, capture_mode), error code is 207008",
      "[Error]: Stream resources are insufficient.",
      "[PID: ...] Insufficient_Stream_Resources(EL0009): The stream resources are insufficient."],
     "acl-graph-streams-insufficient", "config"),
    (["failed to register layer: ApplyLayer exit status 1 stdout: stderr: archive/tar: invalid tar header"],
     "docker-pull-invalid-tar-header", "system"),
    (["AttributeError: 'str' object has no attribute 'DESCRIPTOR' when packaging message to dict"],
     "ray-too-old-protobuf-descriptor", "ray"),
    (["RuntimeError: ACL graph capture failed with an old Ascend HDK/CANN stack signature (`Alloc sq cq fail`). "
      "Please upgrade Ascend HDK to 25.5.1 or later and use the matching CANN stack."],
     "acl-graph-alloc-sq-cq-fail", "driver"),
    (["RuntimeError: Could not determine chip type automatically via 'npu-smi'. This can happen in a CPU-only "
      "environment. Please set the 'SOC_VERSION' environment variable to specify the target chip, for example:"],
     "vllm-ascend-build-soc-version-unknown", "env"),
    (["RuntimeError: Failed to compile /tmp/tmpx5kvific/launcher_cxx11abi1.cxx, error: g++: internal compiler "
      "error: Segmentation fault signal terminated program cc1plus"],
     "triton-ascend-launcher-compiler-crash", "triton-ascend"),
    # feature guides, tutorials and the msprobe guide
    (["RuntimeError: Please enforce eager mode"], "msprobe-needs-eager-mode", "config"),
    (["TypeError: PrecisionDebugger.start() got an unexpected keyword argument 'scheduled_tokens'"],
     "msprobe-too-old-for-vllm-ascend", "python"),
    (["openai_harmony.HarmonyError: error downloading or loading vocab file: failed to download or load vocab error"],
     "harmony-vocab-download-failed", "network"),
    (["WARNING 06-23 17:41:09 [worker.py:805] Bind cpus failed in rank0: Can not get running npu info. "
      "Skip binding cpu."], "vllm-ascend-cpu-binding-failed", "config"),
    (["OffloadObjectHeartbeat failed, error code is SEGMENT_NOT_FOUND"], "kv-pool-ssd-segment-not-found", "config"),
    (["Failed to get 3 keys out of 8. error_codes=[-10]. Check key existence and memory state."],
     "kv-pool-ssd-buffer-overflow", "config"),
    (["OSError: Could not locate the configuration_deepseek.py inside /models/DeepSeek-V3-w8a8."],
     "modelslim-deepseek-config-file-missing", "model"),
    (["ValueError: fp8 quantization is currently not supported in npu."],
     "vllm-ascend-quantization-method-unsupported", "model"),
    (["RuntimeError: Cannot load local files without `--allowed-local-media-path`."],
     "vllm-local-media-path-not-allowed", "config"),
    (['{"error":"Model not found"}'], "vllm-served-model-name-mismatch", "config"),
    (["zmq.error.ZMQError: Address already in use"], "port-already-in-use", "network"),
    (["WARNING 05-12 11:36:01 scheduler.py:1560] Sequence group 0 is preempted by PreemptionMode.RECOMPUTE mode because"
      " there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization"
      " or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1"],
     "vllm-kv-cache-preemption", "config"),
    (["ValueError: Unknown speculative decoding method: medusa"], "vllm-ascend-spec-decode-method-unknown", "config"),
    (["AssertionError: decode_threshold exceeded         npu_fused_infer_attention_score TND layout's limit of 16,"
      "         got 17"], "vllm-ascend-mtp-too-many-speculative-tokens", "config"),
    # release notes' known issues
    (["Error in KVCacheTransferThread. error=unhashable type: 'list'"],
     "vllm-ascend-kv-transfer-unhashable-list", "vllm-ascend"),
    (["numAcceptedTokens[0]=4 exceeds varlen segment length=3"], "vllm-ascend-mtp-accepted-exceeds-segment",
     "vllm-ascend"),
    (["ValueError: Counters can only be incremented by non-negative amounts"], "vllm-metrics-counter-negative",
     "vllm-ascend"),
]


@pytest.mark.parametrize("lines,want,component", DOC_MESSAGES, ids=[m[1] for m in DOC_MESSAGES])
def test_a_message_the_docs_quote_is_explained_by_the_cause_they_give(lines, want, component):
    found = explain_lines(lines)
    assert found and found[0].id == want, [f.id for f in found]
    assert found[0].components[0] == component


def test_the_mla_heads_error_drops_the_generic_inner_error():
    found = explain_lines(DOC_MESSAGES[2][0])
    assert [f.id for f in found] == ["mla-graph-heads-per-kv-unsupported"]


def test_vllm_ascends_own_stream_resource_wrapper_is_explained():
    # vllm-ascend (graph_mode.md) re-raises the capture failure with this first line; alone it names the cause
    found = explain_lines([
        "RuntimeError: ACL graph capture failed with a known stream-resource exhaustion signature. Consider reducing "
        "cudagraph_capture_sizes, lowering max_cudagraph_capture_size, preferring FULL or FULL_DECODE_ONLY for mostly "
        "uniform decode workloads, or temporarily disabling graph mode to confirm the failure is capture-related."])
    assert [f.id for f in found][:1] == ["acl-graph-streams-insufficient"]


def test_the_npu_tensor_to_numpy_error_blames_ray_only_in_a_ray_run():
    line = ("TypeError: can't convert npu:0 device type tensor to numpy. "
            "Use Tensor.cpu() to copy the tensor to host memory first.")
    assert "ray-too-old-npu-tensor-to-numpy" not in [f.id for f in explain_lines([line])]
    in_ray = explain_lines([
        "(RayWorkerWrapper pid=3301) ERROR 06-20 10:00:00 worker_base.py:620] Error executing method 'execute_model'.",
        f"(RayWorkerWrapper pid=3301) ERROR 06-20 10:00:00 worker_base.py:620] {line}"])
    assert "ray-too-old-npu-tensor-to-numpy" in [f.id for f in in_ray]


def test_the_fabric_memory_quota_needs_a_kv_pool_in_the_log():
    line = "Memory_Allocation_Failure(EL0004)"
    assert "kv-pool-fabric-mem-quota-exceeded" not in [f.id for f in explain_lines([line])]
    found = explain_lines(["export ASCEND_ENABLE_USE_FABRIC_MEM=1", line])
    assert [f.id for f in found][:1] == ["kv-pool-fabric-mem-quota-exceeded"]


HEALTHY = {
    # installation.md (main): the end of a successful offline inference
    "installation": [
        "Prompt: 'Hello, my name is', Generated text: ' Lucy and I am an 8 year old who loves to draw'",
        "(EngineCore pid=970) INFO 05-12 11:36:00 [core.py:1201] Shutdown initiated (timeout=0)",
        "(EngineCore pid=970) INFO 05-12 11:36:00 [core.py:1224] Shutdown complete",
        "ERROR 05-12 11:36:01 [core_client.py:704] Engine core proc EngineCore died unexpectedly, shutting down client.",
        "sys:1: DeprecationWarning: builtin type swigvarlink has no __module__ attribute",
    ],
    # quick_start.md (main): the server started
    "quick_start": [
        "INFO:     Started server process [3594]",
        "INFO:     Waiting for application startup.",
        "INFO:     Application startup complete.",
        "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    ],
    # graph_mode.md (main): static kernel compilation started
    "graph_mode": ["Starting static kernel compilation, the build directory is /root/.cache/static_kernel"],
    # tutorials/models/Qwen3-VL-Embedding.md (v0.18.0): a successful embedding run
    "qwen3_vl_embedding": [
        "(EngineCore_DP0 pid=2425173) (Worker pid=2425180) INFO 01-09 00:44:40 [acl_graph.py:194] Replaying aclgraph",
        "(EngineCore_DP0 pid=2425173) (Worker pid=2425180) ('Warning: torch.save with \"_use_new_zipfile_serialization"
        " = False\" is not recommended for npu tensor, which may bring unexpected errors and hopefully set "
        "\"_use_new_zipfile_serialization = True\"', 'if it is necessary to use this, please convert the npu tensor "
        "to cpu tensor for saving')",
        "[[0.9279120564460754, 0.32747742533683777], [0.4124627113342285, 0.7425257563591003]]",
    ],
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_an_output_the_docs_show_as_healthy_gives_no_error(name):
    found = explain_lines(HEALTHY[name])
    assert all(f.severity is not Severity.ERROR for f in found), [(f.id, f.severity.value) for f in found]
