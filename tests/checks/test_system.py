import pytest

from tests.stacks import bare, found, healthy


def test_python_too_old_for_vllm_ascend():
    f = found(bare(python={"version": "3.9.9"}, packages={"vllm-ascend": {"version": "0.11.0rc0"}}))
    assert f["python-too-old-for-package"] == "error"


def test_python_39_fine_for_old_vllm_ascend():
    assert "python-too-old-for-package" not in found(bare(python={"version": "3.9.9"},
                                                          packages={"vllm-ascend": {"version": "0.9.1"}}))


@pytest.mark.parametrize(("llamafactory", "python", "fires"), [
    ("0.9.4", "3.10.12", True), ("0.9.5", "3.10.12", True), ("0.9.5", "3.11.0", False), ("0.9.3", "3.10.12", False)])
def test_python_too_old_for_llamafactory_that_imports_typing_self(llamafactory: str, python: str, fires: bool) -> None:
    """llamafactory 0.9.4 and 0.9.5 import typing.Self (Python 3.11) in hparams/model_args.py, which every training,
    chat and serving command loads: an error below 3.11 citing the tag, with no `doctor install` line (it builds verl's
    stack); 0.9.3's hparams do not, and Python 3.11 is fine."""
    from tests.stacks import diagnose_dict

    d = bare(python={"version": python}, packages={"llamafactory": {"version": llamafactory}})
    fs = [f for f in diagnose_dict(d).findings if f.id == "python-too-old-for-package"]
    assert [f.severity.value for f in fs] == (["error"] if fires else [])
    if fires:
        assert "typing.Self" in fs[0].detail and not fs[0].fix.commands
        assert "hiyouga/LlamaFactory/blob/v0.9.4/src/llamafactory/hparams/model_args.py" in fs[0].source


@pytest.mark.parametrize(("hydra", "python", "fires"), [
    ("1.1.2", "3.11.7", True), ("1.2.0", "3.12.1", True), ("1.0.7", "3.11.0", True), ("1.1.2", "3.10.12", False),
    ("1.3.0", "3.11.7", False), ("1.3.2", "3.12.1", False)])
def test_python_too_new_for_a_hydra_core_whose_dataclasses_311_rejects(hydra: str, python: str, fires: bool) -> None:
    """The differential import oracle: a real venv (Python 3.11.7, verl 0.9.1, hydra-core 1.1.2 with the omegaconf
    2.1.2 and antlr4-python3-runtime 4.8 it pins, so pip check is clean) fails `import verl.trainer.main_ppo` with
    `ValueError: mutable default <class 'hydra.conf.JobConf.JobConfig.OverrideDirname'> for field override_dirname is
    not allowed: use default_factory`, and the check gave no error: hydra-core 1.0.7-1.2.0 (their PyPI wheels'
    hydra/conf/__init__.py) default fields to dataclass instances, which Python 3.11 rejects; no Requires-Python says
    so. 1.3.0 uses default_factory."""
    from tests.stacks import diagnose_dict

    d = bare(python={"version": python}, packages={"hydra-core": {"version": hydra}, "verl": {"version": "0.9.1"}})
    fs = [f for f in diagnose_dict(d).findings if f.id == "python-too-new-for-package"]
    assert [f.severity.value for f in fs] == (["error"] if fires else [])
    if fires:
        assert "override_dirname" in fs[0].detail and fs[0].fix.commands == ("pip install 'hydra-core>=1.3.0'",)


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


def test_a_checkout_with_its_own_egg_info_still_shadows_the_installed_release():
    """Seen on a real target: a verl checkout (main at b178a3cd5, 0.8.0.dev) that once ran `pip install -e .` keeps
    verl.egg-info, so from inside it the probe finds that egg-info first (location = the cwd, not editable) and the
    venv's verl 0.9.1 from PyPI only as a shadowed copy; `import verl` then loads the checkout. The cwd copy is not
    the installed one: the module has a second origin, the installed package, which it hides."""
    site = "/tmp/t/a/lib/python3.11/site-packages"
    d = bare(host={"cwd": "/tmp/verl-src"},
             packages={"verl": {"version": "0.8.0.dev0", "location": "/tmp/verl-src", "editable": False,
                                "metadata": "verl.egg-info/PKG-INFO",
                                "shadowed": [{"version": "0.9.1", "location": site}]}},
             modules={"verl": {"origins": ["/tmp/verl-src/verl", f"{site}/verl"], "kind": "package"}})
    assert found(d)["cwd-shadows-package"] == "warning"
    # the same checkout installed editable into the venv: only the checkout is importable, nothing is hidden
    d = bare(host={"cwd": "/tmp/verl-src"},
             packages={"verl": {"version": "0.8.0.dev0", "location": "/tmp/verl-src", "editable": False,
                                "metadata": "verl.egg-info/PKG-INFO",
                                "shadowed": [{"version": "0.8.0.dev0", "location": site}]}},
             modules={"verl": {"origins": ["/tmp/verl-src/verl"], "kind": "package"}})
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


@pytest.mark.parametrize("python, torch_npu, expected", [
    ("3.12", "2.6.0", "python-too-new-for-package"),        # mineru-tianshu issue 27: no cp312 torch-npu 2.6.0
    ("3.12.3", "2.5.1.post1", "python-too-new-for-package"),
    ("3.8.18", "2.9.0", "python-too-old-for-package"),
    ("3.11.9", "2.6.0.post3", None),
    ("3.12.3", "2.7.1.dev20250724", None),                  # 2.7.1's row lists 3.9-3.13
    ("3.14.0", "2.12.0", None),
])
def test_torch_npu_is_built_only_for_the_pythons_of_its_compatibility_row(python, torch_npu, expected):
    from tests.stacks import bare, found

    f = found(bare(python={"version": python}, packages={"torch-npu": {"version": torch_npu}}))
    got = [k for k in ("python-too-new-for-package", "python-too-old-for-package") if k in f]
    assert got == ([expected] if expected else [])
    if expected:
        assert f[expected] == "error"


def test_the_torch_npu_python_finding_names_torch_npu_and_cites_the_compatibility_table():
    from doctor.checks.diagnose import diagnose
    from doctor.knowledge.matrix import SRC_PT_COMPAT
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"version": "3.12"},
                               "packages": {"torch-npu": {"version": "2.6.0"}}})
    (f,) = [x for x in diagnose([(None, snap, None)]).findings if x.id == "python-too-new-for-package"]
    assert f.components == ("python", "torch-npu") and f.source == SRC_PT_COMPAT
    assert "3.9, 3.10, 3.11" in f.detail
