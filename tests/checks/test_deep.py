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
