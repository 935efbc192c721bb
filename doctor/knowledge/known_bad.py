"""Single releases a public thread established as broken, with the release that fixed them.

Each row is a package and a PEP 440 specifier (compared through `pkg_satisfies`, never as strings), what breaks,
the fixed release, and the thread that established it. A row only says "this build is known to break X";
the check reports it as a warning, since the breakage needs the feature the thread used.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownBad:
    package: str
    spec: str
    component: str
    breaks: str
    fixed_in: str
    source: str


KNOWN_BAD: tuple[KnownBad, ...] = (
    KnownBad("torch-npu", "==2.1.0.post4", "torch-npu",
             "its torch_npu.dynamo.torchair has no get_npu_backend, which torchair graph mode and MindIE's ATB models "
             "call (`AttributeError: module 'torch_npu.dynamo.torchair' has no attribute 'get_npu_backend'`)",
             "2.1.0.post5", "https://github.com/Ascend/pytorch/issues/37"),
)
