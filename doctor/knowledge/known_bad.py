"""Single releases a public thread established as broken, with the release that fixed them.

Each row is a package and a PEP 440 specifier (compared through `pkg_satisfies`, never as strings), what breaks,
the release to install instead (`fixed_in`: the release that fixed it; or, when no source names one, the release
`instead` that the upstream which hit the breakage pins), and the thread that established it. A row only says
"this build is known to break X"; the check reports it as a warning, since the breakage needs the feature the
thread used. `npu_only` rows break only on Ascend and are judged only where something says the host is one.
`with_package` rows are known-bad only next to one of the named releases of another package (a vllm-ascend release
note that lists the breakage as a known issue of that release); `command` is the install line when the release to
use is not on PyPI ("" for none: the fix text says where the wheel is).

A row is an error only when the breakage hits every use (`severity`): an import that raises. A `with_package` row whose
other package is installed without a stated version (a report that names vLLM but not its release) is silent, unless
`unknown_spec` names the releases of `package` for which the doctor can still say something true whatever that other
release is: then it is a warning whose `unknown_note` says which releases of the other package it holds for, never
an error (the release that would make it one is not known). `install` is the release to install when the release that
fixed it (`fixed_in`) is itself a release known to break on the same hosts. `python` rows break only on the named
interpreters (a standard-library difference): judged only where the snapshot states one of them.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

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
    severity: str = "warning"  # "error": every use breaks (an import raises)
    also: tuple[str, ...] = ()  # components after `component` (the other package the breakage needs)
    unknown_spec: str = ""  # `package` releases still reported when `with_package`'s version is not known
    unknown_note: str = ""  # what is true then, whichever `with_package` release it is
    install: str = ""  # the release to install when `fixed_in` is itself known to break here
    python: str = ""  # the interpreters the breakage needs (a PEP 440 specifier); "" for any


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
    # (https://github.com/huggingface/transformers/pull/38972) as what broke the NPU function names. Read from the PyPI
    # wheels' modeling_flash_attention_utils.py: in 4.53.0 and 4.53.1 (the same NPU code) attn_implementation
    # "flash_attention_2" takes flash_attn_2_func / flash_attn_2_varlen_func, which the NPU branch never sets (it sets
    # flash_attn_func); 4.53.2 binds the NPU functions to the _2_ names. So 4.53.1 is broken too and 4.53.2 fixed it.
    KnownBad("transformers", ">=4.53.0,<4.53.2", "transformers",
             "Flash Attention 2 does not work on Ascend NPU in it: the Flash Attention 3 change "
             "(https://github.com/huggingface/transformers/pull/38972) broke the names of the NPU flash-attention "
             "functions in modeling_flash_attention_utils (attn_implementation=\"flash_attention_2\" picks "
             "flash_attn_2_func, which is None on NPU until 4.53.2)",
             "4.53.2", "https://github.com/verl-project/verl/pull/2291; https://github.com/huggingface/transformers/pull/39166; "
             "https://github.com/verl-project/verl/blob/v0.5.0/requirements-npu.txt; "
             "https://github.com/huggingface/transformers/blob/v4.53.1/src/transformers/modeling_flash_attention_utils.py; "
             "https://github.com/huggingface/transformers/blob/v4.53.2/src/transformers/modeling_flash_attention_utils.py",
             npu_only=True),
    # transformers 4.51.0 (read from the PyPI wheels: 4.50.3 has no NPU branch there) maps flash-attn's
    # apply_rotary_emb to torch_npu.npu_rotary_mul as is, and Qwen2.5-VL's vision rotary embedding calls it with 2-D
    # sin/cos of half the head dimension, which npu_rotary_mul does not accept (4-D, same head dimension). The fix
    # (https://github.com/huggingface/transformers/pull/38491, "Fixes #38189") wraps it in npu_apply_rotary_emb, first
    # shipped in 4.53.0, which breaks Flash Attention 2 on NPU by itself (the row above): the release to install is
    # 4.53.2. verl patches Qwen2.5-VL's apply_rotary_pos_emb_flashatt on NPU itself from v0.4.1 on
    # (https://github.com/verl-project/verl/pull/1924), citing the same PR.
    KnownBad("transformers", ">=4.51.0,<4.53.0", "transformers",
             "on Ascend NPU it maps flash-attn's apply_rotary_emb straight to torch_npu.npu_rotary_mul, which accepts only "
             "4-D x with sin/cos of the same head dimension, while Qwen2.5-VL's vision rotary embedding passes 2-D "
             "sin/cos of half of it: Qwen2.5-VL (and Qwen2.5-Omni, which the same fix covers) fail with "
             "attn_implementation=\"flash_attention_2\" (other models and sdpa/eager are not affected; verl patches "
             "Qwen2.5-VL's call on NPU itself)",
             "4.53.0", "https://github.com/huggingface/transformers/pull/38491; "
             "https://github.com/huggingface/transformers/issues/38189; "
             "https://github.com/huggingface/transformers/blob/v4.51.0/src/transformers/modeling_flash_attention_utils.py; "
             "https://github.com/huggingface/transformers/blob/v4.53.0/src/transformers/integrations/npu_flash_attention.py",
             npu_only=True, install="4.53.2",
             fix_note="4.53.0 and 4.53.1 carry this fix but break Flash Attention 2 on NPU themselves (fixed in 4.53.2). "
                      "Until then, run these models with attn_implementation=\"sdpa\" or \"eager\"."),
    # vLLM 0.9.0 to 0.9.2 register their own "aimv2" config with AutoConfig.register("aimv2", ...) (no exist_ok) when
    # vllm/transformers_utils/configs/ovis.py is imported, which `from vllm import LLM` does (vllm.config imports
    # vllm.transformers_utils.config, which imports the configs package); read from the vLLM sdists: 0.8.5.post1 has no
    # Ovis config, 0.10.0 no longer registers "aimv2" (it builds its AIMv2Config directly). transformers 4.54.0 is the first release
    # whose CONFIG_MAPPING has "aimv2" (read from the PyPI wheels: 4.53.3 has none), and its register() raises
    # ValueError for a name it already has. vLLM 0.9.x declares transformers>=4.51.1, so pip installs them together.
    # vLLM Ascend's CI hit it (https://github.com/vllm-project/vllm-ascend/issues/2046) and pinned transformers<4.53.0
    # for its 0.9.x doctests (commit 935e9d4c).
    # With vLLM's release not known, transformers 4.54.x is still a true warning: 0.9.0-0.9.2 fail at import, 0.10.0
    # is the row below, and vLLM 0.10.1 and later declare transformers>=4.55.0 (read from their sdists).
    KnownBad("transformers", ">=4.54.0", "transformers",
             "transformers 4.54.0 added its own 'aimv2' config, and vLLM 0.9.0-0.9.2 register theirs under the same name "
             "when vllm is imported: `from vllm import LLM` (vllm serve, verl's vLLM rollout) fails with ValueError: "
             "'aimv2' is already used by a Transformers config, pick another name",
             "", "https://github.com/vllm-project/vllm-ascend/issues/2046; "
             "https://github.com/vllm-project/vllm-ascend/commit/935e9d4c9d20ca9813db68fba6c226a7e1b9e2ba; "
             "https://github.com/vllm-project/vllm/blob/v0.9.2/vllm/transformers_utils/configs/ovis.py; "
             "https://github.com/vllm-project/vllm/blob/v0.10.0/vllm/transformers_utils/configs/ovis.py; "
             "https://github.com/huggingface/transformers/blob/v4.54.0/src/transformers/models/auto/configuration_auto.py",
             instead="<4.54.0", with_package="vllm", with_specs=(">=0.9.0,<0.10.0",),
             command="pip install 'transformers<4.54.0'", severity="error", also=("vllm",),
             fix_note="Or upgrade vLLM to 0.10.0 or later (with the vllm-ascend release of the same vLLM).",
             unknown_spec=">=4.54.0,<4.55.0",
             unknown_note="vLLM's version is not known, and no vLLM release from 0.9.0 on supports transformers "
                          "4.54: vLLM 0.9.0-0.9.2 fail at import ('aimv2' is already used by a Transformers config), "
                          "vLLM 0.10.0 may fail to load LoRA adapters (vLLM Ascend's CI pins transformers<4.54.0 for it) and "
                          "vLLM 0.10.1 and later require transformers>=4.55.0; which one applies depends on the vLLM "
                          "release"),
    # vLLM Ascend pinned transformers<4.54.0 "as workaround of" https://github.com/vllm-project/vllm-ascend/issues/2034
    # (LoRA loading: "expected target modules in ['embed_tokens'] but received ...", the message of vLLM 0.10.0's
    # vllm/lora/models.py) when it moved to vLLM
    # v0.10.0 (commit 17a430f7), and when main dropped the pin (vLLM main needed >=4.55.0) kept installing
    # transformers<4.54.0 in CI for vLLM v0.10.0 (commit 9260910c). vLLM 0.10.0 declares transformers>=4.53.2.
    KnownBad("transformers", ">=4.54.0", "transformers",
             "vLLM 0.10.0 may fail to load LoRA adapters with it (vLLM Ascend's CI did: \"While loading ..., expected target modules in "
             "['embed_tokens'] but received ...\"): vLLM Ascend pinned transformers<4.54.0 as the workaround and keeps "
             "installing it in CI for vLLM 0.10.0",
             "", "https://github.com/vllm-project/vllm-ascend/issues/2034; "
             "https://github.com/vllm-project/vllm-ascend/commit/17a430f7b82e31cf683270fdd7ef972bf99ef8ba; "
             "https://github.com/vllm-project/vllm-ascend/commit/9260910c8dee96b7fee4382723d682999c918584",
             instead="<4.54.0", with_package="vllm", with_specs=("==0.10.0",), command="pip install 'transformers<4.54.0'",
             also=("vllm",), fix_note="Or upgrade vLLM to 0.10.1 or later, which requires transformers>=4.55.0."),
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
    # verl's Ascend image moved to torch-npu 2.7.1.post2 and a maintainer's merged revert took it back to 2.7.1: the
    # build "contains known bugs in the VLM models" (the failing VLM CI run it links). Only beside verl: ms-swift's NPU
    # guide documents the same build for its own stacks.
    KnownBad("torch-npu", "==2.7.1.post2", "torch-npu",
             "verl's maintainers reverted it in verl's Ascend image: it \"contains known bugs in the VLM models\" "
             "(verl's vision-language CI failed on it); text-only models are not reported broken",
             "", "https://github.com/verl-project/verl/pull/5353", npu_only=True, instead="2.7.1",
             with_package="verl", with_specs=(">=0.4.0",), unknown_spec="==2.7.1.post2"),
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
    # Ray's CLI module (ray/scripts/scripts.py, which the `ray` console script imports) deep-copies click commands at
    # import: add_command_alias(up, name="create_or_update", ...) calls copy.deepcopy(command) (read in the cp310
    # wheels of ray 2.3.0 and 2.52.0; 2.53.0 has none: https://github.com/ray-project/ray/pull/58719 removed it).
    # click 8.3.0 made its parameter sentinel an enum.Enum (click/_utils.py `class Sentinel(enum.Enum)`, absent in
    # 8.2.1), which deep-copies only where Enum has __deepcopy__ (Python 3.11 on); click 8.5.1 gives Sentinel its own
    # __copy__ / __deepcopy__ (https://github.com/pallets/click/pull/3805: "on Python 3.10, where Enum has no
    # __deepcopy__ ... copy.deepcopy() of any Option, Argument or Command fails"). Run here: copy.deepcopy of a click
    # command with an option of no default raises `ValueError: <object object at ...> is not a valid Sentinel` on
    # Python 3.10.13 with click 8.3.0, 8.3.1, 8.4.0 and 8.5.0, not with 8.2.1 or 8.5.1, and never on Python 3.11.7.
    # Ray's own pins chased it (PyPI metadata, profiles/requirements/): 2.50.0 declares click!=8.3.0
    # (https://github.com/ray-project/ray/pull/56789), 2.52.0 click!=8.3.*
    # (https://github.com/ray-project/ray/pull/58677), 2.53.0 click>=7.0 again.
    KnownBad("click", ">=8.3.0,<8.5.1", "ray",
             "on Python 3.10 the `ray` command fails before it does anything (`ray start`, `ray status`, `ray job "
             "submit`, even `ray --version`): Ray's CLI module deep-copies click commands at import "
             "(add_command_alias), and this click's parameter sentinel, an enum without __deepcopy__ on Python 3.10, "
             "does not survive the copy: `ValueError: <object object at ...> is not a valid Sentinel`. `import ray` and "
             "ray.init() from Python are not affected, so a single-node run can start while a multi-node head cannot",
             "8.5.1", "https://github.com/ray-project/ray/pull/58719; https://github.com/ray-project/ray/pull/56789; "
             "https://github.com/ray-project/ray/pull/58677; https://github.com/pallets/click/pull/3805; "
             "https://pypi.org/project/ray/2.52.0/#files; https://pypi.org/project/click/8.5.1/#files",
             with_package="ray", with_specs=("<2.53.0",), command="pip install 'click>=8.5.1'", severity="error",
             also=("python",), python="<3.11",
             fix_note="Or pin click<8.3 (8.2.1), or upgrade Ray to 2.53.0 or later, whose CLI no longer copies commands."),
    # v0.7.3rc1 "Pin modelscope<1.23.0 on vLLM v0.7.3 to resolve" https://github.com/vllm-project/vllm/pull/13807;
    # v0.7.3.post1 "Add the note to clear that only modelscope<1.23.0 works with 0.7.3"
    # (https://github.com/vllm-project/vllm-ascend/pull/954)
    KnownBad("modelscope", ">=1.23.0", "vllm",
             "vllm-ascend's release notes: only modelscope<1.23.0 works with 0.7.3 (vLLM v0.7.3's model loading from "
             "ModelScope breaks with 1.23.0, https://github.com/vllm-project/vllm/pull/13807)",
             "", f"{_VA_NOTES}; https://github.com/vllm-project/vllm-ascend/pull/954", instead="<1.23.0",
             with_package="vllm-ascend", with_specs=(">=0.7.3rc1,<0.7.4",), command="pip install 'modelscope<1.23.0'"),
)
