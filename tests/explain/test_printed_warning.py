"""A Python warning printed without `file:line:` (`UserWarning: ...` alone on its line: `warnings.warn` routed
through a logger, a formatter of the job's own, a paste that kept only the message) is a warning, as
warnings.formatwarning's own form is; only with a traceback above it was it raised (`-W error`)."""

from __future__ import annotations

from doctor.explain.signatures import explain_lines
from doctor.report import Severity

# Megatron-LM core_r0.16.0 megatron/core/tensor_parallel/layers.py (and MindSpeed's copy), warnings.warn
SP_NOTICE = ("UserWarning: When using sequence parallelism it is recommended to set the environment variable "
             "CUDA_DEVICE_MAX_CONNECTIONS to 1 for maximum speedup")
# torch/distributed/distributed_c10d.py (torch 2.1 .. 2.5), warnings.warn of a private collective's deprecation
C10D_NOTICE = ("DeprecationWarning: torch.distributed._all_gather_base is a private function and will be deprecated. "
               "Please use torch.distributed.all_gather_into_tensor instead.")


def _worst(lines: list[str]) -> Severity:
    order = [Severity.INFO, Severity.WARNING, Severity.ERROR]
    return max((f.severity for f in explain_lines(lines)), key=order.index, default=Severity.INFO)


def test_a_bare_printed_warning_is_at_most_a_warning():
    for line in (SP_NOTICE, C10D_NOTICE, f"(WorkerDict pid=4242) {SP_NOTICE}"):
        assert _worst([line]) is Severity.WARNING, [(f.id, f.severity) for f in explain_lines([line])]


def test_the_same_warning_raised_with_its_traceback_is_an_error():
    raised = ['Traceback (most recent call last):', '  File "/job/train.py", line 3, in <module>',
              '    warnings.warn(MSG)', SP_NOTICE]
    assert _worst(raised) is Severity.ERROR


def test_the_printed_warning_names_who_prints_it():
    (f,) = [f for f in explain_lines([SP_NOTICE]) if f.severity is Severity.WARNING]
    assert f.title.startswith("UserWarning printed by") and "megatron-core" in f.title
