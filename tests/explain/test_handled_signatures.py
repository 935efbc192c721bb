"""A traceback the log shows as handled is not the run's failure, also when a specific signature explains its
exception (doctor.explain.findings rule 3, `handled_hits`): `torch_npu could not be imported` logged at warning
level with its traceback, then the run went on, is a warning marked handled, ranked below the run's real failure,
and it no longer stands as the first root cause that left the real failure after it unread; across logs it makes
no node the root cause. A `lasting` signature (a device fault, a failed HCCL communicator) keeps its severity and
rank even when caught: catching the exception mends neither.

Before, only the generic attribution path knew the mark: the signature's finding stayed an error ranked first, and
the failure below it was not attributed at all (a specific root cause above it made it a knock-on). The logs are
real runs of Python made here, in a source checkout shaped like verl's; the HCCL message is the signature's own
example (torch_npu's text), raised and logged by real code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from doctor.explain.db import read_signatures
from doctor.explain.multi import explain_many
from doctor.explain.stream import explain_lines
from doctor.report import Severity
from tests.explain.test_handled_tracebacks import _run as run_in_checkout
from tests.explain.test_handled_tracebacks import _said

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch_npu") is not None,
                                reason="the run needs torch_npu to be missing")

_CODE = """
import logging

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
logger = logging.getLogger("verl.device")


def npu_available(level=logging.WARNING):
    try:
        import torch_npu  # noqa: F401
        return True
    except ImportError:
        logger.log(level, "torch_npu could not be imported, running on CPU", exc_info=True)
        return False


def npu_or_cpu():
    try:
        import torch_npu  # noqa: F401
        return True
    except ImportError:
        logger.exception("torch_npu could not be imported, running on CPU")
        return False


def all_reduce(message):
    raise RuntimeError(message)


def synced(message):
    try:
        all_reduce(message)
    except RuntimeError:
        logger.warning("all_reduce failed, skipping this step's metrics", exc_info=True)


def batch_size(value):
    return int(value)


class Holder:
    def __del__(self):
        import torch_npu  # noqa: F401
"""


def _run(tmp: Path, call: str, *, ok: bool) -> list[str]:
    return run_in_checkout(tmp, call, ok=ok, code=_CODE, module="device")


def test_a_handled_import_the_signature_knows_ranks_below_the_real_failure(tmp_path):
    lines = _run(tmp_path, "npu_available()\nlogger.info('step 1 done')\nbatch_size('y')", ok=False)
    assert " WARNING verl.device: torch_npu could not be imported" in lines[0], lines
    assert "ModuleNotFoundError: No module named 'torch_npu'" in lines and lines[-1].endswith("'y'"), lines
    found = explain_lines(lines)
    errors = [f for f in found if f.severity is Severity.ERROR]
    # the real failure is read (before: not attributed at all, the handled signature being the first root cause)
    assert [(f.id, f.evidence["line"]) for f in errors] == [("error-in-package", len(lines))], _said(found)
    assert found[0] is errors[0]
    handled = [f for f in found if f.id == "torch-npu-not-installed"]
    assert [(f.severity, f.evidence.get("handled")) for f in handled] == [(Severity.WARNING, "warning")], _said(found)
    assert handled[0].title.endswith("(handled: the run went on)") and "logged at warning level" in handled[0].detail


# how the run shows the import it went on after as handled: the call, the mark, the severity the finding keeps
_HANDLED_BY = (("npu_available()", "warning", Severity.WARNING), ("npu_available(logging.INFO)", "info", Severity.INFO),
               ("h = Holder()\ndel h", "ignored", Severity.WARNING))


def test_a_log_whose_only_signature_was_handled_has_no_error(tmp_path):
    for n, (call, how, severity) in enumerate(_HANDLED_BY):
        lines = _run(tmp_path / str(n), f"{call}\nlogger.info('step 1 done')", ok=True)
        assert lines[-1].endswith("step 1 done"), lines
        assert lines[-2] == "ModuleNotFoundError: No module named 'torch_npu'", lines
        found = explain_lines(lines)
        said = [(f.id, f.severity, f.evidence.get("handled"), f.evidence["line"]) for f in found]
        assert said == [("torch-npu-not-installed", severity, how, len(lines) - 1)], (how, _said(found))


def test_the_same_signature_handled_then_uncaught_stays_an_error(tmp_path):
    # handled once, then the same import fails uncaught: the run's failure is that signature's
    lines = _run(tmp_path, "npu_available()\nlogger.info('step 1 done')\nimport torch_npu", ok=False)
    found = explain_lines(lines)
    assert [(f.id, f.severity) for f in found][:1] == [("torch-npu-not-installed", Severity.ERROR)], _said(found)
    assert not found[0].evidence.get("handled") and found[0].evidence["occurrences"] == 2


def test_handled_then_uncaught_points_at_the_uncaught_occurrence(tmp_path):
    # the error is the uncaught import (line N the user reads, its context, its rank), not the first, handled one;
    # the count and the line list still name both
    lines = _run(tmp_path, "npu_available()\nlogger.info('step 1 done')\nbatch_size(3)\nimport torch_npu", ok=False)
    first = lines.index("ModuleNotFoundError: No module named 'torch_npu'") + 1
    assert lines[-1] == "ModuleNotFoundError: No module named 'torch_npu'" and first < len(lines), lines
    found = explain_lines(lines)
    assert (found[0].id, found[0].severity) == ("torch-npu-not-installed", Severity.ERROR), _said(found)
    evidence = found[0].evidence
    assert (evidence["line"], evidence["lines"], evidence["occurrences"]) == (len(lines), [first, len(lines)], 2)
    assert evidence["context"]["before"][-1].startswith('File "<string>", line 5, in <module>'), evidence


def test_a_signature_on_an_exception_logged_at_error_level_then_going_on_is_handled(tmp_path):
    # `logger.exception(msg)`, then the process logs its progress: the import it went on after is no failure; one
    # logged so right before the process exits is
    lines = _run(tmp_path, "npu_or_cpu()\nlogger.info('step 1 done')\nbatch_size('y')", ok=False)
    assert " ERROR verl.device: torch_npu could not be imported" in lines[0], lines
    found = explain_lines(lines)
    assert [(f.id, f.severity, f.evidence.get("handled")) for f in found] == [
        ("error-in-package", Severity.ERROR, None), ("torch-npu-not-installed", Severity.WARNING, "exception")], \
        _said(found)
    dying = _run(tmp_path / "exit", "logger.info('step 1 done')\nnpu_or_cpu()\nraise SystemExit(1)", ok=False)
    found = explain_lines(dying)
    assert [(f.id, f.severity, f.evidence.get("handled")) for f in found] == [
        ("torch-npu-not-installed", Severity.ERROR, None)], _said(found)


@pytest.mark.parametrize("sig_id", ["hccl-collective-failed", "npu-runtime-execution-error"])
def test_a_lasting_fault_caught_and_logged_is_still_the_failure(tmp_path, sig_id):
    sig = read_signatures().get(sig_id)
    assert sig.lasting
    message = sig.example.split("RuntimeError: ", 1)[1]
    lines = _run(tmp_path, f"synced({message!r})\nlogger.info('step 1 done')\nbatch_size('y')", ok=False)
    assert " WARNING verl.device: all_reduce failed" in lines[0] and f"RuntimeError: {message}" in lines, lines
    found = explain_lines(lines)
    assert (found[0].id, found[0].severity) == (sig_id, Severity.ERROR), _said(found)
    assert "handled" not in found[0].evidence and "handled" not in found[0].title


def test_a_handled_signature_makes_no_node_the_root_cause(tmp_path):
    # node-a logs the handled import first and goes on; node-b fails later: the run's failure is node-b's
    logs = tmp_path / "logs"
    for node, call, ok in (("node-a", "npu_available()\nlogger.info('step 1 done')", True),
                           ("node-b", "logger.info('step 1 done')\nbatch_size('y')", False)):
        (logs / node).mkdir(parents=True)
        (logs / node / "worker.log").write_text("\n".join(_run(tmp_path / node, call, ok=ok)) + "\n")
    findings, extra = explain_many([str(logs)])
    assert extra["root_cause"]["node"] == "node-b", extra["root_cause"]
    assert [e["role"] for e in extra["timeline"] if e["node"] == "node-a"] == ["handled"], extra["timeline"]


def test_the_readme_names_every_lasting_signature():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    said = readme.split("signature marked `lasting = true`", 1)[1].split("real runs):", 1)[0]
    import re

    named = set(re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", said))
    assert named == {s.id for s in read_signatures().signatures if s.lasting}
