from tests.stacks import bare, found, healthy


def test_base_mismatch_is_an_error():
    d = bare(packages={"torch": {"version": "2.12.0"}, "torch-npu": {"version": "2.8.0.post2"}})
    assert found(d)["torch-npu-torch-mismatch"] == "error"


def test_cpu_local_label_and_post_builds_match():
    d = bare(packages={"torch": {"version": "2.5.1+cpu"}, "torch-npu": {"version": "2.5.1.post1"}})
    assert "torch-npu-torch-mismatch" not in found(d)


def test_cuda_torch_on_npu_host():
    d = healthy()
    d["packages"]["torch"]["version"] = "2.8.0+cu128"
    assert found(d)["torch-cuda-build"] == "error"


def test_x86_torch_without_cpu_label():
    d = healthy(arch="x86_64")
    d["packages"]["torch"]["version"] = "2.8.0"
    assert found(d)["torch-not-cpu-build-x86"] == "warning"
    d["packages"]["nvidia-cublas-cu12"] = {"version": "12.8.4.1"}
    assert found(d)["torch-not-cpu-build-x86"] == "error"


def test_torch_npu_missing_on_complete_snapshot():
    d = healthy()
    del d["packages"]["torch-npu"]
    assert found(d)["torch-npu-not-installed"] == "error"
    d["complete"] = False
    assert "torch-npu-not-installed" not in found(d)


def test_torch_npu_cann_pairing_is_a_warning():
    d = healthy("verl-0.8.0-cann9.0.0-a2")
    d["packages"]["torch-npu"]["version"] = "2.9.0"  # the CANN 8.5.0 build
    assert found(d)["torch-npu-cann-pairing"] == "warning"


def test_torchvision_pairing():
    d = healthy("verl-0.8.0-cann9.0.0-a2")
    d["packages"]["torchvision"]["version"] = "0.20.1"
    assert found(d)["torchvision-torch-mismatch"] == "warning"
