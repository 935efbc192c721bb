"""A memory budget the run logs as negative: what it must keep is more than the memory it was given.

vllm-ascend's worker (vllm_ascend/worker/worker.py at 182b75e, `determine_available_memory`) computes the KV cache's
share as the requested memory (gpu_memory_utilization x the device's memory) minus what the model needs besides the
cache (weights, activations of the profiling run), and logs it at INFO: "Available KV cache memory: %.2f GiB". A
negative figure there (or in any memory line of the same shape) is no notice: the weights alone overflow the share,
so no cache block fits and the engine cannot start (its own e2e test names "-X.XX GiB" as the failure). The
configuration (max_model_len, gpu_memory_utilization, parallel size) and the model's size on this device decide it.
Read also on info lines. Pure logic.
"""

from __future__ import annotations

import re

from doctor.explain.class_phrases import BUDGET_PHRASES
from doctor.explain.classes import Class

SOURCE = ("https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/vllm_ascend/"
          "worker/worker.py#L571")
# `<...> memory<...>: -0.87 GiB` (a memory figure with a unit, negative)
_NEGATIVE = re.compile(r"\b(?P<what>[\w /-]{0,40}\bmemory\b[\w /()-]{0,30}?)\s*[:=]\s*(?P<value>-\d+(?:\.\d+)?)\s*"
                       r"(?P<unit>[KMGT]i?B|bytes)\b", re.I)
PHRASES = BUDGET_PHRASES  # the scanner's pre-filter reads them from doctor.explain.class_phrases


def budget_class(text: str) -> Class | None:
    m = _NEGATIVE.search(text)
    if m is None:
        return None
    what, value = m.group("what").strip(), f"{m.group('value')} {m.group('unit')}"
    return Class(
        "memory-budget-negative", ("config", "npu"), f"The run's memory budget is negative ({what}: {value})",
        f"\"{what}\" came out at {value}: what the run must keep on the device (the model's weights and the "
        "activations measured at start-up) is more than the share of device memory it was given, so nothing is "
        "left for what the figure is for (the KV cache: no block fits, the engine cannot start).",
        "Give it more room or need less: raise gpu_memory_utilization (free the device of other processes), lower "
        "max_model_len / max_num_seqs, spread the model over more devices (tensor parallel), or use a smaller or "
        "quantized model.", SOURCE)
