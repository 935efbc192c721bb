"""Environment variables relevant to this stack, secrets redacted (docs/schemas/snapshot.md rule 3).

A variable is collected when it matches a relevant prefix or name, or when its name is a near miss
(edit distance <= 2) of one — a misspelled `ASCEBD_RT_VISIBLE_DEVICES` silently does nothing, and a
typo can only be reported if it was collected. To keep the near-miss net from catching unrelated
variables, short words get a tighter bound: prefixes of <= 5 characters (HCCL_, GLOO_, VLLM_ ...) allow
distance 1, 2-3 letter prefixes (HF_, RAY_, ATB_) and names under 8 characters (PATH) allow none.
"""

from __future__ import annotations

from collections.abc import Mapping

from doctor.snapshot.redact import redact_value

PREFIXES = ("ASCEND_", "ATB_", "HCCL_", "HCCN_", "GLOO_", "RAY_", "VLLM_", "VERL_", "PYTORCH_NPU_", "TORCH_",
            "TRANSFORMERS_", "HF_")
NAMES = ("TP_SOCKET_IFNAME", "MASTER_ADDR", "MASTER_PORT", "TASK_QUEUE_ENABLE", "CPU_AFFINITY_CONF",
         "COMPILE_CUSTOM_KERNELS", "SOC_VERSION", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PATH", "MEGATRON_LM_PATH",
         "TOOLCHAIN_HOME", "USE_MCORE_GDN", "CUDA_DEVICE_MAX_CONNECTIONS", "OMP_NUM_THREADS",
         # read by torch_npu / vllm-ascend without a prefix; `check` judges their values (profiles/env-values.toml)
         "INF_NAN_MODE_ENABLE", "INF_NAN_MODE_FORCE_DISABLE", "COMBINED_ENABLE", "MULTI_STREAM_MEMORY_REUSE",
         "STREAMS_PER_DEVICE", "PYTORCH_NO_NPU_MEMORY_CACHING", "USE_OPTIMIZED_MODEL", "MSMONITOR_USE_DAEMON", "MOE_ALL2ALL_BUFFER",
         "USING_LCCL_COM", "USE_MULTI_BLOCK_POOL", "P2P_HCCL_BUFFSIZE", "NPU_ASD_ENABLE", "ACL_DEVICE_SYNC_TIMEOUT",
         "DYNAMIC_EPLB", "EXPERT_MAP_RECORD", "MIND_SPEED_LOG_LEVEL",
         # a package's own version check skips itself when set (profiles/code-needs.toml `bypass`: LLaMA-Factory)
         "DISABLE_VERSION_CHECK")


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Levenshtein distance with transpositions (a swapped pair is one typo); stops early past `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    # One edit changes the set of distinct letters by at most two (a substitution drops one, adds one), so
    # sets further apart than 2*limit cannot be within `limit`: this skips the table for almost every pair.
    if len(set(a) ^ set(b)) > 2 * limit:
        return limit + 1
    prev2: list[int] | None = None
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def is_relevant(name: str) -> bool:
    return name in NAMES or name.startswith(PREFIXES)


def near_miss(name: str) -> str | None:
    """The relevant name or prefix `name` looks like a typo of, else None."""
    if is_relevant(name):
        return None
    upper = name.upper()
    if upper != name and is_relevant(upper):
        return upper  # ascend_rt_visible_devices: right name, wrong case
    for exact in NAMES:
        if len(exact) >= 8 and edit_distance(name, exact) <= 2:
            return exact
    segments = name.split("_")
    for prefix in PREFIXES:
        words = prefix.rstrip("_").split("_")
        if len(segments) <= len(words):
            continue
        head = "_".join(segments[: len(words)])
        target = "_".join(words)
        bound = 0 if len(prefix) <= 4 else (1 if len(prefix) <= 5 else 2)
        if bound and head != target and edit_distance(head, target, bound) <= bound:
            return prefix
    return None


def collect_env(environ: Mapping[str, str]) -> dict[str, str]:
    """Relevant variables and near misses, values redacted, sorted by name."""
    out = {}
    for name in sorted(environ):
        if is_relevant(name) or near_miss(name):
            out[name] = redact_value(name, str(environ[name]))
    return out
