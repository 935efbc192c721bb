"""vLLM's per-node device check (`local_world_size (N) must be less than or equal to the number of visible devices
(M)`): on one node the devices are missing (vllm-tp-exceeds-visible-devices); in a log that shows the Ray executor,
the layout may span nodes, and vllm-ascend built from main between its vLLM 0.11.2 upgrade (bc69d7cfe1) and the fix
28111673ae checked it unconditionally, refusing every multi-node Ray layout (vllm-layout-check-ray-multinode). No
release tag of vllm-ascend carries the unconditional check (git grep over the tags: every one with the message
guards it with `distributed_executor_backend not in ["ray", "external_launcher"]`)."""

from __future__ import annotations

from doctor.explain.stream import explain_lines

ASSERT = "AssertionError: local_world_size (16) must be less than or equal to the number of visible devices (8)."


def _errors(lines: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    return [(f.id, f.components) for f in explain_lines(lines) if f.severity.value == "error"]


def test_under_the_ray_executor_the_check_is_read_as_the_multinode_layout_it_refused():
    lines = ["(RayWorkerWrapper pid=300872) INFO 11-24 08:50:33 [utils.py:973] FLASHCOMM2 not enable.",
             "(EngineCore_DP0 pid=300679) ERROR 11-24 08:50:34 [core.py:842] EngineCore failed to start.",
             f"(EngineCore_DP0 pid=300679) ERROR 11-24 08:50:34 [core.py:842] {ASSERT}"]
    found = _errors(lines)
    assert found[0] == ("vllm-layout-check-ray-multinode", ("vllm", "ray")), found
    assert "vllm-tp-exceeds-visible-devices" not in [i for i, _ in found]


def test_without_ray_in_the_log_the_devices_are_missing():
    found = _errors([f"(EngineCore_DP0 pid=300679) ERROR 11-24 08:50:34 [core.py:842] {ASSERT}"])
    assert found[0] == ("vllm-tp-exceeds-visible-devices", ("env", "npu")), found
