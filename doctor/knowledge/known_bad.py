"""Single releases a public thread established as broken, with the release that fixed them.

Each row is a package and a PEP 440 specifier (compared through `pkg_satisfies`, never as strings), what breaks,
the release to install instead (`fixed_in`: the release that fixed it; or, when no source names one, the release
`instead` that the upstream which hit the breakage pins), and the thread that established it. A row only says
"this build is known to break X"; the check reports it as a warning, since the breakage needs the feature the
thread used. `npu_only` rows break only on Ascend and are judged only where something says the host is one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownBad:
    package: str
    spec: str
    component: str
    breaks: str
    fixed_in: str  # "" when no source names the fixing release: then `instead`
    source: str
    npu_only: bool = False
    instead: str = ""


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
)
