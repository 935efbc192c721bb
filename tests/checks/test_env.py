from doctor.checks.env import edit_distance
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


def test_edit_distance():
    assert edit_distance("ASCEBD", "ASCEND") == 1 and edit_distance("ABC", "ABCDEFGH", 2) == 3
