"""FlashAttentionScore (torch_npu.npu_fusion_attention) refusing an attention mask it would have to broadcast: the
caller's mask shape, not CANN or the device (diffusers' and vllm-omni's fixes expand the mask in the calling code)."""

from __future__ import annotations

from doctor.explain.stream import explain_lines

# A vLLM Ascend run (https://github.com/vllm-project/vllm-ascend/issues/6573), its first lines as the issue quotes them.
VLLM = [
    "[rank0]:[E205 11:47:24.695215771 compiler_depend.ts:444] operator():build/CMakeFiles/torch_npu.dir/"
    "compiler_depend.ts:1130 NPU function error: call aclnnFlashAttentionScore failed, error code is 561103",
    "[ERROR] 2026-02-05-11:47:24 (PID:413, Device:0, RankID:-1) ERR00100 PTA call acl api failed.",
    "EZ9999: Inner Error!",
    "EZ9999[PID: 413] 2026-02-05-11:47:24.075.926 (EZ9999):  get unsupported atten_mask shape, the shape is [16, 1, 1, "
    "1500]. B=[16], N=[20], Sq=[1500], Skv=[1500], supported atten_mask shape can be [B, N, Sq, Skv], [B, 1, Sq, Skv], "
    "[1, 1, Sq, Skv] and [Sq, Skv].[FUNC:AnalyzeOptionalInput][FILE:flash_attention_score_tiling_general.cpp][LINE:1606]",
    "        TraceBack (most recent call last):",
    "       fail to analyze context info.[FUNC:GetShapeAttrsInfo][FILE:flash_attention_score_tiling_general.cpp]"
    "[LINE:873]",
    "       Tiling failed",
]

# vllm-omni running Qwen-Image with Ulysses parallelism (https://github.com/vllm-project/vllm-omni/issues/845), as quoted.
OMNI = [
    "[rank0]:[E119 16:32:47.013946230 compiler_depend.ts:444] operator():build/CMakeFiles/torch_npu.dir/"
    "compiler_depend.ts:1042 NPU function error: call aclnnFlashAttentionScore failed, error code is 561103",
    "[ERROR] 2026-01-19-16:32:47 (PID:10443, Device:0, RankID:0) ERR00100 PTA call acl api failed.",
    "EZ9999: Inner Error!",
    "EZ9999[PID: 10443] 2026-01-19-16:32:47.486.947 (EZ9999):  get unsupported atten_mask shape, the shape is [1, 6902]. "
    "B=[1], N=[12], Sq=[6902], Skv=[6902], su",
]


def test_an_attention_mask_the_operator_would_broadcast_is_the_callers_not_canns():
    for lines in (VLLM, OMNI):
        errors = [f for f in explain_lines(lines) if f.severity.value == "error"]
        assert [f.id for f in errors] == ["npu-attention-mask-shape-unsupported"], [(f.id, f.components) for f in errors]
        assert errors[0].components[0] == "model" and "[B, 1, Sq, Skv]" in errors[0].fix.text
