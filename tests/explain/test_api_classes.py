"""API and package classes read without a signature: what a version conflict, a loader, pip, CMake, an import of a
file named like a package, a model's remote code and torch's OutOfMemoryError say about the package involved. Read
with the generic database."""

from __future__ import annotations

from tests.explain.generic import errors


def test_a_version_conflict_names_the_installed_distribution_and_the_one_requiring_it():
    # pkg_resources' ContextualVersionConflict prints its args (dist, req, required_by)
    (f,) = errors(["pkg_resources.ContextualVersionConflict: (transformers 4.40.0 (/opt/venv/lib/python3.11/"
                   "site-packages), Requirement.parse('transformers>=4.51.0'), {'vllm'})"])
    assert f.id == "installed-version-conflict" and f.components == ("transformers", "vllm")
    (g,) = errors(["pkg_resources.VersionConflict: (numpy 2.1.0 (/opt/venv/lib), Requirement.parse('numpy<2'))"])
    assert g.components == ("numpy", "python")
    # a distribution that is no component, or none named: python, env
    (h,) = errors(["pkg_resources.DistributionNotFound: The 'foo-bar' distribution was not found and is required "
                   "by the application"])
    assert h.components == ("python", "env")


def test_a_backend_extension_torch_could_not_load_is_the_package_shipping_it():
    # torch 2.13 torch/__init__.py _import_device_backends: the entry point's name in the message
    lines = ["RuntimeError: Failed to load the backend extension: torch_npu. You can disable extension auto-loading "
             "with TORCH_DEVICE_BACKEND_AUTOLOAD=0."]
    (f,) = errors(lines)
    assert f.id == "extension-failed-to-load" and f.components == ("torch-npu", "env")
    assert "torch/__init__.py" in f.source
    # an extension no component ships: the message's own reading stays
    assert all(x.id != "extension-failed-to-load" for x in errors(
        ["RuntimeError: Failed to load the backend extension: my_private_backend."]))


def test_a_job_file_named_like_a_package_that_imports_itself_is_the_config_not_a_version_mismatch():
    # CPython 3.11 ceval.c import_from: "cannot import name %R from partially initialized module %R (most likely due
    # to a circular import) (%S)"; as run here (its directory shortened) with a script torch.py: `from torch import nn`
    (f,) = errors(["ImportError: cannot import name 'nn' from partially initialized module 'torch' (most likely due "
                   "to a circular import) (/tmp/job/torch.py)"])
    assert f.id == "package-shadowed-by-file" and f.components == ("config", "torch")
    assert "/tmp/job/torch.py" in f.evidence["read"]
    # a module inside the installed package is no shadowing file
    (g,) = errors(["ImportError: cannot import name 'X' from partially initialized module 'vllm.config' (most likely "
                   "due to a circular import) (/usr/local/lib/python3.10/site-packages/vllm/config.py)"])
    assert g.id != "package-shadowed-by-file"


def test_pips_requires_python_verdict_is_the_interpreter_then_the_package():
    # pip 26.3 _internal/resolution/legacy/resolver.py: UnsupportedPythonVersion's text
    (f,) = errors(["ERROR: Package 'vllm-ascend' requires a different Python: 3.9.18 not in '>=3.10,<3.12'"])
    assert f.id == "requires-python-unmet" and f.components == ("python", "vllm-ascend")
    assert "3.9.18" in f.title and "resolver.py" in f.source


def test_an_exception_raised_in_a_models_remote_code_is_the_models():
    # transformers copies a trust_remote_code repository's .py files under HF_MODULES_CACHE/transformers_modules/
    # (transformers 5.24 utils/hub.py TRANSFORMERS_DYNAMIC_MODULE_NAME): that code is the model's, not the job's
    tb = ["Traceback (most recent call last):",
          '  File "/opt/venv/lib/python3.11/site-packages/transformers/modeling_utils.py", line 4000, in from_pretrained',
          "    model = cls(config, *model_args, **model_kwargs)",
          '  File "/home/u/.cache/huggingface/modules/transformers_modules/org/repo/modeling_x.py", line 88, in __init__',
          '    self.scale = config.rope_scaling["factor"]',
          "KeyError: 'factor'"]
    (f,) = errors(tb)
    assert f.id == "error-in-package" and f.components[:2] == ("model", "config")
    assert "transformers_modules" in f.evidence["read"]
    # transformers' from_pretrained, the frame just outside the model's code, called it: the pair to look at (remote
    # code written for another transformers release), named third
    assert f.components == ("model", "config", "transformers") and f.evidence["caller"] == "transformers"
    assert f.title == "KeyError raised in the model's __init__, called by transformers' from_pretrained", f.title


def test_an_out_of_memory_error_is_the_devices_memory_the_config_asks_for_not_torchs_code():
    # torch_npu NPUCachingAllocator.cpp raises OutOfMemoryError ("NPU out of memory. Tried to allocate ...")
    (f,) = errors(["torch.OutOfMemoryError: NPU out of memory. Tried to allocate 1.50 GiB (NPU 0; 60.97 GiB total "
                   "capacity; 58.12 GiB already allocated; 58.12 GiB current active; 1.02 GiB free)"])
    assert f.id == "device-out-of-memory" and f.components == ("config", "npu")
    (g,) = errors(["torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB"])
    assert g.id == "device-out-of-memory" and g.components == ("config", "torch")


def test_a_file_not_found_without_a_frame_is_the_configured_path_where_the_job_runs():
    # Python's FileNotFoundError as a library raises it with the bare name (no errno text): no frame says whose code
    (f,) = errors(["FileNotFoundError: shard_00003.safetensors"])
    assert f.id == "file-not-found" and f.components == ("config", "cluster")
    # the "[Errno 2] No such file or directory" form keeps its class signature (path-not-found)
    (g,) = errors(["FileNotFoundError: [Errno 2] No such file or directory: '/data/train.parquet'"])
    assert g.id == "path-not-found"


def test_cmake_not_finding_a_package_names_the_component_that_ships_it():
    # cmake 3.25.1 as run here on `find_package(Torch REQUIRED)` with no torch on CMAKE_PREFIX_PATH
    out = ["CMake Error at CMakeLists.txt:3 (find_package):",
           '  By not providing "FindTorch.cmake" in CMAKE_MODULE_PATH this project has',
           '  asked CMake to find a package configuration file provided by "Torch", but',
           "  CMake did not find one.",
           "",
           '  Could not find a package configuration file provided by "Torch" with any of',
           "  the following names:",
           "",
           "    TorchConfig.cmake",
           "    torch-config.cmake"]
    found = errors(out)
    assert ("build-package-not-found", ("torch", "env")) in [(f.id, f.components) for f in found]
    (g,) = errors(["-- Could NOT find Python3 (missing: Python3_INCLUDE_DIRS Development Development.Module)"])
    assert g.id == "build-package-not-found" and g.components == ("python", "env")
