"""A tiny random Qwen2 model with a locally trained tokenizer, written as a Hugging Face directory.

Why these shapes: the NPU fused attention (`torch_npu.npu_fusion_attention`, used by MindSpeed's
`use_flash_attn`) is exercised with head_dim 64 or 128 in every shipped model, so we use 64; layers are a
multiple of PP and heads / KV heads multiples of TP (Megatron rejects anything else: "num_attention_heads
(H) must be a multiple of tensor_model_parallel_size (T)", docs/verl-mindspeed.md); the vocabulary is a multiple of
TP×128 so Megatron does not pad it (its `make_vocab_size_divisible_by` is 128 per TP rank) and every logit row
maps to a token the tokenizer can decode — we pad the tokenizer with reserved special tokens to the same size.

Building needs numpy, safetensors and tokenizers only: no torch (the doctor may run where torch is broken).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ENDOFTEXT = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = (ENDOFTEXT, IM_START, IM_END)

# ChatML, the format Qwen2 instruct models use; add_generation_prompt opens the assistant turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

HEAD_DIM_CHOICES = (64, 128)


@dataclass(frozen=True)
class TinyModelSpec:
    """Shapes of the tiny model. Use `for_parallel(tp, pp)` to get one that fits a layout."""

    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 64
    intermediate_size: int = 512
    vocab_size: int = 1024
    max_position_embeddings: int = 2048
    seed: int = 0
    tokenizer_merges_vocab: int = 1024  # BPE vocabulary target before padding to vocab_size

    @property
    def hidden_size(self) -> int:
        return self.num_heads * self.head_dim

    @classmethod
    def for_parallel(cls, tp: int, pp: int, seed: int = 0) -> TinyModelSpec:
        """Smallest sensible shapes for TP×PP: 2 layers per stage, KV heads = max(2, TP), 2 queries per KV head,
        vocab a multiple of TP×128 that is at least 1024."""
        if tp < 1 or pp < 1:
            raise ValueError("tp and pp must be >= 1")
        kv = max(2, tp)
        heads = 2 * kv
        hidden = heads * 64
        unit = tp * 128
        vocab = max(1024, unit) + (-max(1024, unit)) % unit
        return cls(
            num_layers=2 * pp,
            num_heads=heads,
            num_kv_heads=kv,
            head_dim=64,
            intermediate_size=2 * hidden,
            vocab_size=vocab,
            seed=seed,
        )

    def problems(self, tp: int = 1, pp: int = 1) -> list[str]:
        """Why these shapes would not run at TP×PP (empty = fine)."""
        out = []
        if self.head_dim not in HEAD_DIM_CHOICES:
            out.append(f"head_dim {self.head_dim} is not one of {HEAD_DIM_CHOICES}")
        if self.num_layers % pp:
            out.append(f"num_layers {self.num_layers} is not a multiple of PP {pp}")
        if self.num_heads % tp or self.num_kv_heads % tp:
            out.append(f"heads {self.num_heads} / KV heads {self.num_kv_heads} not multiples of TP {tp}")
        if self.num_heads % self.num_kv_heads:
            out.append(f"heads {self.num_heads} not a multiple of KV heads {self.num_kv_heads}")
        if self.vocab_size % (tp * 128):
            out.append(f"vocab_size {self.vocab_size} is not a multiple of TP×128 = {tp * 128}")
        if self.intermediate_size % tp:
            out.append(f"intermediate_size {self.intermediate_size} is not a multiple of TP {tp}")
        return out


# ---------------------------------------------------------------------------------------------- weights

def weight_shapes(spec: TinyModelSpec) -> dict[str, tuple[int, ...]]:
    """Tensor names and shapes of transformers' Qwen2ForCausalLM (q/k/v carry a bias, o_proj does not)."""
    h, i, v = spec.hidden_size, spec.intermediate_size, spec.vocab_size
    q, kv = spec.num_heads * spec.head_dim, spec.num_kv_heads * spec.head_dim
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (v, h)}
    for n in range(spec.num_layers):
        p = f"model.layers.{n}."
        shapes.update(
            {
                p + "input_layernorm.weight": (h,),
                p + "self_attn.q_proj.weight": (q, h),
                p + "self_attn.q_proj.bias": (q,),
                p + "self_attn.k_proj.weight": (kv, h),
                p + "self_attn.k_proj.bias": (kv,),
                p + "self_attn.v_proj.weight": (kv, h),
                p + "self_attn.v_proj.bias": (kv,),
                p + "self_attn.o_proj.weight": (h, q),
                p + "post_attention_layernorm.weight": (h,),
                p + "mlp.gate_proj.weight": (i, h),
                p + "mlp.up_proj.weight": (i, h),
                p + "mlp.down_proj.weight": (h, i),
            }
        )
    shapes["model.norm.weight"] = (h,)
    shapes["lm_head.weight"] = (v, h)
    return shapes


def init_weights(spec: TinyModelSpec) -> dict[str, Any]:
    """Random normal(0, 0.02) matrices, zero biases, unit norms — transformers' own Qwen2 init, in numpy."""
    import numpy as np

    rng = np.random.default_rng(spec.seed)
    out = {}
    for name, shape in weight_shapes(spec).items():
        if name.endswith("norm.weight"):
            out[name] = np.ones(shape, dtype=np.float32)
        elif name.endswith(".bias"):
            out[name] = np.zeros(shape, dtype=np.float32)
        else:
            out[name] = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
    return out


# ---------------------------------------------------------------------------------------------- configs

def hf_config(spec: TinyModelSpec, token_ids: dict[str, int]) -> dict[str, Any]:
    """config.json for Qwen2ForCausalLM. The weights are stored as float32 (numpy has no bfloat16) and the
    config says bfloat16, the dtype verl's Megatron actor and vLLM rollout use; loaders cast on load."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_hidden_layers": spec.num_layers,
        "num_attention_heads": spec.num_heads,
        "num_key_value_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": spec.max_position_embeddings,
        "initializer_range": 0.02,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "attention_dropout": 0.0,
        "use_cache": True,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": spec.num_layers,
        "tie_word_embeddings": False,
        "vocab_size": spec.vocab_size,
        "bos_token_id": token_ids[ENDOFTEXT],
        "eos_token_id": token_ids[IM_END],
        "pad_token_id": token_ids[ENDOFTEXT],
        "torch_dtype": "bfloat16",
        "doctor_tiny_model": asdict(spec),
    }


def generation_config(token_ids: dict[str, int]) -> dict[str, Any]:
    return {
        "bos_token_id": token_ids[ENDOFTEXT],
        "eos_token_id": [token_ids[IM_END], token_ids[ENDOFTEXT]],
        "pad_token_id": token_ids[ENDOFTEXT],
        "do_sample": True,
        "temperature": 1.0,
        "top_p": 1.0,
    }


def tokenizer_config(spec: TinyModelSpec) -> dict[str, Any]:
    """tokenizer_config.json. `PreTrainedTokenizerFast` loads tokenizer.json alone on transformers 4.x and 5.x."""
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "eos_token": IM_END,
        "pad_token": ENDOFTEXT,
        "unk_token": None,
        "model_max_length": spec.max_position_embeddings,
        "clean_up_tokenization_spaces": False,
        "chat_template": CHAT_TEMPLATE,
        "padding_side": "left",
    }


# ---------------------------------------------------------------------------------------------- tokenizer

def train_tokenizer(texts: Iterable[str], spec: TinyModelSpec) -> Any:
    """Byte-level BPE trained on the dataset's text, padded with reserved special tokens to `vocab_size`.

    Byte-level means any string (including what a random model generates) round-trips; the padding means
    every id the model can emit decodes. Training is deterministic for a fixed corpus order.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=min(spec.tokenizer_merges_vocab, spec.vocab_size),
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    chat_bits = [f"{IM_START}user\n", f"{IM_END}\n", f"{IM_START}assistant\n", "system", "user", "assistant"]
    tok.train_from_iterator([*chat_bits, *texts], trainer=trainer)
    size = tok.get_vocab_size(with_added_tokens=True)
    if size > spec.vocab_size:
        raise ValueError(f"tokenizer has {size} tokens, more than vocab_size {spec.vocab_size}")
    tok.add_special_tokens([f"<|reserved_{i}|>" for i in range(spec.vocab_size - size)])
    return tok


# ---------------------------------------------------------------------------------------------- writing

MODEL_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")


def write_model(out_dir: str | os.PathLike[str], spec: TinyModelSpec, texts: Iterable[str]) -> Path:
    """Write the Hugging Face directory; each file is written to a temp name and renamed."""
    from safetensors.numpy import save_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer(texts, spec)
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}

    tmp = out / f".model.safetensors.tmp-{os.getpid()}"
    save_file(init_weights(spec), str(tmp), metadata={"format": "pt"})
    os.chmod(tmp, 0o644)  # safetensors creates it 0600; the Ray workers of a shared cache may run as others
    os.replace(tmp, out / "model.safetensors")

    tmp = out / f".tokenizer.json.tmp-{os.getpid()}"
    tok.save(str(tmp))
    os.replace(tmp, out / "tokenizer.json")

    _write_json(out / "config.json", hf_config(spec, ids))
    _write_json(out / "generation_config.json", generation_config(ids))
    _write_json(out / "tokenizer_config.json", tokenizer_config(spec))
    return out


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from doctor.atomic import write_text_atomic

    write_text_atomic(str(path), json.dumps(data, indent=2, sort_keys=True) + "\n", mode=0o644)


# ---------------------------------------------------------------------------------------------- checking

def validate_model_dir(path: str | os.PathLike[str], tp: int = 1, pp: int = 1, *, tiny: bool = True) -> list[str]:
    """Problems with a model directory as sentences (empty = valid). Reads JSON and the safetensors header
    only (no torch). `tiny=False` (a user's `--model`) skips the checks that only our own builder promises."""
    p = Path(path)
    if not p.is_dir():
        return [f"{p}: not a directory"]
    out = []
    try:
        cfg = json.loads((p / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return [f"{p / 'config.json'}: cannot read: {e}"]
    if not (p / "tokenizer.json").exists() and not (p / "tokenizer_config.json").exists():
        out.append(f"{p}: no tokenizer files (tokenizer.json / tokenizer_config.json)")
    if not any(p.glob("*.safetensors")):
        out.append(f"{p}: no *.safetensors weights")
    cfg = cfg.get("text_config", cfg) if isinstance(cfg.get("text_config"), dict) else cfg
    layers, heads = cfg.get("num_hidden_layers"), cfg.get("num_attention_heads")
    kv = cfg.get("num_key_value_heads", heads)
    if not isinstance(layers, int) or not isinstance(heads, int):
        out.append(f"{p / 'config.json'}: num_hidden_layers / num_attention_heads missing")
        return out
    hidden = cfg.get("hidden_size")
    head_dim = cfg.get("head_dim") or (hidden // heads if isinstance(hidden, int) and heads else None)
    spec = TinyModelSpec(
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=kv if isinstance(kv, int) else heads,
        head_dim=head_dim if isinstance(head_dim, int) else 0,
        intermediate_size=cfg.get("intermediate_size", tp) or tp,
        vocab_size=cfg.get("vocab_size", 0) or 0,
    )
    problems = spec.problems(tp, pp)
    if not tiny:  # Megatron pads a real model's vocab itself; only the structural rules apply
        problems = [s for s in problems if not s.startswith("vocab_size")]
    out.extend(f"{p / 'config.json'}: {s}" for s in problems)
    if tiny and not out:
        out.extend(_check_tiny_files(p, cfg))
    return out


def _check_tiny_files(p: Path, cfg: dict[str, Any]) -> list[str]:
    out = []
    missing = [f for f in MODEL_FILES if not (p / f).is_file()]
    if missing:
        return [f"{p}: missing {missing}"]
    try:
        tcfg = json.loads((p / "tokenizer_config.json").read_text(encoding="utf-8"))
    except ValueError as e:
        return [f"{p / 'tokenizer_config.json'}: {e}"]
    if "im_start" not in str(tcfg.get("chat_template", "")):
        out.append(f"{p / 'tokenizer_config.json'}: no ChatML chat_template")
    from tokenizers import Tokenizer  # outside the try: a missing [smoke] extra is not a bad file

    try:
        size = Tokenizer.from_file(str(p / "tokenizer.json")).get_vocab_size(with_added_tokens=True)
    except Exception as e:  # tokenizers raises its own Exception type for a bad file
        return [*out, f"{p / 'tokenizer.json'}: cannot load: {e}"]
    if size != cfg.get("vocab_size"):
        out.append(f"{p}: tokenizer has {size} tokens but config.json vocab_size is {cfg.get('vocab_size')}")
    from safetensors import safe_open

    try:
        with safe_open(str(p / "model.safetensors"), framework="numpy") as f:
            names = set(f.keys())
    except Exception as e:  # safetensors raises SafetensorError
        return [*out, f"{p / 'model.safetensors'}: cannot read: {e}"]
    spec = TinyModelSpec(**cfg["doctor_tiny_model"]) if isinstance(cfg.get("doctor_tiny_model"), dict) else None
    if spec is not None:
        lost = set(weight_shapes(spec)) - names
        if lost:
            out.append(f"{p / 'model.safetensors'}: missing tensors {sorted(lost)[:3]}…")
    return out
