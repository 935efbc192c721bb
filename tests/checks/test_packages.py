from tests.stacks import bare, found, healthy


def test_triton_next_to_triton_ascend():
    d = bare(host={"arch": "x86_64"}, packages={"triton": {"version": "unknown"}, "triton-ascend": {"version": "unknown"}})
    assert found(d)["triton-with-triton-ascend"] == "error"


def test_mainline_triton_on_npu_host():
    d = healthy()
    del d["packages"]["triton-ascend"]
    d["packages"]["triton"] = {"version": "3.5.0"}
    f = found(d)
    assert f["triton-on-npu"] == "warning" and f["package-missing"] == "warning"


def test_numpy2_with_torch21():
    assert found(bare(packages={"torch": {"version": "2.1.0"}, "numpy": {"version": "2.0.0"}}))["numpy2-with-old-torch"] == "error"


def test_numpy2_against_profile_pin():
    d = healthy()
    d["packages"]["numpy"]["version"] = "2.2.0"
    assert found(d)["package-off-profile"] == "warning"


def test_transformers_windows():
    assert found(bare(packages={"verl": {"version": "0.5.0"}, "transformers": {"version": "4.56.0"}}))[
        "transformers-outside-verl-window"] == "error"
    assert found(bare(packages={"verl": {"version": "0.7.1"}, "transformers": {"version": "5.0.0"}}))[
        "transformers-outside-verl-window"] == "error"
    assert "transformers-outside-verl-window" not in found(
        bare(packages={"verl": {"version": "0.9.0"}, "transformers": {"version": "5.10.4"}}))


def test_cuda_only_packages():
    d = healthy()
    d["packages"]["flash-attn"] = {"version": "2.7.4"}
    d["packages"]["nvidia-nccl-cu12"] = {"version": "2.21.5"}
    assert found(d)["cuda-only-packages"] == "warning"


def test_off_profile_pin():
    d = healthy()
    d["packages"]["transformers"]["version"] = "4.57.1"
    assert found(d)["package-off-profile"] == "warning"


def test_known_bad_release_warns_and_names_the_fix():
    f = found(bare(packages={"torch": {"version": "2.1.0"}, "torch-npu": {"version": "2.1.0.post4"}}))
    assert f["package-known-bad-release"] == "warning"
    for good in ("2.1.0.post5", "2.1.0.post3", "2.1.0"):
        assert "package-known-bad-release" not in found(bare(packages={"torch-npu": {"version": good}}))
    assert "package-known-bad-release" not in found(bare(packages={"torch": {"version": "2.1.0"}}))
