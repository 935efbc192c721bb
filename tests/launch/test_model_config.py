"""config.json facts: field-name variants, experts under three names, VL text_config, norm/act/rope."""

from __future__ import annotations

import pytest

from doctor.errors import InputError
from doctor.launch.model_config import is_gated_silu, load_model_config, parse_model_config
from tests.launch.helpers import GPT2, QWEN3_MOE, QWEN25_05B, write_model


def test_dense_qwen():
    m = parse_model_config(QWEN25_05B)
    assert (m.num_layers, m.num_heads, m.num_kv_heads, m.hidden_size, m.vocab_size) == (24, 14, 2, 896, 151936)
    assert m.normalization == "RMSNorm" and m.rotary is True and is_gated_silu(m) and not m.is_moe


@pytest.mark.parametrize("field", ["num_experts", "num_local_experts", "n_routed_experts"])
def test_experts_under_any_name(field):
    cfg = {k: v for k, v in QWEN3_MOE.items() if k != "num_experts"} | {field: 64}
    m = parse_model_config(cfg)
    assert m.num_experts == 64 and m.is_moe


def test_vl_model_reads_text_config():
    cfg = {"model_type": "qwen2_5_vl", "vision_config": {"depth": 32, "num_heads": 16},
           "text_config": {"num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 2,
                           "hidden_size": 2048, "rms_norm_eps": 1e-6, "hidden_act": "silu", "rope_theta": 1e6}}
    m = parse_model_config(cfg)
    assert (m.num_layers, m.num_heads, m.num_kv_heads, m.model_type) == (36, 16, 2, "qwen2_5_vl")


def test_gpt2_layernorm_gelu_no_rope():
    m = parse_model_config(GPT2)
    assert (m.num_layers, m.num_heads, m.num_kv_heads) == (12, 12, 12)
    assert m.normalization == "LayerNorm" and m.rotary is False and is_gated_silu(m) is False


def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(InputError) as e:
        load_model_config(tmp_path)
    assert str(tmp_path / "config.json") in str(e.value)
    (tmp_path / "config.json").write_text("{nope")
    with pytest.raises(InputError, match="not valid JSON"):
        load_model_config(tmp_path)
    d = write_model(tmp_path, "m", QWEN25_05B)
    assert load_model_config(d).num_layers == 24
