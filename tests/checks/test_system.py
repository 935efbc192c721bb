from tests.stacks import bare, found, healthy


def test_python_too_old_for_vllm_ascend():
    f = found(bare(python={"version": "3.9.9"}, packages={"vllm-ascend": {"version": "0.11.0rc0"}}))
    assert f["python-too-old-for-package"] == "error"


def test_python_39_fine_for_old_vllm_ascend():
    assert "python-too-old-for-package" not in found(bare(python={"version": "3.9.9"},
                                                          packages={"vllm-ascend": {"version": "0.9.1"}}))


def test_python_outside_profile_is_a_warning():
    d = healthy()
    d["python"]["version"] = "3.12.1"
    assert found(d, forced="verl-0.7.1-cann8.5.0-a2")["python-outside-profile"] == "warning"


def test_verl_091_on_python_313():
    assert found(bare(python={"version": "3.13.0"}, packages={"verl": {"version": "0.9.1"}}))[
        "python-too-new-for-package"] == "error"


def test_cwd_source_tree_shadows_compiled_package():
    d = bare(host={"cwd": "/data/package/pytorch"},
             modules={"torch_npu": {"origins": ["/data/package/pytorch/torch_npu"]}})
    assert found(d)["cwd-shadows-package"] == "error"


def test_editable_checkout_in_cwd_is_not_shadowing():
    d = bare(host={"cwd": "/MindSpeed"}, packages={"mindspeed": {"version": "0.12.1", "location": "/MindSpeed"}},
             modules={"mindspeed": {"origins": ["/MindSpeed/mindspeed"]}})
    assert "cwd-shadows-package" not in found(d)


def test_editable_path_hook_placeholder_is_not_a_source_tree_in_the_cwd():
    """Issue 15 item 7: setuptools' editable finder adds `__editable__.<dist>.finder.__path_hook__` to a namespace
    package's path (megatron installed with `pip install -e Megatron-LM`); the probe makes it absolute against the
    cwd, so it used to read as a `megatron` source tree in whatever directory `doctor check` ran from."""
    hook = "/work/__editable__.megatron_core-0.16.2.finder.__path_hook__"
    d = bare(host={"cwd": "/work"}, packages={"megatron-core": {"version": "0.16.2", "location": "/venv/src/Megatron-LM"}},
             modules={"megatron": {"origins": [hook, "/venv/src/Megatron-LM/megatron"], "kind": "namespace"}})
    assert "cwd-shadows-package" not in found(d)
    # a real tree in the cwd next to the placeholder still counts
    d = bare(host={"cwd": "/work"}, modules={"megatron": {"origins": [hook, "/work/megatron"], "kind": "namespace"}})
    assert found(d)["cwd-shadows-package"] == "warning"


def test_arch_unsupported():
    assert found(bare(host={"arch": "riscv64"}))["arch-unsupported"] == "error"


def test_unknown_facts_say_nothing():
    assert found(bare()) == {}


def test_failed_probe_is_reported():
    d = bare(collect={"probes": {"npu_smi": {"status": "timeout", "seconds": 10.0, "errors": ["no answer within 10.0 s"]},
                                 "pci": {"status": "ok", "seconds": 0.1, "errors": []}}})
    f = found(d)
    assert f["probe-failed"] == "warning" and len([k for k in f if k == "probe-failed"]) == 1
