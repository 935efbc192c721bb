"""Which key of an entry point's config names the model it loads, and verl's placeholder default there.

main_ppo and the trainers built on its config load `actor_rollout_ref.model.path`; the SFT and generation entry
points have a `model` section of their own: the legacy FSDP SFT trainer (`verl.trainer.fsdp_sft_trainer`,
`sft_trainer.yaml`, to v0.6.x) loads `model.partial_pretrain`, the engine SFT trainer (`verl.trainer.sft_trainer`,
`sft_trainer_engine.yaml`, whose `model` is `model/hf_model.yaml`) and `verl.trainer.main_generation`
(`generation.yaml`) load `model.path`; the evaluation entries (`main_eval`, `evaluation.yaml`) score a parquet of
responses and load no model. Each yaml's default is an example path, not a model: a call that leaves the key to it
runs that placeholder (launch-model-missing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PPO_MODEL_KEY = "actor_rollout_ref.model.path"
_VERL_061 = "https://github.com/verl-project/verl/blob/v0.6.1/verl/trainer/config/"
_HF_MODEL_YAML = "https://github.com/verl-project/verl/blob/v0.9.0/verl/trainer/config/model/hf_model.yaml"


@dataclass(frozen=True)
class ModelKey:
    key: str
    placeholder: str | None  # the yaml's default at that key, when it is one of verl's example paths
    source: str | None  # the yaml that says so


# model/hf_model.yaml's default, the same in every release
PPO = ModelKey(PPO_MODEL_KEY, "~/models/deepseek-llm-7b-chat", _HF_MODEL_YAML)
_LEGACY_SFT = ModelKey("model.partial_pretrain", "~/models/gemma-1.1-7b-it", _VERL_061 + "sft_trainer.yaml")
_ENGINE_SFT = ModelKey("model.path", PPO.placeholder, _HF_MODEL_YAML)
_GENERATION = ModelKey("model.path", "~/models/Qwen2-7B-Instruct", _VERL_061 + "generation.yaml")
# config name -> its model key, when the composed config is not here to say (None: the config loads no model)
_BY_CONFIG: dict[str, ModelKey | None] = {"sft_trainer": _LEGACY_SFT, "sft_trainer_engine": _ENGINE_SFT,
                                          "generation": _GENERATION, "evaluation": None}
_PLACEHOLDERS = {k.placeholder: k for k in (PPO, _LEGACY_SFT, _GENERATION)}


def model_key(config_name: str, flat: Mapping[str, object] | None) -> ModelKey | None:
    """The key naming the model of a call composing `config_name`: from the composed config (`flat`) when there is
    one — the first of main_ppo's key, `model.partial_pretrain`, `model.path` it has, so a recipe's config named
    otherwise is read for what it holds — else by the config's name (main_ppo's key for any name not an SFT,
    generation or evaluation config). None: the config loads no model (evaluation)."""
    if flat is not None:
        key = next((k for k in (PPO_MODEL_KEY, _LEGACY_SFT.key, "model.path") if k in flat), None)
        if key is None:
            return None
        value = flat.get(key)
        known = _PLACEHOLDERS.get(value) if isinstance(value, str) else None
        return ModelKey(key, known.placeholder, known.source) if known else ModelKey(key, None, None)
    return _BY_CONFIG.get(config_name.removesuffix(".yaml"), PPO)
