"""vLLM on Ray needs a free NPU (the platform's Ray resource) on its own node before it builds its placement group
(vllm/v1/executor/ray_utils.py initialize_ray_cluster, v0.13.0); the error prints the node's available resources."""

from __future__ import annotations

from doctor.explain.stream import explain_lines

# A multi-node Ray deployment (https://github.com/vllm-project/vllm-ascend/issues/3114), as the issue quotes it: the
# message wrapped by the terminal, then the engine process's traceback, cut off. The node's Ray shows GPU, no NPU.
NO_NPU_KEY = [
    "(EngineCore_DP0 pid=14400) ERROR 09-23 03:01:22 [core.py:718] ValueError: Current node has no NPU available. "
    "current_node_resource={'memory': 215",
    "1287372800.0, 'object_store_memory': 10000000000.0, 'node:x.x.x.201': 1.0, 'CPU': 192.0, "
    "'node:__internal_head__': 1.0, 'GPU': 8.0}. vLLM engi",
    "ne cannot start without NPU. Make sure you have at least 1 NPU available in a node "
    "current_node_id='a7769d9548f5020b5ea9a593d89761b6adc5b4cee107d",
    "72c71e21d8e' current_ip='x.x.x.201'.",
    "(EngineCore_DP0 pid=14400) Process EngineCore_DP0:",
    "(EngineCore_DP0 pid=14400) Traceback (most recent call last):",
    '(EngineCore_DP0 pid=14400)   File "/usr/local/python3.11.13/lib/python3.11/multiprocessing/process.py", '
    "line 314, in _bootstrap",
    "(EngineCore_DP0 pid=14400)     self.run()",
    '(EngineCore_DP0 pid=14400)   File "/usr/local/python3.11.13/lib/python3.11/multiprocessing/process.py", '
    "line 108, in run",
    "(EngineCore_DP0 pid=14400)     self._target(*self._args, **self._kwargs)",
    '(EngineCore_DP0 pid=14400)   File "/vllm-workspace/vllm/vllm/v1/engine/core.py", line 722, in run_engine_core',
    "(EngineCore_DP0 pid=14400)     raise e",
    '(EngineCore_DP0 pid=14400)   File "/vllm-workspace/vllm/vllm/v1/engine/core.py", line 709, in run_engine_core',
    "(EngineCore_DP0 pid=14400)     engine_core = EngineCoreProc(*args, **kwargs)",
]

# The NPUs held by placement groups (https://github.com/vllm-project/vllm-ascend/issues/8306: its first line as the
# issue quotes it, as far as the stored copy of the thread goes).
HELD_BY_GROUPS = (
    " ValueError: Current node has no NPU available. current_node_resource={'bundle_group_3d14646acb3b91d"
    "f2e640663f7c802000000': 8000.0, 'NPU_group_13_3d14646acb3b91df2e640663f7c802000000': 1.0, 'object_st"
    "ore_memory': 200000000000.0, 'NPU_group_3d14646acb3b91df2e640663f7c802000000': 8.0, 'accelerator_typ"
    "e:Ascend910B4-1': 1.0, 'bundle_group_12_3d14646acb3b91df2e640663f7c802000000': 1000.0, 'NPU_group_10"
    "_3d14646acb3b91df2e640663f7c802000000': 1.0, 'bundle_group_8_3d14646acb3b91df2e640663f7c802000000': "
    "1000.0, 'NPU_group_11_3d14646acb3b91df2e640663f7c802000000': 1.0, 'CPU': 192.0, 'NPU_group_9_3d14646"
    "acb3b91df2e640663f7c802000000': 1.0, 'memory': 879402921984.0, 'node:192.168.3.117': 1.0, 'NPU_group"
    "_14_3d14646acb3b91df2e640663f7c802000000': 1.0, 'bundle_group_11_3d14646acb3b91df2e640663f7c80200000"
    "0': 1000.0, 'bundle_group_15_3d14646acb3b91df2e640663f7c802000000': 1000.0, 'bundle_group_13_3d14646"
    "acb3b91df2e640663f7c802000000': 1000.0, 'bundle_group_10_3d14646acb3b91df2e640663f7c802000000': 1000"
    ".0, 'NPU_group_15_3d14646acb3b91df2e640663f7c802000000': 1.0, 'NPU_group_12_3d14646acb3b91df2e640663"
    "f7c802000000': 1.0, 'bundle_group_14_3d14646acb3b91df2e6406"
)


def test_no_free_npu_on_the_engines_node_is_rays_resources_not_a_vllm_check():
    for lines in (NO_NPU_KEY, [HELD_BY_GROUPS]):
        errors = [f for f in explain_lines(lines) if f.severity.value == "error"]
        assert [f.id for f in errors] == ["vllm-ray-node-no-free-npu"], [(f.id, f.components) for f in errors]
        assert errors[0].components[0] == "ray" and errors[0].evidence["line"] == 1
        assert "ray status" in errors[0].fix.commands


def test_the_cuda_platforms_gpu_message_is_not_this_finding():
    line = ("ValueError: Current node has no GPU available. current_node_resource={'CPU': 112.0}. vLLM engine cannot "
            "start without GPU.")
    assert "vllm-ray-node-no-free-npu" not in [f.id for f in explain_lines([line])]


def test_a_message_the_terminal_cut_inside_a_number_is_read_whole():
    # the first line ends in a digit (`'memory': 215`), which reads as the end of a message; the next lines carry no
    # `(EngineCore_DP0 pid=…)` prefix, which every line of that process carries: they are its wrap, not new lines
    from doctor.explain.db import read_signatures
    from doctor.explain.scanner import LogScanner

    scanner = LogScanner(read_signatures())
    scanner.feed_bytes(("\n".join(NO_NPU_KEY) + "\n").encode())
    scanner.close()
    first = scanner.result().events[0]
    assert first.line == 1 and "'GPU': 8.0}" in first.facts["message"], first.facts["message"]
    assert "Process EngineCore_DP0" not in first.facts["message"]  # the process's own next line ends it


def test_a_message_ending_in_a_number_before_the_processs_next_line_stays_as_it_was():
    from doctor.explain.db import read_signatures
    from doctor.explain.scanner import LogScanner

    # a Ray worker's HCCL error as https://github.com/verl-project/verl/issues/3947 quotes it: the code, then the
    # same process's next line
    lines = ["(TaskRunner pid=30188) RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 "
             "HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), "
             "error code is 4",
             "(TaskRunner pid=30188) [ERROR] 2025-10-29-02:17:03 (PID:144556, Device:0, RankID:0) ERR02200 DIST call "
             "hccl api failed."]
    scanner = LogScanner(read_signatures())
    scanner.feed_bytes(("\n".join(lines) + "\n").encode())
    scanner.close()
    assert scanner.result().events[0].facts["message"].endswith("error code is 4")
