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


_NOT_THERE = {"torch_npu": {"ok": False, "error": "ModuleNotFoundError: No module named 'torch'"},
              "mindspeed.megatron_adaptor": {"ok": False, "error": "ModuleNotFoundError: No module named 'mindspeed'"},
              "vllm_ascend": {"ok": False, "error": "ModuleNotFoundError: No module named 'vllm_ascend'"}}
_PY = {"executable": "/home/u/.venv/bin/python", "version": "3.11.7"}
_DOCTOR = {"click": {"version": "8.5.1"}, "verl-ascend-doctor": {"version": "0.1.0"}}


def _deep(snap, **kw):
    return [f for f in diagnose_dict(snap, **kw).findings if f.check == "deep-imports"]


def test_imports_of_packages_the_snapshot_says_are_not_installed_are_one_error_with_the_fix_once():
    """`check --deep` run in a venv that holds verl (and a CPU torch) but none of torch-npu, MindSpeed, vllm-ascend
    (the doctor's own test venv, 2026-12-07): three errors, each with the same long fix. Now one error names the
    three modules and their distributions, the fix once; still an error (exit 1: the trainer cannot import them)."""
    snap = bare(complete=True, python=_PY, imports=_NOT_THERE,
                packages={**_DOCTOR, "verl": {"version": "0.9.1"}, "torch": {"version": "2.13.0+cpu"}})
    [f] = _deep(snap)
    assert f.id == "import-not-installed" and f.severity.value == "error"
    assert f.title == ("`import torch_npu`, `import mindspeed.megatron_adaptor`, `import vllm_ascend` failed: "
                       "torch-npu, mindspeed, vllm-ascend are not installed in /home/u/.venv/bin/python")
    assert f.components == ("python", "torch-npu", "mindspeed", "vllm-ascend")
    assert sorted(f.evidence["modules"]) == ["mindspeed.megatron_adaptor", "torch_npu", "vllm_ascend"]
    # a snapshot (not this host): collect it again, with --deep, from the training environment's interpreter
    assert "No module named 'torch'" in f.detail
    assert f.fix.text.count("`doctor collect --deep --python PY -o FILE`") == 1
    # the doctor's own environment: `doctor install --python` refuses it (exit 2), so the fix names a venv of its own
    assert "doctor install --python" not in f.fix.text and "doctor install --venv" in f.fix.text
    assert diagnose_dict(snap).exit_code() == 1
    # a training environment without the stack (the doctor is not installed in it): install into it
    other = {**snap, "packages": {"verl": {"version": "0.9.1"}}}
    [f] = _deep(other)
    assert f.id == "import-not-installed" and "install the verified stack there" in f.fix.text
    [line] = f.fix.commands  # install's own line (`--profile P` when one was chosen), as torch-not-installed's
    assert line.startswith("doctor install ") and line.endswith(" --dry-run --python /home/u/.venv/bin/python")
    # one of them alone: the title's grammar follows
    one = {**other, "imports": {"vllm_ascend": _NOT_THERE["vllm_ascend"]}}
    [f] = _deep(one)
    assert f.title.endswith("vllm-ascend is not installed in /home/u/.venv/bin/python")
    assert f.detail.startswith("The import ran in")


def test_an_installed_package_whose_import_fails_keeps_its_own_error_beside_the_ones_not_installed():
    """The failure a user of a training venv needs: torch-npu is installed and its import fails (NNAL not sourced).
    That stays `import-torch-npu-failed`, named by its error; MindSpeed and vllm-ascend, not installed, are the one
    finding beside it."""
    snap = bare(complete=True, python=_PY,
                packages={"verl": {"version": "0.9.1"}, "torch": {"version": "2.7.1"},
                          "torch-npu": {"version": "2.7.1"}},
                imports={**_NOT_THERE,
                         "torch_npu": {"ok": False, "error": "ImportError: libatb.so: cannot open shared object file"}})
    f = {x.id: x for x in _deep(snap)}
    assert sorted(f) == ["import-not-installed", "import-torch-npu-failed"]
    assert f["import-torch-npu-failed"].components[0] == "nnal"
    assert sorted(f["import-not-installed"].evidence["modules"]) == ["mindspeed.megatron_adaptor", "vllm_ascend"]
    # installed and failing on a missing module: the import's own error, as before
    snap["imports"] = {"torch_npu": _NOT_THERE["torch_npu"]}
    [f] = _deep(snap)
    assert f.id == "import-torch-npu-failed" and "No module named 'torch'" in f.title and "not installed" not in f.title


def test_mindspeed_on_pythonpath_without_a_distribution_reports_its_own_import_error():
    """verl's Ascend install guide puts MindSpeed on PYTHONPATH
    (`export PYTHONPATH=$PYTHONPATH:/your/path/MindSpeed`, docs/ascend_tutorial/get_start/install_guidance.rst of
    v0.9.0) without installing it: no mindspeed distribution, but the probe finds the package. Real run, MindSpeed
    v2.3.0_core_r0.12.1 on PYTHONPATH of an empty venv: `import mindspeed.megatron_adaptor` fails on
    `No module named 'torch'`, and the report said "mindspeed is not installed", hiding the cause."""
    snap = bare(complete=True, python=_PY, packages={"verl": {"version": "0.9.1"}},
                modules={"mindspeed": {"origins": ["/src/MindSpeed/mindspeed"], "kind": "package"},
                         "torch_npu": None, "vllm_ascend": None},
                imports={"mindspeed.megatron_adaptor": {"ok": False,
                                                        "error": "ModuleNotFoundError: No module named 'torch'"}})
    [f] = _deep(snap)
    assert f.id == "import-mindspeed-failed" and "No module named 'torch'" in f.title
    assert "not installed" not in f.title
    # its fix names the interpreter the import ran in, not whichever `python` is first on PATH
    assert "/home/u/.venv/bin/python -c 'import mindspeed.megatron_adaptor'" in f.fix.text


def test_the_doctors_own_venv_is_said_once_by_the_deep_finding():
    """README's install, then `doctor check --deep`: target-holds-no-stack (a warning) and three import errors said
    one thing four times. The import finding says that the interpreter is the doctor's own, with its fix; the
    warning stands down (skip, naming it), and speaks again when that finding is waived."""
    snap = bare(complete=True, python=_PY, packages=_DOCTOR, imports=_NOT_THERE)
    r = diagnose_dict(snap)
    ids = [f.id for f in r.findings]
    assert "target-holds-no-stack" not in ids and ids.count("import-not-installed") == 1
    [f] = [f for f in r.findings if f.id == "import-not-installed"]
    assert f.title.startswith("/home/u/.venv/bin/python holds the doctor and none of the training stack")
    assert "`doctor collect --deep --python PY -o FILE`" in f.fix.text
    assert "doctor install --venv DIR --dry-run" in f.fix.text
    [c] = [c for c in r.checks if c.id == "target-interpreter"]
    assert c.status.value == "skip" and "import-not-installed" in c.reason
    assert r.exit_code() == 1
    waived = diagnose_dict(snap, ignore=("import-not-installed",))
    assert [f.id for f in waived.findings] == ["target-holds-no-stack"]
    # without --deep nothing changes
    shallow = {k: v for k, v in snap.items() if k != "imports"}
    assert [f.id for f in diagnose_dict(shallow).findings] == ["target-holds-no-stack"]


def test_a_waived_modules_own_id_leaves_it_out_of_the_one_finding():
    """A pyproject that ignores `import-mindspeed-failed` (an FSDP-only environment without MindSpeed) kept it
    quiet when MindSpeed was not installed: it still does."""
    snap = bare(complete=True, python=_PY, packages={"verl": {"version": "0.9.1"}}, imports=_NOT_THERE)
    [f] = _deep(snap, ignore=("import-mindspeed-failed",))
    assert f.id == "import-not-installed"
    assert sorted(f.evidence["modules"]) == ["torch_npu", "vllm_ascend"] and "mindspeed" not in f.title


def test_the_install_line_for_an_interpreter_the_os_manages_makes_a_venv_from_it():
    """`doctor check --deep --python /usr/bin/python3` on Debian (real run, 2026-12-07): the fix said `doctor install
    --python /usr/bin/python3`, which install refuses (PEP 668: EXTERNALLY-MANAGED), naming the venv line instead.
    The line is install's own (torch-not-installed's too): a venv made from that python."""
    snap = bare(complete=True, packages={"pip": {"version": "23.0.1"}}, imports=_NOT_THERE,
                python={"executable": "/usr/bin/python3", "version": "3.11.2", "externally_managed": True})
    [f] = _deep(snap)
    assert f.fix.commands == ("doctor install --dry-run --venv verl-venv --python /usr/bin/python3",)
    assert "doctor install --python" not in f.fix.text and "the OS manages it" in f.fix.text
