from typing import Any

import pytest

from doctor.checks.runner import CheckContext, Skipped
from doctor.snapshot.model import snapshot_from_dict
from tests.stacks import bare, diagnose_dict, found, healthy


@pytest.mark.parametrize("pkg", ["vllm", "vllm-ascend"])
def test_seed_rule(pkg):
    d = healthy("verl-0.10.0.dev20260822-cann9.1.0-a2")
    d["packages"][pkg]["version"] = "0.7.3"
    f = found(d)
    assert f["vllm-below-minimum-for-cann"] == "error", f


@pytest.mark.parametrize("pkg,untagged", [("vllm-ascend", "0.1.dev2038+g308beddd8"), ("vllm", "0.1.dev1+gf90a375.empty")])
def test_a_build_from_a_clone_without_tags_names_no_release(pkg, untagged):
    """setuptools-scm versions a checkout with no tag in reach (a shallow clone) 0.1.devN+g<sha>
    (https://github.com/pytest-dev/pytest/pull/5652: pytest-0.1.dev57+g28ddc62): it says which commit, not which
    release. vllm-ascend's own A3 CI reported vllm-ascend 0.1.dev2038+g308beddd8 beside vLLM 0.13.0 on CANN 8.3.RC2
    (https://github.com/vllm-project/vllm-ascend/issues/5850): the seed rule called it 'too old' (an error) and the
    profile check 'not the version pinned'."""
    d = healthy("verl-0.7.0-cann8.3.rc1-a3")
    d["ascend"]["toolkit"]["version"] = "8.3.RC2"
    d["packages"][pkg]["version"] = untagged
    fs = diagnose_dict(d).findings
    assert not [f for f in fs if f.id == "vllm-below-minimum-for-cann"], fs
    assert not [f for f in fs if f.id == "package-off-profile" and f.evidence.get("package") == pkg], fs
    d["packages"][pkg]["version"] = "0.7.3"  # a release that old is still judged
    assert found(d)["vllm-below-minimum-for-cann"] == "error"


def test_seed_rule_not_below_boundary():
    d = bare(ascend={"toolkit": {"version": "8.3.RC1"}}, packages={"vllm": {"version": "0.7.3"}})
    assert "vllm-below-minimum-for-cann" not in found(d)


def test_vllm_ascend_torch_abi_pin():
    d = bare(packages={"vllm": {"version": "0.11.0"}, "vllm-ascend": {"version": "0.11.0"}, "torch": {"version": "2.8.0"}})
    assert found(d)["vllm-ascend-torch-mismatch"] == "error"


def test_a_main_build_beside_a_newer_vllm_is_not_held_to_its_tags_torch_pin_as_an_error():
    """A main build 1570 commits past v0.19.1rc2 ran with vLLM 0.27.1 and torch 2.10.0 (the pip list of
    https://github.com/vllm-project/vllm-ascend/issues/15035): its commits moved 0.19.1rc2's pins, so the release's
    torch pin (2.9.0) is a hint for it. A build of the release branch beside the release's own vLLM series keeps the
    pin as an error (test below)."""
    d = bare(packages={"vllm-ascend": {"version": "0.19.1rc2.dev1570+gd5daa8258", "editable": True},
                       "vllm": {"version": "0.27.1"}, "torch": {"version": "2.10.0"}})
    f = next(f for f in diagnose_dict(d).findings if f.id == "vllm-ascend-torch-mismatch")
    assert f.severity.value == "warning"
    assert "the nearest release before it (0.19.1rc1)" in f.title and "a hint here, not a verdict" in f.detail
    assert not [x for x in diagnose_dict(d).findings if x.severity.value == "error"]


def test_a_release_branch_build_beside_its_own_vllm_series_keeps_the_torch_pin_as_an_error():
    d = bare(packages={"vllm-ascend": {"version": "0.13.1.dev1+g06a285f37"}, "vllm": {"version": "0.13.0+empty"},
                       "torch": {"version": "2.12.0"}})
    assert found(d)["vllm-ascend-torch-mismatch"] == "error"


def test_vllm_pairing_and_rc_quirk():
    d = bare(packages={"vllm": {"version": "0.14.1+empty"}, "vllm-ascend": {"version": "0.14.0rc1"}})
    assert "vllm-ascend-vllm-mismatch" not in found(d)
    d = bare(packages={"vllm": {"version": "0.14.0"}, "vllm-ascend": {"version": "0.14.0rc1"}})
    assert found(d)["vllm-ascend-vllm-mismatch"] == "warning"


def test_a_vllm_of_another_series_beside_a_release_is_an_error():
    """A vllm-ascend release publishes versions matching vLLM (versioning policy): another vLLM series cannot load
    its platform plugin (error); a branch build keeps code for the latest releases, so it stays a warning."""
    d = bare(packages={"vllm": {"version": "0.10.0"}, "vllm-ascend": {"version": "0.9.1"}})
    assert found(d)["vllm-ascend-vllm-mismatch"] == "error"
    d = bare(packages={"vllm": {"version": "0.9.2"}, "vllm-ascend": {"version": "0.9.1"}})
    assert found(d)["vllm-ascend-vllm-mismatch"] == "warning"
    d = healthy()
    d["packages"]["vllm-ascend"]["version"] = "0.13.1.dev12+gabcdef0"
    d["packages"]["vllm"]["version"] = "0.12.0"
    assert found(d)["vllm-ascend-vllm-mismatch"] == "warning"


def test_branch_build_of_vllm_ascend_matches_its_line():
    d = healthy()
    d["packages"]["vllm-ascend"]["version"] = "0.13.1.dev12+gabcdef0"
    f = found(d)
    assert "vllm-ascend-vllm-mismatch" not in f and "package-off-profile" not in f


def test_build_info_device_type_vs_chip():
    d = healthy("verl-0.7.1-cann8.5.0-a3")
    d["modules"]["vllm_ascend"]["build"] = {"device_type": "A2"}
    assert found(d)["vllm-ascend-build-device-mismatch"] == "error"


def test_sleep_mode_with_expandable_segments():
    d = bare(env={"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}, modules={"vllm_ascend": {}})
    assert found(d)["vllm-ascend-sleep-expandable-segments"] == "warning"  # release unknown


@pytest.mark.parametrize(("release", "severity"), [
    ("0.13.0", "error"), ("0.10.0rc1", "error"), ("0.9.1rc1", "error"), ("0.9.2rc1", "error"),
    # the v0.9.1 line and v0.9.0rc2 and earlier test PYTORCH_CUDA_ALLOC_CONF in the allocator's assert
    ("0.9.1", "warning"), ("0.9.1rc3", "warning"), ("0.9.0rc2", "warning"),
])
def test_sleep_allocator_asserts_on_npu_expandable_segments_from_the_releases_that_read_that_variable(release, severity):
    d = bare(env={"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"},
             packages={"vllm-ascend": {"version": release}})
    assert found(d)["vllm-ascend-sleep-expandable-segments"] == severity
    f = next(f for f in diagnose_dict(d).findings if f.id == "vllm-ascend-sleep-expandable-segments")
    assert ("Expandable segments are not compatible with memory pool" in f.detail) == (severity == "error")
    assert ("camem.py" in f.source) == (severity == "error")


def test_a_vllm_version_vllm_ascend_cannot_parse_wants_vllm_version():
    # vLLM run from a tree without its generated _version.py reports "dev" (vllm/version.py), which
    # vllm_version_is() refuses; a PEP 440 dev build parses and compares, so it needs nothing
    d = healthy()
    d["packages"]["vllm"]["version"] = "dev"
    assert found(d)["vllm-version-unparseable"] == "warning"
    d["env"]["VLLM_VERSION"] = "0.13.0"
    assert "vllm-version-unparseable" not in found(d)
    d = healthy()
    d["packages"]["vllm"]["version"] = "0.13.1.dev3+g1234567.empty"
    assert "vllm-version-unparseable" not in found(d)


def test_newer_than_known_is_info():
    d = healthy("verl-0.10.0.dev20260822-cann9.1.0-a2")
    d["packages"]["vllm-ascend"]["version"] = "0.31.0rc1"
    d["packages"]["torch-npu"]["version"] = "2.15.0"
    d["packages"]["torch"]["version"] = "2.15.0"
    f = found(d)
    assert f["vllm-ascend-newer-than-known"] == "info" and f["torch-npu-newer-than-known"] == "info"
    assert "error" not in {v for k, v in f.items() if k.endswith("newer-than-known")}
    fixes = [x.fix.text for x in diagnose_dict(d).findings if x.id.endswith("newer-than-known") and x.fix]
    from doctor.knowledge.releases import knowledge_date

    assert len(fixes) == 2 and all("python -m tools.refresh_knowledge" in x and knowledge_date() in x for x in fixes)


def test_rows_of_the_newest_releases():
    """vllm-ascend 0.23.0.post1 and 0.26-0.30 are known; 0.30.0rc2 pairs vLLM 0.30.0, CANN 9.2.0, torch-npu post4."""
    from doctor.knowledge.matrix import vllm_ascend_row

    for v in ("0.23.0.post1", "0.26.0rc1", "0.27.1rc1", "0.28.0rc1", "0.29.0rc1", "0.30.0rc1", "0.30.0rc2"):
        row = vllm_ascend_row(v)
        assert row is not None and row.version == v and row.source.startswith("https://")
    r = vllm_ascend_row("0.30.0rc2")
    assert (r.vllm, r.cann, r.torch_npu) == ("0.30.0", "9.2.0", "==2.10.0.post4")
    assert vllm_ascend_row("0.26.0rc1").cann == "9.1.0"


def test_policy_and_requirements_values_are_both_accepted():
    """Where the release matrix and the tag's requirements disagree, neither value is reported."""
    d = healthy("verl-0.7.0-cann8.3.rc1-a2")
    d["packages"]["vllm-ascend"]["version"] = "0.11.0"
    d["ascend"]["toolkit"]["version"] = "8.3.RC2"
    for tn in ("2.7.1", "2.7.1.post1"):
        d["packages"]["torch-npu"]["version"] = tn
        assert "vllm-ascend-torch-npu-pairing" not in found(d, forced="verl-0.7.0-cann8.3.rc1-a2")
    d["packages"]["vllm-ascend"]["version"] = "0.10.1rc1"
    for vl in ("0.10.1", "0.10.1.1"):
        d["packages"]["vllm"]["version"] = vl
        assert "vllm-ascend-vllm-mismatch" not in found(d, forced="verl-0.7.0-cann8.3.rc1-a2")


def test_vllm_ascend_091_supports_a3():
    """The v0.9.1 FAQ lists Atlas A3 Training: the 0.6.1 A3 stack is no longer a chip deviation."""
    d = healthy("verl-0.6.1-cann8.2.rc1-a3")
    assert "vllm-ascend-chip-unsupported" not in found(d)
    d["packages"]["vllm-ascend"]["version"] = "0.9.0rc2"
    assert found(d)["vllm-ascend-chip-unsupported"] == "warning"


def test_release_branch_build_uses_the_branch_row():
    """verl 0.8.0 clones releases/v0.18.0, re-pinned to torch-npu 2.9.0.post2 and CANN 9.0.0 before the tag."""
    d = healthy("verl-0.8.0-cann9.0.0-a2")
    assert d["packages"]["vllm-ascend"]["version"].startswith("0.18.1.dev")
    f = found(d)
    assert "vllm-ascend-torch-npu-pairing" not in f and "vllm-ascend-cann-pairing" not in f
    d["packages"]["vllm-ascend"]["version"] = "0.18.0"  # the tag itself pins torch-npu 2.9.0 and CANN 8.5.1
    f = found(d)
    # its release notes: "If CANN has been upgraded to version 9.0.0, please upgrade TorchNPU version to 2.9.0.post2"
    # and triton-ascend "to 3.2.1 synchronously": the branch's stack is the tag's documented CANN 9.0.0 stack too
    assert "vllm-ascend-torch-npu-pairing" not in f and "vllm-ascend-cann-pairing" not in f
    d["packages"]["torch-npu"]["version"] = "2.9.0.post3"  # a build no upstream names: CANN 9.0.0 is not documented with it
    f = found(d)
    # vllm-ascend 0.18.0's own metadata pins torch-npu==2.9.0: the declared requirement is the pair's one word
    assert f["requirement-version-unmet"] == "error" and "vllm-ascend-torch-npu-pairing" not in f
    assert f["vllm-ascend-cann-pairing"] == "warning"


@pytest.mark.parametrize(("value", "expected"), [("50", "warning"), ("199", "warning"), ("200", None), ("1024", None),
                                                  ("lots", None)])
def test_hccl_buffsize_below_the_default_on_a_vllm_ascend_host(value, expected):
    d = healthy("verl-0.7.1-cann8.5.0-a3")
    d["env"]["HCCL_BUFFSIZE"] = value
    assert found(d).get("hccl-buffsize-below-default") == expected


def test_hccl_buffsize_unknown_facts_are_not_findings():
    assert "hccl-buffsize-below-default" not in found(bare(env={"HCCL_BUFFSIZE": "50"}))  # vllm-ascend unknown
    assert "hccl-buffsize-below-default" not in found(healthy("verl-0.7.1-cann8.5.0-a3"))  # unset: HCCL's default


@pytest.mark.parametrize("torch_npu, expected", [
    ("2.5.1rc1", "error"),            # the released build before the nightly (vllm-ascend issue 143)
    ("2.4.0", "error"),               # an older base altogether
    ("2.5.1.dev20250101", "error"),   # a nightly older than the one the guide names
    ("2.5.1.dev20250218", None),      # the guide's own build
    ("2.5.1.dev20250301", None),      # a later nightly
    ("2.5.1", None),                  # the final release of that base: not judged by this rule
])
def test_an_early_vllm_ascend_needs_the_unreleased_torch_npu_its_install_guide_names(torch_npu, expected):
    """vllm-ascend 0.7.1rc1's installation.md: "vllm-ascend relies on an unreleased version of torch-npu"
    (2.5.1.dev20250218); vllm serve then fails on the missing torch_npu functions with a released torch-npu."""
    d = bare(packages={"vllm": {"version": "0.7.1+empty"}, "vllm-ascend": {"version": "0.7.1rc1"},
                       "torch": {"version": "2.5.1"}, "torch-npu": {"version": torch_npu}})
    assert found(d).get("vllm-ascend-torch-npu-unreleased-build") == expected


def test_the_unreleased_torch_npu_rows_cite_their_tags_installation_guide():
    from doctor.checks.diagnose import diagnose
    from doctor.knowledge.matrix import vllm_ascend_row
    from doctor.snapshot.model import snapshot_from_dict

    rows = {v: vllm_ascend_row(v) for v in ("0.7.1rc1", "0.7.3rc1", "0.7.3rc2", "0.8.4rc1", "0.7.3", "0.8.4rc2")}
    assert {v: r.torch_npu_unreleased for v, r in rows.items() if r is not None} == {
        "0.7.1rc1": "2.5.1.dev20250218", "0.7.3rc1": "2.5.1.dev20250308", "0.7.3rc2": "2.5.1.dev20250320",
        "0.8.4rc1": "2.5.1.dev20250320", "0.7.3": None, "0.8.4rc2": None}
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {
        "vllm-ascend": {"version": "0.7.3rc2"}, "torch-npu": {"version": "2.5.1rc1"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "vllm-ascend-torch-npu-unreleased-build"]
    assert f.components[:2] == ("torch-npu", "vllm-ascend") and "2.5.1.dev20250320" in f.title
    assert f.source == "https://github.com/vllm-project/vllm-ascend/blob/v0.7.3rc2/docs/source/installation.md"


def test_vllm_use_v1_zero_is_judged_by_the_vllm_ascend_release_that_dropped_v0():
    """vllm-ascend's release notes: v0.9.1 "V0 Engine is not supported from this release. Please always set
    VLLM_USE_V1=1", v0.10.0rc1 "V0 is completely removed" (v0.9.2rc1, out of version order, still had it). On those
    releases VLLM_USE_V1=0 is an error; from v0.11 vLLM dropped the variable (vllm-ascend PR 4086): a warning that it
    does nothing. Unset, =1, or an older vllm-ascend: nothing."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def v0(va: str, value: str | None = "0") -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": {"vllm-ascend": {"version": va}},
               "env": {"VLLM_USE_V1": value} if value is not None else {}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings if f.id == "vllm-ascend-v0-engine"]

    (f,) = v0("0.10.0rc1")
    assert f.severity.value == "error" and f.components == ("env", "vllm-ascend") and "release_notes.md" in f.source
    assert v0("0.9.1")[0].severity.value == "error"
    (g,) = v0("0.13.0")
    assert g.severity.value == "warning" and "pull/4086" in g.source
    for quiet in (("0.9.2rc1", "0"), ("0.7.3", "0"), ("0.9.1rc1", "0"), ("0.10.0rc1", "1"), ("0.13.0", None)):
        assert not v0(*quiet), quiet


def test_vllm_ascend_0_18_0_supports_310p_only_with_the_cann_its_release_notes_name():
    """vllm-ascend v0.18.0's release notes (Dependencies): CANN upgraded to 8.5.1, "310P device supporting ... need
    upgrades CANN version to 9.0.0". On a 310P with an older CANN it is a warning (its own Dockerfile.310p and 310P
    tutorial at v0.18.0 still use a CANN 8.5.1 image); with 9.0.0, on A2, or with another vllm-ascend release it is not
    reported."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(va: str, chip: str, cann: str) -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": {"vllm-ascend": {"version": va}},
               "ascend": {"toolkit": {"version": cann}, "devices": [{"id": 0, "chip": chip}]}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "vllm-ascend-chip-needs-cann"]

    (f,) = run("0.18.0", "310P3", "8.5.1")
    assert f.severity.value == "warning" and f.components == ("vllm-ascend", "cann", "npu") and "9.0.0" in f.title
    assert "release_notes.md" in f.source and "v0.18.0/Dockerfile.310p" in f.source
    assert not run("0.18.0", "310P3", "9.0.0") and not run("0.18.0", "910B3", "8.5.1")
    assert not run("0.19.1rc1", "310P3", "8.5.1")


def test_vllm_ascend_graph_mode_with_a_driver_older_than_its_release_notes_recommend():
    """vllm-ascend v0.21.0rc1's release notes: FULL_AND_PIECEWISE "Requires HDK 25.5.1+"; below it graph capture may
    fail or fall back to PIECEWISE (Known Issues, "upgrade ... is recommended"): a warning from 0.21.0rc1 on."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(va: str, drv: str) -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": {"vllm-ascend": {"version": va}},
               "ascend": {"driver": {"version": drv}}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "vllm-ascend-graph-driver-old"]

    (f,) = run("0.22.1rc1", "25.2.0")
    assert f.severity.value == "warning" and f.components == ("driver", "vllm-ascend") and "25.5.1" in f.title
    assert "release_notes.md" in f.source
    assert not run("0.22.1rc1", "25.5.1") and not run("0.22.1rc1", "26.0.rc1") and not run("0.20.2rc1", "25.2.0")


def test_vllm_ascend_on_an_atlas_200i_a2_310b_chip_is_unsupported_in_every_release():
    """vllm-ascend's FAQ at every tag from v0.7.3 to v0.23.0: "Atlas 200I A2 (Ascend-cann-kernels-310b) unplanned yet"
    among the series NOT supported."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(va: str, soc: str) -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": {"vllm-ascend": {"version": va}},
               "ascend": {"devices": [{"id": 0, "soc": soc}]}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "vllm-ascend-release-chip-unsupported"]

    (f,) = run("0.23.0", "Ascend310B4")
    assert f.severity.value == "error" and "310" in f.title and "faqs.md" in f.source and "200I A2" in f.detail
    assert not run("0.23.0", "Ascend910B3")


def test_vllm_ascend_is_judged_against_the_triton_ascend_its_release_pins():
    """The release matrix's Triton Ascend column / requirements.txt: vllm-ascend 0.13.0 pins triton-ascend 3.2.0,
    0.20.2rc1 3.2.1, 0.23.0 3.2.2; 0.18.0 also accepts the 3.2.0.dev20260322 its release notes name. Another one is a
    warning; a release with no triton-ascend pin (0.11.0) is not judged."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(va: str, ta: str) -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": {"vllm-ascend": {"version": va}, "triton-ascend": {"version": ta}}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "vllm-ascend-triton-ascend-pairing"]

    (f,) = run("0.20.2rc1", "3.2.0")
    assert f.severity.value == "warning" and f.components == ("triton-ascend", "vllm-ascend") and "3.2.1" in f.title
    assert run("0.13.0", "3.2.1") and run("0.23.0", "3.2.1")
    for ok in (("0.13.0", "3.2.0"), ("0.18.0", "3.2.0.dev20260322"), ("0.23.0", "3.2.2"), ("0.11.0", "3.2.0rc4"),
               ("0.13.0rc1", "3.2.0.dev2025110717")):
        assert not run(*ok), ok
    # 0.13.0rc1's requirements pin none; its release notes and tutorials install the dev build 3.2.0.dev2025110717 by
    # hand, and a PyPI triton-ascend beside it was unusable (https://github.com/vllm-project/vllm-ascend/issues/5750, a reply)
    (g,) = run("0.13.0rc1", "3.2.0rc4")
    assert "3.2.0.dev2025110717" in g.title


def test_a_chip_no_vllm_ascend_release_supports_is_judged_without_the_version():
    """The FAQ says first-generation 910 and the 310B are unsupported in every release: a report that names its chip
    and that it runs vllm-ascend, but not which release, is judged too; a family some release supports (310P) is not."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(soc: str, packages: dict) -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": packages, "ascend": {"devices": [{"id": 0, "soc": soc}]}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "vllm-ascend-release-chip-unsupported"]

    (f,) = run("Ascend910A", {"vllm-ascend": {}})
    assert f.severity.value == "error" and "any release" in f.title and f.components[:2] == ("vllm-ascend", "npu")
    assert len(run("Ascend310B4", {"vllm-ascend": {}})) == 1
    assert not run("Ascend310P3", {"vllm-ascend": {}})  # 310P: supported from 0.10.0rc1, the release decides
    assert not run("Ascend910A", {"vllm": {"version": "0.9.1"}})  # vllm-ascend not named


def test_vllm_ascend_named_without_its_version_when_no_release_fits_the_stated_facts(tmp_path):
    """A report names vllm-ascend but not its release: the stated CANN / torch / Python are judged against every
    release of the matrix. The oldest one's guide (v0.7.1rc1) requires CANN >= 8.0.0 and torch >= 2.5.1, every later
    release more: CANN 8.0.RC3 (vllm-ascend issue 154) or torch 2.3.1 on CANN 8.0.RC2 (issue 165) fit none."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    def d(**facts):
        pkgs = {"vllm-ascend": {}, **({"torch": {"version": facts["torch"]}} if "torch" in facts else {})}
        doc = bare(packages=pkgs)
        if "cann" in facts:
            doc["ascend"] = {"toolkit": {"version": facts["cann"]}}
        if "python" in facts:
            doc["python"] = {"version": facts["python"]}
        return doc

    r = diagnose_dict(d(cann="8.0.RC3"))
    (f,) = [x for x in r.findings if x.id == "vllm-ascend-no-release-fits"]
    assert f.severity.value == "error" and f.components == ("vllm-ascend", "cann")
    assert f.title == "no vllm-ascend release supports CANN 8.0.RC3: the oldest requires CANN 8.0.0"
    assert "v0.7.1rc1/docs/source/installation.md" in f.source
    r = diagnose_dict(d(cann="8.0.RC2", torch="2.3.1"))
    got = sorted(x.components for x in r.findings if x.id == "vllm-ascend-no-release-fits")
    assert got == [("torch", "vllm-ascend"), ("vllm-ascend", "cann")]
    assert found(d(python="3.8.18"))["vllm-ascend-no-release-fits"] == "error"
    # a fact some release accepts, or a known release (vllm-ascend-matrix judges that one): nothing from this check
    for ok in (d(cann="8.0.0"), d(cann="9.1.0", torch="2.10.0", python="3.11.9"), d(torch="2.5.1+cpu")):
        assert "vllm-ascend-no-release-fits" not in found(ok), ok
    known_release = bare(packages={"vllm-ascend": {"version": "0.7.3"}, "torch": {"version": "2.3.1"}})
    assert "vllm-ascend-no-release-fits" not in found(known_release)
    # what the user sees
    root = Path(__file__).resolve().parents[2]
    p = tmp_path / "report.json"
    p.write_text(json.dumps(d(cann="8.0.RC2", torch="2.3.1")))
    out = subprocess.run([sys.executable, "-m", "doctor", "check", "--from", str(p)], cwd=root, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    assert out.returncode == 1
    assert "no vllm-ascend release works with torch 2.3.1: the oldest requires torch 2.5.1" in out.stdout + out.stderr


def test_a_cann_older_than_the_one_a_vllm_ascend_release_requires_is_an_error():
    """Every release's installation guide lists its CANN (`>= 8.3.RC1` at v0.11.0, `== 9.1.0` at v0.23.0) as "Required
    for vllm-ascend and torch-npu": a CANN older than every one the release names is an error; another, newer series
    stays a pairing warning (off the matrix, not below what the release needs)."""
    old = bare(packages={"vllm-ascend": {"version": "0.11.0"}}, ascend={"toolkit": {"version": "8.2.RC1"}})
    r = diagnose_dict(old)
    (f,) = [x for x in r.findings if x.id == "vllm-ascend-cann-pairing"]
    assert f.severity.value == "error" and f.components == ("vllm-ascend", "cann")
    assert "older than the CANN it requires" in f.title and "v0.11.0/docs/source/installation.md" in f.source
    newer = bare(packages={"vllm-ascend": {"version": "0.11.0"}}, ascend={"toolkit": {"version": "8.5.0"}})
    assert found(newer)["vllm-ascend-cann-pairing"] == "warning"
    same = bare(packages={"vllm-ascend": {"version": "0.11.0"}}, ascend={"toolkit": {"version": "8.3.RC1"}})
    assert "vllm-ascend-cann-pairing" not in found(same)


def test_vllm_ascend_releases_whose_faq_names_another_stable_release_for_the_chip():
    from doctor.checks.vllm import vllm_ascend_chip_support

    def run(va: str, chip: str) -> list[Any]:
        d = {"schema": "doctor.snapshot/1", "packages": {"vllm-ascend": {"version": va}},
             "ascend": {"devices": [{"id": 0, "chip": chip}]}}
        try:
            return list(vllm_ascend_chip_support(CheckContext(snapshot=snapshot_from_dict(d))))
        except Skipped:
            return []

    # v0.11.0rc1 .. v0.13.0's FAQ: "for 310I Duo, the stable version is vllm-ascend v0.10.0rc1" (v0.12.0rc1's and
    # v0.13.0's FAQ say it too); v0.14.0rc1's release notes: "310P support is back now"
    for va in ("0.11.0rc1", "0.11.0rc2", "0.11.0", "0.12.0rc1", "0.13.0rc2", "0.13.0"):
        (f,) = run(va, "310P3")
        assert f.id == "vllm-ascend-chip-stable-release-elsewhere" and f.severity.value == "error"
        assert f.components[:2] == ("vllm-ascend", "npu") and f.evidence["stable_release"] == "0.10.0rc1"
        assert "v0.11.0rc1/docs/source/faqs.md" in f.source and "v0.14.0rc1/docs/source/user_guide" in f.source
    for va in ("0.10.0rc1", "0.11.0rc0", "0.14.0rc1", "0.17.0rc1"):
        assert run(va, "310P3") == []
    assert run("0.11.0rc2", "910B3") == []


def test_documented_stacks_give_no_chip_support_finding():
    from doctor.checks.vllm import vllm_ascend_chip_support
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    for p in load_profiles():
        try:
            fs = list(vllm_ascend_chip_support(CheckContext(snapshot=snapshot_from_dict(stack_snapshot(p)))))
        except Skipped:
            fs = []
        assert fs == [], (p.name, [f.title for f in fs])



def test_a_cann_pre_release_beside_vllm_ascend_is_never_a_stable_cann_of_the_matrix():
    """vllm-ascend's compatibility matrix names one "Stable CANN" per release, never an alpha / beta / T / weekly
    build: a pre-release toolkit beside vllm-ascend (its version known or not) is a warning naming the nearest stable
    CANN; the release itself, or a pre-release without vllm-ascend, says nothing."""
    from doctor.checks.diagnose import diagnose
    from doctor.knowledge.matrix import VLLM_ASCEND
    from doctor.knowledge.versions import CannVersion
    from doctor.snapshot.model import snapshot_from_dict

    assert not [x for r in VLLM_ASCEND for x in r.cann_versions() if CannVersion(x).is_prerelease]

    def pre(cann: str, va: dict | None) -> list:
        pk = {"vllm-ascend": va} if va is not None else {"torch-npu": {}}
        doc = {"schema": "doctor.snapshot/1", "packages": pk, "ascend": {"toolkit": {"version": cann}}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "vllm-ascend-cann-prerelease"]

    (f,) = pre("8.3.RC1.alpha002", {})
    assert f.severity.value == "warning" and f.components == ("cann", "vllm-ascend")
    assert "8.3.RC1" in f.fix.text and "versioning_policy.md" in f.source
    (g,) = pre("9.0.0-beta.1", {"version": "0.20.2rc1"})
    assert g.evidence["nearest_stable_cann"] == "9.0.0"
    assert pre("8.0.T13", {}) and pre("9.2.0~weekly.20260902.01", {})
    assert not pre("8.3.RC1", {}) and not pre("9.0.0", {}) and not pre("8.3", {})
    assert not pre("8.3.RC1.alpha002", None)


def test_a_bare_910b_npu_smi_name_with_32_gb_is_a_first_generation_910():
    """npu-smi names first-generation boards '910A' / '910B' / '910ProB' and Atlas A2 chips with their digit ('910B3');
    torch_npu's SoC table lists 'Ascend910B' among the first generation. A bare '910B' with a first-generation board's
    32768 MB of HBM gets vllm-ascend's 'unsupported in every release'; the same name with 64 GB, or stated without
    HBM, is still read as the Atlas A2 people often mean by it, and '910B4' (32 GB too) stays A2."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(chip: str, hbm: int | None) -> list:
        dev = {"id": 0, "chip": chip} | ({"hbm_total_mb": hbm} if hbm else {})
        doc = {"schema": "doctor.snapshot/1", "packages": {"vllm-ascend": {}},
               "ascend": {"npu_smi": {"status": "ok", "version": "23.0.rc2"}, "devices": [dev, dev | {"id": 1}]}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "vllm-ascend-release-chip-unsupported"]

    (f,) = run("910B", 32768)
    assert f.severity.value == "error" and "910" in f.title and "any release" in f.title
    assert not run("910B", 65536) and not run("910B", None) and not run("910B4", 32768) and not run("910B3", 65536)


def test_vllm_version_naming_another_release_than_the_installed_vllm():
    # vllm_version_is() takes VLLM_VERSION over vllm.__version__ (vllm-ascend v0.8.4rc2 on): a value naming another
    # release steers vllm-ascend down that release's code paths; one packaging cannot parse makes it raise
    d = healthy()
    vllm = d["packages"]["vllm"]["version"]
    d["env"]["VLLM_VERSION"] = vllm
    assert "vllm-version-env-mismatch" not in found(d)
    d["env"]["VLLM_VERSION"] = "0.1.0"
    assert found(d)["vllm-version-env-mismatch"] == "warning"
    f = next(f for f in diagnose_dict(d).findings if f.id == "vllm-version-env-mismatch")
    assert "unset VLLM_VERSION" in str(f.fix.to_dict()) and "vllm_ascend/utils.py" in f.source
    d["env"]["VLLM_VERSION"] = "x.y.z"
    assert found(d)["vllm-version-env-mismatch"] == "error"
    # a dev build of vLLM main: naming the release it follows is what vllm-ascend's FAQ asks for
    d["env"]["VLLM_VERSION"] = "0.1.0"
    d["packages"]["vllm"]["version"] = "0.13.1.dev3+g1234567.empty"
    assert "vllm-version-env-mismatch" not in found(d)
    # before v0.8.4rc2 vllm-ascend did not read the variable
    d = bare(env={"VLLM_VERSION": "0.1.0"}, packages={"vllm-ascend": {"version": "0.7.3"}, "vllm": {"version": "0.7.3"}})
    assert "vllm-version-env-mismatch" not in found(d)
    d = bare(env={"VLLM_VERSION": "0.1.0"}, packages={"vllm-ascend": {"version": "0.9.1"}, "vllm": {"version": "0.9.1"}})
    assert found(d)["vllm-version-env-mismatch"] == "warning"
    # the same X.Y.Z with another label: the documented use (an edited or post build of that release)
    d = bare(env={"VLLM_VERSION": "0.9.1"}, packages={"vllm-ascend": {"version": "0.9.1"},
                                                      "vllm": {"version": "0.9.1.post1"}})
    assert "vllm-version-env-mismatch" not in found(d)
