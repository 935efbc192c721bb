from tests.stacks import bare, diagnose_dict, found, healthy


def test_near_miss_name():
    f = found(bare(env={"ASCEBD_RT_VISIBLE_DEVICES": "0,1"}, complete=True))
    assert f["env-var-misspelled"] == "warning"
    # a partial snapshot (a bug report) does not say ASCEND_RT_VISIBLE_DEVICES is unset, but nothing reads the
    # misspelled name: still a warning, which says the setting has no effect unless the right name is set too
    partial = bare(env={"ASCEBD_RT_VISIBLE_DEVICES": "0,1"})
    assert found(partial)["env-var-misspelled"] == "warning"
    (f,) = [f for f in diagnose_dict(partial).findings if f.id == "env-var-misspelled"]
    assert "unless ASCEND_RT_VISIBLE_DEVICES is set as well" in f.detail


def test_known_names_and_real_setting_are_quiet():
    assert "env-var-misspelled" not in found(bare(env={"ASCEND_RT_VISIBLE_DEVICES": "0,1", "ATB_FOO": "1"}))
    assert "env-var-misspelled" not in found(bare(env={"ASCEBD_RT_VISIBLE_DEVICES": "0", "ASCEND_RT_VISIBLE_DEVICES": "0"}))


def test_ray_noset_visible_devices():
    d = healthy()
    d["env"]["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
    del d["env"]["RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"]
    assert found(d)["ray-noset-visible-devices-unset"] == "warning"


def test_ray_noset_visible_devices_with_vllm_ascend():
    """vLLM Ascend's multi-node Ray guide (v0.11.0 tutorials/multi_node_ray.md) asks for the export on every node, as
    verl's FAQ does: vllm-ascend and Ray with ASCEND_RT_VISIBLE_DEVICES set and the NOSET variable unset (listed as
    empty, or absent from a full env) is the warning; set to 1, or nothing of vLLM Ascend or verl installed, quiet."""
    pkgs = {"ray": {"version": "2.42.1"}, "vllm-ascend": {"version": "0.11.0"}}
    unset = bare(packages=pkgs, env={"ASCEND_RT_VISIBLE_DEVICES": "0,1",
                                     "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": ""})
    assert found(unset)["ray-noset-visible-devices-unset"] == "warning"
    (f,) = [f for f in diagnose_dict(unset).findings if f.id == "ray-noset-visible-devices-unset"]
    assert "vllm-ascend" in f.detail and "multi_node_ray.md" in f.source
    full = bare(packages=pkgs, env={"ASCEND_RT_VISIBLE_DEVICES": "0,1", "PATH": "/usr/bin"})
    assert found(full)["ray-noset-visible-devices-unset"] == "warning"
    # a partial env that does not list it does not say it is unset
    assert "ray-noset-visible-devices-unset" not in found(bare(packages=pkgs, env={"ASCEND_RT_VISIBLE_DEVICES": "0,1"}))
    ok = bare(packages=pkgs, env={"ASCEND_RT_VISIBLE_DEVICES": "0,1",
                                  "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": "1"})
    assert "ray-noset-visible-devices-unset" not in found(ok)
    neither = bare(packages={"ray": {"version": "2.42.1"}, "vllm": {"version": "0.11.0"}},
                   env={"ASCEND_RT_VISIBLE_DEVICES": "0,1", "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": ""})
    assert "ray-noset-visible-devices-unset" not in found(neither)


def test_a_swapped_pair_is_one_typo_as_for_the_collector():
    """The collector keeps a name whose letters are swapped as a near miss (one edit: doctor/probes/envvars.py); the
    check counts it the same way, so a swap in a short name (bound 1) is reported, not collected and dropped."""
    f = diagnose_dict(bare(env={"HCCL_RDMA_CT": "4", "TAKS_QUEUE_ENABLE": "2"}))
    assert sorted(x.evidence["meant"] for x in f.findings if x.id == "env-var-misspelled") == [
        "HCCL_RDMA_TC", "TASK_QUEUE_ENABLE"]


def test_near_misses_of_the_names_the_table_of_values_reads_are_typos():
    """The variables profiles/env-values.toml has rows for (read from HCCL, torch_npu, vllm-ascend, verl at their
    tags) are names too: HCCL_OP_EXPANSON_MODE, ASCEND_LAUNCH_BLOCKNG, VLLM_ASCEND_ENABLE_MZ are typos of them;
    real names of one family that differ by more than one edit (HCCL_RDMA_TC / HCCL_RDMA_SL) are not."""
    f = diagnose_dict(bare(env={"HCCL_OP_EXPANSON_MODE": "AIV", "ASCEND_LAUNCH_BLOCKNG": "1",
                                "VLLM_ASCEND_ENABLE_MZ": "1", "HCCL_DETERMINISTC": "true"}))
    meant = sorted(x.evidence["meant"] for x in f.findings if x.id == "env-var-misspelled")
    assert meant == ["ASCEND_LAUNCH_BLOCKING", "HCCL_DETERMINISTIC", "HCCL_OP_EXPANSION_MODE", "VLLM_ASCEND_ENABLE_NZ"]
    quiet = diagnose_dict(bare(env={"HCCL_RDMA_TC": "4", "HCCL_RDMA_SL": "1", "VLLM_ASCEND_ENABLE_NZ": "1",
                                    "VLLM_ASCEND_ENABLE_FLASHCOMM": "1", "STREAMS_PER_DEVICE": "8"}))
    assert not [x for x in quiet.findings if x.id == "env-var-misspelled"]


def test_documented_stacks_give_no_ray_visible_devices_error():
    """Every documented stack (profiles/stacks) passes env-ray-visible-devices without an error (it warns at most)."""
    from doctor.checks.env import env_ray_visible_devices
    from doctor.checks.runner import CheckContext, Skipped
    from doctor.knowledge.profiles import load_profiles
    from doctor.snapshot.model import snapshot_from_dict
    from tests.stacks import stack_snapshot

    for p in load_profiles():
        try:
            fs = list(env_ray_visible_devices(CheckContext(snapshot=snapshot_from_dict(stack_snapshot(p)))))
        except Skipped:
            fs = []
        assert not [f for f in fs if f.severity.value == "error"], p.name
