"""cuDNN finding no kernel for an attention graph.

cudnn-frontend's check_support() returns `[cudnn_frontend] Error: No execution plans support the graph.` when no
engine config cuDNN's heuristics offer supports the graph (NVIDIA/cudnn-frontend 3929da2 include/cudnn_frontend/
plans.h; older releases: `No execution plans built successfully`); Transformer Engine raises it as `cuDNN Error: ...`
(NVTE_CHECK_CUDNN_FE, transformer_engine/common/util/logging.h), PyTorch's cuDNN SDPA as `cuDNN Frontend error: ...`.
Before, it was no signature at all. The positive lines are quoted from real reports; the guard is a line that is no
such failure.
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines

# https://github.com/Comfy-Org/ComfyUI/issues/5365 (PyTorch's cuDNN SDPA backend)
SDPA = ["RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support the graph."]
# https://github.com/NVIDIA/TransformerEngine/issues/651 (TE 1.2.1's fused attention, an older cudnn-frontend's wording)
TE_OLD = ["/fsx/sbuasai/test_te/deps/TransformerEngine/transformer_engine/common/fused_attn/"
          "fused_attn_f16_arbitrary_seqlen.cu:227 in function operator(): cuDNN Error: [cudnn_frontend] Error: No "
          "execution plans built successfully.. For more information, enable cuDNN error logging by setting "
          "CUDNN_LOGERR_DBG=1 and CUDNN_LOGDEST_DBG=stderr in the environment."]
# cudnn-frontend's other plan errors (plans.h at 3929da2): a plan skipped, not the graph unsupported
PLAN_SKIPPED = ["[cudnn_frontend] Error: Workspace size is too large."]


def test_no_cudnn_execution_plan_is_named_for_te_and_torch():
    for lines in (SDPA, TE_OLD):
        fs = explain_lines(lines)
        assert fs[0].id == "cudnn-no-execution-plan", [f.id for f in fs]
        assert fs[0].components[:2] == ("transformer-engine", "torch")


def test_a_skipped_cudnn_plan_is_not_an_unsupported_graph():
    assert "cudnn-no-execution-plan" not in [f.id for f in explain_lines(PLAN_SKIPPED)]

