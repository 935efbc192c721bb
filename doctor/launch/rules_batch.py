"""verl's world-size and batch rules (verl/utils/config.py validate_config, ActorConfig, engine workers)."""

from __future__ import annotations

from doctor.launch import sources as S
from doctor.launch.rules import Context, _View
from doctor.report import Finding, finding


def devices(ctx: Context) -> str:
    """What the rules count: NPUs, or GPUs on a path the script runs on GPUs (verl's `n_gpus_per_node` counts either;
    a script's `case "$DEVICE" in gpu)` branch is not an NPU run)."""
    return "GPUs" if ctx.npu is False else "NPUs"


def world_size(v: _View, ctx: Context) -> list[Finding]:
    """TP*PP*CP and EP*ETP*PP must divide the NPU count (verl validate_config; Megatron parallel_state)."""
    out: list[Finding] = []
    dev = devices(ctx)
    npn, nn = v.int("trainer.n_gpus_per_node", 8), v.int("trainer.nnodes", 1)
    tp = v.int(v.A + "tensor_model_parallel_size", 1)
    pp = v.int(v.A + "pipeline_model_parallel_size", 1)
    cp = v.int(v.A + "context_parallel_size", 1)
    if None in (npn, nn, tp, pp, cp):
        return out
    assert npn and nn and tp and pp and cp
    n_gpus, mp = npn * nn, tp * pp * cp
    if n_gpus % mp:
        out.append(finding("launch-world-size-indivisible", "error", ("config", "cluster"),
                           f"{n_gpus} {dev} are not divisible by TP*PP*CP = {mp}",
                           detail=f"verl: 'n_gpus ({n_gpus}) must be divisible by model_parallel_size (TP*PP) times "
                                  "context_parallel_size (CP)'; Megatron: 'world_size is not divisible by'.",
                           evidence=v.ev("trainer.n_gpus_per_node", "trainer.nnodes", v.A + "tensor_model_parallel_size",
                                         v.A + "pipeline_model_parallel_size", v.A + "context_parallel_size"),
                           key="trainer.n_gpus_per_node", fix=f"Choose TP, PP and CP whose product divides the {dev[:-1]} count.",
                           source=S.VERL_VALIDATE))
        return out
    ep = v.int(v.A + "expert_model_parallel_size", 1) or 1
    explicit = v.get(v.A + "expert_tensor_parallel_size") is not None
    # ETP unset (verl's yaml: null): Megatron takes TP; a release or bridge may pass 1. The layout is an error when
    # it breaks for every ETP it may run with, and a warning when only some of them break it.
    etps = [v.int(v.A + "expert_tensor_parallel_size")] if explicit else sorted({tp, 1}, reverse=True)
    broken = [e for e in etps if e and n_gpus % (ep * e * pp)]
    if broken:
        etp = broken[0]
        every = len(broken) == len(etps)
        also = "" if explicit or len(etps) == 1 else (" (and with ETP=1)" if every else "; ETP=1 would fit")
        out.append(finding("launch-expert-world-indivisible", "error" if every else "warning", ("config", "cluster"),
                           f"{n_gpus} {dev} are not divisible by EP*ETP*PP = {ep}*{etp}*{pp} = {ep * etp * pp}{also}",
                           detail="Megatron: 'world_size is not divisible by expert_tensor_model_pipeline_parallel_size' "
                                  "(ETP defaults to TP)." + ("" if explicit or every else
                                                             " Set ETP to pin down the layout."),
                           evidence={**v.ev("trainer.n_gpus_per_node", "trainer.nnodes", v.A + "expert_model_parallel_size",
                                            v.A + "expert_tensor_parallel_size", v.A + "pipeline_model_parallel_size"),
                                     "etp_considered": etps},
                           key=v.A + "expert_model_parallel_size",
                           fix=f"Choose EP, ETP and PP whose product divides the {dev[:-1]} count.",
                           source=S.MEGATRON_PARALLEL_STATE))
    return out


def _dp(v: _View) -> int | None:
    """Megatron's data-parallel size: NPUs / (TP*PP*CP), when all are known and divide."""
    npn, nn = v.int("trainer.n_gpus_per_node", 8), v.int("trainer.nnodes", 1)
    tp = v.int(v.A + "tensor_model_parallel_size", 1)
    pp = v.int(v.A + "pipeline_model_parallel_size", 1)
    cp = v.int(v.A + "context_parallel_size", 1)
    if not (npn and nn and tp and pp and cp) or (npn * nn) % (tp * pp * cp):
        return None
    return npn * nn // (tp * pp * cp)


def parallel_batch(v: _View, ctx: Context) -> list[Finding]:
    """Batch sizes against Megatron's data-parallel size (verl validate_config and engine workers)."""
    out: list[Finding] = []
    dp = _dp(v)
    if dp is None or v.get("actor_rollout_ref.actor.use_dynamic_bsz") is True:
        return out
    micro = v.int("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")
    tbs = v.int("data.train_batch_size", 1024)
    n = v.int("actor_rollout_ref.rollout.n", 1)
    mini = v.int("actor_rollout_ref.actor.ppo_mini_batch_size", 256)
    tbs = v.int("data.train_batch_size", 1024)
    n = v.int("actor_rollout_ref.rollout.n", 1)
    mini = v.int("actor_rollout_ref.actor.ppo_mini_batch_size", 256)
    if micro and tbs and n:
        minimal = dp * micro
        if (tbs * n) % minimal:
            out.append(finding("launch-batch-indivisible", "error", ("config",),
                               f"train_batch_size*n = {tbs * n} is not divisible by DP*micro = {minimal}",
                               detail=f"verl: 'real_train_batch_size ({tbs * n}) must be divisible by minimal possible "
                                      f"batch size ({minimal})'.",
                               evidence=v.ev("data.train_batch_size", "actor_rollout_ref.rollout.n",
                                             "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu") | {"dp": dp},
                               key="data.train_batch_size", fix="Make train_batch_size*rollout.n a multiple of DP*micro.",
                               source=S.VERL_VALIDATE))
    if mini and n and (mini * n) % dp:
        out.append(finding("launch-mini-batch-dp", "error", ("config",),
                           f"ppo_mini_batch_size*n = {mini * n} is not divisible by DP = {dp}",
                           detail="verl engine worker: mini-batch must divide by the data-parallel size.",
                           evidence=v.ev("actor_rollout_ref.actor.ppo_mini_batch_size") | {"dp": dp},
                           key="actor_rollout_ref.actor.ppo_mini_batch_size", fix="Make it a multiple of DP.",
                           source=S.VERL_ENGINE_WORKERS))
    return out


def batch(v: _View, ctx: Context) -> list[Finding]:
    """verl's batch rules for every engine: micro batch sizes set, mini batch within the train batch, rollout
    TP dividing the NPU count."""
    out: list[Finding] = []
    npn, nn = v.int("trainer.n_gpus_per_node", 8), v.int("trainer.nnodes", 1)
    n_gpus = npn * nn if npn and nn else None
    rtp = v.int("actor_rollout_ref.rollout.tensor_model_parallel_size", 2)
    if rtp and n_gpus and n_gpus % rtp:
        out.append(finding("launch-rollout-tp-indivisible", "error", ("config", "cluster"),
                           f"rollout TP={rtp} does not divide {n_gpus} {devices(ctx)}",
                           detail="verl: 'rollout world_size: … is not divisible by infer_world_size'.",
                           evidence=v.ev("actor_rollout_ref.rollout.tensor_model_parallel_size"),
                           key="actor_rollout_ref.rollout.tensor_model_parallel_size",
                           fix=f"Choose a rollout TP that divides the {devices(ctx)[:-1]} count.", source=S.VERL_VALIDATE))
    if not ctx.trains:
        return out  # the batch sizes below are the trainer's: a generation server never reads them
    tbs = v.int("data.train_batch_size", 1024)
    mini = v.int("actor_rollout_ref.actor.ppo_mini_batch_size", 256)
    if tbs and mini and tbs < mini:
        # only verl's validate_config holds the two against each other: an entry that does not run it (verl's VLA
        # trainer) takes the layout, so there the rule says what main_ppo would refuse, as a warning
        unchecked = ctx.validates is False
        out.append(finding("launch-mini-batch-too-large", "warning" if unchecked else "error", ("config",),
                           f"train_batch_size ({tbs}) must be >= ppo_mini_batch_size ({mini})"
                           + (" (under main_ppo; this entry point does not check it)" if unchecked else ""),
                           detail=("verl's validate_config raises 'train_batch_size (…) must be >= "
                                   "actor.ppo_mini_batch_size (…)'"
                                   + ("; this entry point does not call it (its source names neither "
                                      "validate_config nor verl.trainer.main_ppo), so the run is not refused for "
                                      "it: check the layout against that trainer's own code." if unchecked else ".")),
                           evidence=v.ev("data.train_batch_size", "actor_rollout_ref.actor.ppo_mini_batch_size"),
                           key="actor_rollout_ref.actor.ppo_mini_batch_size", fix="Lower ppo_mini_batch_size.",
                           source=S.VERL_ACTOR_CONFIG))
    if v.get("actor_rollout_ref.actor.use_dynamic_bsz") is True:
        return out
    micro = v.get("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")  # set but not a number: a type error
    if micro is None and v.get("actor_rollout_ref.actor.ppo_micro_batch_size") is None:
        out.append(finding("launch-micro-batch-missing", "error", ("config",),
                           "actor micro batch size is not set",
                           evidence={"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": None,
                                     "actor_rollout_ref.actor.use_dynamic_bsz": v.get("actor_rollout_ref.actor.use_dynamic_bsz")},
                           detail="verl: \"[actor] Please set at least one of 'actor.ppo_micro_batch_size' or "
                                  "'actor.ppo_micro_batch_size_per_gpu' if use_dynamic_bsz is not enabled.\"",
                           key="actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
                           fix="Set actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu.", source=S.VERL_VALIDATE))
    needs_ref = v.get("actor_rollout_ref.actor.use_kl_loss") is True or v.get("algorithm.use_kl_in_reward") is True
    roles = [("rollout", "actor_rollout_ref.rollout")] + ([("ref", "actor_rollout_ref.ref")] if needs_ref else [])
    for role, base in roles:
        if v.get(base + ".log_prob_use_dynamic_bsz") is True:
            continue
        if v.get(base + ".log_prob_micro_batch_size_per_gpu") is None and v.get(base + ".log_prob_micro_batch_size") is None:
            out.append(finding("launch-log-prob-micro-batch-missing", "error", ("config",),
                               f"{role} log_prob micro batch size is not set",
                               evidence={base + ".log_prob_micro_batch_size_per_gpu": None,
                                         **v.ev("actor_rollout_ref.actor.use_kl_loss", "algorithm.use_kl_in_reward")},
                               detail=f"verl: \"[{base}] Please set at least one of '{base}.log_prob_micro_batch_size' "
                                      f"or '{base}.log_prob_micro_batch_size_per_gpu'.\"",
                               key=base + ".log_prob_micro_batch_size_per_gpu",
                               fix=f"Set {base}.log_prob_micro_batch_size_per_gpu.", source=S.VERL_VALIDATE))
    return out
