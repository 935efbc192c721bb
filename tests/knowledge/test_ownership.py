"""The shared ownership table: module -> distribution -> component, and path / library / header -> owner."""

import pytest

from doctor.explain.db import MODULE_COMPONENTS
from doctor.knowledge.ownership import (
    Owner,
    component_of_distribution,
    component_of_module,
    distribution_of_module,
    owner_of_header,
    owner_of_library,
    owner_of_path,
)
from doctor.report import COMPONENTS
from doctor.snapshot.model import snapshot_from_dict


@pytest.mark.parametrize("dist,comp", [
    ("torch-npu", "torch-npu"), ("torch_npu", "torch-npu"), ("Torch.NPU", "torch-npu"), ("megatron-core", "megatron"),
    ("megatron_core", "megatron"), ("mindspeed", "mindspeed"), ("vllm-ascend", "vllm-ascend"),
    ("triton-ascend", "triton-ascend"), ("transformer-engine", "transformer-engine"), ("ray", "ray"), ("verl", "verl"),
    ("numpy", "numpy"), ("accelerate", "python"), ("PyYAML", "python"), ("", None), ("not a name!", None),
])
def test_component_of_distribution(dist, comp):
    assert component_of_distribution(dist) == comp
    assert comp is None or comp in COMPONENTS


@pytest.mark.parametrize("module,dist,comp", [
    ("torch_npu.npu.utils", "torch-npu", "torch-npu"), ("megatron.core.parallel_state", "megatron-core", "megatron"),
    ("mindspeed", "mindspeed", "mindspeed"), ("vllm_ascend.worker", "vllm-ascend", "vllm-ascend"),
    ("yaml", "pyyaml", "python"), ("cv2", "opencv-python-headless", "python"), ("sklearn", "scikit-learn", "python"),
    ("google.protobuf", "protobuf", "python"), ("te", None, "cann"), ("tbe.common", None, "cann"),
    ("my_training_code", None, None), ("", None, None),
])
def test_module_without_snapshot_uses_the_packaged_table(module, dist, comp):
    assert distribution_of_module(module) == dist
    assert component_of_module(module) == comp


def _snap(**parts):
    return snapshot_from_dict({"schema": "doctor.snapshot/1", **parts})


def test_snapshot_top_level_names_win_over_the_table():
    snap = _snap(packages={
        "triton-ascend": {"version": "3.2.0", "top_level": ["triton"]},
        "my-lab-utils": {"version": "1.0", "top_level": ["labutils", "yaml"]},
    })
    assert distribution_of_module("triton.backends.compiler", snap) == "triton-ascend"
    assert component_of_module("triton", snap) == "triton-ascend"
    assert distribution_of_module("labutils.io", snap) == "my-lab-utils"
    assert component_of_module("labutils", snap) == "python"
    assert distribution_of_module("yaml", snap) == "my-lab-utils"  # what the target says, not the table
    assert distribution_of_module("torch_npu", snap) == "torch-npu"  # not in the snapshot: the table


def test_explain_db_keeps_its_module_components():
    # the mapping explain used before the fold (doctor/explain/db.py), unchanged
    before = {"torch_npu": "torch-npu", "torch": "torch", "torchvision": "torchvision", "vllm": "vllm",
              "vllm_ascend": "vllm-ascend", "transformers": "transformers", "mindspeed": "mindspeed",
              "mindspeed_llm": "mindspeed", "megatron": "megatron", "verl": "verl", "numpy": "numpy", "triton": "triton",
              "ray": "ray", "mbridge": "mbridge", "transformer_engine": "transformer-engine", "te": "cann", "tbe": "cann",
              "topi": "cann", "acl": "cann"}
    assert {k: MODULE_COMPONENTS.get(k) for k in before} == before


@pytest.mark.parametrize("path,comp,dist", [
    ("/opt/venv/lib/python3.10/site-packages/vllm_ascend/worker/model_runner_v1.py", "vllm-ascend", "vllm-ascend"),
    ("/usr/local/lib/python3.11/dist-packages/megatron/core/transformer/module.py", "megatron", "megatron-core"),
    ("/opt/venv/lib/python3.10/site-packages/yaml/__init__.py", "python", "pyyaml"),
    ("/opt/venv/lib/python3.10/site-packages/torch_npu-2.5.1.post1.dist-info/METADATA", "torch-npu", "torch-npu"),
    ("/opt/venv/lib/python3.10/site-packages/six.py", "python", None),
    ("/usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux/lib64/libhccl.so", "cann", None),
    ("/usr/local/Ascend/ascend-toolkit/latest/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b/x.o", "kernels", None),
    ("/usr/local/Ascend/ascend-toolkit/8.2.RC1/opp_kernel/version.info", "kernels", None),
    ("/usr/local/Ascend/cann-8.5.0/opp/built-in/op_impl/ai_core/tbe/impl/add.py", "kernels", None),
    ("/usr/local/Ascend/cann-8.5.0/python/site-packages/tbe/common/x.py", "cann", None),
    ("/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib/libatb.so", "nnal", None),
    ("/usr/local/Ascend/driver/lib64/driver/libascend_hal.so", "driver", None),
    ("/usr/local/Ascend/firmware/version.info", "firmware", None),
    ("/home/u/Ascend/cann/set_env.sh", "cann", None),
    ("/usr/local/dcmi/libdcmi.so", "driver", None),
    ("/workspace/train.py", None, None),
])
def test_owner_of_path(path, comp, dist):
    o = owner_of_path(path)
    if comp is None:
        assert o is None
    else:
        assert isinstance(o, Owner) and (o.component, o.distribution) == (comp, dist)
        assert o.how and "->" in o.how


def test_owner_of_path_reads_editable_trees_and_module_origins_from_the_snapshot():
    snap = _snap(
        packages={"vllm": {"version": "0.9.1+empty", "editable": True, "location": "/vllm", "url": "file:///vllm"},
                  "mindspeed": {"version": "0.12.1", "editable": True,
                                "location": "/opt/venv/lib/python3.10/site-packages", "url": "file:///src/MindSpeed"}},
        modules={"megatron": {"origins": ["/Megatron-LM/megatron"]}},
        ascend={"root": "/opt/ascend-x"},
    )
    assert owner_of_path("/vllm/vllm/engine/llm_engine.py", snap).distribution == "vllm"
    o = owner_of_path("/src/MindSpeed/mindspeed/megatron_adaptor.py", snap)
    assert (o.component, o.distribution) == ("mindspeed", "mindspeed") and "direct_url" in o.how
    assert owner_of_path("/Megatron-LM/megatron/training/arguments.py", snap).component == "megatron"
    assert owner_of_path("/Megatron-LM/pretrain_gpt.py", snap) is None
    assert owner_of_path("/opt/ascend-x/driver/lib64/libc_sec.so", snap).component == "driver"
    assert owner_of_path("/opt/ascend-x/cann-9.0.0/lib64/libopapi.so", snap).component == "cann"


@pytest.mark.parametrize("lib,comp,dist", [
    ("libascendcl.so", "cann", None), ("libhccl.so", "cann", None), ("libge_runner.so", "cann", None),
    ("libopapi.so", "cann", None), ("libaclnn_ops_infer.so", "cann", None), ("libacl_op_compiler.so", "cann", None),
    ("libruntime.so", "cann", None), ("libascend_hal.so", "driver", None), ("libdrvdsmi_host.so", "driver", None),
    ("/usr/local/Ascend/driver/lib64/common/libc_sec.so", "driver", None), ("libatb.so", "nnal", None),
    ("libtorch_npu.so", "torch-npu", "torch-npu"), ("libc10.so", "torch", "torch"), ("libtorch_cpu.so.2", "torch", "torch"),
    ("libfoo.so", None, None), ("", None, None),
])
def test_owner_of_library(lib, comp, dist):
    o = owner_of_library(lib)
    assert (o.component, o.distribution) == (comp, dist) if comp else o is None


@pytest.mark.parametrize("header,comp", [
    ("acl/acl.h", "cann"), ("aclnn/opdev/op_def.h", "cann"), ("aclnnop/aclnn_add.h", "cann"), ("hccl/hccl.h", "cann"),
    ("torch_npu/csrc/core/npu/NPUStream.h", "torch-npu"), ("/usr/include/c10/core/Device.h", "torch"),
    ("/opt/venv/lib/python3.10/site-packages/torch/include/ATen/ATen.h", "torch"), ("atb/atb_infer.h", "nnal"),
    ("stdio.h", None),
])
def test_owner_of_header(header, comp):
    o = owner_of_header(header)
    assert (o.component if o else None) == comp


def test_every_distribution_verl_declares_or_imports_at_load_has_its_modules_in_the_table():
    """A distribution the table names no module of is one the checks cannot look for: a missing one a verl release
    imports at load goes unreported (aiohttp, orjson and regex did), and whether a PYTHONPATH directory holds it
    cannot be asked. Every Requires-Dist name of every verl release (extras included) and every module in the `loads`
    of every release read has an entry, but for the few left out on purpose (NO_MODULE_OF_ITS_OWN)."""
    import json
    from pathlib import Path

    from packaging.requirements import Requirement

    from doctor.knowledge.ownership import (
        _MODULE_ONLY_COMPONENTS,
        MODULE_DISTRIBUTIONS,
        NO_MODULE_OF_ITS_OWN,
        modules_of_distribution,
        normalize,
    )

    profiles = Path(__file__).resolve().parents[2] / "profiles"
    releases = json.loads((profiles / "requirements" / "verl.json").read_text())["releases"]
    declared = {normalize(Requirement(line).name) for r in releases.values() if r
                for line in r.get("requires_dist") or ()}
    assert declared - NO_MODULE_OF_ITS_OWN - {"verl"} and NO_MODULE_OF_ITS_OWN <= declared
    assert sorted(d for d in declared - NO_MODULE_OF_ITS_OWN - {"verl"} if not modules_of_distribution(d)) == []
    loads = {m for f in (profiles / "import-surface" / "verl").glob("*.json")
             for m in (json.loads(f.read_text()).get("loads") or {}).get("modules", {})}
    assert loads and sorted(m for m in loads if m not in MODULE_DISTRIBUTIONS and m not in _MODULE_ONLY_COMPONENTS) == []
