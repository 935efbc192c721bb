import pytest

from tests.stacks import bare, diagnose_dict, found


@pytest.mark.parametrize("error,component", [
    ("ImportError: libatb.so: cannot open shared object file: No such file or directory", "nnal"),
    ("ImportError: libhccl.so: cannot open shared object file: No such file or directory. Please run 'source set_env.sh'", "env"),
    ("ImportError: .../libtorch_npu.so: undefined symbol: _ZNK3c1010TensorImpl", "torch-npu"),
    ("RuntimeError: Two accelerators cannot be used at the same time in PyTorch: npu and cuda.", "torch"),
    ("something new", "torch-npu"),
])
def test_import_errors_are_classified(error, component):
    r = diagnose_dict(bare(imports={"torch_npu": {"ok": False, "error": error}}))
    f = [x for x in r.findings if x.id == "import-torch-npu-failed"]
    assert f and f[0].severity.value == "error" and f[0].components[0] == component and f[0].fix


def test_mindspeed_import_and_timeout():
    d = bare(imports={"mindspeed.megatron_adaptor": {"ok": False, "error": "timed out after 120 s"}})
    r = diagnose_dict(d)
    assert any(f.id == "import-mindspeed-failed" and "hung" in f.title for f in r.findings)


def test_zero_devices():
    assert found(bare(imports={"torch_npu": {"ok": True, "detail": {"device_count": 0}}}))["torch-npu-no-devices"] == "error"


def test_ok_imports_are_quiet():
    assert found(bare(imports={"torch_npu": {"ok": True, "detail": {"device_count": 8}}, "vllm_ascend": {"ok": True}})) == {}


def test_an_import_of_a_package_the_snapshot_says_is_not_installed_says_so():
    """`check --deep` in the doctor's own venv (README's install): torch_npu is not there, and the import's error
    names torch, which it meets first. The finding says which distribution is missing and where, and the fix points
    --python at the training environment."""
    snap = bare(complete=True, packages={"click": {"version": "8.5.1"}, "verl-ascend-doctor": {"version": "0.1.0"}},
                python={"executable": "/home/u/.venv/bin/python", "version": "3.11.7"},
                imports={"torch_npu": {"ok": False, "error": "ModuleNotFoundError: No module named 'torch'"},
                         "mindspeed.megatron_adaptor": {"ok": False,
                                                        "error": "ModuleNotFoundError: No module named 'mindspeed'"}})
    r = diagnose_dict(snap)
    f = {x.id: x for x in r.findings}
    npu = f["import-torch-npu-failed"]
    assert "torch-npu is not installed in /home/u/.venv/bin/python" in npu.title and "No module named 'torch'" in npu.detail
    assert "doctor check --deep --python" in npu.fix.text
    # the doctor's own environment: `doctor install --python` refuses it (exit 2), so the fix names a venv of its own
    assert "doctor install --python" not in npu.fix.text and "doctor install --venv" in npu.fix.text
    assert "mindspeed is not installed" in f["import-mindspeed-failed"].title
    # a training environment without the stack (the doctor is not installed in it): install into it
    other = {**snap, "packages": {"click": {"version": "8.5.1"}}}
    npu = {x.id: x for x in diagnose_dict(other).findings}["import-torch-npu-failed"]
    assert "doctor install --python /home/u/.venv/bin/python" in npu.fix.text
    # installed but failing: the import's own error, as before
    snap["packages"]["torch-npu"] = {"version": "2.10.0"}
    npu = {x.id: x for x in diagnose_dict(snap).findings}["import-torch-npu-failed"]
    assert "No module named 'torch'" in npu.title and "not installed" not in npu.title
