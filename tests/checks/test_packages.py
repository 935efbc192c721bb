from typing import Any

import pytest

from tests.stacks import CHIP_ROWS, bare, diagnose_dict, found, healthy


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


def test_numpy2_with_a_vllm_ascend_whose_release_is_not_known():
    """vllm-ascend's requirements cap numpy<2.0.0 from v0.7.3 to v0.19.1rc1 and list plain numpy from v0.20.2rc1 (CANN
    9.0.0) on. vllm-ascend named without its version beside a toolkit whose version the probe could not read: a
    warning (either side may hold). A known CANN decides (before 9.0.0: numpy2-with-cann's error; 9.0.0 or later:
    nothing), and a known vllm-ascend release is pip check's (declared) business; numpy 1.x says nothing."""
    def ids(numpy: str, va: dict, cann: str | None = "unread") -> dict:
        toolkit = {"version": None if cann == "unread" else cann, "path": "/usr/local/Ascend/ascend-toolkit/latest"}
        extra = {"ascend": {"toolkit": toolkit}} if cann else {}
        return found(bare(packages={"numpy": {"version": numpy}, "vllm-ascend": va}, **extra))

    f = ids("2.0.0", {})
    assert f["numpy2-with-vllm-ascend"] == "warning" and "numpy2-with-cann" not in f
    assert "numpy2-with-vllm-ascend" not in ids("1.26.4", {})
    assert "numpy2-with-vllm-ascend" not in ids("2.2.6", {}, "9.0.0")
    g = ids("2.0.0", {}, "8.5.1")
    assert g["numpy2-with-cann"] == "error" and "numpy2-with-vllm-ascend" not in g
    assert "numpy2-with-vllm-ascend" not in ids("2.2.6", {"version": "0.20.2rc1"})
    assert "numpy2-with-vllm-ascend" not in found(bare(packages={"numpy": {"version": "2.0.0"}}))


def test_numpy2_with_a_vllm_ascend_whose_release_is_not_known_says_nothing_where_cann_is_not_stated():
    """The verl 0.9.0 stacks run numpy 2 with vllm-ascend 0.23 on CANN 9.0.0: a snapshot that states numpy 2 and
    vllm-ascend without its release, and nothing of CANN (no `ascend`, or a toolkit without a `version` key), may be
    that stack. An unknown fact is no finding; a toolkit whose version the probe could not read (null) still warns."""
    for ascend in ({}, {"ascend": {"toolkit": {"path": "/usr/local/Ascend/ascend-toolkit/latest"}}}):
        f = found(bare(packages={"numpy": {"version": "2.1.3"}, "vllm-ascend": {}}, **ascend))
        assert not {"numpy2-with-vllm-ascend", "numpy2-with-cann-version-unknown"} & set(f)
    d = healthy("verl-0.9.0-cann9.0.0-a3")
    d.pop("complete")
    del d["packages"]["vllm-ascend"]["version"], d["ascend"]["toolkit"]["version"]
    assert "numpy2-with-vllm-ascend" not in found(d)
    d["ascend"]["toolkit"]["version"] = None
    assert found(d)["numpy2-with-vllm-ascend"] == "warning"


def test_numpy2_with_a_cann_toolkit_whose_version_is_not_known():
    """A CANN toolkit is installed but the probe could not read its version (null; a missing key is unknown), numpy is 2.x: CANN's dependency list caps numpy
    below 2 for every release before 9.0.0 (with Python < 3.13), so a warning names the pair (a Mind SDK FAQ: operator
    generation fails with `np.float_` removed). A known CANN decides as before; Python 3.13 (which CANN 8.5 pairs with
    numpy > 2.1), numpy 1.x, no toolkit, and the vllm-ascend warning already given say nothing more."""
    def ids(numpy: str, toolkit: dict | None, python: str | None = None, **packages: dict) -> dict:
        extra: dict = {"ascend": {"toolkit": toolkit}} if toolkit is not None else {}
        if python:
            extra["python"] = {"version": python}
        return found(bare(packages={"numpy": {"version": numpy}, **packages}, **extra))

    unread = {"version": None, "path": "/usr/local/Ascend/ascend-toolkit/latest"}  # the probe found no version file
    f = ids("2.0.0", unread)
    assert f["numpy2-with-cann-version-unknown"] == "warning" and "numpy2-with-cann" not in f
    assert ids("2.0.0", {**unread, "version": "garbage"})["numpy2-with-cann-version-unknown"] == "warning"
    # a snapshot that does not state the version (a bug report's "CANN is installed") says nothing about it
    assert "numpy2-with-cann-version-unknown" not in ids("2.0.0", {})
    assert "numpy2-with-cann-version-unknown" not in ids("1.26.4", unread)
    assert "numpy2-with-cann-version-unknown" not in ids("2.0.0", None)
    assert "numpy2-with-cann-version-unknown" not in ids("2.2.6", unread, "3.13.1")
    assert ids("2.2.6", unread, "3.11.9")["numpy2-with-cann-version-unknown"] == "warning"
    g = ids("2.0.0", {"version": "8.3.RC1"})
    assert g["numpy2-with-cann"] == "error" and "numpy2-with-cann-version-unknown" not in g
    assert "numpy2-with-cann-version-unknown" not in ids("2.2.6", {"version": "9.0.0"})
    # CANN 8.5.0 on Python 3.13 lists numpy > 2.1 (the guide's dependency table): numpy 2 is what it needs there
    assert "numpy2-with-cann" not in ids("2.2.6", {"version": "8.5.0"}, "3.13.1")
    assert ids("2.2.6", {"version": "8.5.0"}, "3.12.8")["numpy2-with-cann"] == "error"
    h = ids("2.0.0", unread, None, **{"vllm-ascend": {}})
    assert h["numpy2-with-vllm-ascend"] == "warning" and "numpy2-with-cann-version-unknown" not in h


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


def test_a_transformers_window_from_npu_only_code_is_not_judged_where_the_snapshot_shows_no_npu():
    """verl 0.4.0-0.5.0 import index_first_axis from transformers.integrations.npu_flash_attention (gone in 4.56) only
    under `elif is_npu_available:` (v0.5.0 verl/workers/actor/dp_actor.py:41-42). The differential import oracle: a
    real CPU venv (Python 3.11, torch 2.13.0+cpu, no torch-npu) with verl 0.5.0 and transformers 4.57.x imports
    verl.trainer.main_ppo, ray_trainer and fsdp_workers, and the check said error. A complete snapshot without
    torch-npu and without Ascend software is skipped; torch-npu on an NPU host, or a partial list (a report that does
    not say), keep the error, and verl 0.7.1's window (its docs, not an NPU-only import) is judged anywhere."""
    def window(verl: str, tr: str, **extra: Any) -> str | None:
        d = bare(packages={"verl": {"version": verl}, "transformers": {"version": tr}, **extra.pop("pk", {})}, **extra)
        return found(d).get("transformers-outside-verl-window")

    cpu = {"complete": True, "ascend": None}
    assert window("0.5.0", "4.57.6", **cpu) is None
    assert window("0.4.1", "4.57.6", **cpu) is None
    assert window("0.7.1", "5.0.0", **cpu) == "error"
    assert window("0.5.0", "4.57.6") == "error"  # partial: the host is not stated
    npu = {"ascend": {"toolkit": {"version": "8.1.RC1"}, "devices": CHIP_ROWS["A2"]}, "pk": {"torch-npu": {"version": "2.5.1"}}}
    assert window("0.5.0", "4.57.6", complete=True, **npu) == "error"


def test_the_transformers_window_detail_says_where_the_window_comes_from():
    """verl 0.7.1's window is its Ascend quick start's sentence, not an import: a real venv with transformers 5.25.0
    imports verl 0.7.1's trainer and workers, and the detail said verl imports transformers internals that move
    (the 0.4-0.5 NPU import's error). Each row's detail now names its own cause."""
    def detail(verl: str, tr: str) -> str:
        rep = diagnose_dict(bare(packages={"verl": {"version": verl}, "transformers": {"version": tr}}))
        (f,) = [f for f in rep.findings if f.id == "transformers-outside-verl-window"]
        return f.detail

    d = detail("0.7.1", "5.25.0")
    assert "ascend_quick_start.rst" in d and "not a name verl 0.7.1 imports at load" in d and "index_first_axis" not in d
    assert "under `elif is_npu_available:`" in detail("0.5.0", "4.57.6")


def test_the_transformers_window_fix_is_a_command_line_of_its_own():
    """Its fix read `fix: .../python -m pip install 'transformers<5.0.0' (or upgrade verl).`: a command with prose
    after it, which a pasted line runs with `(or` as an argument (bash: syntax error) and `fix all at once` could not
    take (real: a venv with verl 0.7.1 and transformers 5.10.4)."""
    rep = diagnose_dict(bare(packages={"verl": {"version": "0.7.1"}, "transformers": {"version": "5.10.4"}}))
    (f,) = [f for f in rep.findings if f.id == "transformers-outside-verl-window"]
    assert f.fix is not None and f.fix.commands[-1].endswith("pip install 'transformers<5.0.0'")
    assert "pip install" not in f.fix.text and "upgrade verl" in f.fix.text


def test_a_pair_verls_own_metadata_rejects_is_one_finding_not_two():
    """verl 0.8.0's METADATA says numpy<2.0.0 and verl 0.9.1's transformers<5.11: declared-requirements reports each
    pair from that declaration, and the doctor's own table of the same pair (releases.toml) adds no second finding at
    another severity."""
    def pair(d: dict, dep: str) -> list[tuple[str, str]]:
        return sorted((f.id, f.severity.value) for f in diagnose_dict(d).findings
                      if {"verl", dep} <= set(f.components) or (f.id.startswith("requirement") and
                                                                f.evidence.get("requires") == dep))

    numpy2 = bare(packages={"verl": {"version": "0.8.0"}, "numpy": {"version": "2.2.6"}})
    assert pair(numpy2, "numpy") == [("requirement-version-unmet", "error")]
    window = bare(packages={"verl": {"version": "0.9.1"}, "transformers": {"version": "5.11.0"}})
    assert pair(window, "transformers") == [("requirement-version-unmet", "error")]


def test_pins_without_verl_are_what_an_install_would_change_not_faults():
    """The verified stack is verl's: on a host without verl (a vLLM Ascend inference box, a host before its install)
    an off-pin or missing package is info with the same fix; with verl installed it is a warning."""
    d = healthy()
    d["complete"] = True  # a collected snapshot: what it does not list is not installed
    d["packages"]["numpy"]["version"] = "2.2.0"
    del d["packages"]["triton-ascend"]
    assert found(d)["package-off-profile"] == "warning" and found(d)["package-missing"] == "warning"
    del d["packages"]["verl"]
    f = found(d)
    assert f["package-off-profile"] == "info" and f["package-missing"] == "info"
    off = next(x for x in diagnose_dict(d).findings if x.id == "package-off-profile")
    assert "verl is not installed" in off.detail and off.fix is not None


@pytest.mark.parametrize(("only", "ignore"), [
    (("transformers-outside-verl-window",), ()), (("transformers-window",), ()), ((), ("declared-requirements",)),
    ((), ("requirement-version-unmet",)), (("packages",), ("declared-requirements",))])
def test_a_waived_declaration_leaves_the_window_finding_to_say_it(only, ignore):
    """Real: verl 0.9.1 + transformers 5.11.0 (`pip install --no-deps`) with `--ignore declared-requirements` (its
    missing-dependency noise) or `--only transformers-outside-verl-window` said nothing at all about the pair, which
    cdb6dbb reported as an error: the window check stood down for a finding the waivers then dropped."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    window = bare(packages={"verl": {"version": "0.9.1"}, "transformers": {"version": "5.11.0"}})
    got = diagnose([(None, snapshot_from_dict(window), None)], only=only, ignore=ignore).findings
    assert [f.severity.value for f in got if f.id == "transformers-outside-verl-window"] == ["error"]


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


def test_torch_npu_post4_profiler_crash_warns_and_is_a_known_deviation_of_the_stacks_that_pin_it():
    """Three vLLM Ascend threads: torch-npu 2.10.0.post4's profiler segfaults stopping a profile with stacks (post2 and
    post6 do not). A stack whose install guide pins post4 carries it as info, naming the deviation."""
    d = bare(packages={"torch-npu": {"version": "2.10.0.post4"}, "vllm-ascend": {"version": "0.26.0rc1"}})
    (f,) = [f for f in diagnose_dict(d).findings if f.id == "package-known-bad-release"]
    assert f.severity.value == "warning" and "segmentation fault" in f.detail and "2.10.0.post6" in f.fix.text
    for good in ("2.10.0.post2", "2.10.0.post6"):
        assert "package-known-bad-release" not in found(bare(packages={"torch-npu": {"version": good},
                                                                       "vllm-ascend": {"version": "0.26.0rc1"}}))
    stack = healthy("verl-0.9.1-cann9.1.0-a2")
    (g,) = [f for f in diagnose_dict(stack).findings if f.id == "package-known-bad-release"]
    assert g.severity.value == "info" and "known deviation of verl-0.9.1-cann9.1.0-a2" in g.title


def test_torch_npu_2_7_1_post2_beside_verl_warns_of_the_vlm_bugs_verl_reverted_it_for():
    """verl's maintainers reverted torch-npu 2.7.1.post2 in verl's Ascend image: known bugs in the VLM models. Beside
    verl (of any stated or unstated release) a warning naming 2.7.1; ms-swift's NPU guide documents the build for its
    own stacks, so without verl nothing."""
    d = bare(packages={"torch-npu": {"version": "2.7.1.post2"}, "verl": {}})
    (f,) = [f for f in diagnose_dict(d).findings if f.id == "package-known-bad-release"]
    assert f.severity.value == "warning" and "VLM models" in f.detail and "torch-npu==2.7.1" in f.fix.commands[0]
    assert f.source == "https://github.com/verl-project/verl/pull/5353"
    assert "package-known-bad-release" not in found(bare(packages={"torch-npu": {"version": "2.7.1"}, "verl": {}}))
    assert "package-known-bad-release" not in found(bare(packages={"torch-npu": {"version": "2.7.1.post2"},
                                                                   "ms-swift": {"version": "4.1.0"}}))


def test_mbridge_calling_an_api_megatron_core_removed_is_an_error():
    """mbridge 0.15.1's get_model compares with ModelType.encoder_and_decoder (mbridge/core/util.py at v0.15.1);
    Megatron-Core 0.17.0 removed it (verl issue 6936: mbridge 0.15.1 on Megatron-Core 0.18)."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    assert found(bare(packages={"mbridge": {"version": "0.15.1"}, "megatron-core": {"version": "0.18"}})).get(
        "package-calls-missing-api") == "error"
    # still there (a deprecated property) in 0.16.x; an older mbridge calls it too
    assert "package-calls-missing-api" not in found(bare(packages={"mbridge": {"version": "0.15.1"},
                                                                  "megatron-core": {"version": "0.16.1"}}))
    assert "package-calls-missing-api" in found(bare(packages={"mbridge": {"version": "0.13.1"},
                                                              "megatron-core": {"version": "0.17.0"}}))
    # Megatron from a git checkout: the probed module's version counts
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {"mbridge": {"version": "0.15.1"}},
                               "modules": {"megatron": {"origins": ["/Megatron-LM/megatron"], "version": "0.17.1"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-calls-missing-api"]
    assert f.components[:2] == ("mbridge", "megatron") and "encoder_and_decoder" in f.title
    assert "mbridge/blob/v0.15.1/mbridge/core/util.py" in f.source and "core_v0.17.0" in f.source
    # unknown versions say nothing
    assert "package-calls-missing-api" not in found(bare(packages={"mbridge": {"version": "0.15.1"}}))


def test_verl_with_a_tensordict_that_lacks_membership_checks_is_an_error():
    """verl's FAQ: on linux-arm64 pip resolves tensordict 0.1.2, whose TensorDict does not support `key in td`, which
    verl uses (verl pull 1776). Any verl counts, also one whose version a report does not give."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "host": {"arch": "aarch64"},
                               "packages": {"verl": {}, "tensordict": {"version": "0.1.2"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-calls-missing-api"]
    assert f.severity.value == "error" and f.components[:2] == ("verl", "python")
    assert f.source == "https://github.com/verl-project/verl/blob/v0.4.1/docs/faq/faq.rst"
    assert "package-calls-missing-api" not in found(bare(packages={"verl": {"version": "0.4.1"},
                                                                  "tensordict": {"version": "0.6.2"}}))
    assert "package-calls-missing-api" not in found(bare(packages={"tensordict": {"version": "0.1.2"}}))


def test_a_release_known_to_break_only_on_npu_is_judged_only_on_an_ascend_host():
    """transformers 4.53.0: Flash Attention 2 does not work on Ascend NPU (verl pull 2291 pins 4.52.4 for NPU;
    transformers pull 39166 fixes it). The PyPI wheels show 4.53.1 with the same NPU code and 4.53.2 with the fix: beside
    torch-npu 4.53.0 and 4.53.1 are a warning that points at 4.53.2; on a CUDA host it is not this doctor's business."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def bad(tr: str) -> list:
        snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {
            "transformers": {"version": tr}, "torch-npu": {}}})
        return [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-known-bad-release"]

    (f,) = bad("4.53.0")
    assert f.severity.value == "warning" and f.components == ("transformers",)
    assert "Flash Attention 2" in f.detail and f.fix.commands == ("pip install 'transformers==4.53.2' --no-deps",)
    assert "verl/pull/2291" in f.source and "transformers/pull/39166" in f.source
    (g,) = bad("4.53.1")
    assert "Flash Attention 2" in g.detail
    assert not bad("4.53.2") and not bad("4.54.0")
    assert "package-known-bad-release" not in found(bare(packages={"transformers": {"version": "4.53.0"}}))


def test_transformers_whose_npu_rotary_embedding_breaks_qwen2_5_vl_with_flash_attention_2():
    """transformers pull 38491 (Fixes issue 38189): from 4.51.0 (the first wheel whose modeling_flash_attention_utils
    maps apply_rotary_emb to torch_npu.npu_rotary_mul) to 4.52.x, Qwen2.5-VL / Omni with flash_attention_2 fail on NPU;
    4.53.0 ships the fix but breaks Flash Attention 2 on NPU itself, so the release to install is 4.53.2. A warning on
    an Ascend host only; a pre-release inside the range (the report's 4.52.0.dev0) counts, one of 4.53.0 does not."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def bad(tr: str, npu: bool = True) -> list:
        pk: dict = {"transformers": {"version": tr}, **({"torch-npu": {}} if npu else {})}
        snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": pk})
        return [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-known-bad-release"]

    (f,) = bad("4.52.4")
    assert f.severity.value == "warning" and f.components == ("transformers",)
    assert "npu_rotary_mul" in f.detail and "Qwen2.5-VL" in f.detail
    assert f.fix.commands == ("pip install 'transformers==4.53.2' --no-deps",) and "sdpa" in f.fix.text
    assert "transformers/pull/38491" in f.source
    assert bad("4.51.0") and bad("4.52.0.dev0")
    assert not bad("4.50.3") and not bad("4.51.0.dev0") and not bad("4.52.4", npu=False)
    assert not bad("4.53.0.dev0")  # PEP 440: <4.53.0 excludes its pre-releases (before or after the fix: not known)


def test_transformers_4_54_beside_vllm_0_9_fails_at_import_and_is_hedged_when_vllm_has_no_version():
    """vLLM 0.9.0-0.9.2 register an 'aimv2' config at import; transformers 4.54.0 has its own (read from the sdists and
    wheels; vllm-ascend issue 2046): an error beside those vLLM releases. Beside vLLM 0.10.0 it is vllm-ascend's LoRA
    pin (issue 2034): a warning. Beside vLLM 0.10.1+ (which requires >=4.55.0: pip check's business) or 0.8.5 it is not
    this table's. With vLLM named without a version, transformers 4.54.x is a hedged warning naming every case;
    4.55 and later say nothing then (only vLLM 0.9.x breaks with them)."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def bad(tr: str, vllm: str | None) -> list:
        pk: dict = {"transformers": {"version": tr}, "vllm": {"version": vllm} if vllm else {}}
        snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": pk})
        return [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-known-bad-release"]

    (f,) = bad("4.54.0", "0.9.2")
    assert f.severity.value == "error" and f.components == ("transformers", "vllm")
    assert "aimv2" in f.detail and f.fix.commands == ("pip install 'transformers<4.54.0'",)
    assert "vllm-ascend/issues/2046" in f.source and "vllm/blob/v0.9.2/" in f.source
    assert bad("4.57.1", "0.9.1+empty")[0].severity.value == "error"
    (g,) = bad("4.54.1", "0.10.0")
    assert g.severity.value == "warning" and "LoRA" in g.detail and "vllm-ascend/issues/2034" in g.source
    (h,) = bad("4.54.0", None)
    assert h.severity.value == "warning" and h.components == ("transformers", "vllm")
    assert "version not known" in h.title and "0.10.1" in h.detail and "LoRA" in h.detail
    assert not bad("4.55.0", None) and not bad("4.53.3", "0.9.2") and not bad("4.54.0", "0.10.1")
    assert not bad("4.54.0", "0.8.5.post1")
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {"transformers": {"version": "4.54.0"}}})
    assert not [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-known-bad-release"]


def test_triton_ascend_is_judged_against_the_cann_release_it_was_cut_for():
    """triton-ascend's installation guide pairs 3.2.0 with CANN 8.5.0 and 3.2.0rc4 with 8.3.RC1/8.3.RC2; MindSpeed-LLM's
    pairing table gives 3.2.1 -> CANN 9.0.0 and 3.2.2 -> 9.1.0 and binds triton-ascend to CANN one to one. Off the
    series it is a warning naming the documented CANN; a CANN a vllm-ascend matrix pairs it with is accepted (3.2.1 on
    9.0.1: vllm-ascend 0.23.0rc1); a release no source names, or an unknown CANN, is not judged."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def run(ta: str, cann: str | None) -> list:
        doc: dict = {"schema": "doctor.snapshot/1", "packages": {"triton-ascend": {"version": ta}}}
        if cann:
            doc["ascend"] = {"toolkit": {"version": cann}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "triton-ascend-cann-pairing"]

    (f,) = run("3.2.0", "9.0.0")
    # an error since the source binds them one to one (强绑定); triton-ascend issue 2018: 3.2.0 on CANN 9.1.0 failed,
    # 3.2.2 fixed it
    assert f.severity.value == "error" and f.components == ("triton-ascend", "cann")
    (h,) = run("3.2.0", "9.1.0")
    assert h.severity.value == "error" and "8.5.0" in h.title
    # a CANN newer than every one the doctor knows has no documented triton-ascend yet: a warning, never an error
    (n,) = run("3.2.2", "9.9.0")
    assert n.severity.value == "warning"
    assert "8.5.0" in f.title and "triton-lang/triton-ascend/blob/" in f.source
    (g,) = run("3.2.1", "8.5.0")
    assert "9.0.0" in g.title and "MindSpeed-LLM" in g.source
    assert run("3.2.2", "8.3.RC1") and run("3.2.0rc4", "9.1.0")
    for ok in (("3.2.0", "8.5.0"), ("3.2.0", "8.5.1"), ("3.2.0rc4", "8.3.RC2"), ("3.2.1", "9.0.1"), ("3.2.2", "9.1.0"),
               ("3.2.2", "9.2.0"), ("3.2.0.dev20260322", "9.1.0"), ("9.9.9", "8.3.RC1"), ("3.2.0", None)):
        assert not run(*ok), ok


def test_a_release_a_vllm_ascend_release_note_lists_as_a_known_issue_is_judged_beside_that_release_only():
    """vllm-ascend's release notes: v0.18.0rc1 / v0.19.1rc1 list a g++ internal compiler error of triton-ascend 3.2.0
    (workaround 3.2.0.dev20260322, issue 7782); v0.18.0 / v0.19.1rc1 ask to upgrade torch-npu 2.9.0 to
    2.9.0.post1+git4c901a4 "because of some known issue". Beside those releases it is a warning whose fix names the
    off-PyPI wheel (no pip line that would fail); beside another vllm-ascend, or alone, it is not reported."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def bad(**pkgs: str) -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": {k.replace("_", "-"): {"version": v} for k, v in pkgs.items()}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings if f.id == "package-known-bad-release"]

    (f,) = bad(triton_ascend="3.2.0", vllm_ascend="0.19.1rc1")
    assert f.severity.value == "warning" and f.components == ("triton-ascend",)
    assert "internal compiler error" in f.detail and "3.2.0.dev20260322" in f.fix.text and not f.fix.commands
    assert "release_notes.md" in f.source and "issues/7782" in f.source
    (g,) = bad(torch_npu="2.9.0", vllm_ascend="0.18.0")
    assert g.components == ("torch-npu",) and "2.9.0.post1+git4c901a4" in g.fix.text and "vllm-ascend 0.18.0" in g.title
    assert bad(triton_ascend="3.2.0", vllm_ascend="0.18.0rc1")
    assert not bad(triton_ascend="3.2.0", vllm_ascend="0.13.0")
    assert not bad(triton_ascend="3.2.0")
    assert not bad(torch_npu="2.9.0", vllm_ascend="0.18.0rc1")
    assert not bad(torch_npu="2.9.0.post1+git4c901a4", vllm_ascend="0.18.0")


def test_modelscope_1_23_beside_vllm_ascend_0_7_3_is_known_bad():
    """vllm-ascend's release notes: v0.7.3rc1 pins modelscope<1.23.0 on vLLM v0.7.3 (vllm pull 13807) and v0.7.3.post1
    notes that only modelscope<1.23.0 works with 0.7.3. A warning beside vllm-ascend 0.7.3*, not beside 0.8.4."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def bad(ms: str, va: str) -> list:
        doc = {"schema": "doctor.snapshot/1",
               "packages": {"modelscope": {"version": ms}, "vllm-ascend": {"version": va}}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings if f.id == "package-known-bad-release"]

    (f,) = bad("1.23.1", "0.7.3.post1")
    assert f.components == ("vllm",) and f.fix.commands == ("pip install 'modelscope<1.23.0'",)
    assert "vllm/pull/13807" in f.detail and "vllm-ascend/pull/954" in f.source
    assert bad("1.23.0", "0.7.3rc2") and not bad("1.22.0", "0.7.3") and not bad("1.25.0", "0.8.4rc1")


def _ta_chip(pkgs: dict, chip: str | None = None, soc: str | None = None, cann: str | None = None) -> list:
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    doc: dict = {"schema": "doctor.snapshot/1", "packages": pkgs}
    asc: dict = {}
    if chip or soc:
        asc["devices"] = [{"id": 0, **({"chip": chip} if chip else {}), **({"soc": soc} if soc else {})}]
    if cann:
        asc["toolkit"] = {"version": cann}
    if asc:
        doc["ascend"] = asc
    return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
            if f.id == "triton-ascend-chip-unsupported"]


def test_triton_ascend_on_a_chip_its_release_matrix_does_not_list():
    """triton-ascend's release note: 3.2.0's compatibility matrix lists Atlas A2/A3 as its hardware products. On a 950
    host it is a warning; on A2, or for a release whose hardware the doctor has not read (3.2.1 on 950), nothing."""
    (f,) = _ta_chip({"triton-ascend": {"version": "3.2.0"}}, "Ascend950PR")
    assert f.severity.value == "warning" and f.components == ("triton-ascend", "npu") and "release_note.md" in f.source
    assert "A2 / A3" in f.title
    assert not _ta_chip({"triton-ascend": {"version": "3.2.0"}}, "910B3")
    assert not _ta_chip({"triton-ascend": {"version": "3.2.1"}}, "Ascend950PR")
    assert not _ta_chip({"triton-ascend": {"version": "3.2.0rc2"}}, "Ascend950PR")  # no source read for it


def test_triton_ascend_on_a_soc_its_cann_bishengir_has_no_target_for():
    """triton-ascend compiles with `bishengir-compile --target=<SoC>` of its CANN. AscendNPU-IR's table pairs v1.0.0 /
    v1.1.0 / v1.2.0 with CANN 8.5.0 / 9.0.0 / 9.1.0 and their Options.td list Ascend910B4-1 and Ascend910B2C; the source
    before 2025-11-24 (CANN 8.3's time: 3.2.0rc4, vLLM Ascend 0.13.0rc1's dev build) lists neither (inferred, said so)."""
    (f,) = _ta_chip({"triton-ascend": {"version": "3.2.0rc4"}}, "910B4-1", cann="8.3.RC2")
    assert f.severity.value == "warning" and "Ascend910B4-1" in f.title and "Inferred" in f.detail
    assert "AscendNPU-IR/blob/e4633e70f" in f.source and "3.2.0 / 3.2.1 / 3.2.2" in f.fix.text
    (g,) = _ta_chip({"triton-ascend": {"version": "3.2.0rc4"}}, soc="Ascend910B2C")
    assert "Ascend910B2C" in g.title
    for ok in (("3.2.0", "910B4-1", None), ("3.2.1", "910B2C", None), ("3.2.2", "910B4-1", "9.1.0"),
               ("3.2.0rc4", "910B3", "8.3.RC2"), ("3.2.2", "Ascend910_9382", None),
               # CANN 8.5.0's bishengir-compile knows 910B4-1: the pairing check speaks, not this one
               ("3.2.0rc4", "910B4-1", "8.5.0")):
        assert not _ta_chip({"triton-ascend": {"version": ok[0]}}, ok[1], cann=ok[2]), ok
    # a board or family name is not a SoC target name: family rules only
    assert not _ta_chip({"triton-ascend": {"version": "3.2.0rc4"}}, "Ascend910B")


def test_triton_ascend_on_a_first_generation_ascend_910_is_a_warning():
    """No bishengir-compile release registers a first-generation Ascend 910 target (AscendNPU-IR's Options.td, `def
    Target`, at every commit the SoC rows cite: Atlas A2 / A3 / 950 SoCs only), and such a chip names no SoC a target
    list could hold (npu-smi '910B' with a first-generation board's 32 GB, '910ProB'; PCI d801): every release with a
    SoC list warns there, as for any SoC it has no target for. An Atlas A2 910B with 64 GB, or a bare '910B' whose HBM
    is not known (read as A2), is not judged by this rule."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def chip(ta: str, ascend: dict) -> list:
        doc = {"schema": "doctor.snapshot/1", "packages": {"triton-ascend": {"version": ta}},
               "ascend": {"toolkit": {"version": "9.0.0"}, **ascend}}
        return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
                if f.id == "triton-ascend-chip-unsupported"]

    gen1 = {"devices": [{"id": 0, "chip": "910B", "hbm_total_mb": 32768}]}
    for ta in ("3.2.0", "3.2.1", "3.2.2", "3.2.0rc4"):
        (f,) = chip(ta, gen1)
        assert f.severity.value == "warning" and f.components == ("triton-ascend", "npu"), ta
        assert "first-generation Ascend 910" in f.title and "Options.td" in f.source, ta
        assert "compiler.py" in f.source and "Atlas A2 / A3" in f.fix.text, ta
    assert chip("3.2.1", {"devices": [{"id": 0, "chip": "910ProB"}]})
    assert chip("3.2.1", {"pci": [{"address": "0000:c1:00.0", "device_id": "d801"}]})
    assert not chip("3.2.1", {"devices": [{"id": 0, "chip": "910B", "hbm_total_mb": 65536}]})
    assert not chip("3.2.1", {"devices": [{"id": 0, "chip": "910B"}]})
    assert not chip("9.9.9", gen1)  # a release no source names: silent


def test_triton_ascend_on_310p_is_an_error():
    """No bishengir-compile release has a 310P target, vLLM Ascend documents triton / triton-ascend as not supported on
    the Atlas 300I DUO (its Triton paths run and fail), and triton-ascend's maintainers plan no 310P3 support: any
    release the doctor knows, installed on a 310P, is an error whose fix uninstalls it."""
    for ta in ("3.2.0", "3.2.1", "3.2.2", "3.2.0rc4"):
        (f,) = _ta_chip({"triton-ascend": {"version": ta}}, "310P3")
        assert f.severity.value == "error" and f.components == ("triton-ascend", "npu"), ta
        assert "pip uninstall -y triton-ascend" in f.fix.text and "hardwares/310p.md" in f.source
    assert not _ta_chip({"triton-ascend": {"version": "9.9.9"}}, "310P3")  # a release no source names: silent


def test_the_triton_ascend_a_vllm_ascend_release_pins_stands_in_when_its_version_is_unknown():
    """triton-ascend installed without a version (or not listed) beside a known vllm-ascend release: the build that
    release pins is judged, at warning, saying so (0.13.0rc1: 3.2.0.dev2025110717 from its release notes; 0.17.0rc1:
    3.2.0 from requirements.txt). A vllm-ascend without a pin, a dev build, or triton-ascend known absent: silent."""
    (f,) = _ta_chip({"vllm-ascend": {"version": "0.13.0rc1"}, "triton-ascend": {}}, "910B4-1")
    assert f.severity.value == "warning" and "vllm-ascend 0.13.0rc1 pins (3.2.0.dev2025110717)" in f.title
    assert "vllm-ascend/tree/v0.13.0rc1" in f.source and f.evidence["stand_in_for_vllm_ascend"] == "0.13.0rc1"
    (g,) = _ta_chip({"vllm-ascend": {"version": "0.17.0rc1"}}, "310P3")
    assert g.severity.value == "warning" and "pins (3.2.0)" in g.title  # a stand-in is never an error
    assert not _ta_chip({"vllm-ascend": {"version": "0.13.0"}, "triton-ascend": {}}, "910B4-1")
    assert not _ta_chip({"vllm-ascend": {"version": "0.12.0rc1"}, "triton-ascend": {}}, "910B4-1")
    assert not _ta_chip({"vllm-ascend": {"version": "0.13.1.dev3"}, "triton-ascend": {}}, "910B4-1")
    assert not _ta_chip({"vllm-ascend": {"version": "0.13.0rc1"}, "triton-ascend": {}})
    assert not _ta_chip({"vllm-ascend": {}, "triton-ascend": {}}, "910B4-1")


def test_an_installed_triton_ascend_version_is_judged_not_the_stand_in():
    (f,) = _ta_chip({"vllm-ascend": {"version": "0.17.0rc1"}, "triton-ascend": {"version": "3.2.0"}}, "310P3")
    assert f.severity.value == "error" and f.evidence["stand_in_for_vllm_ascend"] is None
    assert not _ta_chip({"vllm-ascend": {"version": "0.13.0rc1"}, "triton-ascend": {"version": "3.2.0"}}, "910B4-1")


def test_numpy2_with_a_cann_before_9_is_an_error_its_install_steps_cap(tmp_path):
    """CANN's Python dependencies as vllm-ascend's installation guide installs them carry 'numpy<2.0.0' up to CANN
    8.5.1 (v0.19.1rc1) and plain numpy from CANN 9.0.0 (fc5cbd6): vLLM 0.8.3 brought numpy 2.2.4 beside CANN 8.0.0
    (vllm-ascend issue 473), and torch_npu's init fails with numpy 2 on CANN 8.x (the maintainers, PR 472)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    def report(cann: str, numpy: str) -> dict:
        return {"schema": "doctor.snapshot/1", "python": {"version": "3.10"},
                "packages": {"vllm": {"version": "0.8.3"}, "numpy": {"version": numpy}, "vllm-ascend": {}},
                "ascend": {"toolkit": {"version": cann}}}

    for cann in ("8.0.0", "8.2.RC1", "8.5.1"):
        assert found(report(cann, "2.2.4"))["numpy2-with-cann"] == "error", cann
    for cann, numpy in (("9.0.0", "2.2.4"), ("9.1.0", "2.3.1"), ("8.0.0", "1.26.4")):
        assert "numpy2-with-cann" not in found(report(cann, numpy)), (cann, numpy)
    root = Path(__file__).resolve().parents[2]
    f = tmp_path / "report.json"
    f.write_text(json.dumps(report("8.0.0", "2.2.4")))
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(f)], cwd=root,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
    assert r.returncode == 1, r.stderr
    (x,) = [x for x in json.loads(r.stdout)["findings"] if x["id"] == "numpy2-with-cann"]
    assert x["severity"] == "error" and x["components"][:2] == ["numpy", "cann"]
    assert x["title"] == "numpy 2.2.4 with CANN 8.0.0, whose Python dependencies need numpy<2.0.0"
    assert "v0.19.1rc1/docs/source/installation.md" in x["source"]


def test_transformers_code_that_needs_a_newer_torch_than_it_declares_is_an_error():
    """transformers declares torch only under its extras (4.50: `torch>=2.0`) while its code needs torch 2.1 and more: 4.50.x calls torch.compiler at import (integrations/flex_attention.py), 4.52+ turns PyTorch off below
    2.1 (import_utils.py), 5.x below 2.2 / 2.4 / 2.5 / 2.6 (profiles/code-needs.toml, read from each release's files).
    returnn issue 1706: transformers 4.50 on torch 2.0.0 fails with `module 'torch' has no attribute 'compiler'`."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"version": "3.10.16"},
                               "packages": {"torch": {"version": "2.0.0+cu117"}, "transformers": {"version": "4.50.3"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-code-needs-unmet"]
    assert f.severity.value == "error" and f.components[:2] == ("torch", "transformers")
    assert f.title == "transformers 4.50.3's code needs torch>=2.1; torch 2.0.0+cu117 is installed"
    assert "torch.compiler" in f.detail and f.evidence["read_at"] == ["4.50.0", "4.51.0"]
    assert f.source == "https://github.com/huggingface/transformers/blob/v4.50.0/src/transformers/integrations/flex_attention.py#L61"
    for transformers, torch, fires in [("4.52.0", "2.0.1", True), ("4.57.6", "2.1.0", False), ("5.0.0", "2.1.2", True),
                                       ("5.3.0", "2.3.1", True), ("5.3.0", "2.4.0+cpu", False), ("5.25.0", "2.5.1", True),
                                       ("4.49.0", "2.0.1", False),  # 4.49 has neither the call nor the gate
                                       ("5.26.0", "2.0.0", False)]:  # newer than the newest release read: not judged
        got = found(bare(packages={"transformers": {"version": transformers}, "torch": {"version": torch}}))
        assert ("package-code-needs-unmet" in got) is fires, (transformers, torch)
    # an unknown version on either side says nothing
    assert "package-code-needs-unmet" not in found(bare(packages={"transformers": {}, "torch": {"version": "2.0.1"}}))
    assert "package-code-needs-unmet" not in found(bare(packages={"transformers": {"version": "4.52.0"}}))


def test_transformers_trainer_that_needs_a_newer_accelerate_than_it_declares_is_a_warning():
    """transformers 4.38.0-4.42.4 declare accelerate>=0.21.0 (extras) while their Trainer hands use_seedable_sampler to
    Accelerator, which accelerate has from 0.26.0 (profiles/code-needs.toml; run on the PyPI wheels: TypeError with
    accelerate 0.21.0 and 0.25.0). A warning: only code that builds a Trainer breaks. transformers issue 31433
    (4.41.2 + accelerate 0.21.0, `Trainer()` fails; transformers PR 31449 names the argument)."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"version": "3.12.3"}, "packages": {
        "transformers": {"version": "4.41.2"}, "accelerate": {"version": "0.21.0"}, "torch": {"version": "2.3.1+cu121"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-code-needs-unmet"]
    assert f.severity.value == "warning" and f.components[:2] == ("python", "transformers")
    assert f.title == "transformers 4.41.2's code needs accelerate>=0.26.0; accelerate 0.21.0 is installed"
    assert "use_seedable_sampler" in f.detail and f.evidence["read_at"][0] == "4.38.0"
    assert f.source == "https://github.com/huggingface/transformers/blob/v4.41.2/src/transformers/trainer.py#L4529"
    for transformers, accelerate, fires in [("4.38.0", "0.25.0", True), ("4.42.4", "0.21.0", True),
                                            ("4.41.2", "0.26.0", False), ("4.37.2", "0.21.0", False),
                                            ("4.45.0", "0.25.0", False),  # declares >=0.26.0: the declared check's
                                            ("4.43.0", "0.25.0", False)]:  # not judged by this row
        got = found(bare(packages={"transformers": {"version": transformers}, "accelerate": {"version": accelerate}}))
        assert (got.get("package-code-needs-unmet") == "warning") is fires, (transformers, accelerate)
    # an unknown accelerate release, or none stated, says nothing
    assert "package-code-needs-unmet" not in found(bare(packages={"transformers": {"version": "4.41.2"},
                                                                  "accelerate": {}}))
    assert "package-code-needs-unmet" not in found(bare(packages={"transformers": {"version": "4.41.2"}}))


def test_transformers_data_seed_gate_that_needs_accelerate_1_1_is_a_warning():
    """transformers 4.46.0-4.57.6 declare accelerate>=0.26.0 while TrainingArguments raises NotImplementedError for
    data_seed below accelerate 1.1.0 (profiles/code-needs.toml; run on the PyPI wheels). A warning: only runs that set
    data_seed break. transformers issue 34412 (4.46.0 with accelerate 1.0.1)."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {
        "transformers": {"version": "4.46.0"}, "accelerate": {"version": "1.0.1"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-code-needs-unmet"]
    assert f.severity.value == "warning" and f.components[:2] == ("python", "transformers")
    assert f.title == "transformers 4.46.0's code needs accelerate>=1.1.0; accelerate 1.0.1 is installed"
    assert "data_seed" in f.detail
    for transformers, accelerate, fires in [("4.57.6", "0.34.2", True), ("4.46.0", "1.1.0", False),
                                            ("4.45.2", "1.0.1", False), ("4.58.0", "1.0.1", False)]:
        got = found(bare(packages={"transformers": {"version": transformers}, "accelerate": {"version": accelerate}}))
        assert (got.get("package-code-needs-unmet") == "warning") is fires, (transformers, accelerate)
    # a warning-level need does not stand for the declared range every Trainer use needs: both are said
    got = found(bare(packages={"transformers": {"version": "4.47.0"}, "accelerate": {"version": "0.25.0"}}))
    assert got["requirement-version-unmet"] == "error" and got["package-code-needs-unmet"] == "warning"


def test_megatron_core_code_that_needs_a_newer_nvidia_resiliency_ext_is_an_error():
    """megatron-core 0.17.0's default async save strategy imports get_write_results_queue, which nvidia-resiliency-ext
    has from 0.6.0; 0.17.1 on asserts NVRX_MIN_VERSION 0.6.0 at import (profiles/code-needs.toml, read at the
    core_v* tags). Its metadata names nvidia-resiliency-ext only in the `dev` extra, unversioned."""
    for mcore, nvrx, fires in [("0.17.0", "0.5.0", True), ("0.17.1", "0.5.0", True), ("0.19.0", "0.4.1", True),
                               ("0.17.0", "0.6.0", False), ("0.16.1", "0.5.0", False),
                               ("0.19.2", "0.5.0", False)]:  # newer than the newest release read: not judged
        got = found(bare(packages={"megatron-core": {"version": mcore}, "nvidia-resiliency-ext": {"version": nvrx}}))
        assert ("package-code-needs-unmet" in got) is fires, (mcore, nvrx)
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {
        "megatron-core": {"version": "0.17.0"}, "nvidia-resiliency-ext": {"version": "0.5.0"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-code-needs-unmet"]
    assert "megatron" in f.components[:2] and "nvidia-resiliency-ext>=0.6.0" in f.title
    assert f.source.startswith("https://github.com/NVIDIA/Megatron-LM/blob/core_v0.17.0/")
    # without nvidia-resiliency-ext (every Ascend stack) the need does not apply
    assert "package-code-needs-unmet" not in found(bare(packages={"megatron-core": {"version": "0.17.0"}}))


def test_verl_0_4_with_a_setuptools_that_removed_pkg_resources_is_an_error():
    """verl 0.4.0-0.4.1 import pkg_resources in verl/__init__.py; setuptools 82.0.0 removed it (its 82.0.0 wheel holds
    no pkg_resources/, 81.0.0's 19 files). On a real PyPI venv, verl 0.4.1 with setuptools 84.2.1: `import verl` fails;
    with 81.0.0 it imports."""
    for verl, st, fires in [("0.4.1", "84.2.1", True), ("0.4.0", "82.0.0", True), ("0.4.1", "81.0.0", False),
                            ("0.5.0", "84.2.1", False), ("0.3.1", "84.2.1", False)]:
        got = found(bare(packages={"verl": {"version": verl}, "setuptools": {"version": st}}))
        assert ("package-code-needs-unmet" in got) is fires, (verl, st)


def test_pyarrow_26_beside_numpy_1_is_an_error():
    """pyarrow 26.0.0 and 26.0.1 raise at import under numpy 1.x ('pyarrow requires NumPy 2.0 or newer'; their
    wheels' pyarrow/lib.pyx, which 25.0.x's lacks) and declare no numpy requirement, so pip check is clean. Real:
    `pip install verl==0.7.1` (numpy<2.0.0, pyarrow>=19.0.0) gave numpy 1.26.4 with pyarrow 26.0.1, and
    verl.trainer.main_ppo failed to import while check said nothing about it. Snapshot: that venv's versions."""
    for pyarrow, numpy, fires in [("26.0.1", "1.26.4", True), ("26.0.0", "1.23.5", True), ("26.0.1", "2.0.0", False),
                                  ("25.0.1", "1.26.4", False),
                                  ("27.0.0", "1.26.4", False)]:  # newer than the newest release read: not judged
        got = found(bare(packages={"pyarrow": {"version": pyarrow}, "numpy": {"version": numpy}}))
        assert ("package-code-needs-unmet" in got) is fires, (pyarrow, numpy)
    # without numpy pyarrow imports (its gate runs only when numpy imports)
    assert "package-code-needs-unmet" not in found(bare(packages={"pyarrow": {"version": "26.0.1"}}))
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {
        "verl": {"version": "0.7.1"}, "pyarrow": {"version": "26.0.1"}, "numpy": {"version": "1.26.4"}}})
    (f,) = [f for f in diagnose([(None, snap, None)]).findings if f.id == "package-code-needs-unmet"]
    assert f.severity.value == "error"
    assert f.title == "pyarrow 26.0.1's code needs numpy>=2.0; numpy 1.26.4 is installed"
    assert "NumPy 2.0 or newer" in f.detail and f.source.endswith("python/pyarrow/lib.pyx#L41")


def test_pyarrow_26_on_a_stack_that_caps_numpy_below_2_offers_an_older_pyarrow_first():
    """verl 0.6.1-0.8.0 declare numpy<2.0.0: `numpy>=2.0` as the first fix breaks verl's own declaration (and the
    next pip check). The cap is read from what is installed (METADATA's Requires-Dist, or the release's published
    one for a snapshot of versions), not from verl's version: pyarrow<26.0.0 comes first, with a command; a stack
    that allows numpy 2 keeps numpy>=2.0 first."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def fix(packages: dict) -> Any:  # noqa: ANN401
        snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {
            "pyarrow": {"version": "26.0.1", "requires_dist": []}, "numpy": {"version": "1.26.4", "requires_dist": []},
            **packages}})
        (f,) = [f for f in diagnose([(None, snap, None)], only=["code-needs"]).findings
                if f.id == "package-code-needs-unmet"]
        return f.fix

    capped = fix({"verl": {"version": "0.7.1"}})  # published metadata: numpy<2.0.0
    assert capped.text.startswith("Install a pyarrow release that runs on numpy 1.26.4 (pyarrow<26.0.0")
    assert "verl 0.7.1 requires numpy<2.0.0, which rules numpy>=2.0 out" in capped.text
    assert any(c.endswith("pip install 'pyarrow<26.0.0'") for c in capped.commands)
    own = fix({"mylib": {"version": "1.0", "requires_dist": ["numpy (<2,>=1.22)", "numpy>=3; extra == 'x'"]}})
    assert "mylib 1.0 requires numpy<2,>=1.22" in own.text and own.text.startswith("Install a pyarrow release")
    free = fix({"mylib": {"version": "1.0", "requires_dist": ["numpy>=1.22", "numpy<2; python_version < '3'"]}})
    assert free.text.startswith("Install numpy>=2.0") and free.commands == ("pip install 'numpy>=2.0'",)


def _verl_wheel_files(version: str) -> dict[str, str] | None:
    """METADATA and the .py files of the real verl wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels (None: absent)."""
    import os
    import zipfile
    from pathlib import Path

    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")
    hits = sorted((Path(d) / "wheels").glob(f"verl-{version}-*.whl")) if d else []
    if not hits:
        return None
    with zipfile.ZipFile(hits[0]) as z:
        return {n: z.read(n).decode() for n in z.namelist() if n.endswith((".py", "/METADATA"))}


@pytest.mark.parametrize(("version", "module"), [("0.7.1", "verl/experimental/agent_loop/agent_loop.py"),
                                                 ("0.8.0", "verl/workers/rollout/llm_server.py")])
def test_the_real_verl_wheels_import_cachetools_without_declaring_it(version, module):
    """The evidence, from the real wheels: the trainer's module imports cachetools at module level and the METADATA
    names no cachetools at all (pip neither installs nor misses it): 0.7.1's code-needs row, 0.8.0's loads record."""
    files = _verl_wheel_files(version)
    if files is None:
        pytest.skip(f"no verl-{version} wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    (meta,) = [t for n, t in files.items() if n.endswith(".dist-info/METADATA")]
    assert "cachetools" not in meta.lower()
    assert "\nfrom cachetools import LRUCache\n" in files[module]


def test_verl_0_7_without_cachetools_is_an_error_on_a_complete_snapshot():
    """verl 0.7.0-0.7.1's trainer imports cachetools in the agent loop every run starts, which their metadata never
    names; it used to come with google-auth. Real: a plain `pip install 'verl[mcore]==0.7.1'` has none, pip check is
    clean and check said nothing about it. Only a complete snapshot says it is not installed; a stated report that
    does not list it says nothing. From 0.8.0 `ray_trainer` imports it at load: the loads record's check says so
    (package-imports-undeclared-missing), not a row of this table."""
    def snap(verl, **more):
        return {"schema": "doctor.snapshot/1", "complete": True,
                "packages": {"verl": {"version": verl}, "numpy": {"version": "1.26.4"}, **more}}

    for verl, fires in [("0.7.0", True), ("0.7.1", True), ("0.8.0", False), ("0.9.0", False),
                        ("0.6.1", False),  # rollout.mode defaults to sync: no agent loop by default
                        ("0.9.1", False)]:  # names it under [verl-core] (the run-set rule judges it)
        assert ("package-code-needs-unmet" in found(snap(verl))) is fires, verl
    assert "package-code-needs-unmet" not in found(snap("0.7.1", cachetools={"version": "8.0.2"}))
    assert "package-code-needs-unmet" not in found(bare(packages={"verl": {"version": "0.7.1"}}))
    (f,) = [f for f in diagnose_dict(snap("0.7.1")).findings if f.id == "package-code-needs-unmet"]
    assert f.severity.value == "error" and f.title == "verl 0.7.1's code imports cachetools, which is not installed"
    assert "agent_loop.py" in f.detail and f.fix is not None and "pip install 'cachetools'" in f.fix.text


def test_documented_stacks_meet_every_code_need():
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    for p in load_profiles():
        assert "package-code-needs-unmet" not in found(stack_snapshot(p)), p.name


def _missing_names(packages: dict[str, Any], modules: dict[str, Any] | None = None) -> list[Any]:
    """The package-imports-missing-name findings of `doctor check --from` on a snapshot of these packages."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    doc = {"schema": "doctor.snapshot/1", "packages": packages, **({"modules": modules} if modules is not None else {})}
    return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
            if f.id == "package-imports-missing-name"]


def test_a_release_importing_at_load_a_name_the_installed_megatron_core_lacks_is_an_error():
    """mbridge 0.13.0's mbridge/core/util.py imports megatron.core.distributed.custom_fsdp at module level; Megatron-
    Core 0.14.0 renamed the package to distributed.fsdp: `import mbridge` raises ImportError (profiles/
    import-surface/, read from both sources at their tags)."""
    (f,) = _missing_names({"mbridge": {"version": "0.13.0"}, "megatron-core": {"version": "0.14.0"}})
    assert f.severity.value == "error" and f.components[:2] == ("mbridge", "megatron")
    assert f.title.startswith("mbridge 0.13.0 imports FullyShardedDataParallel from "
                              "megatron.core.distributed.custom_fsdp") and "megatron-core 0.14.0" in f.title
    assert "mbridge/core/util.py:248" in f.detail and "core_v0.14.0" in f.detail and "0.13.1" in f.fix.text
    assert "ModuleNotFoundError: No module named 'megatron.core.distributed.custom_fsdp'" in f.detail
    assert f.source.startswith("https://github.com/ISEEKYAN/mbridge/blob/0efefc6") and "#L248" in f.source
    assert "https://github.com/NVIDIA/Megatron-LM/tree/" in f.source
    # the same releases from a git checkout of Megatron: the probed module's version counts; a commit not read is
    # not judged, the tag's commit is
    mod = {"megatron": {"origins": ["/Megatron-LM/megatron"], "version": "0.14.0"}}
    assert len(_missing_names({"mbridge": {"version": "0.13.0"}}, mod)) == 1
    mod["megatron"]["git"] = {"commit": "0123456789abcdef"}
    assert _missing_names({"mbridge": {"version": "0.13.0"}}, mod) == []
    mod["megatron"]["git"] = {"commit": "23e00ed0963c"}  # core_v0.14.0
    assert len(_missing_names({"mbridge": {"version": "0.13.0"}}, mod)) == 1
    # an mbridge whose version is not stated: only what every mbridge release read imports at load
    (f,) = _missing_names({"mbridge": {}, "megatron-core": {"version": "0.11.0"}})
    assert f.title.startswith("mbridge imports ") and "every mbridge release read" in f.detail
    assert _missing_names({"mbridge": {}, "megatron-core": {"version": "0.14.0"}}) == []  # 0.15.x no longer imports custom_fsdp
    # releases that fit, and releases not read, say nothing
    assert _missing_names({"mbridge": {"version": "0.13.0"}, "megatron-core": {"version": "0.13.1"}}) == []
    assert _missing_names({"mbridge": {"version": "0.13.0"}, "megatron-core": {"version": "0.14.5"}}) == []
    assert _missing_names({"mbridge": {"version": "0.16.0"}, "megatron-core": {"version": "0.11.0"}}) == []
    assert _missing_names({"megatron-core": {"version": "0.11.0"}}) == []


def test_a_name_only_a_source_build_declaring_a_release_version_imports_is_a_warning():
    """mbridge's tag v0.15.1 (and its PyPI wheel, the same files) does not import
    megatron.core.utils.get_tensor_model_parallel_group_if_none; main (which still declares 0.15.1) does, since
    2025-09-28: a source build beside megatron-core 0.12.1 fails `import mbridge` (mbridge issue 50)."""
    (f,) = _missing_names({"mbridge": {"version": "0.15.1"}, "megatron-core": {"version": "0.12.1"}})
    assert f.severity.value == "warning" and f.components[:2] == ("mbridge", "megatron")
    assert f.title.startswith("mbridge 0.15.1 built from main (") and "get_tensor_model_parallel_group_if_none" in f.title
    assert "The mbridge 0.15.1 release (v0.15.1) imports nothing megatron-core 0.12.1 lacks" in f.detail
    assert "megatron-core 0.13.0" in f.fix.text and "mbridge/models/qwen3_vl/utils.py#L8" in f.source
    # collected from a PyPI install (no direct_url.json, not editable): the release's own files, nothing to say; a
    # VCS install at main's commit read is that tree: an error
    assert _missing_names({"mbridge": {"version": "0.15.1", "editable": False}, "megatron-core": {"version": "0.12.1"}}) == []
    (f,) = _missing_names({"mbridge": {"version": "0.15.1", "editable": False, "url": "https://github.com/ISEEKYAN/mbridge.git",
                            "commit": "10cb17f59dd082ef1dd9d5a36f8b1b5b3a5ecc3e"}, "megatron-core": {"version": "0.12.1"}})
    assert f.severity.value == "error" and f.title.startswith("mbridge 0.15.1 at main (10cb17f59) imports get_tensor")
    assert "at main (commit 10cb17f59)" in f.detail
    # megatron-core 0.13.0 defines it; the release 0.15.0 has no source build declaring its version
    assert _missing_names({"mbridge": {"version": "0.15.1"}, "megatron-core": {"version": "0.13.0"}}) == []
    assert _missing_names({"mbridge": {"version": "0.15.0"}, "megatron-core": {"version": "0.12.1"}}) == []


def test_verl_importing_a_transformers_name_that_transformers_5_removed_is_an_error():
    """verl 0.6.1's verl/utils/model.py imports AutoModelForVision2Seq at module level; transformers 5.0 removed it
    (profiles/import-surface/, read from the PyPI wheels)."""
    f = found(bare(packages={"verl": {"version": "0.6.1"}, "transformers": {"version": "5.3.0"}}))
    assert f.get("package-imports-missing-name") == "error"
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "packages": {"verl": {"version": "0.6.1"},
                                                                          "transformers": {"version": "5.3.0"}}})
    (x,) = [x for x in diagnose([(None, snap, None)]).findings if x.id == "package-imports-missing-name"]
    assert x.components[:2] == ("verl", "transformers") and "AutoModelForVision2Seq" in x.title
    assert "transformers-5.3.0-py3-none-any.whl" in x.detail and x.source.endswith("transformers/tree/v5.3.0")
    # a transformers release that has it, one not read (newer than the wheels read), and a verl that no longer
    # imports it: nothing
    for pk in ({"verl": {"version": "0.6.1"}, "transformers": {"version": "4.57.6"}},
               {"verl": {"version": "0.6.1"}, "transformers": {"version": "5.26.0"}},
               {"verl": {"version": "0.7.1"}, "transformers": {"version": "5.3.0"}}):
        assert "package-imports-missing-name" not in found(bare(packages=pk))


def test_verls_vllm_rollout_importing_a_name_the_installed_vllm_lacks_is_an_error():
    """verl 0.7.0's default rollout (mode: async) loads vllm_async_server.py, which imports CoreEngineProcManager
    from vllm.v1.engine.utils at module level; vLLM 0.9.1 has no such module (profiles/import-surface/, read
    from PyPI's sdists). On Ascend vLLM is built from source at a release: 0.9.1+empty is judged as 0.9.1."""
    (f,) = _missing_names({"verl": {"version": "0.7.0"}, "vllm": {"version": "0.9.1+empty"}})
    assert f.severity.value == "error" and "CoreEngineProcManager" in f.title and f.title.endswith("vllm 0.9.1 does not have")
    assert "ModuleNotFoundError: No module named 'vllm.v1.engine.utils'" in f.detail
    assert "vllm-0.9.1.tar.gz" in f.detail and "verl.workers.rollout.vllm_rollout.vllm_async_server" in f.detail
    assert "0.9.2" in f.fix.text and f.source.endswith("https://github.com/vllm-project/vllm/tree/v0.9.1")
    assert "vllm_async_server.py#L" in f.source
    # verl 0.5.0's rollout package imports vllm.model_executor.sampling_metadata, which vLLM 0.11.0 removed
    (f,) = _missing_names({"verl": {"version": "0.5.0"}, "vllm": {"version": "0.11.0"}})
    assert "SamplingMetadata" in f.title and "vllm_rollout_spmd.py:50" in f.detail
    # the pairs the documented stacks install, a vLLM release not read, and a vLLM dev build: nothing
    for pk in ({"verl": {"version": "0.6.1"}, "vllm": {"version": "0.9.1+empty"}},
               {"verl": {"version": "0.9.0"}, "vllm": {"version": "0.23.0+empty"}},
               {"verl": {"version": "0.5.0"}, "vllm": {"version": "0.11.1"}},
               {"verl": {"version": "0.5.0"}, "vllm": {"version": "0.11.0.dev12+g1234567"}}):
        assert _missing_names(pk) == [], pk


def test_vllm_ascend_on_a_vllm_release_it_was_not_made_for_is_an_error():
    """vLLM loads vllm-ascend through its plugin entry points (setup.py: vllm_ascend:register -> the platform module,
    whose worker vLLM then imports); vllm-ascend 0.9.1's vllm_ascend/ops/fused_moe.py imports MoEConfig from
    vllm.model_executor.layers.fused_moe.layer at module level, which vLLM 0.9.2 no longer defines
    (profiles/import-surface/, read from vllm-ascend's tags and vLLM's PyPI sdists)."""
    (f,) = _missing_names({"vllm-ascend": {"version": "0.9.1"}, "vllm": {"version": "0.9.2+empty"}})
    assert f.severity.value == "error" and f.components[:2] == ("vllm-ascend", "vllm")
    assert f.title.startswith("vllm-ascend 0.9.1 imports MoEConfig from vllm.model_executor.layers.fused_moe.layer")
    assert f.title.endswith("vllm 0.9.2 does not have (and 1 more)")
    assert "vllm_ascend/ops/fused_moe.py:35" in f.detail and "vllm-0.9.2.tar.gz" in f.detail
    assert "ImportError: cannot import name 'MoEConfig'" in f.detail and "vllm_ascend.platform" in f.detail
    assert "when vLLM loads the vllm-ascend plugin" in f.detail
    assert "0.9.1" in f.fix.text and f.source.startswith("https://github.com/vllm-project/vllm-ascend/blob/")
    assert "vllm_ascend/ops/fused_moe.py#L35" in f.source and f.source.endswith("vllm/tree/v0.9.2")
    # the release forms reports write that denote a tag read: v0.9.1rc1 is the tag, 0.7.3.post1 a release
    (f,) = _missing_names({"vllm-ascend": {"version": "v0.9.1rc1"}, "vllm": {"version": "0.10.0"}})
    assert f.title.startswith("vllm-ascend 0.9.1rc1 imports ")
    (f,) = _missing_names({"vllm-ascend": {"version": "0.7.3.post1"}, "vllm": {"version": "0.9.1"}})
    assert "ensure_kv_transfer_initialized" in f.title and "vllm_ascend/worker/worker.py:28" in f.detail
    # the documented pairings (vllm-ascend's Dockerfile VLLM_TAG, the stacks' pins), a branch build (0.9.1-dev is
    # PEP 440's 0.9.1.dev0, no release read), a setuptools_scm build after a tag, and a vLLM not read: nothing
    for pk in ({"vllm-ascend": {"version": "0.9.1"}, "vllm": {"version": "0.9.1+empty"}},
               {"vllm-ascend": {"version": "0.7.3.post1"}, "vllm": {"version": "0.7.3"}},
               {"vllm-ascend": {"version": "0.13.0"}, "vllm": {"version": "0.13.0"}},
               {"vllm-ascend": {"version": "0.23.0"}, "vllm": {"version": "0.23.0+empty"}},
               {"vllm-ascend": {"version": "0.9.1-dev"}, "vllm": {"version": "0.9.2"}},
               {"vllm-ascend": {"version": "0.9.2.dev5+g1234567"}, "vllm": {"version": "0.10.0"}},
               {"vllm-ascend": {"version": "0.9.1"}, "vllm": {"version": "0.9.3"}}):
        assert _missing_names(pk) == [], pk



def test_verl_and_peft_on_an_accelerate_or_torchdata_release_that_lacks_what_they_import_is_an_error():
    """verl declares accelerate and torchdata without a lower bound, so no metadata predicts these (a real verl
    0.9.1 venv, `import verl.trainer.ppo.ray_trainer`): `import peft` (0.15.0 on, which verl's workers import)
    runs src/peft/utils/loftq_utils.py, which imports clear_device_cache from accelerate.utils.memory, absent in
    accelerate 0.26.1; verl 0.9.1's ray_trainer imports torchdata.stateful_dataloader, which torchdata 0.7.1 does
    not have (profiles/import-surface/: accelerate and torchdata from their PyPI wheels, verl 0.9.1 from its wheel,
    peft 0.21.x from theirs: the mirror's tags stop at v0.20.0)."""
    verl = {"verl": {"version": "0.9.1"}, "peft": {"version": "0.21.2"}}
    (f,) = _missing_names({**verl, "accelerate": {"version": "0.26.1"}, "torchdata": {"version": "0.11.0"}})
    assert f.severity.value == "error"
    assert f.title.startswith("peft 0.21.2 imports clear_device_cache from accelerate.utils.memory at load, which "
                              "accelerate 0.26.1")
    assert "(src/peft/utils/loftq_utils.py:25) in PyPI's peft-0.21.2-py3-none-any.whl when peft is imported" in f.detail
    assert "accelerate-0.26.1-py3-none-any.whl" in f.detail and "(of the releases read: 0.32.0)" in f.fix.text and f.source.endswith("https://github.com/huggingface/accelerate/tree/v0.26.1")
    (f,) = _missing_names({**verl, "accelerate": {"version": "1.16.0"}, "torchdata": {"version": "0.7.1"}})
    assert f.severity.value == "error" and f.components[0] == "verl"
    assert "StatefulDataLoader" in f.title and "verl/trainer/ppo/ray_trainer.py:33" in f.detail
    assert "No module named 'torchdata.stateful_dataloader'" in f.detail and "(of the releases read: 0.8.0)" in f.fix.text
    # verl 0.9.1 was read from its PyPI wheel: the line cited is at its tag
    assert f.source.startswith("https://github.com/verl-project/verl/blob/v0.9.1/verl/trainer/ppo/ray_trainer.py#L33")
    # the releases the real verl 0.9.1 venv has: nothing
    assert _missing_names({**verl, "accelerate": {"version": "1.16.0"}, "torchdata": {"version": "0.11.0"}}) == []


def test_verl_on_a_tensordict_release_without_the_non_tensor_classes_it_imports_is_an_error():
    """verl 0.6.0 on imports NonTensorData and NonTensorStack from tensordict.tensorclass at load (verl's
    tensordict_utils, the V1 trainer); tensordict 0.2.x has neither, 0.3.0-0.3.1 lack NonTensorStack (a real venv,
    verl 0.9.1 with tensordict 0.2.1: `import verl.trainer.main_ppo` raises ImportError: cannot import name
    'NonTensorData' from 'tensordict.tensorclass'; profiles/import-surface/: tensordict from its PyPI wheels). verl
    0.5.0 imports only TensorDict."""
    (f,) = _missing_names({"verl": {"version": "0.9.1"}, "tensordict": {"version": "0.3.1"}})
    assert f.severity.value == "error" and f.components[0] == "verl"
    assert f.title.startswith("verl 0.9.1 imports NonTensorStack from tensordict.tensorclass at load, which "
                              "tensordict 0.3.1 does not have")
    assert "(verl/utils/tensordict_utils.py:23)" in f.detail
    assert "tensordict-0.3.1-cp311-cp311-manylinux1_x86_64.whl" in f.detail
    assert "cannot import name 'NonTensorStack' from 'tensordict.tensorclass'" in f.detail
    assert "(of the releases read: 0.3.2)" in f.fix.text
    assert f.source.startswith("https://github.com/verl-project/verl/blob/v0.9.1/verl/utils/tensordict_utils.py#L23")
    (f,) = _missing_names({"verl": {"version": "0.6.0"}, "tensordict": {"version": "0.2.1"}})
    assert "NonTensorData" in f.title and "tensordict 0.2.1" in f.title
    # verl 0.5.0 imports TensorDict alone; the releases verl declares (>=0.8.0,<=0.10.0,!=0.9.0) and the newest read
    for pk in ({"verl": {"version": "0.5.0"}, "tensordict": {"version": "0.2.1"}},
               {"verl": {"version": "0.9.1"}, "tensordict": {"version": "0.3.2"}},
               {"verl": {"version": "0.9.1"}, "tensordict": {"version": "0.8.0"}},
               {"verl": {"version": "0.9.1"}, "tensordict": {"version": "0.10.0"}},
               {"verl": {"version": "0.6.0"}, "tensordict": {"version": "0.15.3"}}):
        assert _missing_names(pk) == [], pk


def test_verl_and_vllm_importing_a_torch_name_the_installed_torch_lacks_is_an_error():
    """torch as a callee (profiles/import-surface/: each torch release read through byte ranges of its smallest PyPI
    wheel): verl 0.3.0.post0 on runs `from torch.distributed import DeviceMesh` at load (verl/utils/fsdp_utils.py),
    which torch added to torch.distributed in 2.4 -- the ImportError of a verl report on torch 2.2.0, where a verl
    maintainer answered that verl needs torch 2.4; verl 0.6.0 on imports DTensor from torch.distributed.tensor,
    public from torch 2.5; vLLM 0.12.0 imports torch.distributed._symmetric_memory (2.5 on); accelerate 1.10.0,
    which declares torch>=2.0.0, torch.distributed.device_mesh (2.2 on). A torch build's local
    label (2.4.0+cu121, 2.5.1+cpu) is judged as its release."""
    (f,) = _missing_names({"verl": {"version": "0.3.0.post0"}, "torch": {"version": "2.2.0"}})
    assert f.severity.value == "error" and f.components == ("verl", "torch")
    assert f.title == "verl 0.3.0.post0 imports DeviceMesh from torch.distributed at load, which torch 2.2.0 does not have"
    assert "(verl/utils/fsdp_utils.py:22) at v0.3.0.post0" in f.detail
    assert "cannot import name 'DeviceMesh' from 'torch.distributed'" in f.detail
    assert "(of the releases read: 2.4.0)" in f.fix.text and f.source.endswith("https://github.com/pytorch/pytorch/tree/v2.2.0")
    (f,) = _missing_names({"verl": {"version": "0.6.1"}, "torch": {"version": "2.4.0+cu121"}})
    assert f.title.startswith("verl 0.6.1 imports DTensor from torch.distributed.tensor at load, which torch 2.4.0")
    assert "verl/workers/actor/dp_actor.py:26" in f.detail and "(of the releases read: 2.5.0)" in f.fix.text
    (f,) = _missing_names({"vllm": {"version": "0.12.0+empty"}, "torch": {"version": "2.4.1"}})
    assert f.components == ("vllm", "torch") and "No module named 'torch.distributed._symmetric_memory'" in f.detail
    # accelerate 1.10.0 declares torch>=2.0.0, and `import accelerate` runs src/accelerate/parallelism_config.py,
    # which imports torch.distributed.device_mesh (2.2 on); 1.10.1 no longer does at load
    (f,) = _missing_names({"accelerate": {"version": "1.10.0"}, "torch": {"version": "2.1.2"}})
    assert "(src/accelerate/parallelism_config.py:20)" in f.detail and "(of the releases read: 2.2.0)" in f.fix.text
    assert _missing_names({"accelerate": {"version": "1.10.1"}, "torch": {"version": "2.1.2"}}) == []
    # a verl whose version is not stated: what every release read imports (torch.distributed.device_mesh, 2.2 on)
    (f,) = _missing_names({"verl": {}, "torch": {"version": "2.1.0"}})
    assert "No module named 'torch.distributed.device_mesh'" in f.detail
    # the torch releases the documented stacks pin beside these verl and vLLM releases: nothing
    for pk in ({"verl": {"version": "0.6.1"}, "torch": {"version": "2.5.1+cpu"}},
               {"verl": {"version": "0.7.1"}, "torch": {"version": "2.8.0"}},
               {"verl": {"version": "0.9.1"}, "torch": {"version": "2.10.0"}},
               {"vllm": {"version": "0.12.0"}, "torch": {"version": "2.9.0"}},
               {"verl": {"version": "0.2.0.post1"}, "torch": {"version": "2.2.0"}},
               {"verl": {}, "torch": {"version": "2.2.0"}}):
        assert _missing_names(pk) == [], pk


def test_trl_and_peft_importing_a_transformers_name_the_installed_release_lacks_is_an_error():
    """`import trl` before v0.8 runs trl/core.py, which imports top_k_top_p_filtering from transformers (removed
    before 4.40); `import peft` 0.17.0 runs src/peft/peft_model.py, which imports HybridCache (removed in 5.0)
    (profiles/import-surface/: trl and peft at their tags, transformers from its wheels)."""
    (f,) = _missing_names({"trl": {"version": "0.7.11"}, "transformers": {"version": "4.57.1"}})
    assert f.severity.value == "error" and f.title.startswith("trl 0.7.11 imports top_k_top_p_filtering from "
                                                              "transformers at load, which transformers 4.57.1")
    assert "trl/core.py:25" in f.detail and "when trl is imported (`import trl`)" in f.detail
    assert f.source.startswith("https://github.com/huggingface/trl/blob/") and "trl/core.py#L25" in f.source
    (f,) = _missing_names({"peft": {"version": "0.17.0"}, "transformers": {"version": "5.0.0"}})
    assert "HybridCache" in f.title and "src/peft/peft_model.py:37" in f.detail and "4.57.6" in f.fix.text
    # trl's __init__ is lazy from v0.8 (nothing of transformers imported at `import trl`), peft 0.18.1 no longer
    # imports HybridCache, and a peft whose version is not stated: nothing
    for pk in ({"trl": {"version": "0.8.6"}, "transformers": {"version": "5.0.0"}},
               {"peft": {"version": "0.18.1"}, "transformers": {"version": "5.0.0"}},
               {"peft": {"version": "0.17.0"}, "transformers": {"version": "4.57.6"}},
               {"peft": {}, "transformers": {"version": "5.0.0"}}):
        assert _missing_names(pk) == [], pk


def test_a_trl_trainer_its_lazy_package_serves_importing_what_transformers_5_lacks_is_a_warning():
    """trl's __init__ is lazy: `import trl` works beside transformers 5, `from trl import DPOTrainer` imports
    trl/trainer/dpo_trainer.py, whose MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES transformers 5 removed (real venvs of trl
    0.9.6 + transformers 5.25.0 and trl 0.19.1 + 5.10.4 fail there, and the doctor said nothing). A warning naming the
    served name: verl imports none of trl, and a job that does not import DPOTrainer runs."""
    for trl, tf, line in (("0.9.6", "5.25.0", 40), ("0.19.1", "5.10.4", 49)):
        (f,) = _missing_names({"trl": {"version": trl}, "transformers": {"version": tf}})
        assert f.severity.value == "warning" and f.title == (
            f"trl {trl} imports MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES from transformers.models.auto.modeling_auto when "
            f"`from trl import DPOTrainer` (trl.trainer.dpo_trainer) loads it, which transformers {tf} does not have")
        assert f"(trl/trainer/dpo_trainer.py:{line})" in f.detail and "`import trl` alone loads" in f.detail
        assert f.evidence["lazy"] == {"transformers.models.auto.modeling_auto:MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES":
                                      "trl.trainer.dpo_trainer:DPOTrainer"}
        assert "4.57.6" in f.fix.text and f"dpo_trainer.py#L{line}" in f.source
    # transformers 4.57.6 has it (both trainers import there); trl 0.24.0 no longer imports it
    for pk in ({"trl": {"version": "0.19.1"}, "transformers": {"version": "4.57.6"}},
               {"trl": {"version": "0.24.0"}, "transformers": {"version": "5.25.0"}}):
        assert _missing_names(pk) == [], pk


def test_accelerate_peft_and_vllm_importing_what_the_installed_hub_or_transformers_lacks_is_an_error():
    """accelerate 0.32.0 declares huggingface-hub without a bound, and `import accelerate` runs
    src/accelerate/accelerator.py, which imports split_torch_state_dict_into_shards (huggingface_hub 0.21.0 on): a
    real venv of accelerate 0.32.0 and huggingface_hub 0.20.3 fails there with that ImportError. peft 0.13.x declare
    huggingface_hub>=0.17.0 and import HFValidationError from huggingface_hub.errors (0.23.0 on). vLLM 0.12.0 (built
    from source on Ascend: 0.12.0+empty) imports ALLOWED_LAYER_TYPES from transformers.configuration_utils, which
    transformers 5.0-5.3 do not define (profiles/import-surface/: accelerate and huggingface_hub from their PyPI
    wheels, peft at its tags, vLLM from its sdists)."""
    (f,) = _missing_names({"accelerate": {"version": "0.32.0"}, "huggingface-hub": {"version": "0.20.3"}})
    assert f.severity.value == "error" and f.title.startswith(
        "accelerate 0.32.0 imports split_torch_state_dict_into_shards from huggingface_hub at load, which "
        "huggingface-hub 0.20.3 does not have")
    assert "(src/accelerate/accelerator.py:34) in PyPI's accelerate-0.32.0-py3-none-any.whl" in f.detail
    assert "cannot import name 'split_torch_state_dict_into_shards' from 'huggingface_hub'" in f.detail
    assert "(of the releases read: 0.21.0)" in f.fix.text
    assert f.source == ("https://github.com/huggingface/accelerate/blob/v0.32.0/src/accelerate/accelerator.py#L34; "
                        "https://github.com/huggingface/huggingface_hub/tree/v0.20.3")
    (f,) = _missing_names({"peft": {"version": "0.13.2"}, "huggingface-hub": {"version": "0.22.2"}})
    assert "HFValidationError" in f.title and "src/peft/utils/loftq_utils.py:" in f.detail
    (f,) = _missing_names({"vllm": {"version": "0.12.0+empty"}, "transformers": {"version": "5.3.0"}})
    assert f.title.startswith("vllm 0.12.0 imports ALLOWED_LAYER_TYPES from transformers.configuration_utils at load")
    assert "in PyPI's vllm-0.12.0.tar.gz when vllm is imported (`import vllm / vllm.entrypoints.llm`)" in f.detail
    # the releases each declares beside what it imports: nothing
    for pk in ({"accelerate": {"version": "0.32.0"}, "huggingface-hub": {"version": "0.21.0"}},
               {"accelerate": {"version": "1.13.0"}, "huggingface-hub": {"version": "0.20.3"}},
               {"peft": {"version": "0.13.2"}, "huggingface-hub": {"version": "0.23.0"}},
               {"vllm": {"version": "0.12.0"}, "transformers": {"version": "4.57.1"}},
               {"vllm": {"version": "0.26.0"}, "transformers": {"version": "5.5.4"}}):
        assert _missing_names(pk) == [], pk


def test_trl_on_a_peft_without_a_name_it_imports_under_is_peft_available_and_vllm_serve_are_errors():
    """trl 0.4.2-0.7.1 import prepare_model_for_int8_training from peft under `if is_peft_available():`, which holds
    whenever peft is installed; peft 0.10.0 removed it, and trl declares peft only as an extra without an upper bound:
    a real venv of trl 0.7.1 and peft 0.10.0 fails `import trl` at trl/models/modeling_base.py:30 with that
    ImportError, and with peft 0.9.0 imports. vLLM 0.9.1's `vllm serve` loads the model loader's weight utils, which
    import HfFileSystem (huggingface_hub 0.14.0 on); its LLM entry imports get_safetensors_metadata (0.20.0 on)."""
    (f,) = _missing_names({"trl": {"version": "0.7.1"}, "peft": {"version": "0.10.0"}})
    assert f.severity.value == "error" and f.title == (
        "trl 0.7.1 imports prepare_model_for_int8_training from peft at load, which peft 0.10.0 does not have")
    assert "(trl/models/modeling_base.py:30) at v0.7.1 (commit bcf45a2d7) when trl is imported (`import trl`)" in f.detail
    assert "(of the releases read: 0.9.0)" in f.fix.text
    assert f.source.startswith("https://github.com/huggingface/trl/blob/bcf45a2d7") and "#L30" in f.source
    (f,) = _missing_names({"trl": {"version": "0.7.11"}, "peft": {"version": "0.3.0"}})
    assert "prepare_model_for_kbit_training" in f.title and "(of the releases read: 0.4.0)" in f.fix.text
    (f,) = _missing_names({"vllm": {"version": "0.9.1"}, "huggingface-hub": {"version": "0.13.4"}})
    assert f.title.startswith("vllm 0.9.1 imports HfFileSystem from huggingface_hub at load") and (
        "when vllm is imported (`import vllm / vllm.entrypoints.llm`), and HfFileSystem when `vllm serve` loads "
        "(`import vllm.entrypoints.cli.main`)") in f.detail
    for pk in ({"trl": {"version": "0.7.1"}, "peft": {"version": "0.9.0"}},
               {"trl": {"version": "0.7.11"}, "peft": {"version": "0.20.0"}},
               {"trl": {"version": "0.8.0"}, "peft": {"version": "0.10.0"}},
               {"vllm": {"version": "0.9.1"}, "huggingface-hub": {"version": "0.20.0"}}):
        assert _missing_names(pk) == [], pk


# what a real verl venv has beside verl, pulled in by its declared requirements (hydra-core, transformers, ray, ...)
# (transformers brings tqdm and regex, datasets aiohttp)
_BESIDE = {n: {"version": "1", "top_level": [m]} for n, m in (
    ("pyyaml", "yaml"), ("pillow", "PIL"), ("psutil", "psutil"), ("pydantic", "pydantic"), ("omegaconf", "omegaconf"),
    ("tqdm", "tqdm"), ("regex", "regex"), ("aiohttp", "aiohttp"), ("orjson", "orjson"))}


def _verl_snapshot(version: str, complete: bool = True, **more: dict) -> dict:
    """A collected snapshot of verl `version` whose METADATA is the release's real one (PyPI's, as the requirements
    table read it), with only the packages given installed."""
    import json
    from pathlib import Path

    table = json.loads((Path(__file__).resolve().parents[2] / "profiles" / "requirements" / "verl.json").read_text())
    rd = table["releases"][version]["requires_dist"]
    pkgs = {"verl": {"version": version, "requires_dist": rd, "top_level": ["verl"]}} | more
    return {"schema": "doctor.snapshot/1", "complete": complete, "python": {"version": "3.11.2"}, "packages": pkgs}


def _undeclared(doc: dict) -> list:
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    return [f for f in diagnose([(None, snapshot_from_dict(doc), None)]).findings
            if f.id == "package-imports-undeclared-missing"]


def test_verl_0_9_0_without_what_its_trainer_imports_but_never_declares_is_an_error():
    """verl 0.9.0's ray_trainer imports cachetools, fastapi and uvicorn at load and its V1 trainer transfer_queue, and
    its metadata names none of them (real: `pip install --no-deps verl==0.9.0` over a verl 0.9.1 venv; `import
    verl.trainer.ppo.ray_trainer` raised No module named 'cachetools', `import verl.trainer.ppo.v1` No module named
    'transfer_queue'; with the four installed both load and this check says nothing)."""
    got = {f.evidence["requires"]: f for f in _undeclared(_verl_snapshot("0.9.0", **_BESIDE))}
    assert sorted(got) == ["cachetools", "fastapi", "transferqueue", "uvicorn"]
    f = got["cachetools"]
    assert f.severity.value == "error" and f.components[-1] == "verl"
    assert "verl/workers/rollout/llm_server.py:29" in f.detail and "No module named 'cachetools'" in f.detail
    assert f.source.startswith("https://github.com/") and f.source.endswith("verl/workers/rollout/llm_server.py#L29")
    assert f.fix is not None and f.fix.commands == ("pip install 'cachetools'",)
    # installed (its top_level names the module): not a finding; a partial snapshot never says "not installed"
    have = {"cachetools": {"version": "6.2.1", "top_level": ["cachetools"]}}
    assert "cachetools" not in {f.evidence["requires"] for f in _undeclared(_verl_snapshot("0.9.0", **_BESIDE, **have))}
    assert not _undeclared(_verl_snapshot("0.9.0", complete=False))


def test_verl_0_9_1_installed_no_deps_misses_aiohttp_orjson_regex_and_tqdm_too():
    """verl 0.9.1's trainer imports aiohttp (verl/experimental/reward_loop/reward_loop.py:19), orjson
    (verl/utils/tracking.py:29), regex (verl/experimental/agent_loop/tool_parser.py:21) and tqdm
    (verl/trainer/ppo/ray_trainer.py:34) at load and declares none of them; the ownership table named no distribution
    for the four, so a venv with verl installed --no-deps was told nothing of them. Each is its own finding now."""
    got = {f.evidence["requires"]: f for f in _undeclared(_verl_snapshot("0.9.1"))}
    assert {"aiohttp", "orjson", "regex", "tqdm"} <= set(got)
    assert got["orjson"].fix.commands == ("pip install 'orjson'",) and "verl/utils/tracking.py:29" in got["orjson"].detail
    assert got["regex"].severity.value == "error"


def test_what_verl_declares_or_imports_only_when_used_is_not_this_checks():
    """verl 0.9.1 declares the four under its [verl-core] extra (the run set's finding says so); verl 0.7.1 imports
    cachetools only when its workers start (verl/experimental/agent_loop), not at load."""
    four = {"cachetools", "fastapi", "uvicorn", "transferqueue"}
    assert not four & {f.evidence["requires"] for f in _undeclared(_verl_snapshot("0.9.1"))}
    assert "cachetools" not in {f.evidence["requires"] for f in _undeclared(_verl_snapshot("0.7.1"))}
    assert not _undeclared(_verl_snapshot("0.9.1", **_BESIDE))


def test_a_verl_checkout_at_the_commit_a_stack_pins_is_judged_by_what_that_commit_imports_at_load():
    """verl installed `--no-deps -e` from a checkout of main at 1dda039b9 (the commit the 0.10.0.dev stacks pin)
    reports 0.10.0.dev0, which no release has. Its verl/utils/tracking.py:28 runs `import orjson` at module level
    and its metadata does not name orjson (tensordict's does, which a --no-deps install skips): with the commit its
    git facts or direct_url.json give, the import-surface table's source build of that commit judges it; without
    one the check skips, as before."""
    from doctor.knowledge.requirements_git import declared_at

    commit = "1dda039b9c6311889a9c9a26040677e1254814f9"
    row = declared_at("verl", commit)
    assert row is not None
    beside = {k: v for k, v in _BESIDE.items() if k != "orjson"}

    def doc(git: str | None = None, vcs: str | None = None) -> dict:
        verl = {"version": "0.10.0.dev0", "requires_dist": list(row.requires_dist), "top_level": ["verl"],
                "editable": True, "url": "file:///src/verl", **({"commit": vcs} if vcs else {})}
        d = {"schema": "doctor.snapshot/1", "complete": True, "python": {"version": "3.11.7"},
             "packages": {"verl": verl, **beside}}
        if git:
            d["modules"] = {"verl": {"origins": ["/src/verl/verl"], "git": {"commit": git, "branch": "main"}}}
        return d

    for d in (doc(git=commit), doc(vcs=commit)):
        got = {f.evidence["requires"]: f for f in _undeclared(d)}
        assert "orjson" in got, sorted(got)
        f = got["orjson"]
        assert f.severity.value == "error" and f.title == (
            "verl 0.10.0.dev0 imports orjson when its trainer loads, and orjson is not installed")
        assert f.evidence["read"] == "main, commit 1dda039b9" and "verl/utils/tracking.py:28" in f.detail
        assert f.source == f"https://github.com/verl-project/verl/blob/{commit}/verl/utils/tracking.py#L28"
    # a .devN version alone, or a commit the table did not read, names no release: nothing is said
    assert not _undeclared(doc()) and not _undeclared(doc(git="0" * 40))


def test_a_module_a_plain_pythonpath_directory_can_hold_is_a_warning_not_an_error():
    """A PYTHONPATH directory that no listed distribution describes can hold the module verl imports (vendored, or a
    copy without its dist-info): the snapshot lists the distributions only, so it cannot say the import fails. Real:
    verl 0.9.0 over a working verl 0.9.1 venv, cachetools' package moved to a plain directory and its dist-info
    removed; with PYTHONPATH=<that directory> `import verl.trainer.ppo.ray_trainer` loads and check said error. A
    site-packages directory (CANN's python/site-packages), a directory a listed distribution lives in and the checkout
    a probed module resolves to (Megatron-LM holding `megatron`) hold no unlisted module: still an error. The same
    for verl 0.7.1's cachetools (code-needs, absent_breaks)."""
    have = {n: {"version": "1", "top_level": [m]} for n, m in (
        ("fastapi", "fastapi"), ("uvicorn", "uvicorn"), ("transferqueue", "transfer_queue"))}

    def run(pythonpath, modules=None, **more):
        doc = _verl_snapshot("0.9.0", **_BESIDE, **have, **more)
        doc["env"] = {"PATH": "/usr/bin", **({"PYTHONPATH": pythonpath} if pythonpath is not None else {})}
        doc["modules"] = modules or {}
        return [(f.severity.value, f.evidence.get("pythonpath_unlisted")) for f in _undeclared(doc)]

    assert run(None) == [("error", None)]
    assert run("") == [("error", None)]
    assert run("/opt/vendor") == [("warning", ["/opt/vendor"])]
    cann = "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages"
    assert run(f"{cann}:/opt/Megatron-LM/", {"megatron": {"origins": ["/opt/Megatron-LM/megatron"]}}) == [
        ("error", None)]
    assert run("/opt/deps", torch={"version": "2.7.1", "location": "/opt/deps", "top_level": ["torch"]}) == [
        ("error", None)]
    assert run(f"{cann}:/opt/vendor/") == [("warning", ["/opt/vendor/"])]

    def old(pythonpath):
        doc = {"schema": "doctor.snapshot/1", "complete": True, "modules": {},
               "env": {"PATH": "/usr/bin", "PYTHONPATH": pythonpath},
               "packages": {"verl": {"version": "0.7.1"}, "numpy": {"version": "1.26.4"}}}
        return [f.severity.value for f in diagnose_dict(doc).findings if f.id == "package-code-needs-unmet"]

    assert old("/opt/vendor") == ["warning"]
    assert old(cann) == ["error"]


def test_on_this_host_only_a_pythonpath_directory_that_holds_the_module_lowers_the_error(tmp_path):
    """A live check (`local`: the snapshot was probed here, its PYTHONPATH names directories here) looks: a project
    directory or a checkout on PYTHONPATH that does not hold cachetools leaves the error (it was a warning by the rule
    of thumb alone); one that holds it (a vendored copy) is the warning. A snapshot from a file cannot be looked at."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    project, vendor = tmp_path / "project", tmp_path / "vendor"
    (project / "mytool").mkdir(parents=True)
    (project / "mytool" / "__init__.py").write_text("")
    (vendor / "cachetools").mkdir(parents=True)
    (vendor / "cachetools" / "__init__.py").write_text("")
    have = {n: {"version": "1", "top_level": [m]} for n, m in (
        ("fastapi", "fastapi"), ("uvicorn", "uvicorn"), ("transferqueue", "transfer_queue"))}

    def run(pythonpath, local):
        doc = _verl_snapshot("0.9.0", **_BESIDE, **have)
        doc["env"], doc["modules"] = {"PATH": "/usr/bin", "PYTHONPATH": pythonpath}, {}
        return [f.severity.value for f in diagnose([(None, snapshot_from_dict(doc), None)], local=local).findings
                if f.id == "package-imports-undeclared-missing"]

    assert run(str(project), local=True) == ["error"]
    assert run(f"{project}:{vendor}", local=True) == ["warning"]
    assert run(str(project), local=False) == ["warning"]  # another host's directory: cannot look


def test_an_installed_distribution_that_may_install_the_module_under_another_name_makes_it_a_warning():
    """A fork installs the module under its own name (pillow-simd: PIL). Its top_level says so and nothing is
    reported; when the snapshot does not know what it installs (an egg-info with only PKG-INFO, an older collector),
    pillow's absence does not mean `import PIL` fails. Real: pillow's dist-info turned into pillow_simd-13.0.0.egg-info
    (PKG-INFO only) in a verl 0.9.0 venv: the trainer's modules load, check said error for pillow."""
    beside = {k: v for k, v in _BESIDE.items() if k != "pillow"}
    have = {n: {"version": "1", "top_level": [m]} for n, m in (
        ("fastapi", "fastapi"), ("uvicorn", "uvicorn"), ("transferqueue", "transfer_queue"),
        ("cachetools", "cachetools"))}

    def run(fork):
        return [(f.evidence["requires"], f.severity.value, f.evidence.get("top_level_unknown"))
                for f in _undeclared(_verl_snapshot("0.9.0", **beside, **have, **fork))]

    assert run({}) == [("pillow", "error", None)]
    assert run({"pillow-simd": {"version": "9.5.0.post2", "top_level": ["PIL"]}}) == []
    assert run({"py-spy": {"version": "0.4.2", "top_level": []}}) == [("pillow", "error", None)]
    assert run({"pillow-simd": {"version": "9.5.0.post2"}}) == [("pillow", "warning", ["pillow-simd"])]


def _code_needs(d: dict[str, Any]) -> list[Any]:
    return [f for f in diagnose_dict(d).findings if f.id == "package-code-needs-unmet"]


def test_verl_s_transformers_gate_on_ascend_npu_is_an_error_where_torch_npu_finds_an_npu():
    """verl 0.4.0 raises at `import verl` on an NPU when transformers < 4.51.0, 0.4.1-0.6.1 when < 4.52.4
    (verl/__init__.py, `if is_npu_available:` = torch_npu imports and torch.npu.is_available(); 0.7.0 dropped it):
    judged where torch-npu is listed and the snapshot does not show a host without NPUs."""
    def pkgs(verl: str, transformers: str, npu: bool = True) -> dict[str, Any]:
        return {"verl": {"version": verl}, "transformers": {"version": transformers},
                **({"torch-npu": {"version": "2.5.1"}} if npu else {})}

    (f,) = _code_needs(bare(packages=pkgs("0.5.0", "4.51.3")))
    assert f.severity.value == "error"
    assert f.title == "verl 0.5.0's code needs transformers>=4.52.4 on an Ascend NPU; transformers 4.51.3 is installed"
    assert "is required on ASCEND NPU" in f.detail and "torch-npu 2.5.1" in f.detail and f.evidence["on"] == "npu"
    assert f.source == "https://github.com/verl-project/verl/blob/v0.5.0/verl/__init__.py#L46"
    assert "transformers>=4.52.4" in f.fix.text
    for verl, transformers, fires in [("0.4.0", "4.50.3", True), ("0.4.0", "4.51.0", False), ("0.4.1", "4.52.3", True),
                                      ("0.6.1", "4.51.3", True), ("0.6.1", "4.52.4", False),
                                      ("0.7.0", "4.51.3", False), ("0.3.1", "4.40.0", False)]:
        got = _code_needs(bare(packages=pkgs(verl, transformers)))
        assert bool([g for g in got if g.evidence.get("on") == "npu"]) is fires, (verl, transformers)
    # without torch-npu the gate does not run; nor on a host shown to have no Ascend software or no NPU
    assert not _code_needs(bare(packages=pkgs("0.5.0", "4.51.3", npu=False)))
    assert not _code_needs(bare(packages=pkgs("0.5.0", "4.51.3"), ascend=None))
    assert not _code_needs(bare(packages=pkgs("0.5.0", "4.51.3"), ascend={"devices": []}))
    (g,) = _code_needs(bare(packages=pkgs("0.5.0", "4.51.3"), ascend={"devices": [{"id": 0}]}))
    assert "1 NPU(s)" in g.detail


def test_llamafactory_s_own_version_check_is_an_error_unless_bypassed():
    """LLaMA-Factory's check_dependencies() runs when llamafactory.hparams loads (every train / chat command) and
    raises on transformers / datasets / accelerate / peft / trl outside its ranges unless DISABLE_VERSION_CHECK is
    set; transformers' require_version keeps one `!=` per requirement, so 0.9.3 rejects 4.52.0 but not 4.46.1."""
    def snap(lf: str, transformers: str, **more: Any) -> dict[str, Any]:
        return bare(packages={"llamafactory": {"version": lf}, "transformers": {"version": transformers}}, **more)

    fs = [f for f in diagnose_dict(snap("0.9.3", "4.57.1")).findings if f.evidence.get("requires") == "transformers"
          or f.id == "package-code-needs-unmet"]
    (f,) = fs  # the declared range's warning is left to this finding: one finding for one cause
    assert (f.id, f.severity.value) == ("package-code-needs-unmet", "error")
    assert f.title == ("llamafactory 0.9.3's code needs transformers!=4.52.0,<=4.52.4,>=4.45.0; transformers 4.57.1 "
                       "is installed")
    assert "as a bypass, set DISABLE_VERSION_CHECK=1" in f.fix.text
    assert f.source == "https://github.com/hiyouga/LLaMA-Factory/blob/v0.9.3/src/llamafactory/extras/misc.py#L95"
    # the bypass set: a warning that says so
    (b,) = _code_needs(snap("0.9.3", "4.57.1", env={"DISABLE_VERSION_CHECK": "1"}))
    assert b.severity.value == "warning" and "bypassed (DISABLE_VERSION_CHECK=1)" in b.title
    assert b.evidence["bypass"] == {"DISABLE_VERSION_CHECK": "1"}
    assert _code_needs(snap("0.9.3", "4.57.1", env={"DISABLE_VERSION_CHECK": "0"}))[0].severity.value == "error"
    # "y" sets it from 0.9.2 (is_env_enabled), not before (`in ["true", "1"]`)
    assert _code_needs(snap("0.9.3", "4.57.1", env={"DISABLE_VERSION_CHECK": "Y"}))[0].severity.value == "warning"
    assert _code_needs(snap("0.9.1", "4.47.0", env={"DISABLE_VERSION_CHECK": "y"}))[0].severity.value == "error"
    # 4.46.1: METADATA excludes 4.46.*, the check does not (only its last `!=` counts): the declared warning stays
    got = found(snap("0.9.3", "4.46.1"))
    assert "package-code-needs-unmet" not in got and got["requirement-version-unmet"] == "warning"
    assert "package-code-needs-unmet" in found(snap("0.9.3", "4.52.0"))
    # 0.9.4's check allows 4.57.0 (its METADATA excludes it); the other packages are checked too
    assert "package-code-needs-unmet" not in found(snap("0.9.4", "4.57.0"))
    (p,) = _code_needs(bare(packages={"llamafactory": {"version": "0.9.4"}, "transformers": {"version": "4.57.1"},
                                      "peft": {"version": "0.18.0"}}))
    assert p.evidence["needs"] == "peft<=0.17.1,>=0.14.0"
    # require_version raises on a package that is not installed too: on a complete snapshot, one error for it
    lf = {"version": "0.9.3", "requires_dist": ["peft<=0.15.2,>=0.14.0", "trl<=0.9.6,>=0.8.6"]}
    d = bare(complete=True, packages={"llamafactory": lf, "trl": {"version": "0.9.6", "requires_dist": []}})
    (m,) = [f for f in diagnose_dict(d).findings if f.evidence.get("requires") == "peft" or "peft" in f.title]
    assert (m.id, m.severity.value) == ("package-code-needs-unmet", "error")
    assert m.title == "llamafactory 0.9.3's code needs peft<=0.15.2,>=0.14.0; peft is not installed"
    assert m.fix.commands == ("pip install 'peft<=0.15.2,>=0.14.0'",)
    d["env"] = {"DISABLE_VERSION_CHECK": "true"}
    (w,) = [f for f in diagnose_dict(d).findings if "peft" in f.title]
    assert w.severity.value == "warning" and "runs without peft" in w.detail


def test_the_declared_range_speaks_when_the_code_needs_check_is_not_run():
    """LLaMA-Factory 0.9.3 beside transformers 4.57.1: code-needs reports what check_dependencies() enforces, and
    declared-requirements leaves the pair to it; under `--only declared-requirements` the declared range is reported."""
    from tests.stacks import diagnose_dict

    d = bare(packages={"llamafactory": {"version": "0.9.3"}, "transformers": {"version": "4.57.1"}})
    both = [(f.id, f.severity.value) for f in diagnose_dict(d).findings if "transformers" in f.title]
    assert both == [("package-code-needs-unmet", "error")]
    alone = [(f.id, f.evidence.get("requirement")) for f in diagnose_dict(d, only=("declared-requirements",)).findings]
    assert alone == [("requirement-version-unmet", 'transformers!=4.46.*,!=4.47.*,!=4.48.0,!=4.52.0,<=4.52.4,>=4.45.0; '
                                                   'sys_platform != "darwin"')]


def test_the_bypass_a_user_sets_in_the_shell_reaches_the_check():
    """`DISABLE_VERSION_CHECK=1 doctor check`, as the fix line says to set it: the host's environment is collected
    with the variable, so the check says the bypass is set (a warning) instead of the error it had before the
    variable was set. Every bypass the code-needs table names is one the environment probe collects."""
    from doctor.knowledge.code_needs import load
    from doctor.probes.envvars import collect_env

    for need in load().needs:
        if need.bypass:
            assert need.bypass in collect_env({need.bypass: "1", "PATH": "/usr/bin"}), need.bypass
    pkgs = {"llamafactory": {"version": "0.9.3"}, "transformers": {"version": "4.57.1"}}
    (before,) = _code_needs(bare(packages=pkgs, env=collect_env({"PATH": "/usr/bin"})))
    assert before.severity.value == "error"
    (after,) = _code_needs(bare(packages=pkgs, env=collect_env({"DISABLE_VERSION_CHECK": "1", "PATH": "/usr/bin"})))
    assert after.severity.value == "warning" and "bypassed (DISABLE_VERSION_CHECK=1)" in after.title


def test_the_need_s_fix_names_the_range_the_other_installed_packages_leave():
    """The verl 0.6.1 stack with transformers 4.49.0 (check --from): 'Install transformers>=4.52.4', followed as
    written (`pip install 'transformers>=4.52.4'`), installs transformers 5.x, which vllm-ascend 0.9.1's own
    transformers<4.53.0 rules out. The fix names the need within that: transformers<4.53.0,>=4.52.4."""
    pk = {"verl": {"version": "0.6.1"}, "transformers": {"version": "4.49.0"}, "torch-npu": {"version": "2.5.1"},
          "vllm-ascend": {"version": "0.9.1", "requires_dist": ["transformers<4.53.0", "torch-npu==2.5.1"]}}
    (f,) = _code_needs(bare(packages=pk))
    assert f.fix.text.startswith("Install transformers<4.53.0,>=4.52.4 (the need within vllm-ascend 0.9.1's "
                                 "transformers<4.53.0), or a verl release that runs on transformers 4.49.0.")
    assert f.fix.commands == ("pip install 'transformers<4.53.0,>=4.52.4'",)  # the line to paste, the same range
    # a range that leaves the need as it is is not named
    pk["vllm-ascend"]["requires_dist"] = ["transformers>=4.40.0"]
    (g,) = _code_needs(bare(packages=pk))
    assert g.fix.text.startswith("Install transformers>=4.52.4, or a verl release")
    assert g.fix.commands == ("pip install 'transformers>=4.52.4'",)
    # torch moves with its torch-npu: a bare pip line would take PyPI's build, so the fix stays text
    (t,) = _code_needs(bare(packages={"transformers": {"version": "4.51.3"}, "torch": {"version": "2.0.1"}}))
    assert t.fix.commands == () and "with the torch-npu / vllm releases of the same stack" in t.fix.text


def test_a_verl_checkout_is_found_by_its_git_facts_for_the_names_it_imports():
    """verl main at 1dda039b9 installed `pip install -e` (no direct_url commit: the probe reads the checkout's git facts)
    imports megatron.core.config_logger's has_config_logger_enabled, which megatron-core 0.8.0 lacks: an error; the same
    version without the commit is no release the table read, so nothing is said."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def titles(git: bool) -> list[tuple[str, str]]:
        d: dict = {"schema": "doctor.snapshot/1", "packages": {
            "verl": {"version": "0.10.0.dev0", "editable": True, "url": "file:///src/verl"},
            "megatron-core": {"version": "0.8.0"}}}
        if git:
            d["modules"] = {"verl": {"origins": ["/src/verl/verl"],
                                     "git": {"commit": "1dda039b9c6311889a9c9a26040677e1254814f9", "branch": "main"}}}
        return [(f.severity.value, f.title) for f in diagnose([(None, snapshot_from_dict(d), None)]).findings
                if f.id == "package-imports-missing-name"]

    ((sev, title),) = titles(git=True)
    assert sev == "error" and title.startswith("verl 0.10.0.dev0 at main (1dda039b9) imports has_config_logger_enabled")
    assert titles(git=False) == []


def test_transformers_reading_a_torch_attribute_at_load_that_the_installed_torch_lacks_is_an_error():
    """transformers 4.56.0-4.57.6's utils/generic.py calls `_torch_pytree.register_pytree_node(...)` at module level
    under `if is_torch_available():` (`import transformers` runs it; 4.55 checked the torch version first), which torch
    2.1 lacks while transformers' own minimum is 2.1; below that minimum transformers turns PyTorch off, so the pair is
    left to package-code-needs-unmet."""
    (f,) = _missing_names({"transformers": {"version": "4.56.0"}, "torch": {"version": "2.1.0"}})
    assert f.severity.value == "error"
    assert f.title == ("transformers 4.56.0 reads torch.utils._pytree.register_pytree_node at load, which torch 2.1.0 "
                       "does not have")
    assert "AttributeError: module 'torch.utils._pytree' has no attribute 'register_pytree_node'" in f.detail
    assert "src/transformers/utils/generic.py:486" in f.detail and "2.2.0" in f.fix.text
    assert f.source.startswith("https://github.com/huggingface/transformers/blob/v4.56.0/src/transformers/utils/generic.py#L486")
    (g,) = _missing_names({"transformers": {"version": "5.14.0"}, "torch": {"version": "2.4.1"}})
    assert g.title.startswith("transformers 5.14.0 imports compute_local_shape_and_global_offset from "
                              "torch.distributed.tensor._utils at load, which torch 2.4.1 does not have (and 2 more)")
    assert "`from torch.distributed.tensor import DTensor` (src/transformers/distributed/sharding_utils.py:28)" in g.detail
    assert "No module named 'torch.distributed.tensor._utils'" in g.detail
    # a torch that has them, a transformers that checks the version first, and a torch below transformers' own
    # minimum (PyTorch turned off: the code-needs finding says so, this one does not)
    for pk in ({"transformers": {"version": "4.56.0"}, "torch": {"version": "2.2.0"}},
               {"transformers": {"version": "4.55.4"}, "torch": {"version": "2.1.0"}},
               {"transformers": {"version": "4.56.0"}, "torch": {"version": "2.0.1"}}):
        assert _missing_names(pk) == [], pk
    assert found(bare(packages={"transformers": {"version": "4.56.0"}, "torch": {"version": "2.0.1"}})).get(
        "package-code-needs-unmet") == "error"


def test_a_missing_import_name_whose_callee_the_stack_pins_asks_for_another_caller_first():
    """peft 0.17.0 beside verl 0.9.1's stack: peft imports HybridCache from transformers, which transformers 5.10.4 (the
    stack's pin) lacks. Downgrading transformers to 4.57.6 would leave the verified stack (package-off-profile); the fix
    names a peft that supports the pinned transformers first, and says the other way leaves the stack."""
    d = healthy("verl-0.9.1-cann9.1.0-a3")
    assert d["packages"]["transformers"]["version"] == "5.10.4"
    d["packages"]["peft"] = {"version": "0.17.0"}
    (x,) = [f for f in diagnose_dict(d).findings if f.id == "package-imports-missing-name"]
    assert "HybridCache" in x.title
    text = x.fix.text
    assert text.startswith("Install another peft release that supports transformers 5.10.4")
    assert "verl-0.9.1-cann9.1.0-a3 pins transformers ==5.10.4" in text and "off that stack" in text
    # without a profile (a bare report), the callee's nearest release comes first, as before
    (y,) = _missing_names({"verl": {"version": "0.6.1"}, "transformers": {"version": "5.3.0"}}) or [None]
    assert y is not None and y.fix.text.startswith("Install a transformers release")


def test_click_whose_sentinel_ray_cli_cannot_deepcopy_on_python_3_10():
    """Ray's CLI module deep-copies click commands at import (add_command_alias: in the cp310 wheels of ray 2.3.0 and
    2.52.0, gone in 2.53.0, Ray PR 58719); click 8.3.0-8.5.0's Sentinel enum has no __deepcopy__ and Python 3.10's
    Enum none either (click PR 3805, fixed in 8.5.1; reproduced here on 3.10.13 with click 8.3.0/8.3.1/8.4.0/8.5.0, not
    on 3.11.7). So `ray` fails at start-up with those clicks beside Ray < 2.53.0 on Python 3.10: an error; nothing
    where the snapshot does not state the Python or Ray's release (either could be one where it works), on 3.11, with
    click 8.2.1 or 8.5.1, or with Ray 2.53.0."""
    def bad(click: str, ray: str | None, py: str | None) -> list:
        d = bare(packages={"click": {"version": click}, "ray": {"version": ray} if ray else {}})
        if py:
            d["python"] = {"version": py}
        return [f for f in diagnose_dict(d).findings if f.id == "package-known-bad-release"]

    (f,) = bad("8.3.0", "2.52.0", "3.10.13")
    assert f.severity.value == "error" and f.components[:2] == ("ray", "python")
    assert "not a valid Sentinel" in f.detail and "Python 3.10.13" in f.detail
    assert f.fix.commands == ("pip install 'click>=8.5.1'",) and "2.53.0" in f.fix.text
    assert "ray-project/ray/pull/58719" in f.source and "pallets/click/pull/3805" in f.source
    assert f.evidence["bad_on_python"] == "<3.11"
    assert bad("8.3.1", "2.51.1", "3.10.18")[0].severity.value == "error"
    assert bad("8.5.0", "2.3.0", "3.10")[0].severity.value == "error"
    assert not bad("8.3.3", "2.9.3", None) and not bad("8.4.0", None, "3.10.12")
    assert not bad("8.3.0", "2.52.0", "3.11.7") and not bad("8.5.1", "2.52.0", "3.10.13")
    assert not bad("8.2.1", "2.52.0", "3.10.13") and not bad("8.3.0", "2.53.0", "3.10.13")
    assert not [f for f in diagnose_dict(bare(packages={"click": {"version": "8.3.0"}}, python={"version": "3.10.13"})).findings
                if f.id == "package-known-bad-release"]
