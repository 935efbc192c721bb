"""Render a LaunchSpec as a bash script (or the bare overrides).

Every value that reaches the shell goes through shlex.quote, and values that reach Hydra are Hydra-quoted
first (overrides.hydra_quote), so a model path with spaces, quotes, `$(…)`, backticks or newlines arrives in
verl byte for byte and runs nothing. The set_env.sh files are sourced with `set +u` around them: CANN 9.x's
script reads unset variables (`CMAKE_PREFIX_PATH: unbound variable`), and the NNAL script gets
`--cxx_abi=1` because without it it runs `python3 -c 'import torch'` to ask for the ABI
(CANN's own set_env.sh and NNAL's atb/set_env.sh).
"""

from __future__ import annotations

import shlex

from doctor import __version__
from doctor.knowledge.hccl_env import CONNECT_TIMEOUT
from doctor.launch.override_list import ENTRY_MODULE, build_overrides, config_name_for
from doctor.launch.spec import LaunchSpec

# (name, value, one-line reason). Sources: verl NPU example scripts and FAQ (https://github.com/verl-project/verl/blob/v0.9.0/docs/ascend_tutorial/faq/faq.rst,
# cann_torchnpu_vllm.md). `${X:-default}` keeps a value the user already exported.
RECOMMENDED_ENV: tuple[tuple[str, str, str], ...] = (
    ("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "1",
     "Ray must not rewrite ASCEND_RT_VISIBLE_DEVICES per worker, or NPUs become invisible (verl NPU FAQ)"),
    ("HCCL_CONNECT_TIMEOUT", CONNECT_TIMEOUT,
     "HCCL's 120 s default link set-up timeout is too short for large jobs (verl NPU scripts)"),
    ("HCCL_HOST_SOCKET_PORT_RANGE", "60000-60050",
     "explicit HCCL host port range avoids collisions on the default port 60000 (verl NPU scripts)"),
    ("HCCL_NPU_SOCKET_PORT_RANGE", "61000-61050",
     "explicit HCCL NPU port range, separate from the host range (verl NPU scripts)"),
    ("TASK_QUEUE_ENABLE", "1", "PyTorch-NPU asynchronous task queue for host-bound kernels (verl NPU scripts)"),
    ("CUDA_DEVICE_MAX_CONNECTIONS", "1",
     "Megatron overlaps TP/SP communication correctly only with one connection (set by verl for MindSpeed)"),
    ("HYDRA_FULL_ERROR", "1", "print the whole stack when verl's Hydra config fails to compose"),
)


AIV = (("HCCL_OP_EXPANSION_MODE", "AIV",
        "HCCL collectives expanded on the AI vector cores, as verl v0.9.0's NPU scripts for Qwen3-30B-A3B and "
        "Qwen3-32B do (tests/special_npu/nightly_ci_ascend/run_grpo_qwen3_30b_megatron_sglang_npu.sh)"),)


def _q(s: str) -> str:
    return shlex.quote(s)


def render_script(spec: LaunchSpec, *, findings_note: str | None = None) -> str:
    """The bash launch script for `spec` (single node, or one script for all nodes of a Ray cluster)."""
    ovs = build_overrides(spec)
    lines: list[str] = [
        "#!/usr/bin/env bash",
        f"# verl + MindSpeed launch script written by doctor {__version__} for verl {spec.verl_version}.",
        f"# Layout: {spec.nodes} node(s) x {spec.npus_per_node} NPU(s); TP={spec.tp} PP={spec.pp}"
        f" VPP={spec.vpp or '-'} CP={spec.cp} EP={spec.ep} ETP={spec.etp or '-'}; algorithm {spec.algorithm}.",
        "# Check it again after editing: doctor lint THIS_SCRIPT",
    ]
    if findings_note:
        lines += [f"# {line}" for line in findings_note.splitlines()]
    lines += ["set -euo pipefail", ""]
    lines += ["# CANN / NNAL environments. set +u: CANN 9.x's set_env.sh reads unset variables."]
    sources = []
    if spec.cann_set_env:
        sources.append((spec.cann_set_env, ""))
    if spec.nnal_set_env:
        sources.append((spec.nnal_set_env, " --cxx_abi=1"))
    for path, _ in sources:
        lines.append(f"[ -f {_q(path)} ] || {{ echo {_q('missing ' + path + ' (install CANN/NNAL or fix the path)')} >&2; exit 1; }}")
    if sources:
        lines.append("set +u")
        for path, args in sources:
            if args:
                lines.append("# --cxx_abi=1: otherwise NNAL's script imports torch to ask for the C++ ABI.")
            lines.append(f"source {_q(path)}{args}")
        lines.append("set -u")
    lines.append("")
    for name, value, why in RECOMMENDED_ENV + (AIV if spec.hccl_aiv else ()):
        lines.append(f"# {why}")
        lines.append(f'export {name}="${{{name}:-{value}}}"')
    lines.append("")
    if spec.nodes > 1:
        lines += _ray_block(spec)
    lines.append("# The run. Extra overrides given to this script are appended (\"$@\").")
    lines.append(f"python3 -m {ENTRY_MODULE} --config-name={config_name_for(spec.verl_version)} \\")
    for o in ovs:
        lines.append(f"    {o.shell or _q(o.text)} \\")
    lines.append('    "$@"')
    return "\n".join(lines) + "\n"


# The address Ray registers a node by, where every other node dials it. Without `ray start --node-ip-address` Ray takes
# the source address of a UDP socket towards 8.8.8.8 (services.py node_ip_address_from_perspective at 003280cb), i.e.
# the default-route NIC: on an Ascend node with a management NIC beside the data NICs, often the wrong network. The
# script passes NODE_IP to both roles (https://docs.ray.io/en/releases-2.47.1/cluster/cli.html#cmdoption-ray-start-node-ip-address);
# unset, it is this node's source address on its route towards the head's IP, which on the head is that IP itself
# (`ip route get` answers `local ... src` for an address of this host); when that cannot be read (no HEAD_ADDRESS, a
# host name, no iproute2) the script stops and asks for NODE_IP instead of letting Ray guess.
_NODE_IP_LINES = (
    "# This node's address on the cluster network, for `ray start --node-ip-address` (Ray's own guess is the NIC of the",
    "# default route, on a multi-homed node often the management one). Default: the source address towards HEAD_ADDRESS.",
    'NODE_IP="${NODE_IP:-}"',
    'if [ -z "$NODE_IP" ] && [ -n "$HEAD_ADDRESS" ]; then',
    "    NODE_IP=$(ip route get \"$HEAD_ADDRESS\" 2>/dev/null | sed -n 's/.* src \\([^ ]*\\).*/\\1/p' || true)",
    "fi",
    '[ -n "$NODE_IP" ] || { echo "set NODE_IP to this node\'s address on the cluster network '
    '(or HEAD_ADDRESS to the head\'s IP)" >&2; exit 1; }',
)


def _ray_block(spec: LaunchSpec) -> list[str]:
    head = spec.head_address or ""
    return [
        "# Multi-node: rank 0 starts the Ray head and runs verl; the other ranks join and wait.",
        "# Run this same script on every node with NODE_RANK and HEAD_ADDRESS (the head's IP) set, or edit the defaults.",
        f"NODE_RANK=\"${{NODE_RANK:-{spec.node_rank}}}\"",
        'HEAD_ADDRESS="${HEAD_ADDRESS:-}"',
        *([f"[ -n \"$HEAD_ADDRESS\" ] || HEAD_ADDRESS={_q(head)}"] if head else []),
        f"RAY_PORT=\"${{RAY_PORT:-{spec.ray_port}}}\"",
        f"NNODES={spec.nodes}",
        '[ "$NODE_RANK" = "0" ] || [ -n "$HEAD_ADDRESS" ] || { echo "set HEAD_ADDRESS to the head node address" >&2; exit 1; }',
        *_NODE_IP_LINES,
        'if [ "$NODE_RANK" != "0" ]; then',
        '    exec ray start --address="$HEAD_ADDRESS:$RAY_PORT" --node-ip-address="$NODE_IP" --block',
        "fi",
        'ray start --head --node-ip-address="$NODE_IP" --port="$RAY_PORT"',
        "# Wait (up to 10 min) until every node has joined.",
        "for _ in $(seq 1 120); do",
        "    alive=$(python3 -c 'import ray; ray.init(address=\"auto\", logging_level=\"ERROR\"); "
        "print(sum(1 for n in ray.nodes() if n[\"Alive\"]))' 2>/dev/null || echo 0)",
        '    [ "$alive" -ge "$NNODES" ] && break',
        "    sleep 5",
        "done",
        '[ "$alive" -ge "$NNODES" ] || { echo "only $alive of $NNODES nodes joined the Ray cluster" >&2; exit 1; }',
        "",
    ]


def render_overrides(spec: LaunchSpec) -> str:
    """One override per line, as Hydra reads it (not shell-quoted)."""
    return "".join(o.text + "\n" for o in build_overrides(spec))
