"""The driver management interface's return codes (doctor/explain/dcmi.py): DCMI_ERROR_CODE_BASE (-8000) minus a
reason, as hicann/driver's dcmi_interface_api.h (ef377e9) defines them. Read by attribution alone (the generic
database): the reason names the component."""

from __future__ import annotations

import pytest

from doctor.explain.dcmi import dcmi_code
from tests.explain.generic import errors


@pytest.mark.parametrize(("line", "name", "comps"), [
    ("dcmi_get_device_info failed, ret = -8020", "RESOURCE_OCCUPIED", ("npu", "system")),
    ("call dcmi_get_card_list failed, ret is -8008", "DEVICE_NOT_EXIST", ("npu", "driver")),
    ("DCMI init: error code -8002", "OPER_NOT_PERMITTED", ("system", "driver")),
    ("dcmi_init returned -8005", "INNER_ERR", ("driver", "npu")),
])
def test_a_dcmi_return_code_names_the_component_its_reason_points_at(line, name, comps):
    (f,) = errors([line])
    assert f.id == "dcmi-code-owner" and f.components == comps and name in f.title
    assert "dcmi_interface_api.h" in f.source


def test_a_code_outside_the_family_or_a_line_that_names_no_dcmi_is_not_read():
    assert dcmi_code("dcmi_init returned -8100") is None  # not a code the header defines
    assert dcmi_code("offset -8005 in the table") is None  # no dcmi on the line
    assert dcmi_code("dcmi_get_temperature: -80050 mC") is None  # a longer number
