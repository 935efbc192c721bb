"""Writes the tiny Qwen2 model (random weights, a word-level tokenizer) the ppo_v1_transfer_queue_missing run points
actor_rollout_ref.model.path and critic.model.path at: it only has to load, nothing is trained."""

import sys

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h112/tiny"
vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, **{f"w{i}": i + 3 for i in range(125)}}
tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
fast.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
fast.save_pretrained(out)
cfg = Qwen2Config(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=1, max_position_embeddings=256)
Qwen2ForCausalLM(cfg).save_pretrained(out)
