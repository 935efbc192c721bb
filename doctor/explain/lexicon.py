"""Names a component ships, for the error line that names nothing else: the last resort of attribution.

Many failure reports quote one line and no traceback: "dcmi module initialize failed", "Unable to register worker
with raylet", "HCCL timeout". No frame, path, library, module or code is there to read, but the line still names a
thing some component ships: a daemon (raylet, gcs_server), a tool (npu-smi, hccn_tool), a library family (dcmi,
drv, hdc, devmm), an environment variable's prefix (HCCL_, RAY_, VLLM_), a chip (Ascend910B1, Ascend310P3), an
import name (through `doctor.knowledge.ownership`). An engineer reading such a line starts with that component.

The finding this feeds (`error-line-names-component`) is reported only when nothing else in the log is an error:
a signature, an event's owner or its class always win. A line counts only when it states a failure (failed,
cannot, unable, not found, invalid, out of range, mismatch, timeout, ...). Pure logic.
"""

from __future__ import annotations

import re

from doctor.knowledge.ownership import component_of_distribution, distribution_of_module
from doctor.report import COMPONENTS

# word (lower case) -> (component, what it is). Each is a name the component's documentation gives its part.
NAMES: dict[str, tuple[str, str]] = {
    # Ascend driver: its libraries and tools (driver/lib64, /usr/local/dcmi, npu-smi)
    "dcmi": ("driver", "the driver's management interface (libdcmi)"),
    "drv": ("driver", "the driver's host library (libascend_hal / drv*)"),
    "drvmnggetconsoleloglevel": ("driver", "a driver API"),
    "hdc": ("driver", "the driver's host-device channel"),
    "devmm": ("driver", "the driver's device memory manager"),
    "devdrv": ("driver", "the device driver"),
    "davinci": ("driver", "the NPU device nodes /dev/davinci*"),
    "npu-smi": ("driver", "the driver's npu-smi tool"),
    "hwhiaiuser": ("driver", "the user the driver's install creates"),
    "npu": ("npu", "the NPU device"),
    "hwts": ("npu", "the NPU's hardware task scheduler"),
    "sdma": ("npu", "the NPU's system DMA engine"),
    "mte": ("npu", "the AI Core's memory transfer engine"),
    "ddr": ("npu", "the device memory"),
    "hbm": ("npu", "the device memory"),
    "aicore": ("cann", "the AI Core operator runtime"),
    "aicpu": ("cann", "the AI CPU operator runtime"),
    "socversion": ("npu", "the chip's SoC version"),
    "soc_version": ("npu", "the chip's SoC version"),
    # CANN
    "cann": ("cann", "CANN"),
    "ascendcl": ("cann", "CANN's AscendCL"),
    "aclnn": ("cann", "CANN's operator API"),
    "opp": ("kernels", "CANN's operator package"),
    "tbe": ("cann", "CANN's TBE operator compiler"),
    "atb": ("nnal", "NNAL's Ascend Transformer Boost"),
    "nnal": ("nnal", "NNAL"),
    "hccl": ("hccl", "the collective communication library"),
    "hccp": ("hccl", "HCCL's communication platform"),
    "hccn_tool": ("network", "the NPU NIC tool"),
    "roce": ("network", "the NPU's RoCE links"),
    "ranktable": ("hccl", "HCCL's rank table"),
    "rank_table": ("hccl", "HCCL's rank table"),
    # Ray
    "raylet": ("ray", "Ray's per-node daemon"),
    "gcs": ("ray", "Ray's global control service"),
    "gcs_server": ("ray", "Ray's global control service"),
    "plasma": ("ray", "Ray's object store"),
    # the cluster
    "kubelet": ("cluster", "Kubernetes' node agent"),
    "volcano": ("cluster", "the Volcano scheduler"),
    "pod": ("cluster", "a Kubernetes pod"),
    "pods": ("cluster", "Kubernetes pods"),
    "node": ("cluster", "a cluster node"),
    "nodes": ("cluster", "cluster nodes"),
    "clusterd": ("cluster", "MindCluster's ClusterD"),
    "mindcluster": ("cluster", "MindCluster"),
    "ascend-docker-runtime": ("cluster", "MindCluster's container runtime"),
    # serving / training stacks by their own names
    "vllm": ("vllm", "vLLM"),
    "enginecore": ("vllm", "vLLM's engine process"),
    "kv": ("vllm", "vLLM's KV cache"),
    "mindspeed": ("mindspeed", "MindSpeed"),
    "megatron": ("megatron", "Megatron-LM"),
    "verl": ("verl", "verl"),
    "triton": ("triton", "Triton"),
    "checkpoint": ("config", "a checkpoint path the configuration names"),
    "ckpt": ("config", "a checkpoint path the configuration names"),
}
# Environment variables are read by the component their prefix names.
_ENV_PREFIXES: tuple[tuple[str, str], ...] = (
    ("HCCL_", "hccl"), ("HCCN_", "network"), ("ASCEND_", "env"), ("ACL_", "cann"), ("RAY_", "ray"),
    ("VLLM_", "vllm"), ("NCCL_", "network"), ("GLOO_", "network"), ("PYTORCH_NPU_", "torch-npu"),
    ("TORCH_NPU_", "torch-npu"), ("MASTER_", "network"), ("CUDA_", "env"),
)
# The components whose own name is a word a failure line uses for them (the generic ones, like model or config,
# are not: those words appear in every kind of line).
_COMPONENT_WORDS = frozenset(COMPONENTS) - {"system", "python", "env", "config", "model", "network", "cluster",
                                            "kernels", "npu"}
_CHIP = re.compile(r"^Ascend(?:910|310|950)[A-Z0-9_]*$|^Atlas$", re.I)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# The words of a line that states a failure (case-insensitive).
FAILURE = re.compile(
    r"\b(?:failed|fails?|failure|error|errno|cannot|can't|could not|couldn't|unable|not found|no such|not exist|"
    r"invalid|illegal|out of range|overflow|mismatch|does not match|doesn't match|not match|not same|timeout(?!\s*[=(]|\s*:?\s*\d)|"
    r"timed out|times out|unavailable|denied|refused|abnormal|unsafe|not supported|unsupported|lost|abort(?:ed)?|"
    r"exceed(?:s|ed)?|insufficient|not enough|negative|not ready|not initialized|crash(?:ed)?)\b"
    # the same in Chinese, as Ascend's tools and documentation print them: failed, error, abnormal, timeout,
    # not supported, not found, cannot, mismatch, does not exist
    r"|失败|错误|报错|异常|超时|不支持|未找到|找不到|无法|不匹配|不存在", re.I)
# A log record at info / debug level in the formats whose level is not a word first on the line: glog / klog
# (`I1203 10:11:12.123 ...`), Ray's C++ processes (`[2026-12-03 13:30:20,613 I 6716 6720] (gcs_server) ...`), Python
# logging after its date (`2025-01-01 10:00:00,123 - name - INFO - ...`, `... [INFO] ...`). Its failure words are a
# notice (a retried read, a counter), not the failure. (Warning records in these formats are read as warnings:
# doctor.explain.loglines.)
NOTICE_RECORD = re.compile(
    r"^\W*[ID]\d{4} \d\d:\d\d:\d\d|^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d+ [ID] \d+ \d+\]|"
    r"^\[?\d{4}-\d\d-\d\d[ T][\d:,.]+\]?\s+(?:-\s+[\w.]+\s+-\s+)?\[?(?:INFO|DEBUG)\b")
# `name: 0` / `errors=0`: a counter that reads zero states no failure (Ray's state dump: `num chunks received
# failed / plasma error: 0`). Removed from a line before its failure words are read.
ZERO_COUNT = re.compile(r"[^:=,;|]*[:=]\s*0+(?:\.0+)?\s*(?=$|[,;|)\]])")
ZERO_COUNT_HINT = re.compile(r"[:=]\s*0")  # cheap test before ZERO_COUNT's scan


# A comment of a script or config echoed into the log (`# 注意：MindSpeed RL不支持 triton，...` in MindSpeed-RL's
# install guide): it explains a setting, it reports nothing. (`#0 0x...` backtrace frames are not comments.)
COMMENT_LINE = re.compile(r"^\s*#+\s+[^\W\d]")
# A line of a shell script: a comment, `export NAME=value`, `unset NAME`, `source /path/set_env.sh` (the set-up lines
# users paste above their command), a lone command-line option (`    --overlap-grad-reduce \`); a command, never a
# message a package writes.
SCRIPT_LINE = re.compile(COMMENT_LINE.pattern
                         + r"|^\s*(?:export\s+[A-Za-z_]\w*=|source\s+[~/$.]|unset\s+[A-Za-z_]\w*\s*$)"
                         r"|^\s*--[A-Za-z][\w-]*(?:[ =][^\s\\]+)?\s*\\?\s*$")


# Words that name a failure without stating one: a compiler flag (`-Wno-stringop-overflow`, `-fno-math-errno` in
# torch.__config__.show()'s build settings), an environment report's field it could not read or a CPU
# vulnerability that does not apply (`Clang version: Could not collect`, `[conda] Could not collect`,
# `Vulnerability Tsx async abort:  Not affected` in torch.utils.collect_env), the kernel's boot report of the memory
# map's holes (`On node 0, zone DMA: 1 pages in unavailable ranges`). Removed before failure words are read.
NO_FAILURE = re.compile(r"(?<!\S)-[Wf][\w=+.-]*|\bpages in unavailable ranges$|"
                        r"^[^:\]]*[:\]]\s*(?:Could not collect|Not affected)\s*$")


def states_failure(text: str) -> bool:
    """The line states a failure: a failure word outside a zero counter, a compiler flag or an empty report field,
    on a line that is no notice record and no script comment."""
    return not NOTICE_RECORD.search(text) and not COMMENT_LINE.match(text) \
        and bool(FAILURE.search(NO_FAILURE.sub("", ZERO_COUNT.sub("", text))))


# The phrases the streaming pre-filter needs to hand such a line to the event reader.
FAILURE_PHRASES: tuple[tuple[str, ...], ...] = tuple((p,) for p in (
    "failed", "Failed", "FAILED", "fail", "Fail", "errno", "cannot", "Cannot", "can't", "could not", "Could not",
    "unable", "Unable", "not found", "no such", "not exist", "invalid", "Invalid", "illegal", "out of range",
    "overflow", "mismatch", "not match", "not same", "timeout", "Timeout", "timed out", "times out", "unavailable",
    "denied", "refused", "abnormal", "unsafe", "not supported", "unsupported", "lost", "abort", "exceed",
    "insufficient", "not enough", "negative", "not ready", "not initialized", "crash",
    "失败", "错误", "报错", "异常", "超时", "不支持", "未找到", "找不到", "无法", "不匹配", "不存在"))


def components_named(text: str) -> list[tuple[str, str]]:
    """(component, what was read) for each component the line names, in order of appearance, each once."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()

    def add(comp: str, read: str) -> None:
        if comp not in seen:
            seen.add(comp)
            out.append((comp, read))

    for m in _WORD.finditer(text):
        word = m.group(0)
        low = word.lower()
        if (comp_name := low.replace("_", "-")) in _COMPONENT_WORDS:
            add(comp_name, f"{word} -> the component's own name")
            continue
        if low in NAMES:
            comp, what = NAMES[low]
            add(comp, f"{word} -> {what} ({comp})")
            continue
        if _CHIP.match(word):
            add("npu", f"{word} -> an Ascend chip (npu)")
            continue
        for prefix, comp in _ENV_PREFIXES:
            if word.startswith(prefix) and word.isupper():
                add(comp, f"{word} -> an environment variable {comp} reads")
                break
        else:
            if len(word) > 3 and word.isidentifier():
                dist = distribution_of_module(word)
                comp2 = component_of_distribution(dist) if dist else None
                if comp2 and comp2 != "python":
                    add(comp2, f"{word} -> the import name of {dist} ({comp2})")
    return out


def env_var_component(name: str) -> str | None:
    """The component that reads an environment variable, by its prefix (`HCCL_EXEC_TIMEOUT` -> hccl,
    `RAY_CGRAPH_get_timeout` -> ray); None for a prefix no component owns."""
    return next((comp for prefix, comp in _ENV_PREFIXES if name.upper().startswith(prefix)), None)
