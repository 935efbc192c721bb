"""Single releases a public thread established as broken, with the release that fixed them.

Each row is a package and a PEP 440 specifier (compared through `pkg_satisfies`, never as strings), what breaks,
the release to install instead (`fixed_in`: the release that fixed it; or, when no source names one, the release
`instead` that the upstream which hit the breakage pins), and the thread that established it. A row only says
"this build is known to break X"; the check reports it as a warning, since the breakage needs the feature the
thread used. `npu_only` rows break only on Ascend and are judged only where something says the host is one.
`with_package` rows are known-bad only next to one of the named releases of another package (a vllm-ascend release
note that lists the breakage as a known issue of that release); `command` is the install line when the release to
use is not on PyPI ("" for none: the fix text says where the wheel is).
"""

from __future__ import annotations

from typing import NamedTuple


class KnownBad(NamedTuple):
    package: str
    spec: str
    component: str
    breaks: str
    fixed_in: str  # "" when no source names the fixing release: then `instead`
    source: str
    npu_only: bool = False
    instead: str = ""
    with_package: str = ""
    with_specs: tuple[str, ...] = ()  # any of them (PEP 440 specifiers) on `with_package`
    command: str | None = None  # None: pip install '<package>==<fixed_in or instead>' --no-deps
    fix_note: str = ""


# vllm-ascend's release notes (main, 2026-08-22): the v0.18.0 "Dependencies" and the v0.18.0rc1 / v0.19.1rc1
# "Known Issues" sections
_VA_NOTES = ("https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/docs/source/"
             "user_guide/release_notes.md")
_VA_OBS = "https://vllm-ascend.obs.cn-north-4.myhuaweicloud.com/vllm-ascend/"


KNOWN_BAD: tuple[KnownBad, ...] = (
    KnownBad("torch-npu", "==2.1.0.post4", "torch-npu",
             "its torch_npu.dynamo.torchair has no get_npu_backend, which torchair graph mode and MindIE's ATB models "
             "call (`AttributeError: module 'torch_npu.dynamo.torchair' has no attribute 'get_npu_backend'`)",
             "2.1.0.post5", "https://github.com/Ascend/pytorch/issues/37"),
    # verl pins transformers==4.52.4 in requirements-npu.txt from v0.5.0 to v0.6.1 because of it
    # (https://github.com/verl-project/verl/pull/2291); the transformers fix
    # (https://github.com/huggingface/transformers/pull/39166) names the Flash Attention 3 change
    # (https://github.com/huggingface/transformers/pull/38972) as what broke the NPU function names.
    KnownBad("transformers", "==4.53.0", "transformers",
             "Flash Attention 2 does not work on Ascend NPU in it: the Flash Attention 3 change "
             "(https://github.com/huggingface/transformers/pull/38972) broke the names of the NPU flash-attention "
             "functions in modeling_flash_attention_utils",
             "", "https://github.com/verl-project/verl/pull/2291; https://github.com/huggingface/transformers/pull/39166; "
             "https://github.com/verl-project/verl/blob/v0.5.0/requirements-npu.txt",
             npu_only=True, instead="4.52.4"),
    KnownBad("triton-ascend", "==3.2.0", "triton-ascend",
             "vllm-ascend lists it as a known issue of this release: triton-ascend may fail to compile with a g++ internal "
             "compiler error (Segmentation fault); the workaround is triton-ascend 3.2.0.dev20260322 and clearing the "
             "Triton cache (rm -rf ~/.triton/cache/*)",
             "", f"{_VA_NOTES}; https://github.com/vllm-project/vllm-ascend/issues/7782", instead="3.2.0.dev20260322",
             with_package="vllm-ascend", with_specs=("==0.18.0rc1", "==0.18.0", "==0.19.1rc1"), command="",
             fix_note=f"It is not on PyPI: the release notes link the wheel ({_VA_OBS}triton_ascend-3.2.0.dev20260322-"
                      "<cpXY>-<cpXY>-manylinux_2_27_<arch>.manylinux_2_28_<arch>.whl). Then rm -rf ~/.triton/cache/*."),
    KnownBad("torch-npu", "==2.9.0", "torch-npu",
             "vllm-ascend's release notes for this release ask to upgrade it to 2.9.0.post1+git4c901a4 \"because of some "
             "known issue\"",
             "", _VA_NOTES, instead="2.9.0.post1+git4c901a4",
             with_package="vllm-ascend", with_specs=("==0.18.0", "==0.19.1rc1"), command="",
             fix_note=f"It is not on PyPI: the release notes link the wheel ({_VA_OBS}torch_npu-2.9.0.post1%2Bgit4c901a4-"
                      "<cpXY>-<cpXY>-manylinux_2_28_<arch>.whl)."),
    # Three vLLM Ascend threads: a controlled A/B on one stack (post4 exits 139 three times of three, post2 and post6
    # never), a second report on vLLM Ascend 0.23.0 fixed by post6, a third on 0.26.0rc1; the open PR raising vLLM
    # Ascend's pin from post4 to post6 for this segfault.
    KnownBad("torch-npu", "==2.10.0.post4", "torch-npu",
             "its profiler crashes (segmentation fault, exit 139) when a profile that records stacks (with_stack / "
             "with_modules) is stopped: vLLM Ascend's /stop_profile takes the engine down; 2.10.0.post2 and "
             "2.10.0.post6 do not",
             "2.10.0.post6", "https://github.com/vllm-project/vllm-ascend/issues/15697; "
             "https://github.com/vllm-project/vllm-ascend/issues/16642; https://github.com/vllm-project/vllm-ascend/pull/16042",
             npu_only=True),
    # v0.7.3rc1 "Pin modelscope<1.23.0 on vLLM v0.7.3 to resolve" https://github.com/vllm-project/vllm/pull/13807;
    # v0.7.3.post1 "Add the note to clear that only modelscope<1.23.0 works with 0.7.3"
    # (https://github.com/vllm-project/vllm-ascend/pull/954)
    KnownBad("modelscope", ">=1.23.0", "vllm",
             "vllm-ascend's release notes: only modelscope<1.23.0 works with 0.7.3 (vLLM v0.7.3's model loading from "
             "ModelScope breaks with 1.23.0, https://github.com/vllm-project/vllm/pull/13807)",
             "", f"{_VA_NOTES}; https://github.com/vllm-project/vllm-ascend/pull/954", instead="<1.23.0",
             with_package="vllm-ascend", with_specs=(">=0.7.3rc1,<0.7.4",), command="pip install 'modelscope<1.23.0'"),
)
