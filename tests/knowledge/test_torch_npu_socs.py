"""profiles/torch-npu-socs.toml: the SoC names each torch_npu release accepts, read at its tag. The packaged table
loads, every PyPI release of torch-npu published before the clone it was read from has its own row, the sets hold the
facts read, and a malformed copy is an input error naming the file and the key."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from doctor.errors import InputError
from doctor.knowledge.location import packaged_dir
from doctor.knowledge.torch_npu_socs import load, parse


def test_every_pypi_release_up_to_the_clone_has_a_row():
    """The rows end where the stored clone ends (2026-08-22); release candidates come from alpha tags, not read.
    What PyPI has beyond that is not judged until the table is re-read."""
    t = load()
    assert t.read == "2026-12-03" and len(t.releases) == 89
    with open(f"{packaged_dir()}/requirements/torch-npu.json") as f:
        pypi = json.load(f)["releases"]
    rows = {r.parsed for r in t.releases}
    missing = [v for v in pypi if Version(v) not in rows]
    assert [v for v in missing if not Version(v).is_prerelease] == [
        "2.7.1.post10", "2.7.1.post11", "2.9.0.post8", "2.9.0.post9", "2.9.1", "2.10.0.post6", "2.10.0.post7",
        "2.11.0.post2", "2.11.0.post3", "2.12.0.post2", "2.12.0.post3", "2.13.0", "2.14.0"]
    for r in t.releases:
        assert r.tag.endswith("-pytorch" + ".".join(map(str, r.line))) and r.tag in r.source


def test_the_sets_hold_what_was_read():
    t = load()
    v = {r.version: r for r in t.releases}
    assert "Ascend310B4" not in v["2.1.0.post4"].socs.accepts and "Ascend310B4" in v["2.1.0.post3"].socs.accepts
    assert "Ascend910_9361" in v["2.4.0"].socs.accepts and "Ascend910_9362" not in v["2.4.0"].socs.accepts
    assert v["2.7.1.post4"].socs.prefixes == ("Ascend950",) and v["2.7.1.post3"].socs.prefixes == ()
    assert [r.version for r in t.releases if r.raised_in.endswith("sys_ctrl/npu_sys_ctrl.cpp")] == [
        f"1.11.0.post{n}" for n in range(4, 16)]
    assert t.canonical("ascend910b3") == "Ascend910B3" and t.canonical("ascend950pr_9579") == "Ascend950pr_9579"
    assert t.prerelease_accepts("Ascend910_9363") is not None and not t.accepting("Ascend910_9363")


@pytest.mark.parametrize(("change", "key"), [
    ({"release": [{"version": "2.1.0", "tag": "v5.0.0-pytorch2.1.0", "socs": "nope", "raised_in": "x"}]}, "release[0].socs"),
    ({"release": [{"version": "2.1.0", "tag": "v5.0.0-pytorch2.2.0", "socs": "a", "raised_in": "x"}]}, "release[0].tag"),
    ({"release": [{"version": "two", "tag": "v5.0.0-pytorch2.1.0", "socs": "a", "raised_in": "x"}]}, "release[0].version"),
    ({"socs": {"a": {"accepts": ["910B3"]}}}, "socs.a.accepts"),
    ({"schema": "doctor.torch-npu-socs/0"}, "schema"),
])
def test_a_malformed_table_names_the_file_and_key(change, key):
    good = {"schema": "doctor.torch-npu-socs/1", "read": "2026-12-03", "repository": "https://github.com/Ascend/pytorch",
            "table_file": "torch_npu/csrc/core/npu/NpuVariables.cpp", "socs": {"a": {"accepts": ["Ascend910B3"]}},
            "release": [{"version": "2.1.0", "tag": "v5.0.0-pytorch2.1.0", "socs": "a", "raised_in": "x"}]}
    with pytest.raises(InputError) as e:
        parse({**good, **change}, "/k/torch-npu-socs.toml")
    assert e.value.path == key and "/k/torch-npu-socs.toml" in str(e.value.source)
