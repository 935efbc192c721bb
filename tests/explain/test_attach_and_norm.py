"""Two messages the libraries print themselves: Ray finding no cluster to attach to, Megatron's LayerNorm-only norm.

Ray raises `Could not find any running Ray instance` only when it must attach to a running cluster (ray.init with
address "auto", RAY_ADDRESS=auto, the CLIs) and finds none (ray-project/ray 003280c python/ray/_private/services.py,
get_ray_address_from_environment and canonicalize_bootstrap_address_or_die); read as a generic network error before.
Megatron-core's FusedLayerNorm asserts LayerNorm (NVIDIA/Megatron-LM d98e8a6 megatron/core/fusions/fused_layer_norm.py)
and build_module appends ` when instantiating <Module>`; read as a generic failed check before. The positive lines are
quoted from real reports; the guards are real lines of the same libraries that are no such failure.
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines

# https://github.com/ray-project/ray/issues/8089 (Ray 0.8.4: the pre-1.0 ending of the message)
RAY_OLD = ["ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting "
           "`address`."]
# the message as services.py at 003280c raises it, under a driver's traceback
RAY_NEW = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/site-packages/ray/_private/services.py", line 541, in '
    "canonicalize_bootstrap_address",
    "    addr = get_ray_address_from_environment(addr, temp_dir)",
    "ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting "
    "`--address` flag or `RAY_ADDRESS` environment variable.",
]
# https://github.com/ray-project/ray/issues/25639 (two clusters running: the other branch of the same function)
RAY_MANY = ["ConnectionError: Found multiple active Ray instances: {'127.0.0.1:6379', '127.0.0.1:60041'}. Please "
            "specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable."]

# https://github.com/NVIDIA/Megatron-LM/issues/803 (a Llama model on --transformer-impl local)
NORM = ["AssertionError: (RMSNorm) is not supported in FusedLayerNorm when instantiating FusedLayerNorm when "
        "instantiating TransformerLayer"]
# Megatron's own source, pasted: the comment in heterogeneous_layer_specs.py and the assert's f-string at d98e8a6
NORM_SOURCE = ["    # RMSNorm is not supported in FusedLayerNorm",
               "        ), f'({self.config.normalization}) is not supported in FusedLayerNorm'"]


def _ids(lines: list[str]) -> list[str]:
    return [f.id for f in explain_lines(lines)]


def test_no_ray_instance_to_attach_to_is_rays_not_the_networks():
    for lines in (RAY_OLD, RAY_NEW):
        fs = explain_lines(lines)
        assert fs[0].id == "ray-no-running-instance", [f.id for f in fs]
        assert fs[0].components[0] == "ray"
        assert "network-error" not in [f.id for f in fs]


def test_several_running_ray_instances_are_not_none():
    assert "ray-no-running-instance" not in _ids(RAY_MANY), _ids(RAY_MANY)


def test_an_rmsnorm_model_on_the_local_layer_spec_is_megatrons_config():
    fs = explain_lines(NORM)
    assert fs[0].id == "megatron-fused-layernorm-rmsnorm", [f.id for f in fs]
    assert fs[0].components[:2] == ("megatron", "config")
    assert "check-failed" not in [f.id for f in fs]


def test_megatrons_source_quoted_is_no_such_failure():
    assert "megatron-fused-layernorm-rmsnorm" not in _ids(NORM_SOURCE), _ids(NORM_SOURCE)
