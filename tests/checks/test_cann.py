from tests.stacks import bare, found, healthy


def test_no_cann_is_an_error():
    f = found(bare(ascend={"toolkit": None, "devices": []}))
    assert f["cann-not-installed"] == "error"


def test_set_env_not_sourced():
    d = healthy()
    for k in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH"):
        del d["env"][k]
    d["env"]["LD_LIBRARY_PATH"] = "/usr/lib"
    assert found(d)["cann-set-env-not-sourced"] == "error"


def _fixes(d):
    from tests.stacks import diagnose_dict

    return {f.id: f.fix.text if f.fix else "" for f in diagnose_dict(d).findings}


def test_set_env_fix_names_the_set_env_of_a_toolkit_installed_in_the_users_home():
    """A non-root install (`--install-path` defaults to $HOME/Ascend): the set_env.sh to source is there; the fix
    must not send the user to /usr/local/Ascend, where nothing is installed."""
    d = healthy()
    for k in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ATB_HOME_PATH"):
        d["env"].pop(k, None)
    d["env"]["LD_LIBRARY_PATH"] = "/usr/lib"
    ver = d["ascend"]["toolkit"]["version"]
    d["ascend"]["root"] = "/home/op/Ascend"
    d["ascend"]["toolkit"].update(path=f"/home/op/Ascend/ascend-toolkit/{ver}", layout="old")
    d["ascend"]["nnal"]["path"] = "/home/op/Ascend/nnal/atb"
    d["ascend"]["toolkits"] = [{"version": ver, "path": f"/home/op/Ascend/ascend-toolkit/{ver}", "active": True}]
    d["packages"].setdefault("vllm-ascend", {"version": "0.13.0"})
    fixes = _fixes(d)
    assert "source /home/op/Ascend/ascend-toolkit/set_env.sh" in fixes["cann-set-env-not-sourced"]
    assert "/usr/local/Ascend" not in fixes["cann-set-env-not-sourced"]
    assert fixes["cann-nnal-not-sourced"] == "source /home/op/Ascend/nnal/atb/set_env.sh"


def test_set_env_fix_of_a_new_layout_toolkit_names_its_prefix():
    d = healthy()
    for k in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH"):
        d["env"].pop(k, None)
    d["env"]["LD_LIBRARY_PATH"] = "/usr/lib"
    d["ascend"]["toolkit"].update(version="9.1.0", path="/opt/Ascend/cann-9.1.0", layout="new")
    fix = _fixes(d)["cann-set-env-not-sourced"]
    assert "source /opt/Ascend/cann/set_env.sh" in fix and "/usr/local" not in fix


def test_set_env_missing_lib64_on_ld_library_path():
    d = healthy()
    d["env"]["LD_LIBRARY_PATH"] = "/usr/local/Ascend/driver/lib64/driver"
    assert found(d)["cann-set-env-not-sourced"] == "error"


def test_env_points_at_another_toolkit():
    d = healthy()
    d["ascend"]["toolkits"] = [{"version": "8.5.0", "path": "/usr/local/Ascend/cann-8.5.0", "active": True},
                               {"version": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1", "active": False}]
    home = "/usr/local/Ascend/ascend-toolkit/8.3.RC1"
    d["env"].update(ASCEND_HOME_PATH=home, ASCEND_TOOLKIT_HOME=home, ASCEND_OPP_PATH=home + "/opp",
                    LD_LIBRARY_PATH=home + "/lib64")
    assert found(d)["cann-env-points-elsewhere"] == "warning"


def test_kernels_missing_and_wrong_soc():
    assert found(bare(ascend={"toolkit": {"version": "8.0.RC1"}, "kernels": None,
                              "devices": [{"id": 0, "chip": "910B"}]}))["cann-kernels-missing"] == "error"
    d = healthy()
    d["ascend"]["kernels"]["soc"] = "ascend310p1"
    assert found(d)["cann-kernels-wrong-soc"] == "error"
    d = healthy()
    d["ascend"]["kernels"]["version"] = "8.3.RC1"
    assert found(d)["cann-kernels-version-mismatch"] == "warning"


def test_kernels_soc_against_the_chip_needs_no_toolkit():
    # a report that names the kernels' SOC and the device but not the CANN version still gets the mismatch
    f = found(bare(ascend={"kernels": {"soc": "Ascend910B1"}, "devices": [{"id": 0, "chip": "310P3"}]}))
    assert f["cann-kernels-wrong-soc"] == "error"
    assert "cann-kernels-missing" not in f and "cann-kernels-version-mismatch" not in f
    assert "cann-kernels-wrong-soc" not in found(bare(ascend={"kernels": {"soc": "Ascend910B1"}}))


def test_nnal_missing_with_vllm_ascend_is_an_error():
    d = bare(ascend={"toolkit": {"version": "8.0.0"}, "nnal": None}, packages={"vllm-ascend": {"version": "0.7.1rc1"}})
    assert found(d)["cann-nnal-missing"] == "error"


def test_nnal_version_and_sourcing():
    d = healthy()
    d["ascend"]["nnal"]["version"] = "8.3.RC1"
    del d["env"]["ATB_HOME_PATH"]
    f = found(d)
    assert f["cann-nnal-version-mismatch"] == "warning" and f["cann-nnal-not-sourced"] == "warning"


def test_driver_too_old_for_cann():
    d = bare(host={"in_container": True}, ascend={"toolkit": {"version": "8.3"}, "driver": {"version": "24.1"},
                                                  "devices": [{"id": 0, "chip": "910B1"}]})
    assert found(d)["driver-too-old"] == "error"


def test_driver_below_profile_recommendation_is_a_warning():
    d = healthy()
    d["ascend"]["driver"]["version"] = "25.2.0"
    assert found(d)["driver-below-recommended"] == "warning"


def test_driver_missing_in_container():
    d = healthy()
    d["ascend"]["driver"] = None
    assert found(d)["driver-missing"] == "error"


def test_newer_cann_is_info_not_error():
    d = healthy("verl-0.10.0.dev20260822-cann9.1.0-a2")
    d["ascend"]["toolkit"]["version"] = d["ascend"]["kernels"]["version"] = d["ascend"]["nnal"]["version"] = "9.3.0"
    f = found(d)
    assert f["cann-newer-than-profiles"] == "info" and "error" not in f.values()


def test_older_cann_is_a_warning():
    d = healthy("verl-0.6.1-cann8.2.rc1-a2")
    d["ascend"]["toolkit"]["version"] = d["ascend"]["kernels"]["version"] = d["ascend"]["nnal"]["version"] = "8.1.RC1"
    assert found(d)["cann-older-than-profiles"] == "warning"


def test_firmware_and_driver_that_do_not_accept_each_other_is_an_error():
    """The driver's version.info lists the firmware it accepts (compatible_version_fw), the firmware's the drivers
    (compatible_version_drv); the driver's DCMI calls the pair compatible when either list holds the other (hicann/driver
    dcmi_get_device_compatibility). A snapshot without the driver's list says nothing."""
    from tests.stacks import bare, found

    def snap(fw, drv="25.2.0", fw_list="[7.0.0,7.7.99]", drv_list="[24.1,24.1.],[25.0,25.0.]"):
        return bare(ascend={"driver": {"version": drv, **({"compatible_version_fw": fw_list} if fw_list else {})},
                            "firmware": {"version": fw, **({"compatible_version_drv": drv_list} if drv_list else {})}})

    assert found(snap("7.8.0.2.212"))["driver-firmware-incompatible"] == "error"
    assert "driver-firmware-incompatible" not in found(snap("7.7.0.1.231"))
    assert "driver-firmware-incompatible" not in found(snap("7.8.0.2.212", drv="25.0.rc1.1"))
    assert "driver-firmware-incompatible" not in found(snap("7.8.0.2.212", drv_list=None))
    assert "driver-firmware-incompatible" not in found(snap("6.2.0.1.101", fw_list=None))
    assert found(snap("6.2.0.1.101", drv_list=None))["driver-firmware-incompatible"] == "error"
