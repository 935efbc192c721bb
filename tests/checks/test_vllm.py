import pytest

from tests.stacks import bare, found, healthy


@pytest.mark.parametrize("pkg", ["vllm", "vllm-ascend"])
def test_seed_rule(pkg):
    d = healthy("verl-main-cann9.1.0-a2")
    d["packages"][pkg]["version"] = "0.7.3"
    f = found(d)
    assert f["vllm-below-minimum-for-cann"] == "error", f


def test_seed_rule_not_below_boundary():
    d = bare(ascend={"toolkit": {"version": "8.3.RC1"}}, packages={"vllm": {"version": "0.7.3"}})
    assert "vllm-below-minimum-for-cann" not in found(d)


def test_vllm_ascend_torch_abi_pin():
    d = bare(packages={"vllm": {"version": "0.11.0"}, "vllm-ascend": {"version": "0.11.0"}, "torch": {"version": "2.8.0"}})
    assert found(d)["vllm-ascend-torch-mismatch"] == "error"


def test_vllm_pairing_and_rc_quirk():
    d = bare(packages={"vllm": {"version": "0.14.1+empty"}, "vllm-ascend": {"version": "0.14.0rc1"}})
    assert "vllm-ascend-vllm-mismatch" not in found(d)
    d = bare(packages={"vllm": {"version": "0.14.0"}, "vllm-ascend": {"version": "0.14.0rc1"}})
    assert found(d)["vllm-ascend-vllm-mismatch"] == "warning"


def test_branch_build_of_vllm_ascend_matches_its_line():
    d = healthy()
    d["packages"]["vllm-ascend"]["version"] = "0.13.1.dev12+gabcdef0"
    f = found(d)
    assert "vllm-ascend-vllm-mismatch" not in f and "package-off-profile" not in f


def test_build_info_device_type_vs_chip():
    d = healthy("verl-0.7.1-cann8.5.0-a3")
    d["modules"]["vllm_ascend"]["build"] = {"device_type": "A2"}
    assert found(d)["vllm-ascend-build-device-mismatch"] == "error"


def test_sleep_mode_with_expandable_segments():
    d = bare(env={"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}, modules={"vllm_ascend": {}})
    assert found(d)["vllm-ascend-sleep-expandable-segments"] == "warning"


def test_dev_vllm_without_vllm_version():
    d = healthy()
    d["packages"]["vllm"]["version"] = "0.13.1.dev3+g1234567.empty"
    assert found(d)["vllm-version-unparseable"] == "warning"
    d["env"]["VLLM_VERSION"] = "0.13.0"
    assert "vllm-version-unparseable" not in found(d)


def test_newer_than_known_is_info():
    d = healthy("verl-main-cann9.1.0-a2")
    d["packages"]["vllm-ascend"]["version"] = "0.30.0rc2"
    d["packages"]["torch-npu"]["version"] = "2.14.0"
    d["packages"]["torch"]["version"] = "2.14.0"
    f = found(d)
    assert f["vllm-ascend-newer-than-known"] == "info" and f["torch-npu-newer-than-known"] == "info"
    assert "error" not in {v for k, v in f.items() if k.endswith("newer-than-known")}
