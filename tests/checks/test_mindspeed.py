from typing import Any

from tests.stacks import CHIP_ROWS, bare, found, healthy


def test_branch_vs_megatron():
    d = healthy()
    d["modules"]["megatron"]["version"] = "0.16.1"
    d["packages"]["megatron-core"]["version"] = "0.16.1"
    assert found(d)["mindspeed-megatron-mismatch"] == "error"


def test_patch_release_untested_is_warning():
    d = healthy()
    d["modules"]["megatron"]["version"] = "0.12.3"
    assert found(d)["mindspeed-megatron-patch-untested"] == "warning"


def test_no_repatch():
    d = healthy()
    d["modules"]["mindspeed"]["features"] = {"repatch": False}
    assert found(d)["mindspeed-no-repatch"] == "error"


def test_two_megatrons():
    d = bare(modules={"megatron": {"origins": ["/Megatron-LM/megatron", "/usr/lib/python3.11/site-packages/megatron"]}})
    assert found(d)["megatron-multiple-copies"] == "error"


def test_nvidia_te_next_to_mindspeed():
    d = healthy()
    d["packages"]["transformer-engine"] = {"version": "2.4.0"}
    d["modules"]["transformer_engine"] = {"origins": ["/opt/venv/lib/python3.11/site-packages/transformer_engine"]}
    assert found(d)["transformer-engine-with-mindspeed"] == "error"


def test_core_r017_needs_te_npu():
    d = healthy()
    d["modules"]["mindspeed"]["git"]["branch"] = "core_r0.17.0"
    d["modules"]["megatron"]["version"] = "0.17.1"
    assert found(d)["transformer-engine-npu-missing"] == "error"


def test_placeholder_and_missing_megatron():
    assert found(bare(packages={"mindspeed": {"version": "0.0.1.dev1"}}))["mindspeed-pypi-placeholder"] == "error"
    d = healthy()
    d["modules"]["megatron"] = None
    assert found(d)["mindspeed-megatron-missing"] == "error"


def test_off_profile_refs():
    d = healthy()  # 0.7.1 documents 2.3.0_core_r0.12.1
    d["modules"]["mindspeed"]["git"]["branch"] = "core_r0.16.0"
    d["modules"]["megatron"]["version"] = "0.16.0"
    f = found(d, forced="verl-0.7.1-cann8.5.0-a2")
    assert f["mindspeed-off-profile"] == "warning" and f["megatron-off-profile"] == "warning"


def test_a_megatron_trainer_without_verl_is_not_held_to_verls_refs():
    """ms-swift v4.1.0-v4.2.3's NPU guide installs Megatron-LM v0.15.3 + MindSpeed core_r0.15.3 on CANN 8.5.1: with
    ms-swift and no verl, the verl profile chosen for that CANN (0.7.1: 2.3.0_core_r0.12.1 + core_v0.12.1) says
    nothing about them. With verl installed beside ms-swift the refs are verl's again."""
    d = bare(python={"version": "3.11.9", "implementation": "CPython"}, host={"arch": "aarch64"},
             packages={k: {"version": v} for k, v in {"ms-swift": "4.2.3", "torch": "2.7.1", "torch-npu": "2.7.1.post2",
                                                      "mindspeed": "0.15.3", "megatron-core": "0.15.3"}.items()},
             modules={"mindspeed": {"version": "0.15.3", "origins": ["/MindSpeed/mindspeed"],
                                    "git": {"branch": "core_r0.15.3"}},
                      "megatron": {"version": "0.15.3", "origins": ["/Megatron-LM/megatron"]}},
             ascend={"toolkit": {"version": "8.5.1"}, "devices": CHIP_ROWS["A2"]})
    got = found(d)
    assert "mindspeed-off-profile" not in got and "megatron-off-profile" not in got, got
    d["packages"]["verl"] = {"version": "0.7.1"}
    got = found(d)
    assert got.get("mindspeed-off-profile") == "warning" and got.get("megatron-off-profile") == "warning", got


def _ms(branch: str | None, reports: str, megatron: str) -> dict:
    d = healthy("verl-0.8.0-cann9.0.0-a2")
    d["modules"]["mindspeed"]["git"]["branch"] = branch
    d["packages"]["mindspeed"]["version"] = reports
    d["modules"]["megatron"]["version"] = d["packages"]["megatron-core"]["version"] = megatron
    return d


def test_core_r018_pairs_with_megatron_0171_as_its_readme_says():
    """MindSpeed core_r0.17.0 / core_r0.18.0 READMEs name Megatron-LM 0.17.1 (and still report 0.12.1)."""
    from tests.stacks import diagnose_dict

    for branch in ("core_r0.17.0", "core_r0.18.0"):
        assert "mindspeed-megatron-mismatch" not in found(_ms(branch, "0.12.1", "0.17.1"))
    d = _ms("core_r0.18.0", "0.12.1", "0.18.0")
    f = next(x for x in diagnose_dict(d).findings if x.id == "mindspeed-megatron-mismatch")
    assert f.severity.value == "error" and "core_v0.17.1" in f.fix.text and "core_r0.18" not in f.fix.text
    assert f.source.startswith("https://github.com/Ascend/MindSpeed/blob/4213c913")


def test_reported_version_alone_accepts_every_branch_that_reports_it():
    """Without a branch, MindSpeed 0.12.1 may be a *_core_r0.12.1 branch or core_r0.17/0.18: neither Megatron is wrong."""
    for megatron in ("0.12.1", "0.17.1"):
        assert "mindspeed-megatron-mismatch" not in found(_ms(None, "0.12.1", megatron))
    assert found(_ms(None, "0.12.1", "0.16.2"))["mindspeed-megatron-mismatch"] == "error"


def test_mindspeed_llm_is_judged_against_its_pairing_table():
    """MindSpeed-LLM's table (README at 2.3.0; release notes on master): 2.2.0 / 2.3.0 / the 26.x branches (which
    report 26.0.0dev0) pair with Megatron core_v0.12.1, MindSpeed X_core_r0.12.1, PyTorch 2.7.1 and CANN 8.3.RC1 /
    8.5.0 / 8.3 to 9.1. Another Megatron line is an error (MindSpeed's patch manager patches by name); another MindSpeed
    branch, CANN series or PyTorch a warning; a MindSpeed-LLM reporting 0.0.1 (2.1.0 and older) is not judged."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(llm: str, megatron: str | None = None, cann: str | None = None, torch: str | None = None,
            ms_branch: str | None = None) -> dict:
        pkgs: dict = {"mindspeed-llm": {"version": llm}}
        if megatron:
            pkgs["megatron-core"] = {"version": megatron}
        if torch:
            pkgs["torch"] = {"version": torch}
        doc: dict = {"schema": "doctor.snapshot/1", "packages": pkgs}
        if ms_branch:
            pkgs["mindspeed"] = {"version": "0.12.1"}
            doc["modules"] = {"mindspeed": {"version": "0.12.1", "git": {"branch": ms_branch}}}
        if cann:
            doc["ascend"] = {"toolkit": {"version": cann}}
        fs = diagnose([(None, snapshot_from_dict(doc), None)]).findings
        return {f.id: f for f in fs if f.id.startswith("mindspeed-llm-")}

    f = run("2.3.0", megatron="0.8.0")["mindspeed-llm-megatron-mismatch"]
    assert f.severity.value == "error" and f.components == ("megatron", "mindspeed") and "core_v0.12.1" in f.fix.text
    assert "MindSpeed-LLM/blob/" in f.source and "patch_utils" in f.source
    assert not run("2.3.0", megatron="0.12.1") and not run("26.0.0dev0", megatron="0.12.0")
    w = run("2.3.0", cann="9.0.0", torch="2.6.0", ms_branch="2.2.0_core_r0.12.1")
    assert set(w) == {"mindspeed-llm-cann-pairing", "mindspeed-llm-torch-pairing", "mindspeed-llm-mindspeed-mismatch"}
    assert all(x.severity.value == "warning" for x in w.values())
    assert "mindspeed-llm-mindspeed-mismatch" in run("2.2.0", ms_branch="core_r0.16.0")
    assert not run("2.3.0", cann="8.5.0", torch="2.7.1+cpu", ms_branch="2.3.0_core_r0.12.1")
    assert not run("26.0.0dev0", cann="9.1.0", ms_branch="26.1.0_core_r0.12.1")
    assert not run("0.0.1", megatron="0.16.0", cann="7.0.0")


def test_mindspeed_llm_runs_on_every_cann_its_compatibility_table_pairs_it_with():
    """MindSpeed-LLM's release notes at v26.0.0, table 3: 2.3.0 pairs ("Y") with CANN 8.5.0, 8.3.RC1, 8.2.RC1, 8.1.RC1
    and 8.0.0; 2.2.0 with 8.3.RC1 down to 8.0.RC2 (compared by series). Those are documented stacks (no warning); a CANN
    off the table (2.2.0 on 8.5.0, which only 2.3.0 lists; 2.3.0 on 7.0.0 or 9.0.0) is still a warning citing it."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def cann_finding(llm: str, cann: str) -> Any:
        doc = {"schema": "doctor.snapshot/1", "packages": {"mindspeed-llm": {"version": llm}},
               "ascend": {"toolkit": {"version": cann}}}
        return next((f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                     if f.id == "mindspeed-llm-cann-pairing"), None)

    for cann in ("8.5.0", "8.3.RC1", "8.2.RC1", "8.1.RC1", "8.0.0"):
        assert cann_finding("2.3.0", cann) is None, cann
    for cann in ("8.3.RC1", "8.2.RC1", "8.1.RC1", "8.0.0", "8.0.RC3", "8.0.RC2"):
        assert cann_finding("2.2.0", cann) is None, cann
    for llm, cann in (("2.2.0", "8.5.0"), ("2.3.0", "7.0.0"), ("2.3.0", "9.0.0")):
        f = cann_finding(llm, cann)
        assert f is not None and f.severity.value == "warning", (llm, cann)
        assert "57c33296592ed12f59396e59461a5bd8d0d589d0/docs/zh/release_notes_llm.md" in f.source


def test_a_mindspeed_branch_next_to_a_cann_its_compatibility_table_marks_unpairable():
    """MindSpeed's release_notes_core.md: 26.0.0_core_r0.12.1 with CANN 9.1.0 or TorchNPU 26.1.0 is "/" (cannot be
    paired); 26.1.0_core_r0.12.1 pairs with both. A warning naming what is off; other branches are not judged."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(branch: str, cann: str | None = None, torch_npu: str | None = None) -> list:
        pkgs: dict = {"mindspeed": {"version": "0.12.1"}}
        if torch_npu:
            pkgs["torch-npu"] = {"version": torch_npu}
        doc: dict = {"schema": "doctor.snapshot/1", "packages": pkgs,
                     "modules": {"mindspeed": {"version": "0.12.1", "git": {"branch": branch}}}}
        if cann:
            doc["ascend"] = {"toolkit": {"version": cann}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings if f.id == "mindspeed-cann-unpaired"]

    (f,) = run("26.0.0_core_r0.12.1", cann="9.1.0")
    assert f.severity.value == "warning" and f.components == ("mindspeed", "cann") and "release_notes_core.md" in f.source
    (g,) = run("26.0.0_core_r0.12.1", torch_npu="2.7.1.post8")  # 2.7.1.post8 is TorchNPU 26.1.0 (CANN 9.1.0)
    assert g.components == ("mindspeed", "torch-npu") and "26.1.0" in g.title
    assert not run("26.0.0_core_r0.12.1", cann="9.0.0", torch_npu="2.7.1.post4")
    assert not run("26.1.0_core_r0.12.1", cann="9.1.0") and not run("2.3.0_core_r0.12.1", cann="9.1.0")


def _without_megatron(name: str, mindspeed: bool = False) -> dict:
    """The healthy stack `name` with Megatron gone: no megatron-core, and the probe found no `megatron` on the path."""
    d = healthy(name)
    del d["packages"]["megatron-core"]
    del d["modules"]["megatron"]
    if not mindspeed:
        d["packages"].pop("mindspeed", None)
        d["modules"].pop("mindspeed", None)
    return d


def test_megatron_missing_on_a_megatron_stack_is_an_error_whatever_verl_declares():
    """verl 0.7.1 declares no megatron-core (only mbridge under [mcore]), 0.9.1 only under its [megatron] and [cpu]
    extras: neither declaration says Megatron is missing, and without MindSpeed nothing did. Every stack documents
    Megatron-LM for verl's megatron strategy: a missing one is an error with the clone at the stack's commit."""
    from tests.stacks import diagnose_dict

    for name in ("verl-0.6.1-cann8.2.rc1-a2", "verl-0.7.1-cann8.5.0-a2", "verl-0.9.1-cann9.1.0-a3"):
        (f,) = [f for f in diagnose_dict(_without_megatron(name)).findings if f.id == "megatron-missing"]
        assert f.severity.value == "error" and f.components[0] == "megatron", name
        assert "verl/models/mcore/config_converter.py:25" in f.detail, name
        # only the pinned commit is fetched (tests/installers/test_gitsrc.py runs these lines), and the text says
        # the directory stays: the editable install / PYTHONPATH reads it
        init, fetch, checkout, last = f.fix.commands
        assert init == "git init Megatron-LM", init
        assert fetch.startswith("git -C Megatron-LM fetch --depth 1 https://github.com/NVIDIA/Megatron-LM.git "), fetch
        assert len(fetch.split()[-1]) == 40 and fetch.split()[-1] in f.fix.text
        assert checkout == "git -C Megatron-LM checkout FETCH_HEAD"
        assert "not the whole history" in f.fix.text and "keep the Megatron-LM directory" in f.fix.text
        # 0.6.1's stack puts the checkout on PYTHONPATH; the others install it editable, --no-deps, with the
        # target's own pip
        if name.startswith("verl-0.6.1"):
            assert last == 'export PYTHONPATH="$PWD/Megatron-LM:$PYTHONPATH"'
        else:
            assert last == "/opt/venv/bin/python -m pip install --no-deps -e Megatron-LM", last


def test_megatron_missing_names_the_line_of_the_verl_checkout_the_stack_pins():
    """The 0.10.0.dev stacks build verl from main at 1dda039b9 (version 0.10.0.dev0, no release): with the commit
    its checkout's git facts give, the finding names the line of that commit that imports megatron at load, read
    from the import-surface table's source build; without it, the general sentence, as before."""
    from tests.stacks import diagnose_dict

    name = "verl-0.10.0.dev20260822-cann9.1.0-a2"
    d = _without_megatron(name)
    assert d["modules"]["verl"]["git"]["commit"] == "1dda039b9c6311889a9c9a26040677e1254814f9"
    (f,) = [f for f in diagnose_dict(d).findings if f.id == "megatron-missing"]
    assert f.severity.value == "error" and f.evidence["imported_at"] == "verl/models/mcore/config_converter.py:25"
    assert ("verl 0.10.0.dev0's modules import megatron at module level (verl/models/mcore/config_converter.py:25)"
            in f.detail and "(read from main, commit 1dda039b9)" in f.detail), f.detail
    del d["modules"]["verl"]  # a checkout whose git facts the probe could not read
    (g,) = [f for f in diagnose_dict(d).findings if f.id == "megatron-missing"]
    assert "imported_at" not in g.evidence and "megatron workers import megatron.core when they load" in g.detail


def test_megatron_from_a_checkout_or_beside_mindspeed_or_unknown_is_not_this_finding():
    from tests.stacks import diagnose_dict

    name = "verl-0.7.1-cann8.5.0-a2"
    checkout = _without_megatron(name)
    checkout["modules"]["megatron"] = {"origins": ["/opt/Megatron-LM/megatron"], "version": "0.12.1"}
    assert "megatron-missing" not in found(checkout)  # a Megatron-LM checkout on PYTHONPATH, no megatron-core
    assert "megatron-missing" not in found(healthy(name))
    beside = found(_without_megatron(name, mindspeed=True))
    assert beside.get("mindspeed-megatron-missing") == "error" and "megatron-missing" not in beside
    partial = _without_megatron(name)
    partial["complete"] = False
    assert "megatron-missing" not in found(partial)
    no_modules = _without_megatron(name)  # a snapshot of packages only: no megatron-core and no PYTHONPATH
    del no_modules["modules"]
    no_modules["env"] = {"PATH": "/usr/bin"}
    assert found(no_modules).get("megatron-missing") == "error"
    no_modules["env"]["PYTHONPATH"] = "/opt/src"  # may hold a checkout: not said
    assert "megatron-missing" not in found(no_modules)
    no_verl = _without_megatron(name)
    del no_verl["packages"]["verl"]
    assert "megatron-missing" not in {f.id for f in diagnose_dict(no_verl, forced=name).findings}


def test_a_mindspeed_that_imports_megatron_adaptor_needs_it_importable():
    """Real venv (Python 3.11.7): `pip install -e MindSpeed` at core_r0.17.0 without MegatronAdaptor, which its README
    installs first: `import mindspeed` raised ModuleNotFoundError: No module named 'megatron_adaptor' (its __init__.py
    imports it), and check said only that TransformerEngineNPU was missing. The fact is read from the file, so it holds
    when the branch is unknown too (the checkout's setup.py reports 0.12.1)."""
    d = healthy()
    d["modules"]["mindspeed"]["git"]["branch"] = None
    d["modules"]["mindspeed"]["features"] = {"repatch": True, "megatron_adaptor": True}
    d["modules"]["megatron_adaptor"] = None
    assert found(d)["megatron-adaptor-missing"] == "error"
    d["modules"]["megatron_adaptor"] = {"origins": ["/src/MegatronAdaptor/megatron_adaptor"]}
    assert "megatron-adaptor-missing" not in found(d)
    # a MindSpeed that does not import it, and a snapshot that does not say
    for feats in ({"repatch": True, "megatron_adaptor": False}, {"repatch": True}):
        d["modules"]["mindspeed"]["features"] = feats
        d["modules"]["megatron_adaptor"] = None
        assert "megatron-adaptor-missing" not in found(d)


def test_megatron_missing_beside_mindspeed_names_the_megatron_its_branch_documents():
    """Real venv (Python 3.11.7, MindSpeed core_r0.17.0 editable, Megatron-LM not installed): the fix said 'Clone
    Megatron-LM at the ref MindSpeed targets', naming none; the table knows the README's (core_r0.17.0: tag
    core_v0.17.1; 2.3.0_core_r0.12.1: core_v0.12.1)."""
    from tests.stacks import diagnose_dict

    for branch, ref in (("core_r0.17.0", "core_v0.17.1"), ("2.3.0_core_r0.12.1", "core_v0.12.1")):
        d = healthy()
        d["modules"]["mindspeed"]["git"]["branch"] = branch
        d["modules"]["megatron"] = None
        d["python"]["version"] = "3.12.1"  # Megatron-LM core_v0.17.1 requires >=3.12 (the next test)
        (f,) = [f for f in diagnose_dict(d).findings if f.id == "mindspeed-megatron-missing"]
        assert f.fix is not None and f.fix.commands[:3] == (
            "git init Megatron-LM", f"git -C Megatron-LM fetch --depth 1 https://github.com/NVIDIA/Megatron-LM.git {ref}",
            "git -C Megatron-LM checkout FETCH_HEAD")
        assert f.fix.commands[3].endswith("python -m pip install --no-deps -e Megatron-LM")  # the examined interpreter's
        assert f"Fetch Megatron-LM {ref}" in f.fix.text and f"branch {branch}" in f.fix.text


def test_megatron_missing_says_when_the_documented_megatron_refuses_this_python():
    """Real venv (Python 3.11.7): the printed `pip install --no-deps -e Megatron-LM` for MindSpeed core_r0.17.0's
    Megatron-LM core_v0.17.1, pasted, failed with "Package 'megatron-core' requires a different Python: 3.11.7 not in
    '>=3.12'" (its README names Python 3.10). The fix says so and prints no pip line then; on 3.12 it keeps it."""
    from tests.stacks import diagnose_dict

    for py, pip in (("3.11.7", False), ("3.12.1", True)):
        d = healthy()
        d["modules"]["mindspeed"]["git"]["branch"] = "core_r0.17.0"
        d["modules"]["megatron"] = None
        d["python"]["version"] = py
        (f,) = [f for f in diagnose_dict(d).findings if f.id == "mindspeed-megatron-missing"]
        assert f.fix is not None and len(f.fix.commands) == (4 if pip else 3)
        assert ("requires Python >=3.12 and this interpreter is 3.11.7" in f.fix.text) is not pip


def test_megatron_core_0_12_4_has_0_12_3s_checkpoint_writer_and_the_a5_stack_documents_the_pair():
    """0.12.4 is the core_r0.12.0 branch head (5cb6dbb: package_info.py set to 0.12.4 over core_v0.12.3, no other
    file), so its filesystem_async.py makes 0.12.3's _write_item call; no verl release patches it (0.12.1 only) nor
    does MindSpeed 0c6c0cea (preload_tensors only). verl's A5 guide documents it with torch 2.10.0: a known deviation
    of that stack (info), a warning elsewhere."""
    from tests.stacks import diagnose_dict

    d = bare(packages={"torch": {"version": "2.10.0"}, "megatron-core": {"version": "0.12.4"}, "verl": {"version": "0.9.0"}})
    (f,) = [f for f in diagnose_dict(d).findings if f.id == "megatron-ckpt-save-fails"]
    assert f.severity.value == "warning" and "5cb6dbb3ed04e6fa11a862d90fe898ac2d3ddfad" in f.source
    a5 = [f for f in diagnose_dict(healthy("verl-0.9.0-cannunknown-950")).findings if f.id == "megatron-ckpt-save-fails"]
    assert [f.severity.value for f in a5] == ["info"]


def test_megatron_0_12_checkpoint_writer_breaks_on_torch_2_8_unless_verl_patches_the_pair():
    """megatron-core 0.12.0-0.12.3's filesystem_async.py calls torch's _write_item(*transforms, stream, data, write_item,
    storage_key) (their PyPI wheels); torch 2.8.0 made `serialization_format` a required parameter (2.7.1 ends
    `safe_tensors=False`; 2.8.0/2.9.0/2.10.0 end `serialization_format`, the cp310 wheels). verl patches Megatron-Core
    0.12.1 only: v0.7.1 for torch 2.8.0, v0.8.0 on for 2.8.0 and 2.9.0 (verl/models/mcore/patch.py at the tags)."""
    from tests.stacks import diagnose_dict

    def said(megatron: str, torch: str, verl: str | None = "absent", module: bool = False,
             complete: bool = False) -> list:
        pk: dict = {"torch": {"version": torch}}
        d = bare(packages=pk)
        if complete:
            d["complete"] = True
        if module:
            d["modules"] = {"megatron": {"version": megatron}}
        else:
            pk["megatron-core"] = {"version": megatron}
        if verl != "absent":
            pk["verl"] = {"version": verl} if verl else {}
        return [f for f in diagnose_dict(d).findings if f.id == "megatron-ckpt-save-fails"]

    (f,) = said("0.12.1", "2.9.0", "0.7.1")
    assert f.severity.value == "warning" and f.components == ("megatron", "torch")
    assert "serialization_format" in f.detail and "verl 0.7.1 does not" in f.detail
    assert f.fix.text.startswith("Upgrade verl to 0.8.0 or later") and "pytorch/blob/v2.8.0" in f.source
    assert not said("0.12.1", "2.9.0", None)  # verl 0.8.0+ would patch it: its release unknown, nothing is said
    assert "verl is not installed here" in said("0.12.1", "2.9.0", "absent", complete=True)[0].detail
    assert said("0.12.1", "2.10.0", None)  # no verl release patches torch 2.10
    assert "0.7.1 or later" in said("0.12.1", "2.8.0+cpu", "0.7.0")[0].fix.text
    assert said("0.12.2", "2.8.0", "0.9.0") and said("0.12.1", "2.10.0", "0.9.0") and said("0.12.0", "2.8.0")
    assert said("0.12.1", "2.9.0", "0.7.1", module=True)
    assert not said("0.12.1", "2.9.0", "0.8.0") and not said("0.12.1", "2.8.0+cpu", "0.7.1")
    assert not said("0.12.1", "2.9.0", "0.10.0.dev20260822")
    assert not said("0.12.1", "2.7.1") and not said("0.13.0", "2.9.0") and not said("0.12.5", "2.10.0")
    assert "megatron-ckpt-save-fails" not in found(healthy())  # verl 0.7.1 + torch 2.8.0 + Megatron-Core 0.12.1
