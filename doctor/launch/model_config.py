"""Read the facts the layout rules need from a local Hugging Face model's config.json.

Only the file is read (no transformers import, no download). Field names follow the Hugging Face
conventions: `num_hidden_layers`/`n_layer`, `num_attention_heads`/`n_head`, `num_key_value_heads`,
`hidden_size`/`n_embd`, `vocab_size`; experts under `num_experts` (Qwen2/3-MoE), `num_local_experts`
(Mixtral), `n_routed_experts` (DeepSeek); VL models nest the language model under `text_config`.
Normalisation: `rms_norm_eps` means RMSNorm (Llama/Qwen family), `layer_norm_eps`/`layer_norm_epsilon`
without it means LayerNorm (GPT-2, GPT-NeoX, Falcon). Rotary embeddings: `rope_theta`/`rope_scaling`/
`rotary_emb_base`/`rotary_pct` or `position_embedding_type == "rotary"`; `n_positions` alone (GPT-2) means
learned absolute positions. Activation: `hidden_act`/`activation_function`. The parameter count (for launch's
defaults) comes from the safetensors index when it is beside the config, else from the shapes (`parameters`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doctor.errors import InputError

_LAYERS = ("num_hidden_layers", "n_layer", "num_layers")
_HEADS = ("num_attention_heads", "n_head")
_KV = ("num_key_value_heads", "num_kv_heads", "multi_query_group_num")
_HIDDEN = ("hidden_size", "n_embd", "d_model")
_EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")
_GATED_ACTS = ("silu", "swish", "swiglu")


@dataclass(frozen=True)
class ModelInfo:
    path: str
    model_type: str | None
    num_layers: int | None
    num_heads: int | None
    num_kv_heads: int | None
    hidden_size: int | None
    vocab_size: int | None
    num_experts: int | None
    normalization: str | None  # "RMSNorm" | "LayerNorm" | None (unknown)
    activation: str | None
    rotary: bool | None  # None = unknown
    intermediate_size: int | None = None  # the dense MLP's (`intermediate_size`, `ffn_hidden_size`, `n_inner`)
    moe_intermediate_size: int | None = None  # one expert's MLP
    shared_expert_intermediate_size: int | None = None  # DeepSeek/Qwen2-MoE shared experts, all together
    head_dim: int | None = None  # `head_dim` when it is not hidden/heads (Qwen3)
    tie_embeddings: bool | None = None  # `tie_word_embeddings`: the LM head shares the input embedding
    stored_parameters: int | None = None  # from model.safetensors.index.json `total_size` and the dtype

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts and self.num_experts > 1)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def _first_int(cfg: dict[str, Any], names: tuple[str, ...]) -> int | None:
    for n in names:
        v = cfg.get(n)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def parse_model_config(cfg: dict[str, Any], path: str = "") -> ModelInfo:
    """ModelInfo from a parsed config.json; the language model part of a VL config is `text_config`."""
    top = cfg
    text = cfg.get("text_config")
    if isinstance(text, dict):
        merged = dict(text)
        for k, v in top.items():  # fields only the top level has still count (e.g. model_type)
            merged.setdefault(k, v)
        cfg = merged
    heads = _first_int(cfg, _HEADS)
    kv = _first_int(cfg, _KV)
    if kv is None:
        kv = heads  # MHA: every head has its own KV head
    experts = _first_int(cfg, _EXPERTS)
    if "rms_norm_eps" in cfg or "rms_norm_epsilon" in cfg:
        norm: str | None = "RMSNorm"
    elif "layer_norm_eps" in cfg or "layer_norm_epsilon" in cfg or "layernorm_epsilon" in cfg:
        norm = "LayerNorm"
    else:
        norm = None
    act = cfg.get("hidden_act") or cfg.get("activation_function") or cfg.get("hidden_activation")
    rotary: bool | None
    if any(k in cfg for k in ("rope_theta", "rope_scaling", "rotary_emb_base", "rotary_pct", "rope_parameters")) \
            or cfg.get("position_embedding_type") == "rotary":
        rotary = True
    elif "n_positions" in cfg or cfg.get("position_embedding_type") in ("absolute", "learned_absolute", "alibi"):
        rotary = False
    else:
        rotary = None
    return ModelInfo(
        path=path,
        model_type=cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None,
        num_layers=_first_int(cfg, _LAYERS),
        num_heads=heads,
        num_kv_heads=kv,
        hidden_size=_first_int(cfg, _HIDDEN),
        vocab_size=_first_int(cfg, ("vocab_size",)),
        num_experts=experts,
        normalization=norm,
        activation=act if isinstance(act, str) else None,
        rotary=rotary,
        intermediate_size=_first_int(cfg, ("intermediate_size", "ffn_hidden_size", "n_inner")),
        moe_intermediate_size=_first_int(cfg, ("moe_intermediate_size", "expert_intermediate_size")),
        shared_expert_intermediate_size=_shared(cfg),
        head_dim=_first_int(cfg, ("head_dim", "kv_channels")),
        tie_embeddings=cfg.get("tie_word_embeddings") if isinstance(cfg.get("tie_word_embeddings"), bool) else None,
    )


def _shared(cfg: dict[str, Any]) -> int | None:
    size = _first_int(cfg, ("shared_expert_intermediate_size",))
    if size is not None:
        return size
    n, each = _first_int(cfg, ("n_shared_experts",)), _first_int(cfg, ("moe_intermediate_size",))
    return n * each if n and each else None


_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "float8_e4m3fn": 1, "int8": 1}


def parameters(m: ModelInfo) -> float | None:
    """The model's parameter count: the safetensors index's `total_size` over the dtype's bytes when it is here,
    else counted from the config — attention with its own KV head count (GQA) and head size, the MLP with its
    intermediate size (three matrices when gated, two otherwise), every expert of a MoE layer plus the shared
    ones and the router, the input embedding and an LM head unless tied. Norms and biases are left out (< 0.1%)."""
    if m.stored_parameters:
        return float(m.stored_parameters)
    h, L = m.hidden_size, m.num_layers
    if not (h and L):
        return None
    heads = m.num_heads or 1
    hd = m.head_dim or h // heads
    attn = h * heads * hd * 2 + h * (m.num_kv_heads or heads) * hd * 2
    mats = 3 if is_gated_silu(m) is not False else 2
    if m.is_moe:
        each = m.moe_intermediate_size or m.intermediate_size or 4 * h
        mlp = (m.num_experts or 1) * mats * h * each + mats * h * (m.shared_expert_intermediate_size or 0) \
            + h * (m.num_experts or 1)
    else:
        mlp = mats * h * (m.intermediate_size or 4 * h)
    embed = (m.vocab_size or 0) * h * (1 if m.tie_embeddings else 2)
    return float(L * (attn + mlp) + embed)


def is_gated_silu(info: ModelInfo) -> bool | None:
    """True when the MLP activation is SiLU (SwiGLU in the Llama/Qwen family), False for GELU & co."""
    if info.activation is None:
        return None
    return info.activation.lower() in _GATED_ACTS


def load_model_config(model_dir: str | Path) -> ModelInfo:
    """Read `<model_dir>/config.json`; InputError (exit 2) names the file and what is wrong."""
    p = Path(model_dir)
    cfg_path = p / "config.json" if not p.name.endswith(".json") else p
    try:
        raw = cfg_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no config.json here (a local Hugging Face model directory is expected)",
                         source=str(cfg_path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read: {e}", source=str(cfg_path)) from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e}", source=str(cfg_path)) from None
    if not isinstance(data, dict):
        raise InputError("config.json must be a JSON object", source=str(cfg_path))
    info = parse_model_config(data, str(model_dir))
    stored = _stored_parameters(cfg_path.parent, data)
    if stored is None:
        return info
    from dataclasses import replace

    return replace(info, stored_parameters=stored)


def _stored_parameters(model_dir: Path, cfg: dict[str, Any]) -> int | None:
    """`metadata.total_size` (bytes) of model.safetensors.index.json over the config's dtype size."""
    try:
        index = json.loads((model_dir / "model.safetensors.index.json").read_text(encoding="utf-8"))
        total = index["metadata"]["total_size"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    dtype = cfg.get("torch_dtype") or cfg.get("dtype")
    size = _DTYPE_BYTES.get(dtype) if isinstance(dtype, str) else None
    if not isinstance(total, int) or size is None:
        return None
    return total // size
