import pytest

from doctor.knowledge.chips import family, family_from_name
from doctor.snapshot.model import snapshot_from_dict


@pytest.mark.parametrize("name,fam", [
    ("910B3", "A2"), ("Ascend910B4", "A2"), ("ascend910b1", "A2"), ("ascend910_9391", "A3"), ("Ascend910_9382", "A3"),
    ("310P3", "310P"), ("ascend310p1", "310P"), ("Ascend950DT", "950"), ("ascend950dt_9582", "950"), ("910ProB", "910"),
    ("Ascend910", None), ("", None), (None, None), ("garbage", None),
])
def test_family_from_name(name, fam):
    assert family_from_name(name) == fam


def _snap(ascend):
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "ascend": ascend})


def test_family_from_pci_when_names_missing():
    assert family(_snap({"pci": [{"address": "0000:c1:00.0", "device_id": "d803"}]})) == "A3"


def test_a3_table_with_bare_ascend910_names():
    devs = [{"id": i // 2, "chip_index": i % 2, "chip": "Ascend910"} for i in range(16)]
    assert family(_snap({"devices": devs})) == "A3"


def test_no_ascend_and_unknown():
    assert family(_snap(None)) is None
    assert family(_snap({"devices": [], "pci": []})) is None
    assert repr(family(snapshot_from_dict({"schema": "doctor.snapshot/1"}))) == "UNKNOWN"


@pytest.mark.parametrize("chip,hbm,fam", [
    ("910B", 32768, "910"), ("Ascend910B", 32768, "910"), ("910B", 65536, "A2"), ("910B", None, "A2"),
    ("910B4", 32768, "A2"), ("910ProB", 32768, "910"),
])
def test_bare_910b_is_decided_by_the_hbm_npu_smi_lists(chip, hbm, fam):
    dev = {"id": 0, "chip": chip} | ({"hbm_total_mb": hbm} if hbm else {})
    assert family(_snap({"devices": [dev]})) == fam
