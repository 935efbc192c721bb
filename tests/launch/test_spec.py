"""LaunchSpec shape checks and spec files: errors name the file and the key."""

from __future__ import annotations

import dataclasses

import pytest

from doctor.errors import InputError
from doctor.launch.spec import LaunchSpec, build_spec, load_spec_file


def test_frozen_and_fused_normalised():
    s = LaunchSpec(verl_version="0.9.1", fused="rmsnorm, rope")
    assert s.fused == ("rope", "rmsnorm")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.tp = 4  # type: ignore[misc]
    assert s.replace(tp=2).tp == 2 and s.world_size == 8


@pytest.mark.parametrize("kw,key", [
    ({"tp": 0}, "tp"), ({"vpp": -1}, "vpp"), ({"sp": "yes"}, "sp"), ({"algorithm": "sft"}, "algorithm"),
    ({"recompute": "some"}, "recompute"), ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
    ({"verl_version": "latest"}, "verl_version"), ({"fused": ("warp",)}, "fused"),
    ({"extra_overrides": ("no-equals",)}, "extra_overrides"), ({"node_rank": 3, "nodes": 2}, "node_rank"),
])
def test_bad_values_are_input_errors_naming_the_key(kw, key):
    base = {"verl_version": "0.9.1"} | kw
    with pytest.raises(InputError) as e:
        build_spec(base, source="spec.yaml")
    assert str(e.value).startswith(f"spec.yaml: {key}: ")


def test_spec_file_toml_and_yaml(tmp_path):
    t = tmp_path / "s.toml"
    t.write_text('verl_version = "0.7.1"\ntp = 2\nfused = "rope,gmm"\n')
    assert load_spec_file(t) == {"verl_version": "0.7.1", "tp": 2, "fused": "rope,gmm"}
    y = tmp_path / "s.yml"
    y.write_text("verl-version: 0.9\nnpus-per-node: 16\n")
    assert load_spec_file(y) == {"verl_version": "0.9", "npus_per_node": 16}
    t.write_text("tp = \n")
    with pytest.raises(InputError, match="not valid TOML") as e:
        load_spec_file(t)
    assert str(t) in str(e.value)
    with pytest.raises(InputError, match="cannot read"):
        load_spec_file(tmp_path / "missing.yaml")


def test_verl_version_required():
    with pytest.raises(InputError, match="--verl-version"):
        build_spec({"tp": 2}, source="command line")
