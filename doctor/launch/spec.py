"""The launch spec: everything `doctor launch` needs to write a verl + MindSpeed launch script.

A spec is plain data (frozen), built from command-line options or from a `--spec FILE` (YAML or TOML)
with the same option names. Keeping it data is what lets `launch` validate before it writes anything and
lets `smoke` build one programmatically.

Spec file schema (every key optional except where noted; names are the CLI option names with `-`
replaced by `_`; unknown keys are refused)::

    model: /path/to/hf-model          # local Hugging Face model directory (config.json is read)
    verl_version: "0.9.1"             # target verl; default: the installed verl's version
    nodes: 1                          # trainer.nnodes
    npus_per_node: 8                  # trainer.n_gpus_per_node (A2: 8, A3: 16)
    tp: 1  pp: 1  vpp: null  cp: 1  ep: 1  etp: null
    sp: null                          # true/false writes both sequence_parallel keys; null = verl default
    recompute: null                   # full | selective
    recompute_method: null            # uniform | block
    recompute_layers: null            # int
    dist_opt: null                    # true/false writes both use_distributed_optimizer keys
    fused: [rope, swiglu, rmsnorm, gmm, permute]   # any subset (or "rope,swiglu" as a string)
    mbridge: null                     # true/false -> actor.megatron.use_mbridge
    megatron_bridge: false            # Megatron-Bridge installed in the target env (verl >= 0.9 vanilla_mbridge)
    algorithm: grpo                   # grpo | ppo | dapo
    train_files: ~/data/gsm8k/train.parquet
    val_files: ~/data/gsm8k/test.parquet
    train_batch_size: 128  ppo_mini_batch_size: 32  ppo_micro_batch_size_per_gpu: 2
    log_prob_micro_batch_size_per_gpu: 4
    max_prompt_length: 512  max_response_length: 1024
    rollout_n: 5  rollout_tp: 2  rollout_name: vllm  gpu_memory_utilization: 0.6
    lr: 1.0e-6  total_epochs: 1  total_training_steps: null  test_freq: -1  save_freq: -1
    project_name: verl_doctor  experiment_name: null
    node_rank: 0  head_address: null  ray_port: 6379
    cann_set_env: /usr/local/Ascend/ascend-toolkit/set_env.sh
    nnal_set_env: /usr/local/Ascend/nnal/atb/set_env.sh    # "" to skip
    extra_overrides: ["trainer.val_before_train=False"]    # raw Hydra overrides appended last
    offload: null  dynamic_bsz: null  max_token_len_per_npu: null   # null: from the closest upstream NPU example
    max_model_len: null  enforce_eager: null  free_cache_engine: null  hccl_aiv: null  rollout_tuning: null
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from doctor.errors import InputError

FUSED_CHOICES = ("rope", "swiglu", "rmsnorm", "gmm", "permute")
ALGORITHMS = ("grpo", "ppo", "dapo")
RECOMPUTE_GRANULARITY = ("full", "selective")
RECOMPUTE_METHODS = ("uniform", "block")

DEFAULT_CANN_SET_ENV = "/usr/local/Ascend/ascend-toolkit/set_env.sh"
DEFAULT_NNAL_SET_ENV = "/usr/local/Ascend/nnal/atb/set_env.sh"


@dataclass(frozen=True)
class LaunchSpec:
    """What to launch. `None` means "leave verl's default" (nothing is written for it)."""

    verl_version: str
    model: str | None = None
    nodes: int = 1
    npus_per_node: int = 8
    tp: int = 1
    pp: int = 1
    vpp: int | None = None
    cp: int = 1
    ep: int = 1
    etp: int | None = None
    sp: bool | None = None
    recompute: str | None = None
    recompute_method: str | None = None
    recompute_layers: int | None = None
    dist_opt: bool | None = None
    fused: tuple[str, ...] = ()
    mbridge: bool | None = None
    megatron_bridge: bool = False
    algorithm: str = "grpo"
    train_files: str = "~/data/gsm8k/train.parquet"
    val_files: str = "~/data/gsm8k/test.parquet"
    train_batch_size: int = 128
    ppo_mini_batch_size: int = 32
    ppo_micro_batch_size_per_gpu: int = 2
    log_prob_micro_batch_size_per_gpu: int = 4
    max_prompt_length: int = 512
    max_response_length: int = 1024
    rollout_n: int = 5
    rollout_tp: int = 2
    rollout_name: str = "vllm"
    gpu_memory_utilization: float = 0.6
    lr: float = 1e-6
    total_epochs: int = 1
    total_training_steps: int | None = None
    test_freq: int = -1
    save_freq: int = -1
    project_name: str = "verl_doctor"
    experiment_name: str | None = None
    node_rank: int = 0
    head_address: str | None = None
    ray_port: int = 6379
    cann_set_env: str = DEFAULT_CANN_SET_ENV
    nnal_set_env: str = DEFAULT_NNAL_SET_ENV
    extra_overrides: tuple[str, ...] = field(default_factory=tuple)
    # Memory and rollout settings; None = not written (launch fills them from the closest upstream NPU example).
    offload: bool | None = None  # actor param/grad/optimizer offload (+ ref param offload)
    dynamic_bsz: bool | None = None  # use_dynamic_bsz on actor, ref and rollout log-prob
    max_token_len_per_npu: int | None = None  # ppo_max_token_len_per_gpu / log_prob_max_token_len_per_gpu
    max_model_len: int | None = None  # rollout max_model_len
    enforce_eager: bool | None = None
    free_cache_engine: bool | None = None
    hccl_aiv: bool | None = None  # export HCCL_OP_EXPANSION_MODE=AIV
    rollout_tuning: bool | None = None  # the rollout settings the release's NPU quick start sets for the engine

    def __post_init__(self) -> None:
        object.__setattr__(self, "fused", normalize_fused(self.fused))
        object.__setattr__(self, "extra_overrides", tuple(self.extra_overrides))
        problems = _shape_problems(self)
        if problems:
            key, msg = problems[0]
            raise InputError(msg, path=key)

    @property
    def world_size(self) -> int:
        return self.nodes * self.npus_per_node

    def replace(self, **changes: Any) -> LaunchSpec:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["fused"] = list(self.fused)
        d["extra_overrides"] = list(self.extra_overrides)
        return d


def normalize_fused(value: Any) -> tuple[str, ...]:
    """'rope,swiglu' / ['rope', 'swiglu'] -> ('rope', 'swiglu') in table order; unknown names refused."""
    if value is None:
        return ()
    items: list[str] = []
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    else:
        for v in value:
            items.extend(x.strip() for x in str(v).split(",") if x.strip())
    bad = [v for v in items if v not in FUSED_CHOICES]
    if bad:
        raise InputError(f"unknown fused feature(s) {bad}; choose from {', '.join(FUSED_CHOICES)}", path="fused")
    return tuple(v for v in FUSED_CHOICES if v in items)


def _shape_problems(spec: LaunchSpec) -> list[tuple[str, str]]:
    """Type/range problems that make a spec meaningless (not rule violations: those are findings)."""
    out: list[tuple[str, str]] = []
    positive = ("nodes", "npus_per_node", "tp", "pp", "cp", "ep", "train_batch_size", "ppo_mini_batch_size",
                "ppo_micro_batch_size_per_gpu", "log_prob_micro_batch_size_per_gpu", "max_prompt_length",
                "max_response_length", "rollout_n", "rollout_tp", "total_epochs")
    for name in positive:
        v = getattr(spec, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            out.append((name, f"must be a positive integer, got {v!r}"))
    for name in ("vpp", "etp", "recompute_layers", "total_training_steps", "max_token_len_per_npu", "max_model_len"):
        v = getattr(spec, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            out.append((name, f"must be a positive integer or null, got {v!r}"))
    for name in ("node_rank", "ray_port"):
        v = getattr(spec, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            out.append((name, f"must be a non-negative integer, got {v!r}"))
    for name in ("sp", "dist_opt", "mbridge", "offload", "dynamic_bsz", "enforce_eager", "free_cache_engine",
                 "hccl_aiv", "rollout_tuning"):
        v = getattr(spec, name)
        if v is not None and not isinstance(v, bool):
            out.append((name, f"must be true, false or null, got {v!r}"))
    if not isinstance(spec.megatron_bridge, bool):
        out.append(("megatron_bridge", f"must be true or false, got {spec.megatron_bridge!r}"))
    if spec.algorithm not in ALGORITHMS:
        out.append(("algorithm", f"must be one of {', '.join(ALGORITHMS)}, got {spec.algorithm!r}"))
    if spec.recompute is not None and spec.recompute not in RECOMPUTE_GRANULARITY:
        out.append(("recompute", f"must be full or selective, got {spec.recompute!r}"))
    if spec.recompute_method is not None and spec.recompute_method not in RECOMPUTE_METHODS:
        out.append(("recompute_method", f"must be uniform or block, got {spec.recompute_method!r}"))
    g = spec.gpu_memory_utilization
    if isinstance(g, bool) or not isinstance(g, (int, float)) or not (0 < g <= 1) or math.isnan(g):
        out.append(("gpu_memory_utilization", f"must be a number in (0, 1], got {g!r}"))
    if isinstance(spec.lr, bool) or not isinstance(spec.lr, (int, float)) or spec.lr <= 0:
        out.append(("lr", f"must be a positive number, got {spec.lr!r}"))
    from doctor.knowledge.versions import parse_pkg_version

    if not isinstance(spec.verl_version, str) or parse_pkg_version(spec.verl_version) is None:
        out.append(("verl_version", f"is not a version: {spec.verl_version!r}"))
    for name in ("model", "experiment_name", "head_address"):
        v = getattr(spec, name)
        if v is not None and not isinstance(v, str):
            out.append((name, f"must be a string, got {v!r}"))
    for name in ("train_files", "val_files", "rollout_name", "project_name", "cann_set_env", "nnal_set_env"):
        if not isinstance(getattr(spec, name), str):
            out.append((name, f"must be a string, got {getattr(spec, name)!r}"))
    if not out and spec.node_rank >= spec.nodes:
        out.append(("node_rank", f"must be below nodes ({spec.nodes}), got {spec.node_rank}"))
    for o in spec.extra_overrides:
        if not isinstance(o, str) or "=" not in o.lstrip("~"):
            if not (isinstance(o, str) and o.startswith("~")):
                out.append(("extra_overrides", f"not a Hydra override (key=value): {o!r}"))
    return out


SPEC_FIELDS = {f.name for f in fields(LaunchSpec)}


def load_spec_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or TOML spec file into a dict of option values; InputError names the file and key."""
    p = Path(path)
    src = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read spec file: {e.strerror if isinstance(e, OSError) else e}", source=src) from e
    if p.suffix.lower() == ".toml":
        from doctor.tomlfile import load_toml

        data: Any = load_toml(text.encode("utf-8"), src)
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise InputError(f"not valid YAML: {e}", source=src) from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("a spec file must be a mapping of option names to values", source=src)
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = str(k).replace("-", "_")
        if key not in SPEC_FIELDS:
            raise InputError(f"unknown key; known keys: {', '.join(sorted(SPEC_FIELDS))}", source=src, path=str(k))
        if key in ("extra_overrides",) and v is not None and not isinstance(v, list):
            raise InputError("must be a list of override strings", source=src, path=str(k))
        if key == "fused" and v is not None and not isinstance(v, (list, str)):
            raise InputError("must be a list or a comma-separated string", source=src, path=str(k))
        if key == "verl_version" and isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)
        out[key] = v
    return out


def build_spec(values: dict[str, Any], *, source: str | None = None) -> LaunchSpec:
    """LaunchSpec from a dict of option values; shape problems become InputError naming `source` and key."""
    vals = {k: v for k, v in values.items() if k in SPEC_FIELDS}
    if "fused" in vals and vals["fused"] is None:
        vals["fused"] = ()
    if "extra_overrides" in vals:
        vals["extra_overrides"] = tuple(vals["extra_overrides"] or ())
    if not vals.get("verl_version"):
        raise InputError("verl_version is required (no verl installed to take it from); pass --verl-version",
                         source=source, path="verl_version")
    try:
        return LaunchSpec(**vals)
    except InputError as e:
        raise InputError(e.message, source=source, path=e.path) from None
    except TypeError as e:  # pragma: no cover - guarded by SPEC_FIELDS
        raise InputError(str(e), source=source) from None
