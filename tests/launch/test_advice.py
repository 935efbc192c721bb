"""The did-you-mean for a key verl's config does not have names a near miss of what was written, not another knob."""

from __future__ import annotations

from doctor.launch.advice import did_you_mean

MEGATRON_0_9_1 = {  # verl 0.9.1's megatron engine keys: grad_offload is gone (0.9.0 had it)
    "actor_rollout_ref.actor.megatron.param_offload", "actor_rollout_ref.actor.megatron.optimizer_offload",
    "actor_rollout_ref.ref.megatron.param_offload", "actor_rollout_ref.actor.megatron.tensor_model_parallel_size",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
}


def test_a_key_that_differs_by_a_whole_word_is_not_a_near_miss():
    """verl#1080's script on 0.9.1: `actor.fsdp_config.grad_offload` is not a misspelt `param_offload` (the script
    sets that one already): no suggestion, rather than "Write actor_rollout_ref.actor.megatron.param_offload=False"."""
    assert did_you_mean("actor_rollout_ref.actor.fsdp_config.grad_offload", MEGATRON_0_9_1, False) == []
    assert did_you_mean("actor_rollout_ref.actor.megatron.grad_offload", MEGATRON_0_9_1, True) == []


def test_misspellings_still_get_their_key():
    assert did_you_mean("actor_rollout_ref.actor.fsdp_config.param_ofload", MEGATRON_0_9_1, False)[0] == \
        "actor_rollout_ref.actor.megatron.param_offload"
    assert did_you_mean("actor_rollout_ref.actor.megatron.optimizer_ofload", MEGATRON_0_9_1, True) == \
        ["actor_rollout_ref.actor.megatron.optimizer_offload"]
    assert did_you_mean("actor_rollout_ref.actor.ppo_micro_batch_size_per_npu", MEGATRON_0_9_1, True) == \
        ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"]  # npu for gpu: one letter
    assert did_you_mean("actor_rollout_ref.actor.megatron.tensor_parallel_size", MEGATRON_0_9_1, True) == \
        ["actor_rollout_ref.actor.megatron.tensor_model_parallel_size"]  # a word left out
