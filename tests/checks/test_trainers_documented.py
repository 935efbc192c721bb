"""Stacks the other trainers' own Ascend install guides document (ms-swift's NPU guide, MindSpeed-RL's install guide,
LLaMA-Factory's README and NPU images, MindSpeed-LLM's tables) draw no warning about the pairing they document, nor about a
CANN older than verl's stacks that the trainer, installed without verl, documents; the same builds on a CANN no source
pairs them with, and a CANN below the trainer's own minimum, still do."""

from __future__ import annotations

import pytest

from tests.stacks import ascend_stack, found

_stack = ascend_stack


DOCUMENTED = [
    # ms-swift v4.1.0-v4.2.3, docs/source_en/BestPractices/NPU-support.md: CANN == 8.5.1, torch_npu == 2.7.1.post2
    ("ms-swift 4.2.3", {"ms-swift": "4.2.3", "torch": "2.7.1", "torch-npu": "2.7.1.post2"}, "8.5.1", "3.11.9"),
    # MindSpeed-RL's install guide (v2.3.0 tag): 2.2.0 on 8.3.RC1, 2.3.0 on 8.5.0 with torch_npu 2.5.1; master 2.7.1
    ("MindSpeed-RL 2.2.0", {"mindspeed-rl": "2.2.0", "torch": "2.5.1", "torch-npu": "2.5.1"}, "8.3.RC1", "3.10.9"),
    ("MindSpeed-RL 2.3.0", {"mindspeed-rl": "2.3.0", "torch": "2.5.1", "torch-npu": "2.5.1"}, "8.5.0", "3.10.9"),
    ("MindSpeed-RL master", {"torch": "2.7.1", "torch-npu": "2.7.1"}, "8.5.0", "3.10.9"),
    # LLaMA-Factory main's NPU images: cann:9.1.0-*-py3.12 with requirements/npu.txt (torch-npu 2.10.0.post2)
    ("LLaMA-Factory main image", {"torch": "2.10.0", "torch-npu": "2.10.0.post2", "torchvision": "0.25.0"}, "9.1.0",
     "3.12.9"),
    # LLaMA-Factory v0.9.5's image: cann:9.0.0-910b-py3.11, requirements/npu.txt torch-npu 2.7.1.post4
    ("LLaMA-Factory 0.9.5 image", {"llamafactory": "0.9.5", "torch": "2.7.1", "torch-npu": "2.7.1.post4",
                                   "torchvision": "0.22.1", "torchaudio": "2.7.1"}, "9.0.0", "3.11.9"),
]


@pytest.mark.parametrize(("label", "pkgs", "cann", "py"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED])
def test_a_torch_npu_cann_pairing_a_trainer_documents_is_neither_error_nor_warning(
        label: str, pkgs: dict[str, str], cann: str, py: str) -> None:
    got = found(_stack(pkgs, cann, py))
    assert not {k for k, sev in got.items() if sev in ("error", "warning")}, (label, got)


@pytest.mark.parametrize(("pkgs", "cann"), [
    ({"torch": "2.7.1", "torch-npu": "2.7.1.post2"}, "8.3.RC1"),  # ms-swift's build on a CANN nobody pairs it with
    ({"torch": "2.5.1", "torch-npu": "2.5.1"}, "9.0.0"),
    ({"torch": "2.10.0", "torch-npu": "2.10.0.post2"}, "8.5.0"),
])
def test_the_same_builds_on_a_cann_no_source_pairs_them_with_still_warn(pkgs: dict[str, str], cann: str) -> None:
    assert found(_stack(pkgs, cann)).get("torch-npu-cann-pairing") == "warning"


def test_with_vllm_ascend_installed_its_own_release_notes_bind_the_build_to_a_cann() -> None:
    """LLaMA-Factory's images run 2.10.0.post2 on CANN 9.1.0; vllm-ascend v0.23.0 gives that build with 9.0.1 and 9.1.0
    with 2.10.0.post4: beside vllm-ascend 0.23.0 the pairing stays a warning."""
    pkgs = {"torch": "2.10.0", "torch-npu": "2.10.0.post2"}
    assert "torch-npu-cann-pairing" not in found(_stack(pkgs, "9.1.0", "3.12.9"))
    with_va = found(_stack({**pkgs, "vllm-ascend": "0.23.0", "vllm": "0.23.0"}, "9.1.0", "3.12.9"))
    assert with_va.get("torch-npu-cann-pairing") == "warning"


OLDER_CANN = [
    # LLaMA-Factory's README table (v0.8.0-v0.9.1: CANN 8.0.RC1, torch-npu 2.1.0.post3; its npu image on 8.0.rc1-py3.8)
    ("LLaMA-Factory 0.9.1", {"llamafactory": "0.9.1", "torch": "2.1.0", "torch-npu": "2.1.0.post3", "deepspeed": "0.13.2"},
     "8.0.RC1", "3.10.9"),
    # v0.9.2-v0.9.3: CANN 8.0.0 (8.0.0.alpha002), torch-npu 2.4.0.post2; the v0.9.3 image on cann:8.0.0-910b-py3.11
    ("LLaMA-Factory 0.9.3", {"llamafactory": "0.9.3", "torch": "2.4.0", "torch-npu": "2.4.0.post2"}, "8.0.0", "3.11.9"),
    # MindSpeed-LLM 2.2.0's compatibility table goes back to CANN 8.0.RC2
    ("MindSpeed-LLM 2.2.0", {"mindspeed-llm": "2.2.0", "torch": "2.7.1"}, "8.0.RC2", "3.10.9"),
]


@pytest.mark.parametrize(("label", "pkgs", "cann", "py"), OLDER_CANN, ids=[o[0] for o in OLDER_CANN])
def test_a_cann_older_than_verls_stacks_is_info_for_another_trainer_without_verl(
        label: str, pkgs: dict[str, str], cann: str, py: str) -> None:
    got = found(_stack(pkgs, cann, py))
    assert got.get("cann-older-than-profiles") == "info", (label, got)
    assert not {k for k, sev in got.items() if sev in ("error", "warning")}, (label, got)
    # the same host with verl installed, or with no trainer named, is judged as verl's stack
    assert found(_stack({**pkgs, "verl": "0.7.1"}, cann, py)).get("cann-older-than-profiles") == "warning"
    bare_pkgs = {k: v for k, v in pkgs.items() if k not in ("llamafactory", "mindspeed-llm")}
    assert found(_stack(bare_pkgs, cann, py)).get("cann-older-than-profiles") == "warning"


def test_a_cann_older_than_the_trainers_own_minimum_stays_a_warning_that_says_so() -> None:
    """LLaMA-Factory's README gives CANN 8.0.RC1 as the minimum: 0.9.1 on CANN 7.0.RC1 is below verl's stacks and below
    LLaMA-Factory's own floor, so the warning stays, says so and cites the README."""
    from tests.stacks import diagnose_dict

    d = _stack({"llamafactory": "0.9.1", "torch": "2.1.0", "torch-npu": "2.1.0.post3"}, "7.0.RC1", "3.10.9")
    f = next(x for x in diagnose_dict(d).findings if x.id == "cann-older-than-profiles")
    assert f.severity.value == "warning"
    assert "llamafactory" in f.detail and "8.0.RC1" in f.detail
    assert "hiyouga/LlamaFactory/blob/95ac3f2373b82662c1bd855c284d3379e6a763d3/README.md" in f.source


@pytest.mark.parametrize(("llamafactory", "deepspeed", "want"), [
    ("0.9.3", "0.17.0", "warning"),  # check_version("deepspeed>=0.10.0,<=0.16.9", mandatory=True) with a DeepSpeed config
    ("0.9.4", "0.17.5", "warning"),  # the same range, skippable with DISABLE_VERSION_CHECK=1
    ("0.9.3", "0.16.9", None),
    ("0.9.2", "0.17.0", None),  # no such gate in 0.9.2's parser
    ("0.9.5", "0.18.0", None),  # 0.9.5 only checks that deepspeed is installed
])
def test_llamafactorys_deepspeed_gate_is_a_warning_naming_its_range(llamafactory: str, deepspeed: str,
                                                                    want: str | None) -> None:
    """LLaMA-Factory 0.9.3 / 0.9.4 raise ImportError when training with a DeepSpeed config beside deepspeed > 0.16.9
    ("pin deepspeed version < 0.17 because of DeepSpeed issue 7347"), while their metadata names the range only under
    the [deepspeed] extra: a warning (runs without DeepSpeed are fine) citing the tag's parser.py."""
    from tests.stacks import diagnose_dict

    d = _stack({"llamafactory": llamafactory, "torch": "2.4.0", "torch-npu": "2.4.0.post2", "deepspeed": deepspeed},
               "8.0.0", "3.11.9")
    fs = [f for f in diagnose_dict(d).findings if f.id == "package-code-needs-unmet"]
    assert [f.severity.value for f in fs] == ([want] if want else [])
    if fs:
        assert "deepspeed<=0.16.9,>=0.10.0" in fs[0].title
        assert fs[0].source.startswith(f"https://github.com/hiyouga/LLaMA-Factory/blob/v{llamafactory}/")
