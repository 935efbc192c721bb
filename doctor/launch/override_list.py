"""Spec -> the ordered list of Hydra override strings verl's `main_ppo` receives, and the Override type
that `lint` parses scripts into.

Version rules (verl's megatron yaml and engines at each tag, https://github.com/verl-project/verl/blob/v0.9.0/verl/trainer/config/engine/megatron.yaml): FA is always written (`+O.use_flash_attn=True`; verl
< 0.8.0 has no default); verl >= 0.9.0 gets `A.vanilla_mbridge=True` unless Megatron-Bridge is installed
(its default flipped to false, which needs `megatron.bridge`); verl <= 0.6.x gets explicit ref TP/PP/CP
(literal 1 defaults there); `trainer.device=npu` is written for every version (needed <= 0.6.x, harmless
later). Prefixes per key come from features.prefix_for (the key schema of that release).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from doctor.launch.features import (
    REF,
    A,
    O,
    default_vanilla_mbridge,
    key_info,
    megatron_bridge_default,
    model_engine_key,
    npu_rollout_settings,
    prefix_for,
    ref_inherits_parallel,
)
from doctor.launch.spec import LaunchSpec

CONFIG_NAME = "ppo_megatron_trainer"
ENTRY_MODULE = "verl.trainer.main_ppo"


def config_name_for(version: str) -> str:
    """The config `launch` selects: from 0.9.0 `ppo_trainer` with `model_engine=megatron` (ppo_megatron_trainer is
    deprecated there, https://github.com/verl-project/verl/blob/v0.9.0/verl/trainer/config/ppo_megatron_trainer.yaml);
    before, `ppo_megatron_trainer`."""
    return "ppo_trainer" if model_engine_key(version) else CONFIG_NAME

class _Unknown:
    """A value only the run knows: never equal to anything, never a bool or a number."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()

_BARE_SAFE = re.compile(r"^[A-Za-z0-9_./@%+\-:]*$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Override:
    """One Hydra override: `prefix` is '', '+', '++' or '~'; `value` is the value text as Hydra reads it."""

    key: str
    value: str | None
    prefix: str = ""
    line: int | None = None  # where lint found it
    unknown: tuple[str, ...] = ()  # what the value holds that only the run knows ($(…), environment, …)
    shown: str | None = None  # the word as the script writes it, when `unknown` (value then has samples)
    shell: str | None = None  # how launch writes it in bash when bash must expand it (`"k=${HOME}/…"`)

    @property
    def text(self) -> str:
        if self.value is None:
            return f"{self.prefix}{self.key}"
        return f"{self.prefix}{self.key}={self.value}"

    @property
    def display(self) -> str:
        """The override for messages: with the script's `$(…)`/`$VAR` where the value is not known."""
        return self.shown if self.shown is not None else self.text

    @property
    def py(self) -> Any:
        """Best-effort Python value of the override text (bools, ints, floats, null, unquoted strings);
        UNKNOWN when part of the value is only known at run time."""
        if self.unknown:
            return UNKNOWN
        return parse_value(self.value)

    def __str__(self) -> str:
        return self.text


_KEY = re.compile(r"^[A-Za-z_][\w\-]*(?:\.[\w\-@/]+)*$|^[A-Za-z_][\w\-/@]*(?:\.[\w\-@/]+)*$")


def parse_override(text: str, line: int | None = None) -> Override | None:
    """'++a.b=c' -> Override; None when the text is not an override (a flag like --config-name=x)."""
    if text.startswith("-"):
        return None
    prefix = ""
    for p in ("++", "+", "~"):
        if text.startswith(p):
            prefix, text = p, text[len(p):]
            break
    if "=" not in text:
        if prefix == "~" and _KEY.match(text):
            return Override(text, None, prefix, line)
        return None
    key, value = text.split("=", 1)
    key = key.strip()
    if not key or not _KEY.match(key):
        return None
    return Override(key, value, prefix, line)


def parse_value(text: str | None) -> Any:
    if text is None:
        return None
    s = text.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        inner = s[1:-1]
        return inner.replace("\\" + s[0], s[0])
    low = s.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    if low in ("null", "~", "none"):
        return None
    if _NUMBER.match(s):
        try:
            return int(s)
        except ValueError:
            return float(s)
    return s


def hydra_quote(value: str) -> str:
    """Write a string so Hydra's override grammar hands it to verl unchanged.

    Bare when only safe characters are present; otherwise a single-quoted Hydra string: backslashes that
    precede a quote or the end are doubled, quotes become \\', and `${` becomes `\\${` so OmegaConf does
    not treat it as an interpolation. Verified against hydra-core 1.3 OverridesParser in the tests."""
    if value and _BARE_SAFE.match(value) and value.lower() not in ("true", "false", "null") \
            and not _NUMBER.match(value):
        return value
    s = re.sub(r"(\\*)\$\{", lambda m: m.group(1) * 2 + "\\${", value)
    s = re.sub(r"(\\+)(?='|$)", lambda m: m.group(1) * 2, s)
    s = s.replace("'", "\\'")
    return "'" + s + "'"


def _b(v: bool) -> str:
    return "True" if v else "False"


def _num(v: float) -> str:
    return repr(v) if isinstance(v, float) else str(v)


class _Out(list[Override]):
    """The override list being built, with the target version's prefix rule."""

    def __init__(self, version: str) -> None:
        super().__init__()
        self.version = version

    def add(self, key: str, value: str, prefix: str | None = None) -> None:
        self.append(Override(key, value, prefix_for(key, self.version) if prefix is None else prefix))


def _engine_and_data(spec: LaunchSpec, out: _Out) -> None:
    if model_engine_key(spec.verl_version):
        out.add("model_engine", "megatron", "")  # the non-deprecated engine selection (config_name_for)
    out.add("algorithm.adv_estimator", {"grpo": "grpo", "dapo": "grpo", "ppo": "gae"}[spec.algorithm])
    for key, path in (("data.train_files", spec.train_files), ("data.val_files", spec.val_files)):
        out.append(data_path(key, path))
    out.add("data.train_batch_size", str(spec.train_batch_size))
    out.add("data.max_prompt_length", str(spec.max_prompt_length))
    out.add("data.max_response_length", str(spec.max_response_length))
    out.add("data.filter_overlong_prompts", "True")
    out.add("data.truncation", "error")


def data_path(key: str, path: str) -> Override:
    """A data path under the home directory: neither bash (inside quotes), Hydra nor verl expands a literal `~`,
    so `~/…` is written as `"key=${HOME}/…"` in the script and as OmegaConf's `${oc.env:HOME}/…` in the override
    list and the composed YAML (resolved when verl resolves its config, on the machine that runs it)."""
    rest = path[2:]
    if path.startswith("~/") and rest and _BARE_SAFE.match(rest):
        return Override(key, f"'${{oc.env:HOME}}/{rest}'", shell=  # noqa: S604 - a bash word, not a subprocess flag
                        f'"{key}=${{HOME}}/{rest}"')
    return Override(key, hydra_quote(path))


def _actor(spec: LaunchSpec, out: _Out) -> None:
    if spec.model is not None:
        out.add("actor_rollout_ref.model.path", hydra_quote(spec.model))
    out.add("actor_rollout_ref.actor.strategy", "megatron")
    out.add("actor_rollout_ref.actor.optim.lr", _num(spec.lr))
    out.add("actor_rollout_ref.actor.ppo_mini_batch_size", str(spec.ppo_mini_batch_size))
    out.add("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", str(spec.ppo_micro_batch_size_per_gpu))
    if spec.algorithm == "grpo":
        out.add("actor_rollout_ref.actor.use_kl_loss", "True")
        out.add("actor_rollout_ref.actor.kl_loss_coef", "0.001")
        out.add("actor_rollout_ref.actor.kl_loss_type", "low_var_kl")
    elif spec.algorithm == "dapo":
        # DAPO's clip-higher and token-level loss (verl recipe/dapo); no KL loss.
        out.add("actor_rollout_ref.actor.use_kl_loss", "False")
        out.add("actor_rollout_ref.actor.clip_ratio_low", "0.2")
        out.add("actor_rollout_ref.actor.clip_ratio_high", "0.28")
        out.add("actor_rollout_ref.actor.loss_agg_mode", "token-mean")


def _megatron_layout(spec: LaunchSpec, out: _Out) -> None:
    """verl-owned keys: plain."""
    v = spec.verl_version
    out.add(A + "tensor_model_parallel_size", str(spec.tp))
    out.add(A + "pipeline_model_parallel_size", str(spec.pp))
    if spec.vpp is not None:
        out.add(A + "virtual_pipeline_model_parallel_size", str(spec.vpp))
    out.add(A + "context_parallel_size", str(spec.cp))
    out.add(A + "expert_model_parallel_size", str(spec.ep))
    if spec.etp is not None:
        out.add(A + "expert_tensor_parallel_size", str(spec.etp))
    if spec.sp is not None:
        out.add(A + "sequence_parallel", _b(spec.sp))
    if spec.dist_opt is not None:
        out.add(A + "use_distributed_optimizer", _b(spec.dist_opt))
    if spec.mbridge is not None:
        out.add(A + "use_mbridge", _b(spec.mbridge))
    if megatron_bridge_default(v) and not spec.megatron_bridge and not default_vanilla_mbridge(v):
        out.add(A + "vanilla_mbridge", "True")


def _mindspeed_features(spec: LaunchSpec, out: _Out) -> None:
    """MindSpeed keys inside override_transformer_config (the feature table's `+` keys)."""
    out.add(O + "use_flash_attn", "True", "+")
    if spec.sp is not None:
        out.add(O + "sequence_parallel", _b(spec.sp), "+")
    if spec.dist_opt is not None:
        out.add(O + "use_distributed_optimizer", _b(spec.dist_opt), "+")
    if spec.cp > 1:
        out.add(O + "context_parallel_size", str(spec.cp), "+")
    if spec.recompute is not None:
        out.add(O + "recompute_granularity", spec.recompute)
    if spec.recompute_method is not None:
        out.add(O + "recompute_method", spec.recompute_method)
    if spec.recompute_layers is not None:
        out.add(O + "recompute_num_layers", str(spec.recompute_layers))
    fused = set(spec.fused)
    for name, pairs in _FUSIONS:
        if name in fused:
            for key, value in pairs:
                out.add(O + key, value, "+")


_FUSIONS = (("rope", (("position_embedding_type", "rope"), ("use_fused_rotary_pos_emb", "True"))),
            ("swiglu", (("swiglu", "True"), ("use_fused_swiglu", "True"))),
            ("rmsnorm", (("normalization", "RMSNorm"), ("use_fused_rmsnorm", "True"))),
            ("gmm", (("moe_grouped_gemm", "True"),)),
            ("permute", (("use_fused_moe_token_permute_and_unpermute", "True"),)))


def _memory(spec: LaunchSpec, out: _Out) -> None:
    """Offload and dynamic batch size, as upstream's NPU examples write them (doctor.launch.examples)."""
    ref = "actor_rollout_ref.ref.megatron."
    if spec.offload is not None:
        keys = [k for k in ("param_offload", "grad_offload", "optimizer_offload")
                if key_info(A + k, spec.verl_version)[0] == "present"]  # 0.9.1 dropped grad_offload
        for k in keys:
            out.add(A + k, _b(spec.offload))
        out.add(ref + "param_offload", _b(spec.offload))
    if spec.dynamic_bsz is not None:
        out.add("actor_rollout_ref.actor.use_dynamic_bsz", _b(spec.dynamic_bsz))
        out.add("actor_rollout_ref.ref.log_prob_use_dynamic_bsz", _b(spec.dynamic_bsz))
        out.add("actor_rollout_ref.rollout.log_prob_use_dynamic_bsz", _b(spec.dynamic_bsz))
    if spec.max_token_len_per_npu is not None:
        n = str(spec.max_token_len_per_npu)
        out.add("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", n)
        out.add("actor_rollout_ref.ref.log_prob_max_token_len_per_gpu", n)
        out.add("actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu", n)


def _ref_and_critic(spec: LaunchSpec, out: _Out) -> None:
    """The ref inherits the actor's layout since 0.7.0 (literal 1 before); PPO adds a megatron critic."""
    out.add("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu", str(spec.log_prob_micro_batch_size_per_gpu))
    if not ref_inherits_parallel(spec.verl_version):
        for name, value in (("tensor_model_parallel_size", spec.tp), ("pipeline_model_parallel_size", spec.pp),
                            ("context_parallel_size", spec.cp), ("expert_model_parallel_size", spec.ep)):
            out.add(REF + name, str(value))
    if spec.algorithm != "ppo":
        return
    out.add("critic.strategy", "megatron")
    if spec.model is not None:
        out.add("critic.model.path", hydra_quote(spec.model))
    out.add("critic.ppo_micro_batch_size_per_gpu", str(spec.ppo_micro_batch_size_per_gpu))
    out.add("critic.megatron.tensor_model_parallel_size", str(spec.tp))
    out.add("critic.megatron.pipeline_model_parallel_size", str(spec.pp))
    out.add("critic.megatron.context_parallel_size", str(spec.cp))
    out.add("critic.megatron.override_transformer_config.use_flash_attn", "True", "+")


def _rollout(spec: LaunchSpec, out: _Out) -> None:
    out.add("actor_rollout_ref.rollout.name", hydra_quote(spec.rollout_name))
    out.add("actor_rollout_ref.rollout.tensor_model_parallel_size", str(spec.rollout_tp))
    out.add("actor_rollout_ref.rollout.gpu_memory_utilization", _num(spec.gpu_memory_utilization))
    out.add("actor_rollout_ref.rollout.n", str(spec.rollout_n))
    out.add("actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu", str(spec.log_prob_micro_batch_size_per_gpu))
    if spec.max_model_len is not None:
        out.add("actor_rollout_ref.rollout.max_model_len", str(spec.max_model_len))
    for key, flag in (("enforce_eager", spec.enforce_eager), ("free_cache_engine", spec.free_cache_engine)):
        if flag is not None:
            out.add("actor_rollout_ref.rollout." + key, _b(flag))
    if spec.rollout_tuning:  # what the release's NPU quick start sets for this engine (releases.toml)
        for raw in npu_rollout_settings(spec.verl_version, spec.rollout_name)[0]:
            o = parse_override(raw)
            if o is not None:
                out.append(o)
    out.add("algorithm.use_kl_in_reward", "False")


def _trainer(spec: LaunchSpec, out: _Out) -> None:
    out.add("trainer.critic_warmup", "0")
    out.add("trainer.logger", '["console"]')
    out.add("trainer.project_name", hydra_quote(spec.project_name))
    exp = spec.experiment_name or f"{spec.algorithm}_tp{spec.tp}_pp{spec.pp}_cp{spec.cp}_ep{spec.ep}"
    out.add("trainer.experiment_name", hydra_quote(exp))
    out.add("trainer.n_gpus_per_node", str(spec.npus_per_node))
    out.add("trainer.nnodes", str(spec.nodes))
    out.add("trainer.save_freq", str(spec.save_freq))
    out.add("trainer.test_freq", str(spec.test_freq))
    out.add("trainer.total_epochs", str(spec.total_epochs))
    if spec.total_training_steps is not None:
        out.add("trainer.total_training_steps", str(spec.total_training_steps))
    out.add("trainer.device", "npu")
    for raw in spec.extra_overrides:
        o = parse_override(raw)
        if o is not None:
            out.append(o)


STEPS = (_engine_and_data, _actor, _megatron_layout, _mindspeed_features, _memory, _ref_and_critic, _rollout,
         _trainer)


def build_overrides(spec: LaunchSpec) -> list[Override]:
    """The overrides for `spec` on `spec.verl_version`, in the order a reader expects: engine and data, actor,
    megatron layout, MindSpeed features, ref (and critic), rollout, trainer, extras."""
    out = _Out(spec.verl_version)
    for step in STEPS:
        step(spec, out)
    return list(out)


def overrides(spec: LaunchSpec) -> list[str]:
    """Public: the override strings for `spec`, in order (one argv word each)."""
    return [o.text for o in build_overrides(spec)]
