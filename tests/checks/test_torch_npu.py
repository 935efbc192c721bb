from tests.stacks import bare, diagnose_dict, found, healthy


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
    del d["packages"]["torch-npu"]["version"]  # a torch-npu whose release (and so its x86_64 pin) is not stated
    assert found(d)["torch-not-cpu-build-x86"] == "warning"
    d["packages"]["nvidia-cublas-cu12"] = {"version": "12.8.4.1"}
    assert found(d)["torch-not-cpu-build-x86"] == "error"


def test_x86_torch_without_cpu_label_is_an_error_beside_a_torch_npu_whose_x86_wheel_pins_the_cpu_build():
    """torch-npu's x86_64 wheels from 2.1.0.post3 to 2.11.0.post3 declare Requires-Dist torch==<release>+cpu (their
    PyPI METADATA, every release read); 2.12.0 and later declare the plain release (`torch==2.12.0`). Beside such a
    torch-npu a torch without +cpu fails pip check and cannot be installed with it from PyPI: an error. A torch-npu
    release outside that set (a later one, a local build) keeps the warning."""
    from tests.stacks import diagnose_dict

    def said(tn: str, torch: str) -> list:
        d = bare(host={"arch": "x86_64"}, packages={"torch": {"version": torch}, "torch-npu": {"version": tn}})
        return [f for f in diagnose_dict(d).findings if f.id == "torch-not-cpu-build-x86"]

    (f,) = said("2.6.0", "2.6.0")
    assert f.severity.value == "error" and f.components[0] == "torch"
    assert "torch==2.6.0+cpu" in f.detail and "pip check" in f.detail
    assert f.evidence["declares"] == "torch==2.6.0+cpu" and "pypi.org/project/torch-npu/2.6.0/" in f.source
    assert said("2.1.0.post3", "2.1.0")[0].severity.value == "error"
    assert said("2.11.0.post3", "2.11.0")[0].severity.value == "error"
    assert said("2.12.0", "2.12.0")[0].severity.value == "warning"
    assert said("2.9.0.post1+git4c901a4", "2.9.0")[0].severity.value == "warning"
    assert not said("2.6.0", "2.6.0+cpu")


def _x86_cpu_pin_findings(tn: str, torch: str, python: str | None = None) -> list:
    from tests.stacks import diagnose_dict

    d = bare(host={"arch": "x86_64"}, packages={"torch": {"version": torch}, "torch-npu": {"version": tn}})
    if python:
        d["python"] = {"version": python}
    return [f for f in diagnose_dict(d).findings if f.id == "torch-not-cpu-build-x86"]


def test_x86_torch_npu_pins_are_read_from_the_x86_64_wheels_declaration_in_the_requirements_table():
    """The pin comes from the table's `machines` row (what torch-npu's x86_64 wheels declare), not a hand list:
    2.12.0's x86_64 wheels declare the plain torch==2.12.0 (a warning that names it, since that torch meets it);
    2.11.0.post3's torch==2.11.0+cpu (an error citing the x86_64 wheel it was read from)."""
    (f,) = _x86_cpu_pin_findings("2.12.0", "2.12.0", "3.11.7")
    assert f.severity.value == "warning"
    assert f.evidence["declares"] == "torch==2.12.0" and "which this torch meets" in f.detail
    (f,) = _x86_cpu_pin_findings("2.11.0.post3", "2.11.0", "3.11.7")
    assert f.severity.value == "error" and f.evidence["declares"] == "torch==2.11.0+cpu"
    assert "#torch_npu-2.11.0.post3-cp311-cp311-manylinux_2_28_x86_64.whl" in f.source


def test_a_live_torch_npu_is_judged_by_its_installed_metadata_pin():
    """A live snapshot lists the installed METADATA: its torch pin is the one pip check reads, whatever the release."""
    from tests.stacks import diagnose_dict

    def said(declares: list) -> list:
        d = bare(host={"arch": "x86_64"}, packages={"torch": {"version": "2.9.0"},
                                                    "torch-npu": {"requires_dist": declares}})
        return [f for f in diagnose_dict(d).findings if f.id == "torch-not-cpu-build-x86"]

    (f,) = said(["torch==2.9.0+cpu", "numpy"])
    assert f.severity.value == "error" and "torch-npu's METADATA" in f.detail
    assert said(["numpy"])[0].severity.value == "warning"


def test_a_torch_npu_release_a_later_refresh_adds_is_judged_by_its_x86_64_wheels_declaration(monkeypatch):
    """A release no hand list ever held (as a refresh would add it: its aarch64 row, and `machines` for x86_64)."""
    from doctor.knowledge import requirements as req

    page = "https://pypi.org/project/torch-npu/2.15.0/"
    row = req.Declared(None, ("torch==2.15.0", "numpy"), page + "#torch_npu-2.15.0-cp311-cp311-manylinux_2_28_aarch64.whl",
                       machines=(req.MachineDeclaration("x86_64", None, ("torch==2.15.0+cpu", "numpy"),
                                                        ("torch_npu-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl",)),))
    real = req.declared
    monkeypatch.setattr(req, "declared", lambda p, v: row if (p, v) == ("torch-npu", "2.15.0") else real(p, v))
    (f,) = _x86_cpu_pin_findings("2.15.0", "2.15.0")
    assert f.severity.value == "error" and f.evidence["declares"] == "torch==2.15.0+cpu"
    assert page + "#torch_npu-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl" in f.source
    assert not _x86_cpu_pin_findings("2.15.0", "2.15.0+cpu")


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


def _torchvision_findings(torch: str, torchvision: str, tv_module: str | None, torch_cuda: object = None) -> list:
    """torchvision-torch-mismatch of a partial snapshot: the distributions' versions, and what the probe read from
    torchvision/version.py and torch/version.py (its `build`)."""
    from tests.stacks import diagnose_dict

    modules = {"torch": {"version": torch, "build": {"cuda": torch_cuda, "hip": None}}}
    if tv_module is not None:
        modules["torchvision"] = {"version": tv_module}
    d = bare(host={"arch": "x86_64"}, packages={"torch": {"version": torch}, "torchvision": {"version": torchvision}},
             modules=modules)
    return [f for f in diagnose_dict(d).findings if f.id == "torchvision-torch-mismatch"]


def test_pypis_cuda_torchvision_beside_a_cpu_torch_is_an_error():
    """vLLM 0.30.0 pins torch==2.13.0, which a torch 2.13.0+cpu satisfies; pip then takes PyPI's torchvision 0.28.0,
    whose version.py says 0.28.0+cu130 and whose _C.so links libc10_cuda.so: `import torchvision` and `from vllm
    import LLM` fail with `operator torchvision::nms does not exist` (the real venv: tests/realworld)."""
    (f,) = _torchvision_findings("2.13.0+cpu", "0.28.0", "0.28.0+cu130")
    assert (f.severity.value, f.evidence["torchvision_build"]) == ("error", "0.28.0+cu130")
    assert "torchvision==0.28.0+cpu" in f.fix.text and "operator torchvision::nms does not exist" in f.detail
    # a torch whose version file names no CUDA, without the +cpu label (a source build): the same
    (f,) = _torchvision_findings("2.13.0", "0.28.0", "0.28.0+cu130")
    assert f.severity.value == "error"
    # before 0.17 `import torchvision` works (its meta registrations wait for the ops): a warning
    (f,) = _torchvision_findings("2.0.1+cpu", "0.15.2", "0.15.2+cu117")
    assert f.severity.value == "warning" and "first call" in f.detail


def test_a_torchvision_that_matches_its_torch_build_is_no_finding():
    assert _torchvision_findings("2.13.0+cpu", "0.28.0+cpu", "0.28.0+cpu") == []
    assert _torchvision_findings("2.13.0", "0.28.0", "0.28.0+cu130", torch_cuda="13.0") == []
    # the version file not read: a plain 0.28.0 says nothing of its build
    assert _torchvision_findings("2.13.0+cpu", "0.28.0", None) == []


def test_pypis_cuda_torchaudio_beside_a_cpu_torch_is_an_error():
    """vLLM 0.30.0 pins torchaudio==2.11.0 (its version.py: 2.11.0+cu130); beside torch 2.13.0+cpu `import
    torchaudio` raises `OSError: Could not load this library`, and so does `from vllm import LLM`."""
    from tests.stacks import diagnose_dict

    def got(torch: str, audio_module: str | None) -> list:
        d = bare(host={"arch": "x86_64"}, packages={"torch": {"version": torch}, "torchaudio": {"version": "2.11.0"}},
                 modules={"torch": {"version": torch}} | ({"torchaudio": {"version": audio_module}} if audio_module else {}))
        return [f for f in diagnose_dict(d).findings if f.id == "torchaudio-torch-mismatch"]

    (f,) = got("2.13.0+cpu", "2.11.0+cu130")
    assert (f.severity.value, f.evidence["torchaudio_build"]) == ("error", "2.11.0+cu130")
    assert "torchaudio==2.11.0+cpu" in f.fix.text and "Could not load this library" in f.detail
    assert got("2.13.0+cu130", "2.11.0+cu130") == [] and got("2.13.0+cpu", "2.11.0+cpu") == []
    assert got("2.13.0+cpu", None) == []


def _soc_findings(packages: dict, device: dict) -> list:
    """`doctor check` on a report-shaped snapshot (the real snapshot model): the torch-npu SoC findings."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    doc = {"schema": "doctor.snapshot/1", "python": {"version": "3.10"}, "packages": packages,
           "ascend": {"devices": [{"id": 0, **device}]}}
    return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings if f.id == "torch-npu-soc-unsupported"]


def test_a_torch_npu_release_whose_soc_table_lacks_the_device_soc_is_an_error():
    """torch_npu's socVersionMap (NpuVariables.cpp) at each release tag: 2.1.0.post4 (v5.0.1.2) has no Ascend310B4,
    which 2.1.0.post3 (v6.0.rc1) and every 2.1.0 release from post5 have; 2.4.0 (v6.0.rc3) lists Ascend910_9361, not
    the Ascend910_9362 of 2.5.1 (v7.0.0); any Ascend950* is accepted from TorchNPU 26.0.0 (2.7.1.post4), not before.
    A name the table lacks raises `Unsupported soc version: <soc>` at the first device call."""
    (f,) = _soc_findings({"torch-npu": {"version": "2.1.0.post4"}}, {"soc": "Ascend310B4"})
    assert f.severity.value == "error" and f.components == ("torch-npu", "npu")
    assert f.title == "torch-npu 2.1.0.post4 does not support this device's SoC, Ascend310B4"
    assert "Unsupported soc version: Ascend310B4" in f.detail and "2.1.0.post18" in f.fix.text
    assert f.source == "https://github.com/Ascend/pytorch/blob/v5.0.1.2-pytorch2.1.0/torch_npu/csrc/core/npu/NpuVariables.cpp"
    assert _soc_findings({"torch-npu": {"version": "2.4.0"}}, {"soc": "Ascend910_9362"})
    assert _soc_findings({"torch-npu": {"version": "2.7.1.post3"}}, {"soc": "Ascend950PR_9579"})
    for ok in (("2.1.0.post3", "Ascend310B4"), ("2.1.0.post5", "Ascend310B4"), ("2.5.1", "Ascend910_9362"),
               ("2.7.1.post4", "Ascend950PR_9579"), ("2.8.0", "Ascend910B3"), ("2.12.0", "Ascend310P3")):
        assert not _soc_findings({"torch-npu": {"version": ok[0]}}, {"soc": ok[1]}), ok


def test_the_1_11_line_raises_from_its_device_initialisation():
    """In the 1.11.0 line SetSocVersion returns false and NpuSysCtrl::Initialize raises the same message: the finding
    cites both files at the tag. An npu-smi chip name ('310B4') stands for CANN's 'Ascend' + name."""
    (f,) = _soc_findings({"torch-npu": {"version": "1.11.0.post7"}}, {"chip": "310B4"})
    assert "v5.0.rc3.3-pytorch1.11.0/torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp" in f.source
    assert not _soc_findings({"torch-npu": {"version": "1.11.0.post11"}}, {"chip": "310B4"})


def test_a_version_between_rows_is_judged_only_where_they_agree_and_newer_ones_not_at_all():
    """2.1.0.post9 (no tag) lies between post8 and post10, which both accept Ascend910_9361 and lack Ascend310P5;
    2.9.0.post1+git4c901a4 (vllm-ascend's build) lies between post1 (no Ascend950 prefix) and post2 (prefix): judged
    for a 910B3, not for a 950. A release newer than the rows (2.12.0.post2), a dev build and an unread line are not
    judged."""
    assert _soc_findings({"torch-npu": {"version": "2.1.0.post9"}}, {"soc": "Ascend310P5"})
    assert not _soc_findings({"torch-npu": {"version": "2.1.0.post9"}}, {"soc": "Ascend910_9361"})
    assert not _soc_findings({"torch-npu": {"version": "2.9.0.post1+git4c901a4"}}, {"soc": "Ascend950PR_9579"})
    assert not _soc_findings({"torch-npu": {"version": "2.9.0.post1+git4c901a4"}}, {"soc": "Ascend910B3"})
    for v in ("2.12.0.post2", "2.14.0", "2.5.1.dev20250218", "2.0.0"):
        assert not _soc_findings({"torch-npu": {"version": v}}, {"soc": "Ascend910_9363"}), v


def test_torch_npu_named_without_its_version_is_an_error_only_when_no_release_accepts_the_soc():
    """A report that names torch-npu but not its release (Ascend/pytorch#57: Ascend310B4, `Unsupported soc version`)
    gets a warning naming the releases that refuse the SoC when others accept it, since the reporter's may be either;
    a SoC no release read accepts is an error, narrowed to torch's line when torch's version is known. A name the
    26.2.0 beta tags add (Ascend910_9363) is not called unsupported: the releases after the rows may have it."""
    (f,) = _soc_findings({"torch-npu": {}}, {"soc": "Ascend310B4"})
    assert f.severity.value == "warning" and f.components == ("torch-npu", "npu")
    assert "2.1.0.rc1 ... 2.1.0.post2, 2.1.0.post4 lacks Ascend310B4" in f.detail
    assert f.evidence["refused_by"][-1] == ["2.1.0.post4", "2.1.0.post4"]
    assert not _soc_findings({"torch-npu": {}, "torch": {"version": "2.5.1"}}, {"soc": "Ascend310B4"})
    assert not _soc_findings({"torch-npu": {}}, {"soc": "Ascend910B3"})
    (f,) = _soc_findings({"torch-npu": {}}, {"soc": "Ascend910_9399"})
    assert f.severity.value == "error" and "no torch-npu release read" in f.title
    (f,) = _soc_findings({"torch-npu": {}, "torch": {"version": "2.1.0"}}, {"soc": "Ascend950PR_9579"})
    assert "torch-npu 2.1.0 release" in f.title
    assert _soc_findings({"torch-npu": {}, "torch": {"version": "2.7.1"}}, {"soc": "Ascend950PR_9579"})[0].severity.value == "warning"
    assert not _soc_findings({"torch-npu": {}}, {"soc": "Ascend910_9363"})
    assert not _soc_findings({"torch": {"version": "2.1.0"}}, {"soc": "Ascend910_9399"})  # torch-npu not named


def test_an_unknown_or_ambiguous_soc_fact_is_silent():
    """No SoC, a bare 'Ascend910' (driver 24.1 prints it for A3 chips), or a chip name no torch_npu table spells
    ('910C', '910') is no fact to judge."""
    for device in ({}, {"soc": "Ascend910"}, {"chip": "910C"}, {"chip": "910"}, {"chip": "Ascend910"}):
        assert not _soc_findings({"torch-npu": {"version": "2.1.0.post4"}}, device), device
        assert not _soc_findings({"torch-npu": {}}, device), device


def test_check_from_a_report_names_the_refused_soc(tmp_path):
    """`doctor check --from` on a report's facts: exit 1 and the finding in the JSON."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    f = tmp_path / "report.json"
    f.write_text(json.dumps({"schema": "doctor.snapshot/1", "packages": {"torch-npu": {"version": "2.1.0.post4"}},
                             "ascend": {"devices": [{"id": 0, "chip": "310B4"}]}}))
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(f)], cwd=root,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    assert r.returncode == 1, r.stderr
    (x,) = [x for x in json.loads(r.stdout)["findings"] if x["id"] == "torch-npu-soc-unsupported"]
    assert x["severity"] == "error" and x["evidence"]["soc"] == "Ascend310B4"


def test_torch_missing_beside_verl_is_an_error_on_any_host():
    """No verl release requires torch outside an extra: pip installs verl without it, and `import verl` fails. Off an
    NPU host only torch is asked for (torch-npu is the NPU's), and only where verl is installed."""
    d = bare(complete=True, packages={"verl": {"version": "0.9.1"}})
    got = found(d)
    assert got["torch-not-installed"] == "error" and "torch-npu-not-installed" not in got
    d["packages"]["torch"] = {"version": "2.9.0"}
    assert "torch-not-installed" not in found(d)
    assert "torch-not-installed" not in found(bare(complete=True, packages={"numpy": {"version": "1.26.4"}}))
    assert "torch-not-installed" not in found(bare(packages={"verl": {"version": "0.9.1"}}))  # partial: not absent
    sick = healthy()
    del sick["packages"]["torch-npu"]
    assert found(sick)["torch-npu-not-installed"] == "error"


def test_torch_not_installed_names_the_interpreter_examined():
    """`doctor check --python /tmp/v/bin/python` on a venv holding PyPI's verl 0.9.1 alone (real run, 2026-12-07)
    said "torch is not installed in this Python environment": from a login node's doctor venv, "this" reads as the
    doctor's own. The title names the interpreter examined when the snapshot records it."""
    d = bare(complete=True, packages={"verl": {"version": "0.9.1"}},
             python={"executable": "/tmp/v/bin/python", "version": "3.11.7"})
    [f] = [f for f in diagnose_dict(d).findings if f.id == "torch-not-installed"]
    assert f.title == "torch is not installed in /tmp/v/bin/python"
    del d["python"]
    [f] = [f for f in diagnose_dict(d).findings if f.id == "torch-not-installed"]
    assert f.title == "torch is not installed in this Python environment"


def test_the_fixes_for_a_mismatched_torch_install_the_release_torch_npu_is_built_for():
    """torch 2.1.0 beside torch-npu 2.4.0 on x86_64: every fix names torch 2.4.0's +cpu build, none torch 2.1.0's;
    the mismatch finding gives the pip line for the machine (PyTorch's CPU index on x86_64, PyPI on aarch64)."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def fixes(arch: str, torch: str = "2.1.0") -> dict[str, str]:
        doc = {"schema": "doctor.snapshot/1", "host": {"arch": arch},
               "packages": {"torch": {"version": torch}, "torch-npu": {"version": "2.4.0"}}}
        r = diagnose([(None, snapshot_from_dict(doc), None)])
        return {f.id: f"{f.fix} {' '.join(f.fix.commands)}" for f in r.findings if f.id.startswith("torch")}

    x86 = fixes("x86_64")
    assert "--index-url https://download.pytorch.org/whl/cpu 'torch==2.4.0+cpu'" in x86["torch-npu-torch-mismatch"]
    assert "torch==2.4.0+cpu" in x86["torch-not-cpu-build-x86"]
    assert not any("2.1.0+cpu" in f or "torch==2.1.0" in f for f in x86.values()), x86
    assert "pip install 'torch==2.4.0'" in fixes("aarch64")["torch-npu-torch-mismatch"]
    assert "torch==2.4.0" in fixes("x86_64", "2.1.0+cu121")["torch-cuda-build"]


def test_a_cpu_pin_unmet_only_in_its_local_label_is_one_error_not_two():
    """torch-npu's x86_64 `torch==X+cpu` beside torch X: declared-requirements and torch-cuda-build saw the same fact
    and gave two errors, the first with a PyPI pip line that cannot install a +cpu build. One finding says it, with
    the PyTorch CPU index; waive it and the declared requirement speaks again."""
    from tests.stacks import diagnose_dict

    d = bare(host={"arch": "x86_64"}, packages={"torch": {"version": "2.9.0"},
                                                "torch-npu": {"version": "2.9.0", "requires_dist": ["torch==2.9.0+cpu"]}})
    errors = [f for f in diagnose_dict(d).findings if f.severity.value == "error"]
    assert [f.id for f in errors] == ["torch-not-cpu-build-x86"], [f.title for f in errors]
    assert "--index-url https://download.pytorch.org/whl/cpu" in errors[0].fix.text
    waived = diagnose_dict(d, ignore=("torch-not-cpu-build-x86",)).findings
    assert [f.id for f in waived if f.severity.value == "error"] == ["requirement-version-unmet"]
