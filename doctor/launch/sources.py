"""Where the launch/lint rules come from: upstream files a user can open, at a tag or commit."""

from __future__ import annotations

VERL = "https://github.com/verl-project/verl/blob/v0.9.0/"
VERL_071 = "https://github.com/verl-project/verl/blob/v0.7.1/"
VERL_061 = "https://github.com/verl-project/verl/blob/v0.6.1/"

VERL_VALIDATE = VERL + "verl/utils/config.py"  # validate_config: batch sizes, world size
VERL_ACTOR_CONFIG = VERL + "verl/workers/config/actor.py"  # ActorConfig checks (mini batch vs train batch)
VERL_ENGINE_CONFIG = VERL + "verl/workers/config/engine.py"  # McoreEngineConfig (SP with TP=1)
VERL_MEGATRON_ENGINE = VERL + "verl/workers/engine/megatron/transformer_impl.py"  # use_mbridge must be True
VERL_ENGINE_WORKERS = VERL + "verl/workers/engine_workers.py"  # mini batch vs DP
VERL_MAIN_PPO = VERL + "verl/trainer/main_ppo.py"
VERL_COPY_TO_LOCAL = VERL + "verl/utils/fs.py"  # copy_to_local: an hdfs:// path, a local path or a Hugging Face id
VERL_MEGATRON_YAML = VERL + "verl/trainer/config/engine/megatron.yaml"
VERL_TRAINER_YAML = VERL + "verl/trainer/config/ppo_trainer.yaml"
VERL_061_TRAINER_YAML = VERL_061 + "verl/trainer/config/ppo_megatron_trainer.yaml"  # device: cuda, ref TP=1
VERL_AUTO_SET_DEVICE = "https://github.com/verl-project/verl/commit/392791bdd"  # 0.7.0: NPU detected
VERL_VANILLA_MBRIDGE = "https://github.com/verl-project/verl/pull/6951"  # 0.9.0: vanilla_mbridge default false
VERL_MBRIDGE_VPP = "https://github.com/verl-project/verl/issues/4815"  # mbridge + VPP IndexError, legacy worker
# verl 0.7.x's main_ppo: the engine worker only for trainer.use_legacy_worker_impl=disable, else (default `auto`)
# megatron takes the legacy verl/workers/megatron_workers.py; 0.6.x: megatron always takes it
VERL_LEGACY_WORKER_SELECT = VERL_071 + "verl/trainer/main_ppo.py#L128-L163"
# 0.8.0 deleted the legacy worker and the key (#6067): main_ppo runs engine_workers.ActorRolloutRefWorker only
VERL_080_ENGINE_ONLY = "https://github.com/verl-project/verl/blob/v0.8.0/verl/trainer/main_ppo.py#L126-L132"
VERL_NPU_FAQ = VERL + "docs/ascend_tutorial/faq/faq.rst"

MEGATRON = "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.12.1/megatron/core/"
MEGATRON_TRANSFORMER_CONFIG = MEGATRON + "transformer/transformer_config.py"
MEGATRON_MOE = MEGATRON + "transformer/moe/moe_layer.py"

MINDSPEED = "https://github.com/Ascend/MindSpeed/blob/92f0e92234ddb7a7643ab9fd8e1a6f316e15be2e/"
MINDSPEED_VERL = MINDSPEED + "docs/zh/user-guide/verl.md"  # the verl feature table (FA must be on, CP keys)
MINDSPEED_FUSED_ROPE = ("https://github.com/Ascend/MindSpeed/blob/a9d3f9c3f65f165e175543af2b0211f4649ab27f/"
                        "mindspeed/features_manager/fusions/fused_rope.py")

PYTHON_M = "https://docs.python.org/3/using/cmdline.html#cmdoption-m"  # `python -m MOD`: "No module named MOD"
HYDRA_OVERRIDES = "https://github.com/facebookresearch/hydra/blob/v1.3.2/website/docs/advanced/override_grammar/basic.md"
HF_CONFIG = "https://github.com/huggingface/transformers/blob/v4.57.1/src/transformers/configuration_utils.py"
NPU_EXAMPLE = VERL + "tests/special_npu/run_qwen3_06b_grpo_mindspeed.sh"  # gpu_memory_utilization=0.6
MEGATRON_PARALLEL_STATE = MEGATRON + "parallel_state.py"  # world size vs EP x ETP x PP
BASH_MANUAL = "https://www.gnu.org/software/bash/manual/bash.html#Escape-Character"  # `\` newline continues a line
VERL_TRTLLM_GPU_ONLY = "https://github.com/verl-project/verl/blob/1dda039b9c6311889a9c9a26040677e1254814f9/examples/grpo_trainer/run_qwen3_8b_fsdp.sh"  # trtllm: DEVICE=gpu only
