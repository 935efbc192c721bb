"""Megatron / MindSpeed rules (the megatron and mindspeed engines): flash attention, mbridge, sequence and
expert parallel, recompute, VPP, CP, MoE features, fusions, model divisibility. Each rule cites the Megatron,
MindSpeed or verl code whose check it repeats (doctor.launch.sources)."""

from __future__ import annotations

from doctor.launch import sources as S
from doctor.launch.features import (
    at_least,
    cp_needs_override_key,
    default_use_mbridge,
    default_vanilla_mbridge,
    engine_defaults_fa,
    mbridge_required,
    megatron_bridge_default,
    npu_megatron_bridge,
)
from doctor.launch.model_config import is_gated_silu
from doctor.launch.override_list import UNKNOWN
from doctor.launch.rules import Context, _View
from doctor.report import Finding, finding


def fa(v: _View, ctx: Context) -> list[Finding]:
    key = v.O + "use_flash_attn"
    fa = v.get(key, None)
    src = S.MINDSPEED_VERL
    if v.has(key) and fa is not True:
        return [finding("launch-fa-off", "error", ("config", "mindspeed"), f"flash attention is off ({key}={fa})",
                        detail="MindSpeed needs FA: 'Flash Attention is required when using transformer_engine, "
                               "please set --use-flash-attn' / 'Please set micro_batch_size or set use_flash_attn=True'.",
                        evidence=v.ev(key), key=key, fix=f"Write +{key}=True.", source=src)]
    if not v.has(key) and not engine_defaults_fa(ctx.verl_version):
        return [finding("launch-fa-missing", "error", ("config", "mindspeed"),
                        f"flash attention is not switched on (verl {ctx.verl_version} has no default)",
                        detail="verl < 0.8.0 passes override_transformer_config to MindSpeed's repatch as-is, so "
                               "without the key FA stays off and MindSpeed fails.",
                        evidence={"verl_version": ctx.verl_version}, key=key, fix=f"Add +{key}=True.", source=src)]
    return []


def legacy_worker(v: _View, ctx: Context) -> bool | None:
    """Whether main_ppo runs the actor on the legacy megatron worker (verl/workers/megatron_workers.py with
    workers/actor/megatron_actor.py) rather than the engine worker (workers/engine_workers.py); None when
    `trainer.use_legacy_worker_impl` is a value only the run knows. Below 0.7.0 always: the key switches FSDP only.
    0.7.x unless the key is `disable` (its default `auto` keeps megatron on the legacy worker). From 0.8.0, which deleted
    the worker and the key, never — except a 0.8.0.dev build from before that deletion (volcengine/verl main
    b178a3cd5), whose composed config still has the key: the config, not the version number, says so."""
    ver = ctx.verl_version
    if not at_least(ver, "0.7.0"):
        return True
    impl = v.get("trainer.use_legacy_worker_impl")
    if impl is None:  # no such key (0.8.0 on), or no composed config: the release decides
        return not mbridge_required(ver)
    return None if impl is UNKNOWN else impl in ("auto", "enable")


def mbridge(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    ver = ctx.verl_version
    use = v.bool(v.A + "use_mbridge", default_use_mbridge(ver))
    legacy = legacy_worker(v, ctx)
    required = legacy is False  # the engine worker: its engine asserts use_mbridge (0.7.0 on)
    if required and use is False:
        out.append(finding("launch-mbridge-required", "error", ("config", "mbridge"),
                           f"verl {ver} requires use_mbridge=True", evidence=v.ev(v.A + "use_mbridge"),
                           detail="The engine worker's engine asserts 'use_mbridge must be True' (only the legacy "
                                  "megatron worker, deleted in 0.8.0, takes it off).",
                           key=v.A + "use_mbridge", fix=f"Write {v.A}use_mbridge=True.",
                           source=f"{S.VERL_MEGATRON_ENGINE}; {S.VERL_LEGACY_WORKER_SELECT}"))
    vpp = v.int(v.A + "virtual_pipeline_model_parallel_size")
    if vpp is not None and vpp > 1 and use and legacy:
        # Only the legacy worker: #4815's IndexError is raised under megatron_workers.py / megatron_actor.py; the
        # engine worker hands the VPP size to mbridge itself, and upstream's Ascend CI runs mbridge with VPP=2 on it
        out.append(finding("launch-mbridge-vpp", "error", ("config", "mbridge"),
                           "mbridge cannot be combined with virtual pipeline parallel (VPP) on the legacy megatron worker",
                           detail="Known failure of the legacy worker (verl/workers/megatron_workers.py), which "
                                  f"main_ppo runs on verl {ver} unless trainer.use_legacy_worker_impl=disable: "
                                  "IndexError: too many indices for tensor of dimension 3. The engine worker "
                                  "(trainer.use_legacy_worker_impl=disable on 0.7.x; the only one from 0.8.0) "
                                  "runs mbridge with VPP.",
                           evidence={**v.ev(v.A + "virtual_pipeline_model_parallel_size", v.A + "use_mbridge",
                                            "trainer.use_legacy_worker_impl"), "use_mbridge": use},
                           key=v.A + "virtual_pipeline_model_parallel_size",
                           fix=f"Write {v.A}use_mbridge=False when using VPP, drop VPP, or (verl 0.7.x) run the "
                               "engine worker: trainer.use_legacy_worker_impl=disable.",
                           source=f"{S.VERL_MBRIDGE_VPP}; {S.VERL_LEGACY_WORKER_SELECT}"))
    if megatron_bridge_default(ver) and use:
        vanilla = v.bool(v.A + "vanilla_mbridge", default_vanilla_mbridge(ver))
        ships, where = npu_megatron_bridge(ver)
        if vanilla is False and ctx.megatron_bridge is None and ships:
            out.append(finding("launch-vanilla-mbridge", "info", ("config", "mbridge"),
                               f"verl {ver} uses Megatron-Bridge (vanilla_mbridge=False), which its Ascend install ships",
                               detail="This release's Ascend images install Megatron-Bridge; a stack built otherwise "
                                      "needs it too (or vanilla_mbridge=True).",
                               evidence={**v.ev(v.A + "vanilla_mbridge"), "megatron_bridge_installed": None,
                                         "release_npu_install": where},
                               key=v.A + "vanilla_mbridge", fix="Pass --megatron-bridge/--no-megatron-bridge to say "
                                                                "what the target has.", source=where))
        elif vanilla is False and ctx.megatron_bridge is not True:
            sev = "error" if ctx.megatron_bridge is False else "warning"
            out.append(finding("launch-vanilla-mbridge", sev, ("config", "mbridge"),
                               f"verl {ver} uses Megatron-Bridge (vanilla_mbridge=False), which NPU stacks do not install",
                               detail="verl >= 0.9.0 defaults vanilla_mbridge to false; without megatron.bridge it "
                                      "prints 'Megatron-Bridge package not found' and raises."
                                      + ("" if ctx.megatron_bridge is False else
                                         " (Whether megatron.bridge is installed on the target is unknown.)"),
                               evidence={**v.ev(v.A + "vanilla_mbridge"), "megatron_bridge_installed": ctx.megatron_bridge},
                               key=v.A + "vanilla_mbridge", fix=f"Write {v.A}vanilla_mbridge=True.",
                               source=S.VERL_VANILLA_MBRIDGE))
    return out

def sp(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    tp = v.int(v.A + "tensor_model_parallel_size", 1)
    sp_o = v.get(v.O + "sequence_parallel")
    sp_a = v.get(v.A + "sequence_parallel")
    if tp == 1 and sp_o is True:
        out.append(finding("launch-sp-without-tp", "error", ("config", "megatron"),
                           "sequence_parallel=True in override_transformer_config with TP=1",
                           detail="Megatron: 'Can not use sequence parallelism without tensor parallelism'.",
                           evidence=v.ev(v.O + "sequence_parallel", v.A + "tensor_model_parallel_size"),
                           key=v.O + "sequence_parallel", fix="Drop the override (or set TP > 1).", source=S.MEGATRON_TRANSFORMER_CONFIG))
    elif tp == 1 and sp_a is True and v.has(v.A + "sequence_parallel"):
        out.append(finding("launch-sp-tp1-ignored", "warning", ("config", "verl"),
                           "sequence_parallel=True with TP=1: verl turns it off",
                           detail="McoreEngineConfig: 'set sequence parallel to false as TP size is 1'.",
                           evidence=v.ev(v.A + "sequence_parallel", v.A + "tensor_model_parallel_size"),
                           key=v.A + "sequence_parallel", fix=f"Drop {v.A}sequence_parallel=True or set TP > 1.",
                           source=S.VERL_ENGINE_CONFIG))
    if isinstance(sp_o, bool) and isinstance(sp_a, bool) and sp_o != sp_a:
        out.append(finding("launch-sp-mismatch", "warning", ("config",),
                           "the two sequence_parallel keys disagree",
                           detail="MindSpeed reads the override dict, verl's engine reads the megatron key.",
                           evidence=v.ev(v.O + "sequence_parallel", v.A + "sequence_parallel"), key=v.O + "sequence_parallel",
                           fix="Write the same value to both keys.", source=S.MINDSPEED_VERL))
    do_a, do_o = v.get(v.A + "use_distributed_optimizer"), v.get(v.O + "use_distributed_optimizer")
    if isinstance(do_a, bool) and isinstance(do_o, bool) and do_a != do_o:
        out.append(finding("launch-dist-opt-mismatch", "warning", ("config",),
                           "the two use_distributed_optimizer keys disagree",
                           detail="The optimizer reads the verl key; the override dict only sets MindSpeed's args.",
                           evidence=v.ev(v.O + "use_distributed_optimizer", v.A + "use_distributed_optimizer"),
                           key=v.O + "use_distributed_optimizer", fix="Write the same value to both keys.",
                           source=S.MINDSPEED_VERL))
    return out

def ep_sp(v: _View, ctx: Context) -> list[Finding]:
    tp = v.int(v.A + "tensor_model_parallel_size", 1)
    ep = v.int(v.A + "expert_model_parallel_size", 1)
    sp_o = v.get(v.O + "sequence_parallel")
    sp = sp_o if isinstance(sp_o, bool) else v.bool(v.A + "sequence_parallel", True)
    if tp and ep and tp > 1 and ep > 1 and sp is False:
        return [finding("launch-ep-tp-needs-sp", "error", ("config", "megatron"),
                        "expert parallel with tensor parallel needs sequence parallel",
                        detail="Megatron: 'When using expert parallelism and tensor parallelism, sequence "
                               "parallelism must be used'.",
                        evidence=v.ev(v.A + "tensor_model_parallel_size", v.A + "expert_model_parallel_size",
                                      v.A + "sequence_parallel", v.O + "sequence_parallel"),
                        key=v.O + "sequence_parallel" if isinstance(sp_o, bool) else v.A + "sequence_parallel",
                        fix="Turn sequence parallel on (--sp).", source=S.MEGATRON_TRANSFORMER_CONFIG)]
    return []

def recompute(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    kg, km, kn = v.O + "recompute_granularity", v.O + "recompute_method", v.O + "recompute_num_layers"
    g, m, n = v.get(kg), v.get(km), v.get(kn)
    ev = v.ev(kg, km, kn)

    def f(id_: str, sev: str, title: str, key: str, fix: str, detail: str = "") -> None:
        out.append(finding(id_, sev, ("config", "megatron"), title, detail=detail, evidence=ev, key=key, fix=fix,
                           source=S.MEGATRON_TRANSFORMER_CONFIG))

    if g is not None and g not in ("full", "selective"):
        f("launch-recompute-invalid", "error", f"recompute_granularity {g!r} is not full or selective", kg,
          "Use full or selective.", 'Megatron: \'When using recompute_granuarlity: X must be "full"or "selective".\'')
    if m is not None and m not in ("uniform", "block"):
        f("launch-recompute-invalid", "error", f"recompute_method {m!r} is not uniform or block", km,
          "Use uniform or block.", "Megatron: 'recompute_method: X must be \"block\" or \"uniform\".'")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        f("launch-recompute-invalid", "error", f"recompute_num_layers {n!r} is not an integer", kn, "Use an integer.")
        n = None
    if g == "full":
        if m is None:
            f("launch-recompute-incomplete", "error", "recompute full needs recompute_method", km,
              f"Add {km}=uniform (or block).",
              "Megatron: 'Using recompute_granularity: full so recompute_method must be \"block\" or \"uniform\"'.")
        if n is None:
            f("launch-recompute-incomplete", "error", "recompute full needs recompute_num_layers", kn,
              f"Add {kn}=1 (layers per checkpoint chunk).",
              "Megatron: 'When using recompute_granularity: full recompute_num_layers must be between 1 and "
              "num_layers_per_pipeline_rank'.")
    elif g == "selective":
        if n is not None:
            f("launch-recompute-selective-layers", "error", "recompute selective rejects recompute_num_layers", kn,
              f"Drop {kn}.", "Megatron: 'When using recompute_granularity: selective recompute_num_layers must be None.'")
        if m is not None:
            f("launch-recompute-selective-method", "warning", "recompute_method has no effect with selective", km,
              f"Drop {km} (only used with full).",
              "Megatron's training args reject it ('recompute method is not yet supported for selective'); "
              "TransformerConfig ignores it.")
    elif g is None and (m is not None or n is not None):
        f("launch-recompute-without-full", "warning", "recompute_method/num_layers without recompute_granularity=full",
          kg, f"Add {kg}=full.", "verl NPU docs: recompute_method/num_layers only take effect with granularity full.")
    model = ctx.model
    pp = v.int(v.A + "pipeline_model_parallel_size", 1)
    if g == "full" and isinstance(n, int) and model and model.num_layers and pp:
        per_rank = model.num_layers // pp
        if not 1 <= n <= per_rank:
            f("launch-recompute-layers-range", "error",
              f"recompute_num_layers={n} is outside 1..{per_rank} (layers per pipeline stage)", kn,
              f"Use a value in 1..{per_rank}.",
              f"Megatron: 'recompute_num_layers must be between 1 and num_layers_per_pipeline_rank: {per_rank}'.")
    return out

def vpp(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    k = v.A + "virtual_pipeline_model_parallel_size"
    vpp = v.int(k)
    pp = v.int(v.A + "pipeline_model_parallel_size", 1)
    if vpp is None or vpp <= 1 or pp is None:
        return out
    if pp <= 1:
        out.append(finding("launch-vpp-needs-pp", "error", ("config", "megatron"), "VPP needs PP > 1",
                           detail="Megatron: 'pipeline-model-parallel size should be greater than 1 with interleaved "
                                  "schedule'.", evidence=v.ev(k, v.A + "pipeline_model_parallel_size"), key=k,
                           fix=f"Set {v.A}pipeline_model_parallel_size > 1 or drop VPP.", source=S.MEGATRON_TRANSFORMER_CONFIG))
    m = ctx.model
    if m and m.num_layers and m.num_layers % (pp * vpp):
        out.append(finding("launch-vpp-layers-indivisible", "error", ("config", "model"),
                           f"{m.num_layers} layers are not divisible by PP*VPP = {pp * vpp}",
                           detail="Megatron: 'num_layers_per_pipeline_rank should be divisible by vp_size'.",
                           evidence={**v.ev(k), "num_layers": m.num_layers}, key=k,
                           fix="Choose PP and VPP whose product divides the layer count.", source=S.MEGATRON_TRANSFORMER_CONFIG))
    return out

def cp(v: _View, ctx: Context) -> list[Finding]:
    cp_a = v.int(v.A + "context_parallel_size", 1)
    cp_o = v.get(v.O + "context_parallel_size")
    src = S.MINDSPEED_VERL
    if v.has(v.O + "context_parallel_size") and cp_a is not None and cp_o != cp_a:
        return [finding("launch-cp-mismatch", "error", ("config", "mindspeed"),
                        f"the two context_parallel_size keys disagree ({cp_a} vs {cp_o})",
                        detail="verl builds the groups from the megatron key, MindSpeed patches from the dict.",
                        evidence=v.ev(v.A + "context_parallel_size", v.O + "context_parallel_size"),
                        key=v.O + "context_parallel_size", fix="Write the same CP to both keys.", source=src)]
    if cp_a and cp_a > 1 and not v.has(v.O + "context_parallel_size") and cp_needs_override_key(ctx.verl_version):
        return [finding("launch-cp-override-missing", "warning", ("config", "mindspeed"),
                        "CP > 1 but override_transformer_config.context_parallel_size is not set",
                        detail="verl < 0.8.0's legacy worker hands MindSpeed only the override dict, so MindSpeed's "
                               "CP patches may not be applied.",
                        evidence=v.ev(v.A + "context_parallel_size"), key=v.O + "context_parallel_size",
                        fix=f"Add +{v.O}context_parallel_size={cp_a}.", source=src)]
    return []

def moe(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    m = ctx.model
    if m is None:
        return out
    ep = v.int(v.A + "expert_model_parallel_size", 1)
    etp = v.int(v.A + "expert_tensor_parallel_size")
    moe_keys = [(v.A + "expert_model_parallel_size", ep is not None and ep > 1),
                (v.A + "expert_tensor_parallel_size", etp is not None and etp > 1),
                (v.O + "moe_grouped_gemm", v.get(v.O + "moe_grouped_gemm") is True),
                (v.O + "use_fused_moe_token_permute_and_unpermute",
                 v.get(v.O + "use_fused_moe_token_permute_and_unpermute") is True)]
    if not m.is_moe:
        for key, on in moe_keys:
            if on:
                out.append(finding("launch-moe-on-dense", "error", ("config", "model"),
                                   f"{key.rsplit('.', 1)[1]} is a MoE feature but the model has no experts",
                                   detail=f"{m.path}/config.json has no num_experts / num_local_experts / n_routed_experts.",
                                   evidence={**v.ev(key), "model_type": m.model_type}, key=key,
                                   fix="Drop it for a dense model.", source=S.MINDSPEED_VERL))
    elif ep and m.num_experts and m.num_experts % ep:
        out.append(finding("launch-experts-indivisible", "error", ("config", "model"),
                           f"{m.num_experts} experts are not divisible by EP={ep}",
                           evidence={**v.ev(v.A + "expert_model_parallel_size"), "num_experts": m.num_experts},
                           key=v.A + "expert_model_parallel_size", fix="Choose an EP that divides the expert count.",
                           source=S.MEGATRON_MOE))
    return out

def fused(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    pe, rope = v.get(v.O + "position_embedding_type"), v.get(v.O + "use_fused_rotary_pos_emb")
    if rope is True and pe != "rope":
        out.append(finding("launch-fused-prereq-missing", "error", ("config", "mindspeed"),
                           "fused RoPE needs position_embedding_type=rope",
                           detail="MindSpeed: '--use-fused-rotary-pos-emb must enable with--position-embedding-type=rope'.",
                           evidence=v.ev(v.O + "use_fused_rotary_pos_emb", v.O + "position_embedding_type"),
                           key=v.O + "position_embedding_type", fix=f"Add +{v.O}position_embedding_type=rope.",
                           source=S.MINDSPEED_FUSED_ROPE))
    for flag, pre, want in ((v.O + "use_fused_swiglu", v.O + "swiglu", True), (v.O + "use_fused_rmsnorm", v.O + "normalization", "RMSNorm")):
        if v.get(flag) is True and v.get(pre) != want:
            out.append(finding("launch-fused-prereq-missing", "warning", ("config", "mindspeed"),
                               f"{flag.rsplit('.', 1)[1]} without {pre.rsplit('.', 1)[1]}={want}",
                               detail="MindSpeed's verl table writes both keys for this fusion.",
                               evidence=v.ev(flag, pre), key=pre, fix=f"Add +{pre}={want}.", source=S.MINDSPEED_VERL))
    m = ctx.model
    if m is None:
        return out
    if (pe == "rope" or rope is True) and m.rotary is False:
        out.append(finding("launch-fused-model-conflict", "error", ("config", "model"),
                           "fused RoPE on a model without rotary position embeddings",
                           evidence={**v.ev(v.O + "position_embedding_type"), "model_type": m.model_type},
                           key=v.O + "position_embedding_type", fix="Drop the RoPE fusion for this model.",
                           source=S.HF_CONFIG))
    if (v.get(v.O + "normalization") == "RMSNorm" or v.get(v.O + "use_fused_rmsnorm") is True) and m.normalization == "LayerNorm":
        out.append(finding("launch-fused-model-conflict", "error", ("config", "model"),
                           "RMSNorm fusion on a LayerNorm model",
                           evidence={**v.ev(v.O + "normalization", v.O + "use_fused_rmsnorm"), "normalization": m.normalization},
                           key=v.O + "normalization", fix="Drop the RMSNorm fusion for this model.",
                           source=S.HF_CONFIG))
    if (v.get(v.O + "swiglu") is True or v.get(v.O + "use_fused_swiglu") is True) and is_gated_silu(m) is False:
        out.append(finding("launch-fused-model-conflict", "error", ("config", "model"),
                           f"SwiGLU fusion on a model whose activation is {m.activation}",
                           evidence={**v.ev(v.O + "swiglu", v.O + "use_fused_swiglu"), "activation": m.activation},
                           key=v.O + "swiglu", fix="Drop the SwiGLU fusion for this model.",
                           source=S.HF_CONFIG))
    return out

def heads_layers(v: _View, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    m = ctx.model
    if m is None:
        return out
    tp = v.int(v.A + "tensor_model_parallel_size", 1)
    pp = v.int(v.A + "pipeline_model_parallel_size", 1)
    kt, kp = v.A + "tensor_model_parallel_size", v.A + "pipeline_model_parallel_size"
    if tp and m.num_heads and m.num_heads % tp:
        out.append(finding("launch-heads-indivisible", "error", ("config", "model"),
                           f"{m.num_heads} attention heads are not divisible by TP={tp}",
                           detail=f"Megatron: 'num_attention_heads ({m.num_heads}) must be a multiple of "
                                  f"tensor_model_parallel_size ({tp}).'",
                           evidence={**v.ev(kt), "num_heads": m.num_heads}, key=kt, fix="Choose a TP that divides the heads.",
                           source=S.MEGATRON_TRANSFORMER_CONFIG))
    if tp and m.num_kv_heads and m.num_kv_heads % tp:
        out.append(finding("launch-kv-heads-indivisible", "error", ("config", "model"),
                           f"{m.num_kv_heads} KV heads are not divisible by TP={tp}",
                           detail=f"Megatron: 'num_query_groups ({m.num_kv_heads}) must be a multiple of "
                                  f"tensor_model_parallel_size ({tp}).'",
                           evidence={**v.ev(kt), "num_kv_heads": m.num_kv_heads}, key=kt,
                           fix="Choose a TP that divides the KV heads.", source=S.MEGATRON_TRANSFORMER_CONFIG))
    if pp and m.num_layers and m.num_layers % pp:
        out.append(finding("launch-layers-indivisible", "error", ("config", "model"),
                           f"{m.num_layers} layers are not divisible by PP={pp}",
                           detail="Megatron: 'num_layers should be divisible by pipeline_model_parallel_size'.",
                           evidence={**v.ev(kp), "num_layers": m.num_layers}, key=kp,
                           fix="Choose a PP that divides the layers.", source=S.MEGATRON_TRANSFORMER_CONFIG))
    return out
