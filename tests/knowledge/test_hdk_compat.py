"""The driver's own firmware compatibility rule (hicann/driver v8.5.0, dcmi_get_device_compatibility and
dcmi_judge_compatibility), on the list forms its version.info files carry."""

from doctor.knowledge.hdk_compat import compatible, in_list, ranges


def test_lists_parse_as_the_drivers_strtok_does():
    assert ranges("[7.0.0,8.9.9]") == [("7.0.0", "8.9.9")]
    assert ranges("[23.0.0,23.0.0.],[24.1,24.1.],[25.0,25.0.]") == [("23.0.0", "23.0.0."), ("24.1", "24.1."),
                                                                  ("25.0", "25.0.")]


def test_a_version_is_compared_on_the_ranges_length_byte_wise():
    assert in_list("7.7.0.1.231", "[7.0.0,8.9.9]")
    assert not in_list("6.4.12.1.241", "[7.0.0,8.9.9]")
    drv = "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]"
    assert in_list("24.1.rc3", drv) and in_list("25.0.rc1.1", drv) and in_list("23.0.0", drv)
    assert not in_list("25.2.0", drv) and not in_list("23.0.rc2", drv)


def test_the_pair_is_judged_as_the_driver_judges_it():
    fw_list, drv_list = "[7.0.0,7.7.99]", "[24.1,24.1.],[25.0,25.0.]"
    assert compatible("7.7.0.1.231", "25.0.rc1.1", fw_list, drv_list) is True   # in the driver's list
    assert compatible("7.8.0.2.212", "25.0.rc1.1", fw_list, drv_list) is True   # the firmware accepts the driver
    assert compatible("7.8.0.2.212", "25.2.0", fw_list, drv_list) is False      # neither list holds the other
    assert compatible("7.8.0.2.212", "25.2.0", fw_list, None) is None           # the firmware's list unknown
    assert compatible("6.2.0.1.101", "25.0.rc1.1", None, None) is False         # older than 6.4: never compatible
