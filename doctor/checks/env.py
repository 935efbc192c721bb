"""Environment variables: misspelled (near-miss) names and the exports verl and vLLM Ascend need with Ray."""

from __future__ import annotations

from collections.abc import Iterator

from doctor.checks.facts import env, env_known, env_unset, installed
from doctor.checks.runner import CheckContext, check, skip
from doctor.probes.envvars import edit_distance
from doctor.report import Finding, finding

# Names the stack reads. A collected variable within edit distance 2 of one of these, and not itself a known
# name, is almost certainly a typo (snapshot.md rule 3 collects such near misses).
KNOWN_NAMES = frozenset("""
ASCEND_RT_VISIBLE_DEVICES ASCEND_VISIBLE_DEVICES ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCEND_TOOLKIT_LATEST_HOME
ASCEND_OPP_PATH ASCEND_AICPU_PATH ASCEND_GLOBAL_LOG_LEVEL ASCEND_SLOG_PRINT_TO_STDOUT ASCEND_LAUNCH_BLOCKING
ASCEND_PROCESS_LOG_PATH ASCEND_CACHE_PATH ASCEND_WORK_PATH ASCEND_CUSTOM_OPP_PATH ASCEND_GLOBAL_EVENT_ENABLE
ASCEND_DRIVER_PATH ASCEND_INSTALL_PATH ASCEND_LOG_PATH ASCEND_AIcore_PATH
HCCL_CONNECT_TIMEOUT HCCL_EXEC_TIMEOUT HCCL_IF_BASE_PORT HCCL_IF_IP HCCL_SOCKET_IFNAME HCCL_BUFFSIZE
HCCL_OP_EXPANSION_MODE HCCL_ASYNC_ERROR_HANDLING HCCL_WHITELIST_DISABLE HCCL_INTRA_ROCE_ENABLE HCCL_INTRA_PCIE_ENABLE
HCCL_DETERMINISTIC HCCL_RDMA_TC HCCL_RDMA_SL HCCL_RDMA_TIMEOUT HCCL_RDMA_RETRY_CNT HCCL_SOCKET_FAMILY HCCL_HOST_SOCKET_PORT_RANGE
HCCL_NPU_SOCKET_PORT_RANGE HCCL_OP_BASE_FFTS_MODE_ENABLE HCCL_ENTRY_LOG_ENABLE HCCL_DIAGNOSE_ENABLE HCCL_EVENT_TIMEOUT
GLOO_SOCKET_IFNAME TP_SOCKET_IFNAME NCCL_SOCKET_IFNAME MASTER_ADDR MASTER_PORT WORLD_SIZE RANK LOCAL_RANK
RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES RAY_ADDRESS RAY_DEDUP_LOGS RAY_BACKEND_LOG_LEVEL RAY_DEBUG
PYTORCH_NPU_ALLOC_CONF TASK_QUEUE_ENABLE CPU_AFFINITY_CONF COMBINED_ENABLE INF_NAN_MODE_ENABLE MULTI_STREAM_MEMORY_REUSE
TORCH_DEVICE_BACKEND_AUTOLOAD TORCH_EXTENSIONS_DIR TORCH_HOME TORCH_NCCL_ASYNC_ERROR_HANDLING TORCHINDUCTOR_CACHE_DIR
VLLM_USE_V1 VLLM_VERSION VLLM_TARGET_DEVICE VLLM_ATTENTION_BACKEND VLLM_ASCEND_ENABLE_NZ VLLM_ENABLE_V1_MULTIPROCESSING
VLLM_LOGGING_LEVEL VLLM_WORKER_MULTIPROC_METHOD VLLM_USE_MODELSCOPE
COMPILE_CUSTOM_KERNELS SOC_VERSION LD_LIBRARY_PATH LD_PRELOAD PYTHONPATH PATH MEGATRON_LM_PATH TOOLCHAIN_HOME USE_MCORE_GDN
CUDA_DEVICE_MAX_CONNECTIONS OMP_NUM_THREADS TRANSFORMERS_VERBOSITY TRANSFORMERS_OFFLINE TRANSFORMERS_CACHE HF_HOME
HF_ENDPOINT HF_HUB_OFFLINE HF_DATASETS_OFFLINE HF_TOKEN ATB_HOME_PATH LCCL_DETERMINISTIC LCCL_PARALLEL
VERL_LOGGING_LEVEL VERL_PPO_LOGGING_LEVEL
""".split())
_IMPORTANT = ("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
              "ASCEND_OPP_PATH", "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_IF_BASE_PORT", "HCCL_SOCKET_IFNAME",
              "HCCL_BUFFSIZE", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "PYTORCH_NPU_ALLOC_CONF", "TASK_QUEUE_ENABLE",
              "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "PYTHONPATH", "MEGATRON_LM_PATH",
              "VLLM_VERSION", "VLLM_USE_V1", "TORCH_DEVICE_BACKEND_AUTOLOAD", "MASTER_ADDR", "MASTER_PORT",
              "CPU_AFFINITY_CONF", "HCCL_IF_IP", "SOC_VERSION", "ATB_HOME_PATH")


@check("env-near-miss", "env", findings=("env-var-misspelled",))
def env_near_miss(ctx: CheckContext) -> Iterator[Finding]:
    """A variable whose name is one or two edits away from a name the stack reads is a typo."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    unknown = [n for n in snap.env if n not in KNOWN_NAMES and not n.startswith(("ATB_", "ASCEND_TOOLKIT", "HCCN_"))]
    if not unknown:
        return
    from doctor.knowledge.coverage import env_variable_names

    # the names the table of values has rows for are read by their releases too (each row cites where): a near miss
    # of one is as much a typo, one edit away for a short name (real names of one family differ by more)
    tabled = env_variable_names() or frozenset()
    targets = list(_IMPORTANT) + sorted(tabled - set(_IMPORTANT))
    for name in sorted(n for n in unknown if n not in tabled):
        for target in targets:
            bound = 2 if target in _IMPORTANT or len(target) >= 14 else 1
            d = edit_distance(name.upper(), target, bound)
            # nothing reads the misspelled name: unless the right one is set too, the setting has no effect (a
            # bug report states the variable it set, not every one it did not)
            if 0 < d <= bound and not env(snap, target):
                yield finding(
                    "env-var-misspelled", "warning", ("env",), f"{name} looks like a misspelling of {target}",
                    detail=(f"{target} is unset, so the setting in {name} has no effect." if env_unset(snap, target)
                            else f"Nothing reads {name}; unless {target} is set as well, the setting has no effect."),
                    evidence={"name": name, "value": snap.env[name], "meant": target},
                    fix=f"export {target}=\"$${name}\"; unset {name}".replace("$$", "$"))
                break


@check("env-ray-visible-devices", "env", findings=("ray-noset-visible-devices-unset",))
def env_ray_visible_devices(ctx: CheckContext) -> Iterator[Finding]:
    """With Ray, verl and vLLM Ascend (whose multi-node Ray guide asks for it on every node, for Ray above 2.1) need
    Ray to leave ASCEND_RT_VISIBLE_DEVICES alone."""
    snap = ctx.snapshot
    if not env_known(snap):
        skip("the snapshot has no environment variables")
    users = [name for name in ("verl", "vllm-ascend") if installed(snap, name)]
    if not users or not installed(snap, "ray"):
        skip("Ray and verl or vLLM Ascend are not both installed (or not known to be)")
    if not env(snap, "ASCEND_RT_VISIBLE_DEVICES"):
        return
    noset = "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"
    if env(snap, noset) not in (None, "1") or env_unset(snap, noset):
        yield finding(
            "ray-noset-visible-devices-unset", "warning", ("env", "ray"),
            "ASCEND_RT_VISIBLE_DEVICES is set but Ray is allowed to overwrite it",
            detail="Ray rewrites ASCEND_RT_VISIBLE_DEVICES per worker; the NPU workers of "
                   f"{' and '.join(users)} then see the wrong chips (torch_npu.npu.is_available() False, or a "
                   "device ordinal out of range); it must be exported on every node, the head node too, before "
                   "`ray start`.",
            evidence={"ASCEND_RT_VISIBLE_DEVICES": env(snap, "ASCEND_RT_VISIBLE_DEVICES"),
                      "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": env(snap, "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES")},
            fix="export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1 before `ray start`.",
            source="https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/faq/faq.rst; "
                   "https://github.com/vllm-project/vllm-ascend/blob/v0.11.0/docs/source/tutorials/multi_node_ray.md; "
                   "https://github.com/ray-project/ray/blob/ad047a724cc854c52c8441a35a01f909ff5d2fec/python/ray/_private/accelerators/npu.py")
