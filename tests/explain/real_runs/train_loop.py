"""A tiny causal-LM training loop on CPU with transformers and torch, as a job prints it: a model built from a config
(nothing downloaded), logging, a tqdm bar, warnings. argv[1]: "trainer" runs transformers' Trainer instead."""

import logging
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(name)s - %(levelname)s - %(message)s")
log = logging.getLogger("train")
cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                  num_key_value_heads=2, max_position_embeddings=32)
model = LlamaForCausalLM(cfg)
g = torch.Generator().manual_seed(0)
data = [torch.randint(0, 64, (2, 16), generator=g) for _ in range(4)]
if len(sys.argv) > 1 and sys.argv[1] == "trainer":
    from transformers import Trainer, TrainingArguments

    rows = [{"input_ids": b[0], "labels": b[0].clone()} for b in data]
    args = TrainingArguments(output_dir=sys.argv[2], max_steps=2, logging_steps=1, report_to=[], use_cpu=True,
                             save_strategy="no")
    Trainer(model=model, args=args, train_dataset=rows).train()
else:
    from tqdm import tqdm

    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step, batch in enumerate(tqdm(data, desc="train")):
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        log.info("step %d loss %.4f", step, loss.item())
    log.warning("no checkpoint dir given: the model is not saved")
print("done", flush=True)
