"""verl's data plane (TransferQueue) and its NPU probes, read from the upstream messages.

The signatures were written from the source text (TransferQueue v0.1.9, verl 1dda039, MindSpeed 028de58), not from a
report: before them a TransferQueue consumer's timeout read as a network error, an uninitialised TransferQueue as a
model check or nothing, verl's IPC probe failures as a driver command or a model check, and verl's CPU-actor platform
notice as an error. The logs below are shaped as verl prints them (Ray's actor prefixes, a Ray-wrapped traceback)."""

from __future__ import annotations

import pytest

from doctor.explain.stream import explain_lines


def _found(log: str) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(f.id, f.severity.value, tuple(f.components)) for f in explain_lines(log.strip("\n").splitlines())]


def _first(log: str):
    return explain_lines(log.strip("\n").splitlines())[0]


TQ_TIMEOUT = """
(TaskRunner pid=2261) Traceback (most recent call last):
(TaskRunner pid=2261)   File "/opt/verl/verl/trainer/ppo/v1/replay_buffer.py", line 210, in sample
(TaskRunner pid=2261)     batch_meta = tq.kv_batch_get_meta(fields=fields, batch_size=batch_size, task_name=task)
(TaskRunner pid=2261) ray.exceptions.RayTaskError(TimeoutError): ray::TransferQueueController.get_metadata() (pid=2301, ip=10.0.0.2, actor_id=ab12)
(TaskRunner pid=2261)   File "/usr/local/python3.11.13/lib/python3.11/site-packages/transfer_queue/controller.py", line 1305, in get_metadata
(TaskRunner pid=2261)     raise TimeoutError(
(TaskRunner pid=2261) TimeoutError: Timeout while waiting for sufficient data for task actor_update. Required: 256, Available: 128
"""


def test_a_transfer_queue_consumer_timeout_is_the_data_plane_not_the_network():
    finding = _first(TQ_TIMEOUT)
    assert (finding.id, finding.severity.value, tuple(finding.components)) == (
        "transferqueue-metadata-timeout", "error", ("verl", "config"))
    assert "TQ_CONTROLLER_GET_METADATA_TIMEOUT" in finding.fix.text and "rollout.n" in finding.fix.text
    assert all(f.id != "network-error" for f in explain_lines(TQ_TIMEOUT.strip().splitlines()))


@pytest.mark.parametrize(("line", "finding_id", "components", "in_fix"), [
    ("AssertionError: TransferQueueController has not been initialized yet. Please call init() first.",
     "transferqueue-not-initialized", ("verl", "config"), "tq.init"),
    ("(AgentLoopWorker pid=901) RuntimeError: TransferQueue is not initialized. Call tq.init() first.",
     "transferqueue-not-initialized", ("verl", "config"), "tq.init"),
    ("ImportError: Mooncake Store not installed. Please install via: pip install mooncake-transfer-engine",
     "transferqueue-storage-backend-missing", ("env", "config"), "storage_backend=SimpleStorage"),
    ("ImportError: YuanRong DataSystem not installed.",
     "transferqueue-storage-backend-missing", ("env", "config"), "storage_backend=SimpleStorage"),
    ("RuntimeError: dscli executable not found in PATH. Please run `pip install openyuanrong-datasystem`.",
     "transferqueue-storage-backend-missing", ("env", "config"), "storage_backend=SimpleStorage"),
])
def test_transfer_queue_setup_failures_name_the_step_that_was_missed(line, finding_id, components, in_fix):
    """Used before verl's entry point ran tq.init(), or a storage backend whose package is absent (or SimpleStorage)."""
    finding = _first(line)
    assert (finding.id, tuple(finding.components)) == (finding_id, components)
    assert in_fix in finding.fix.text


IPC_PROBE = """
(WorkerDict pid=3301, ip=10.0.0.2)   File "/opt/verl/verl/workers/rollout/vllm_rollout/vllm_rollout.py", line 143, in __init__
(WorkerDict pid=3301, ip=10.0.0.2)     self.use_shm = not is_support_ipc()
(WorkerDict pid=3301, ip=10.0.0.2)   File "/opt/verl/verl/plugin/platform/platform_npu.py", line 175, in is_support_ipc
(WorkerDict pid=3301, ip=10.0.0.2)     raise RuntimeError(f"Error checking IPC support: {e}") from e
(WorkerDict pid=3301, ip=10.0.0.2) RuntimeError: Error checking IPC support: CAUSE
"""


@pytest.mark.parametrize("cause", [
    "CANN toolkit path does not exist: /usr/local/Ascend/ascend-toolkit/latest/aarch64-linux",
    "[Errno 2] No such file or directory: 'npu-smi'",
])
def test_verls_ipc_probe_failure_is_the_workers_environment(cause):
    assert _found(IPC_PROBE.replace("CAUSE", cause)) == [("verl-npu-ipc-probe-failed", "error", ("env", "driver"))]


def test_an_npu_smi_board_query_that_fails_is_the_same_probe():
    line = ("RuntimeError: Failed to execute npu-smi command: Command '['npu-smi', 'info', '-t', 'board', '-i', '1']' "
            "returned non-zero exit status 255.")
    assert _first(line).id == "verl-npu-ipc-probe-failed"


NOTICE = "Platform 'huawei' (PlatformNPU) is registered but not available. This may be due to this ray actor being a " \
         "CPU-only actor."


def test_the_platform_notice_of_a_cpu_only_actor_is_a_notice_not_the_failure():
    log = f"(TaskRunner pid=44512) WARNING:verl.plugin.platform.platform_manager:{NOTICE}\n" \
          "ImportError: Mooncake Store not installed. Please install via: pip install mooncake-transfer-engine"
    found = _found(log)
    assert found[0][0] == "transferqueue-storage-backend-missing"
    assert ("verl-platform-unavailable-cpu-actor", "info", ("verl", "ray")) in found
    assert _found(NOTICE) == [("verl-platform-unavailable-cpu-actor", "info", ("verl", "ray"))]


def test_the_same_notice_from_a_worker_that_should_own_an_npu_is_a_warning():
    found = _found(f"(WorkerDict pid=44512, ip=10.0.0.2) WARNING:verl.plugin.platform.platform_manager:{NOTICE}")
    assert found == [("verl-platform-unavailable-in-worker", "warning", ("ray", "env"))]


def test_torch_npu_too_old_for_the_allocator_switch_is_a_torch_npu_warning():
    line = ("(WorkerDict pid=3) WARNING 12-01 10:00:00 [platform_npu.py:104] Current version of torch-npu does not "
            "support `_set_allocator_settings`, please upgrade torch-npu to 2.9.0 or later")
    finding = _first(line)
    assert (finding.id, finding.severity.value, tuple(finding.components)) == (
        "verl-npu-allocator-settings-unsupported", "warning", ("torch-npu", "verl"))
    assert "2.9.0" in finding.fix.text


def test_a_gpu_only_function_mindspeed_stubbed_out_is_mindspeeds_not_megatrons():
    finding = _first("RuntimeError: function flash_attn.ops.triton.rotary.apply_rotary no exist")
    assert (finding.id, tuple(finding.components)) == ("mindspeed-stubbed-function-called", ("mindspeed", "config"))
    # a function MindSpeed cannot find to patch stays the version-pairing finding
    other = "RuntimeError: no exist get_te_version of <module 'megatron.core.utils' from '/M/megatron/core/utils.py'>"
    assert _first(other).id == "mindspeed-megatron-mismatch"
