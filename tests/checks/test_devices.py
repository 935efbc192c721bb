import pytest

from tests.stacks import bare, diagnose_dict, found, healthy


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


def _access(uid, gids, mode="0660", gid=1000, group="HwHiAiUser", rw=None):
    node = {"mode": mode, "uid": 0, "gid": gid, "group": group}
    if rw is not None:
        node["rw"] = rw
    nodes = {p: dict(node) for p in ("/dev/davinci0", "/dev/davinci1", "/dev/davinci_manager", "/dev/devmm_svm",
                                     "/dev/hisi_hdc")}
    return {"uid": uid, "gids": gids, "nodes": nodes}


def _denied(d):
    return next(f for f in diagnose_dict(d).findings if f.id == "npu-device-access-denied")


def test_user_outside_the_drivers_group_cannot_open_the_devices():
    d = healthy()
    d["ascend"]["device_access"] = _access(1001, [1001])
    assert found(d)["npu-device-access-denied"] == "error"
    x = _denied(d)
    assert "uid 1001 cannot open 5 NPU device node(s)" in x.title and "0:HwHiAiUser 0660" in x.title
    assert x.fix.commands == ("sudo usermod -aG HwHiAiUser $USER", "npu-smi info")
    assert "permission bits" in x.detail
    assert x.components[:2] == ("npu", "driver")


@pytest.mark.parametrize("uid,gids,mode,rw", [
    (1001, [1001, 1000], "0660", None),   # in the driver's group
    (0, [0], "0600", None),               # root passes the bits
    (1001, [1001], "0666", None),         # --install-for-all
    (1001, [1001], "0660", True),         # the kernel said yes (an ACL): its answer wins over the bits
])
def test_user_who_may_open_the_devices_gets_nothing(uid, gids, mode, rw):
    d = healthy()
    d["ascend"]["device_access"] = _access(uid, gids, mode=mode, rw=rw)
    assert "npu-device-access-denied" not in found(d)


def test_kernel_refusal_is_reported_even_when_the_bits_allow():
    d = healthy()
    d["ascend"]["device_access"] = _access(1001, [1001, 1000], rw=False)
    assert found(d)["npu-device-access-denied"] == "error"


def test_nodes_only_root_may_open_name_the_install_for_all_fix():
    d = healthy()
    d["ascend"]["device_access"] = _access(1001, [1001], mode="0600", gid=0, group="root")
    x = _denied(d)
    assert x.severity.value == "error" and "--install-for-all" in x.fix.text and "usermod" not in x.fix.text


@pytest.mark.parametrize("acc", [None, {"uid": 1001}, {"uid": "x", "gids": [], "nodes": {}},
                                 {"uid": 1001, "gids": [1001], "nodes": {"/dev/davinci0": {"mode": "rw-"}}},
                                 {"uid": 1001, "gids": [1001], "nodes": ["/dev/davinci0"]}])
def test_unknown_or_malformed_access_facts_stay_silent(acc):
    d = healthy()
    if acc is not None:
        d["ascend"]["device_access"] = acc
    assert "npu-device-access-denied" not in found(d)


def test_only_some_npus_closed_to_the_user_is_a_warning():
    """A site that gives each user their own NPUs: the manager nodes and davinci1 open, davinci0 does not."""
    d = healthy()
    acc = _access(1001, [1001, 1000])
    acc["nodes"]["/dev/davinci0"]["rw"] = False
    d["ascend"]["device_access"] = acc
    x = _denied(d)
    assert x.severity.value == "warning" and "/dev/davinci0" in x.title and "davinci1" not in x.title
    assert "their own NPUs" in x.detail


def _smi_failed(d):
    return next(f for f in diagnose_dict(d).findings if f.id == "npu-smi-failed")


_DCMI = "npu-smi info (exit 187): DrvMngGetConsoleLogLevel failed. (ret=4) dcmi module initialize failed. ret is -8005"


def test_npu_smi_failing_for_a_user_refused_the_devices_blames_the_access_not_the_card():
    """A non-root user outside the driver's group: DCMI cannot open the manager node, npu-smi fails. That is the
    access (npu-device-access-denied), not a sick card: never "reset or reboot the card, or reinstall the driver"
    on a shared server for it."""
    d = healthy()
    d["ascend"]["npu_smi"] = {"status": "error", "error": _DCMI}
    d["ascend"].pop("devices", None)
    d["ascend"]["device_access"] = _access(1001, [1001])
    x = _smi_failed(d)
    assert x.severity.value == "error"
    assert "uid 1001" in x.detail and "npu-device-access-denied" in x.detail
    assert "reboot" not in x.fix.text and "reinstall" not in x.fix.text
    assert "sudo npu-smi info" in x.fix.commands


def test_npu_smi_failing_for_a_non_root_user_with_open_devices_says_dcmi_may_be_root_only():
    d = healthy()
    d["ascend"]["npu_smi"] = {"status": "error", "error": _DCMI}
    d["ascend"].pop("devices", None)
    d["ascend"]["device_access"] = _access(1001, [1001, 1000])  # in HwHiAiUser: every node opens
    x = _smi_failed(d)
    assert "uid 1001" in x.detail and "root only" in x.detail
    assert "sudo npu-smi info" in x.fix.commands and "hw-native-sys/simpler" in x.source


@pytest.mark.parametrize("acc", [None, "root"])
def test_npu_smi_failing_for_root_or_an_unknown_user_keeps_the_driver_advice(acc):
    d = healthy()
    d["ascend"]["npu_smi"] = {"status": "error", "error": _DCMI}
    d["ascend"].pop("devices", None)
    if acc == "root":
        d["ascend"]["device_access"] = _access(0, [0])
    x = _smi_failed(d)
    assert "reinstall the driver" in x.fix.text and "uid" not in x.detail


def test_nodes_of_the_root_group_never_ask_to_join_root():
    """Nodes mode 0660 root:root (a device plugin's, or the host's gid as a container sees it): joining group root
    gives a user root's group everywhere; the fix is the driver's running user or --install-for-all instead."""
    d = healthy()
    d["ascend"]["device_access"] = _access(1001, [1001], mode="0660", gid=0, group="root")
    x = _denied(d)
    assert "usermod" not in x.fix.text and "--group-add" not in x.fix.text and "--install-for-all" in x.fix.text
    assert x.fix.commands == ("npu-smi info",)


def _in_container(d, files=None, mounts=None):
    d.setdefault("host", {})["in_container"] = True
    if files is not None:
        d["ascend"]["device_files"] = files
    if mounts is not None:
        d["ascend"]["driver_mounts"] = mounts
    return d


def test_npu_smi_failing_in_a_container_without_its_manager_nodes_blames_the_container_not_the_card():
    """-8005 inside a container that lacks /dev/davinci_manager (vllm-ascend issue thread cited by the check): the
    container findings name the cause; "reset or reboot the card, or reinstall the driver" would be wrong there."""
    d = healthy()
    d["ascend"]["npu_smi"] = {"status": "error", "error": _DCMI}
    d["ascend"].pop("devices", None)
    _in_container(d, files=["/dev/davinci0", "/dev/davinci1", "/dev/hisi_hdc"])
    x = _smi_failed(d)
    assert "/dev/davinci_manager" in x.detail and "/dev/devmm_svm" in x.detail
    assert "container-device-nodes-missing" in x.detail and "container-driver-not-mounted" not in x.detail
    assert "reboot" not in x.fix.text and "reinstall" not in x.fix.text and "container" in x.fix.text
    assert found(d)["container-device-nodes-missing"] == "error"


def test_npu_smi_failing_in_a_container_without_the_driver_mount_blames_the_mount():
    d = healthy()
    d["ascend"]["npu_smi"] = {"status": "error", "error": _DCMI}
    d["ascend"].pop("devices", None)
    _in_container(d, mounts={"/usr/local/Ascend/driver": False, "/usr/local/Ascend/driver/lib64": False,
                             "/etc/ascend_install.info": True})
    x = _smi_failed(d)
    assert "/usr/local/Ascend/driver" in x.detail and "container-driver-not-mounted" in x.detail
    assert "container-device-nodes-missing" not in x.detail
    assert "reinstall" not in x.fix.text


def test_npu_smi_failing_in_a_complete_container_asks_for_the_hosts_npu_smi_first():
    d = healthy()
    d["ascend"]["npu_smi"] = {"status": "error", "error": _DCMI}
    d["ascend"].pop("devices", None)
    _in_container(d)
    x = _smi_failed(d)
    assert "on the host" in x.fix.text and "-8020" in x.fix.text
    assert x.fix.text.index("on the host") < x.fix.text.index("reinstall the driver")
