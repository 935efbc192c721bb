"""A memory budget logged negative (doctor/explain/memory_budget.py): vllm-ascend's worker (worker.py at 182b75e)
logs the KV cache's share at INFO, "Available KV cache memory: %.2f GiB" = requested memory - the model's non-cache
memory; negative means the model overflows the share (its e2e test names "-X.XX GiB" as the failure). Read with the
generic database, on an info line too."""

from __future__ import annotations

from doctor.explain.memory_budget import budget_class
from tests.explain.generic import errors


def test_a_negative_kv_cache_budget_logged_at_info_is_device_memory_the_config_sets():
    (f,) = errors(["(Worker_TP0_EP0 pid=21240) INFO 06-23 17:41:09 [worker.py:571] Available KV cache memory: "
                   "-3.25 GiB"])
    assert f.id == "memory-budget-negative" and f.components == ("config", "npu")
    assert "-3.25 GiB" in f.title and "worker.py" in f.source


def test_a_positive_budget_or_a_negative_number_that_is_no_memory_is_none():
    assert budget_class("INFO 06-23 17:41:09 [worker.py:571] Available KV cache memory: 21.37 GiB") is None
    assert budget_class("step 12: loss: -0.25, reward: -1.5") is None
    assert errors(["(Worker pid=1) INFO 06-23 17:41:09 [worker.py:571] Available KV cache memory: 21.37 GiB"]) == []
