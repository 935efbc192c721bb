"""The tiny Qwen2: shapes that fit TP/PP and the NPU FA kernels, built without torch, loadable by transformers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.smoke import dataset, tiny_model
from doctor.smoke.tiny_model import TinyModelSpec


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = dataset.make_rows(32, 8, 0)
    return tiny_model.write_model(tmp_path_factory.mktemp("m") / "model", TinyModelSpec.for_parallel(2, 2),
                                  list(dataset.corpus(rows)))


@pytest.mark.parametrize("tp", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("pp", [1, 2, 4])
def test_for_parallel_fits_the_layout(tp: int, pp: int) -> None:
    s = TinyModelSpec.for_parallel(tp, pp)
    assert s.problems(tp, pp) == []
    assert s.head_dim in (64, 128) and s.num_layers % pp == 0 and s.vocab_size % (tp * 128) == 0
    assert s.num_heads % tp == 0 and s.num_kv_heads % tp == 0


def test_problems_name_each_rule() -> None:
    s = TinyModelSpec(num_layers=3, num_heads=4, num_kv_heads=2, head_dim=96, vocab_size=1000)
    text = " ".join(s.problems(tp=4, pp=2))
    for word in ("head_dim 96", "num_layers 3", "KV heads 2", "vocab_size 1000"):
        assert word in text


def test_directory_is_a_valid_hf_model(model_dir: Path) -> None:
    for f in tiny_model.MODEL_FILES:
        assert (model_dir / f).is_file()
    cfg = json.loads((model_dir / "config.json").read_text())
    assert cfg["architectures"] == ["Qwen2ForCausalLM"] and cfg["head_dim"] == 64
    tcfg = json.loads((model_dir / "tokenizer_config.json").read_text())
    assert "<|im_start|>" in tcfg["chat_template"] and tcfg["eos_token"] == "<|im_end|>"
    assert tiny_model.validate_model_dir(model_dir, tp=2, pp=2) == []
    # The same directory does not fit PP=3.
    assert any("not a multiple of PP 3" in p for p in tiny_model.validate_model_dir(model_dir, tp=2, pp=3))


def test_validate_catches_damage(tmp_path: Path, model_dir: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(model_dir, broken)
    (broken / "model.safetensors").write_bytes(b"\x00" * 16)
    assert any("model.safetensors" in p for p in tiny_model.validate_model_dir(broken, 2, 2))
    (broken / "config.json").write_text("{not json")
    assert "cannot read" in tiny_model.validate_model_dir(broken, 2, 2)[0]
    assert "not a directory" in tiny_model.validate_model_dir(tmp_path / "nope")[0]


def test_build_needs_no_torch(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from doctor.smoke import dataset, tiny_model\n"
        "rows = dataset.make_rows(8, 2, 0)\n"
        f"tiny_model.write_model({str(tmp_path / 'm')!r}, tiny_model.TinyModelSpec.for_parallel(1, 1),"
        " list(dataset.corpus(rows)))\n"
        "assert not any(m.split('.')[0] == 'torch' for m in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m" / "model.safetensors").is_file()


def test_tokenizer_is_byte_level_and_padded_to_vocab(model_dir: Path) -> None:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    cfg = json.loads((model_dir / "config.json").read_text())
    assert tok.get_vocab_size(with_added_tokens=True) == cfg["vocab_size"]
    text = "What is 7 * 8? ünïcødé 🙂"
    assert tok.decode(tok.encode(text).ids) == text
    assert tok.token_to_id("<|im_end|>") == cfg["eos_token_id"]


@pytest.mark.slow
def test_transformers_loads_it_on_cpu_and_runs_forward(model_dir: Path) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    model = transformers.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    tok = transformers.AutoTokenizer.from_pretrained(str(model_dir))
    msgs = [{"role": "user", "content": "What is 3 + 4? Let's think step by step."}]
    text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>user\nWhat is 3 + 4? Let's think step by step.<|im_end|>\n<|im_start|>assistant\n"
    ids = tok(text, return_tensors="pt")
    with torch.no_grad():
        out = model(**ids)
    assert tuple(out.logits.shape) == (1, ids["input_ids"].shape[1], model.config.vocab_size)
    assert bool(torch.isfinite(out.logits).all())
    assert len(tok) == model.config.vocab_size
    gen = model.generate(**ids, max_new_tokens=4, do_sample=False, pad_token_id=tok.pad_token_id)
    tok.decode(gen[0], skip_special_tokens=True)  # every id the model can emit decodes
