"""What verl, vLLM Ascend and MindSpeed say when the environment, the versions or the configuration cannot run.

The signatures were written from the messages as the upstream sources format them (verl 1dda039, vllm-ascend 182b75e
and v0.11.0 / v0.13.0, MindSpeed 028de58, Megatron-core core_v0.12.1), not from a report. Before them the version refusals were read as the raising
package's configuration (tensordict's, megatron-core's, torch's and torch-npu's age named verl or MindSpeed, config), an
unhealthy NPU as configuration, CANN NNAL as a Python package to pip install, and the rest only by who prints them,
with no fix. The logs below are shaped as the packages print them: vLLM's logger prefix, Ray's actor prefixes, a
traceback ending in the raise."""

from __future__ import annotations

import pytest

from doctor.explain.stream import explain_lines


def _lead(log: str):
    return explain_lines(log.strip("\n").splitlines())[0]


def _traceback(frame: str, call: str, message: str, prefix: str = "(WorkerDict pid=52811) ") -> str:
    return "\n".join(prefix + line for line in (
        "Traceback (most recent call last):",
        f'  File "/usr/local/python3.11.13/lib/python3.11/site-packages/{frame}", line 100, in {call}',
        "    raise",
        message,
    ))


# (log, the finding that must lead, its severity, its first two components, words its fix must hold)
CASES = [
    # vLLM Ascend: its compiled extension, the NPU's health, the HCCL library, versions, FA3
    ("WARNING 12-07 10:31:02 [utils.py:450] Failed to register custom ops, all custom ops will be disabled. "
     "error=/usr/local/python3.11.13/lib/python3.11/site-packages/vllm_ascend/vllm_ascend_C.cpython-311-aarch64-"
     "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEa. The custom ops library might not be installed or the "
     "environment is not configured correctly. Please check the custom ops installation and environment variables.",
     "vllm-ascend-native-extension-unloadable", "warning", ("vllm-ascend", "torch-npu"), ("torch-npu",)),
    ("WARNING:root:Failed to import 'vllm_ascend.vllm_ascend_C': /opt/vllm-ascend/vllm_ascend/vllm_ascend_C.cpython-"
     "310-aarch64-linux-gnu.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindE. All custom ops will be disabled. ",
     "vllm-ascend-native-extension-unloadable", "warning", ("vllm-ascend", "torch-npu"), ("rebuild",)),
    ("(WorkerDict pid=52811) WARNING 12-07 10:31:02 [camem.py:67] Failed to import vllm_ascend_C:No module named "
     "'vllm_ascend.vllm_ascend_C'. Sleep mode will be disabled. ",
     "vllm-ascend-native-extension-unloadable", "warning", ("vllm-ascend", "torch-npu"), ("vllm_ascend_C",)),
    (_traceback("vllm_ascend/worker/worker.py", "parse_text_output",
                "RuntimeError: NPU card health status is not OK"),
     "vllm-ascend-npu-health-not-ok", "error", ("npu", "driver"), ("npu-smi info -t health",)),
    ("ERROR 12-07 10:31:02 [pyhccl_wrapper.py:181] Failed to load HCCL library from libhccl.so. It is expected if you "
     "are not running on Ascend NPUs.Otherwise, the hccl library might not exist, be corrupted or it does not support "
     "the current platform Linux-5.10.0-aarch64-with-glibc2.34. If you already have the library, please set the "
     "environment variable HCCL_SO_PATH to point to the correct hccl library path.",
     "vllm-ascend-hccl-library-load-failed", "error", ("cann", "env"), ("set_env.sh", "HCCL_SO_PATH")),
    (_traceback("vllm_ascend/ops/fused_moe/token_dispatcher.py", "__init__",
                "RuntimeError: PTA and CANN version is too old to support mc2 hierarchy comm, please upgrade your "
                "version."),
     "vllm-ascend-mc2-hierarchy-too-old", "error", ("torch-npu", "cann"), ("enable_mc2_hierarchy_comm",)),
    (_traceback("vllm_ascend/platform.py", "_validate_fa3_backend",
                "ValueError: flash_attn_npu_v3 is installed but does not provide flash_attn_with_kvcache. Please "
                "check flash_attn_npu_v3 whether it supports flash_attn_with_kvcache."),
     "vllm-ascend-fa3-package-missing", "error", ("vllm-ascend", "config"), ("enable_training_consistency",)),
    (_traceback("vllm_ascend/device/hardware.py", "device_type_from_runtime_soc",
                "RuntimeError: Cannot support runtime soc_version: 100."),
     "vllm-ascend-chip-unsupported", "error", ("npu", "vllm-ascend"), ("npu-smi info",)),
    (_traceback("vllm_ascend/utils.py", "check_ascend_device_type", "RuntimeError: Can not support soc_version: 100."),
     "vllm-ascend-chip-unsupported", "error", ("npu", "vllm-ascend"), ("npu-smi info",)),
    (_traceback("vllm_ascend/ops/triton/triton_utils.py", "_resolve_triton_ascend_op",
                "RuntimeError: Triton op 'chunk_gated_delta_rule' cannot be resolved because HAS_TRITON is False"),
     "vllm-ascend-triton-unavailable", "error", ("triton-ascend", "vllm-ascend"), ("pip uninstall -y triton",)),
    # verl: versions of what it runs on
    (_traceback("verl/protocol.py", "to_tensordict",
                "AssertionError: Convert DataProto to TensorDict at least requires tensordict version 0.10"),
     "verl-tensordict-too-old", "error", ("python", "verl"), ("tensordict>=0.10",)),
    (_traceback("verl/utils/tensordict_utils.py", "list_of_dict_to_tensordict",
                "AssertionError: Storing non-tensor data in TensorDict at least requires tensordict version 0.10"),
     "verl-tensordict-too-old", "error", ("python", "verl"), ("tensordict>=0.10",)),
    (_traceback("verl/models/mcore/model_forward_fused.py", "patch_fused_forward",
                "AssertionError: Fused forward patching requires mecore >= 0.13.0"),
     "verl-megatron-core-too-old", "error", ("megatron", "verl"), ("use_fused_kernels=False",)),
    (_traceback("verl/utils/megatron_utils.py", "_check_layer_wise_support",
                "ValueError: Muon layer-wise distributed optimizer requires DistributedDataParallelConfig."
                "use_layer_wise_param_layout. Upgrade megatron-core or disable use_layer_wise_distributed_optimizer."),
     "verl-megatron-core-too-old", "error", ("megatron", "verl"), ("use_layer_wise_distributed_optimizer",)),
    (_traceback("verl/workers/rollout/vllm_rollout/__init__.py", "<module>",
                "importlib.metadata.PackageNotFoundError: To use vllm rollout, please ensure the 'vllm' package is "
                "properly installed. See https://verl.readthedocs.io/en/latest/start/install.html for more details"),
     "verl-vllm-rollout-not-installed", "error", ("vllm", "env"), ("VLLM_TARGET_DEVICE=empty",)),
    (_traceback("verl/utils/fsdp_utils.py", "apply_fsdp2",
                "AssertionError: PyTorch version >= 2.4 is required for using fully_shard API (FSDP2)"),
     "verl-fsdp2-needs-torch-2-4", "error", ("torch", "torch-npu"), ("strategy=fsdp",)),
    (_traceback("verl/checkpoint_engine/hccl_checkpoint_engine.py", "<module>",
                "ImportError: HCCLCheckpointEngine is unavailable because the torch.npu module is not available."),
     "verl-hccl-checkpoint-engine-no-torch-npu", "error", ("torch-npu", "env"), ("import torch, torch_npu",)),
    (_traceback("verl/__init__.py", "<module>",
                "ImportError: You are using the modelscope hub, please install modelscope by `pip install modelscope "
                "-U`", prefix=""),
     "verl-modelscope-missing", "error", ("python", "env"), ("VERL_USE_MODELSCOPE",)),
    ("(WorkerDict pid=52811) WARNING:verl.models.mcore.util:Could not import mindspeed modules, skipping position_id "
     "setting: cannot import name 'set_actual_seq_len' from 'mindspeed.core.context_parallel.get_batch_utils'",
     "verl-mindspeed-position-ids-skipped", "warning", ("mindspeed", "verl"), ("2.1.0_core_r0.12.1",)),
    # verl: configuration it refuses
    ("(TaskRunner pid=2261) ERROR:root:User customized env vars conflict with system env: {'MASTER_ADDR'} Overriding "
     "may cause unexpected behavior.",
     "verl-worker-env-protected", "error", ("config", "verl"), ("trainer.worker_env",)),
    (_traceback("verl/workers/config/rollout.py", "__post_init__",
                "ValueError: Rollout mode 'sync' has been removed. Please set `actor_rollout_ref.rollout.mode=async` "
                "or remove the mode setting entirely.", prefix="(TaskRunner pid=2261) "),
     "verl-rollout-sync-mode-removed", "error", ("config", "verl"), ("rollout.mode=async",)),
    (_traceback("verl/workers/config/rollout.py", "__post_init__",
                "NotImplementedError: Current rollout self.name='sglang' not implemented pipeline_model_parallel_size "
                "> 1 yet.", prefix="(TaskRunner pid=2261) "),
     "verl-rollout-pipeline-parallel-unsupported", "error", ("config", "verl"),
     ("rollout.pipeline_model_parallel_size=1",)),
    (_traceback("verl/models/mcore/registry.py", "get_supported_model",
                "NotImplementedError: Model Type: gemma3 not supported. Supported models: ['llama', 'qwen2', "
                "'qwen2_moe', 'qwen3', 'qwen3_moe', 'deepseek_v3', 'mixtral', 'qwen2_5_vl']"),
     "verl-mcore-model-type-unsupported", "error", ("verl", "model"), ("use_mbridge=True",)),
    (_traceback("verl/workers/rollout/vllm_rollout/utils.py", "get_vllm_max_lora_rank",
                "ValueError: lora_rank must be less than or equal to 512, but got 640"),
     "verl-vllm-lora-rank-too-large", "error", ("config", "verl"), ("lora_rank",)),
    (_traceback("verl/workers/engine/megatron/transformer_impl.py", "_resolve_fused_temperature",
                "NotImplementedError: Megatron fused kernels require a uniform temperature; set use_fused_kernels="
                "False for per-sample temperatures."),
     "verl-fused-kernels-per-sample-temperature", "error", ("config", "verl"), ("use_fused_kernels=False",)),
    # MindSpeed: NNAL, torch-npu's age, and the parallel layout
    (_traceback("mindspeed/op_builder/atb_builder.py", "get_atb_path",
                "RuntimeError: please install cann-nnal package first"),
     "mindspeed-atb-home-unset", "error", ("nnal", "env"), ("nnal/atb/set_env.sh",)),
    (_traceback("mindspeed/features_manager/optimizer/virtual_optimizer.py", "validate_args",
                "AssertionError: `--virtual-optimizer` is invalid, please update the latest PTA version."),
     "mindspeed-torch-npu-too-old", "error", ("torch-npu", "mindspeed"), ("torch-npu",)),
    (_traceback("mindspeed/core/memory/compress/utils.py", "get_swap_tensor",
                "ModuleNotFoundError: PTA dose not support this func, please update to latest version."),
     "mindspeed-torch-npu-too-old", "error", ("torch-npu", "mindspeed"), ("torch-npu",)),
    (_traceback("mindspeed/features_manager/context_parallel/context_parallel_feature.py", "validate_args",
                "AssertionError: sequence length must be divisible by 2 * context_parallel_size in hybrid cp"),
     "mindspeed-context-parallel-layout", "error", ("config", "mindspeed"), ("2 x CP",)),
    (_traceback("mindspeed/features_manager/context_parallel/context_parallel_feature.py", "validate_args",
                "AssertionError: num_attention_heads must be divisible by ulysse-degree-in-cp * "
                "tensor_model_parallel_size in hybrid cp"),
     "mindspeed-context-parallel-layout", "error", ("config", "mindspeed"), ("num_attention_heads",)),
    (_traceback("mindspeed/features_manager/context_parallel/context_parallel_feature.py", "validate_args",
                "AssertionError: --ulysses-degree-in-cp must be divisible by --context-parallel-size and "
                "--ulysses-degree-in-cp divided by --context-parallel-size must be greater than 1"),
     "mindspeed-context-parallel-layout", "error", ("config", "mindspeed"), ("ulysses_degree_in_cp",)),
    (_traceback("mindspeed/features_manager/megatron_basic/megatron_basic.py", "validate_args",
                "ValueError: num_layers_per_virtual_pipeline_stage * pipeline_model_parallel_size == num_layers, "
                "please close --num-layers-per-virtual-pipeline-stage"),
     "mindspeed-vpp-covers-all-layers", "error", ("config", "mindspeed"), ("virtual_pipeline_model_parallel_size",)),
    (_traceback("mindspeed/features_manager/fusions/fused_rope.py", "validate_args",
                "AssertionError: --use-fused-rotary-pos-emb must enable with--position-embedding-type=rope"),
     "mindspeed-fused-rope-needs-rope", "error", ("config", "mindspeed"), ("use_fused_rotary_pos_emb",)),
    (_traceback("mindspeed/features_manager/tensor_parallel/mc2.py", "validate_args",
                "AssertionError: The 'mc2' feature requires both the Tensor Model Parallel (TP) size to be greater than 1 "
                "and Sequence Parallelism to be enabled. Currently, either the TP size is set to 1 or Sequence "
                "Parallelism is disabled."),
     "mindspeed-mc2-needs-tp-and-sp", "error", ("config", "mindspeed"), ("sequence_parallel=True",)),
    # Megatron-core: the pipeline split verl passes through override_transformer_config
    (_traceback("megatron/core/transformer/transformer_config.py", "__post_init__",
                "ValueError: number of layers on each middle pipeline rank:7 must be divisible by virtualpipeline "
                "parallel degree 2"),
     "megatron-pipeline-layers-uneven", "error", ("config", "megatron"), ("num_layers_in_first_pipeline_stage",)),
]


@pytest.mark.parametrize(("log", "wanted", "severity", "components", "fix_words"), CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_an_upstream_refusal_names_what_to_change(log, wanted, severity, components, fix_words):
    finding = _lead(log)
    assert (finding.id, finding.severity.value, tuple(finding.components[:2])) == (wanted, severity, components)
    for words in fix_words:
        assert words in finding.fix.text


def test_a_failed_hccl_load_is_cann_and_a_missing_libhccl_in_it_stays_the_precise_cause():
    # vllm-ascend up to 0.13 logs the failure without the loader's error; main logs the error inside the message, and
    # a missing libhccl.so there is the more precise signature's.
    old = ("ERROR 12-07 10:31:02 [pyhccl_wrapper.py:181] Failed to load HCCL library from /opt/hccl/libhccl.so. It is "
           "expected if you are not running on Ascend NPUs.Otherwise, the hccl library might not exist, be corrupted or "
           "it does not support the current platform Linux-5.10.0-aarch64-with-glibc2.34. If you already have the "
           "library, please set the environment variable HCCL_SO_PATH to point to the correct hccl library path.")
    new = ("ERROR 12-07 10:31:02 [pyhccl_wrapper.py:186] Failed to load HCCL library. so_file=libhccl.so, "
           "error=libhccl.so: cannot open shared object file: No such file or directory. The hccl library might not "
           "exist, be corrupted or it does not support the current platform Linux-5.10.0-aarch64-with-glibc2.34. If "
           "you already have the library, please set the environment variable HCCL_SO_PATH to point to the correct "
           "hccl library path.")
    assert [(f.id, tuple(f.components[:2])) for f in (_lead(old), _lead(new))] == [
        ("vllm-ascend-hccl-library-load-failed", ("cann", "env")), ("cann-libhccl-missing", ("cann", "env"))]


def test_a_ray_wrapped_context_parallel_refusal_is_the_layout_not_the_worker_that_died():
    log = """
(TaskRunner pid=2261) ray.exceptions.RayTaskError(AssertionError): ray::WorkerDict.actor_rollout_ref_init_model() (pid=52811, ip=10.0.0.2, actor_id=ab12, repr=<verl.single_controller.ray.base.WorkerDict object at 0xfffd1>)
(TaskRunner pid=2261)   File "/usr/local/python3.11.13/lib/python3.11/site-packages/mindspeed/features_manager/context_parallel/context_parallel_feature.py", line 41, in validate_args
(TaskRunner pid=2261)     raise AssertionError("sequence length must be divisible by 2 * context_parallel_size")
(TaskRunner pid=2261) AssertionError: sequence length must be divisible by 2 * context_parallel_size
"""
    found = explain_lines(log.strip("\n").splitlines())
    assert found[0].id == "mindspeed-context-parallel-layout"
    assert found[0].components[0] == "config"
