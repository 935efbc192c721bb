import pytest

from tests.stacks import bare, found, healthy


def test_no_npu_on_a_host_without_ascend():
    d = bare(ascend={"toolkit": None, "npu_smi": {"status": "missing"}, "pci": [], "device_files": []})
    assert found(d)["npu-not-visible"] == "error"


def test_npu_smi_timeout():
    d = healthy()
    d["ascend"]["npu_smi"] = {"status": "timeout", "error": "npu-smi did not answer in 10 s"}
    assert found(d)["npu-smi-failed"] == "error"


@pytest.mark.parametrize("health,sev", [("Warning", "warning"), ("Critical", "error"), ("Alarm", "error")])
def test_health(health, sev):
    d = healthy()
    d["ascend"]["devices"][3]["health"] = health
    assert found(d)["npu-unhealthy"] == sev


def test_hbm_held_by_other_process():
    d = healthy()
    d["ascend"]["devices"][1]["processes"] = [{"pid": 4242, "name": "python3", "hbm_mb": 58472}]
    assert found(d)["npu-hbm-in-use"] == "warning"


@pytest.mark.parametrize("value,fid", [
    ("1,0", "visible-devices-unsorted"), ("0,1,1", "visible-devices-duplicate"), ("0,a", "visible-devices-invalid"),
    ("0,9", "visible-devices-out-of-range"),
])
def test_visible_devices(value, fid):
    d = healthy()
    d["env"]["ASCEND_RT_VISIBLE_DEVICES"] = value
    assert found(d)[fid] == "error"


def test_visible_devices_fine():
    d = healthy()
    d["env"]["ASCEND_RT_VISIBLE_DEVICES"] = "0,1,2,3"
    assert not any(k.startswith("visible-devices") for k in found(d))


def test_ascend_visible_devices_without_rt():
    d = bare(host={"in_container": True}, env={"ASCEND_VISIBLE_DEVICES": "4,3"})
    assert "visible-devices-rt-unset" not in found(d)  # partial: RT may well be set
    d["complete"] = True
    assert found(d)["visible-devices-rt-unset"] == "warning"
    assert "visible-devices-rt-unset" not in found(bare(env={"ASCEND_VISIBLE_DEVICES": "0,1"}))


def test_container_without_manager_nodes():
    d = healthy()
    d["ascend"]["device_files"] = ["/dev/davinci0", "/dev/davinci1"]
    assert found(d)["container-device-nodes-missing"] == "error"


def test_jit_prerequisites_and_stale_locks():
    d = healthy()
    d["host"]["tools"] = {"ninja": None, "g++": None}
    del d["packages"]["ninja"]
    d["host"]["torch_extensions_locks"] = ["/root/.cache/torch_extensions/py311_cpu/npu_ops/lock"]
    f = found(d)
    assert f["mindspeed-jit-tools-missing"] == "warning" and f["torch-extensions-stale-lock"] == "warning"


def test_driver_not_mounted_in_container():
    d = healthy()
    d["ascend"]["driver_mounts"] = {"/usr/local/Ascend/driver": False, "/etc/ascend_install.info": True}
    assert found(d)["container-driver-not-mounted"] == "error"


def test_driver_mounts_ignored_without_npu():
    d = bare(host={"in_container": True}, ascend={"toolkit": None, "pci": [], "device_files": [],
                                                  "driver_mounts": {"/usr/local/Ascend/driver": False}})
    assert "container-driver-not-mounted" not in found(d)
