"""What upstream's own NPU scripts set, by model class: `launch` takes its offload, dynamic-batch and rollout
defaults from the closest upstream NPU example (and the report names it).

- a small dense model (under ~5B parameters): verl v0.9.0's quick start
  `tests/special_npu/quick_start/run_qwen3_0_6b_megatron_vllm_ascend.sh` — no offload, fixed micro batches,
  rollout TP 2, `gpu_memory_utilization=0.6`, and the rollout settings that release's quick start sets for the
  engine (from 0.9.0: vLLM `enable_chunked_prefill=False` and `cudagraph_mode=FULL_AND_PIECEWISE`, SGLang
  `attention_backend=ascend`; profiles/releases.toml `npu_rollout_*`);
- a MoE model, or a dense one of ~5B parameters and more: verl v0.9.0's nightly
  `tests/special_npu/nightly_ci_ascend/run_grpo_qwen3_30b_megatron_sglang_npu.sh` — param/grad/optimizer
  offload on, max tokens per NPU and rollout `max_model_len` = prompt + response, `enforce_eager=False`,
  `HCCL_OP_EXPANSION_MODE=AIV` (also exported by v0.9.0's `examples/ascend_extras/grpo_trainer/
  run_qwen3_30b_a3b_mindspeed.sh` and `run_qwen3_32b_mindspeed.sh`).
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.launch import sources as S
from doctor.launch.model_config import ModelInfo, parameters


@dataclass(frozen=True)
class Example:
    name: str
    url: str
    offload: bool
    dynamic_bsz: bool
    enforce_eager: bool | None
    hccl_aiv: bool
    gpu_memory_utilization: float
    rollout_tp: int
    rollout_tuning: bool = False  # the release's quick-start rollout settings (releases.toml npu_rollout_*)


SMALL = Example("small dense model", S.VERL + "tests/special_npu/quick_start/run_qwen3_0_6b_megatron_vllm_ascend.sh",
                offload=False, dynamic_bsz=False, enforce_eager=None, hccl_aiv=False, gpu_memory_utilization=0.6,
                rollout_tp=2, rollout_tuning=True)
LARGE = Example("MoE or large model",
                S.VERL + "tests/special_npu/nightly_ci_ascend/run_grpo_qwen3_30b_megatron_sglang_npu.sh",
                offload=True, dynamic_bsz=False, enforce_eager=False, hccl_aiv=True, gpu_memory_utilization=0.5,
                rollout_tp=4)


def closest(m: ModelInfo | None) -> Example:
    if m is None:
        return SMALL
    if m.is_moe:
        return LARGE
    n = parameters(m)
    return LARGE if n is not None and n >= 5e9 else SMALL
