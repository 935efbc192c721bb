"""A traceback the log shows as handled is not the run's failure (doctor.explain.findings `as_handled`): one logged
at warning or info level with its exception (`logger.warning(msg, exc_info=True)`, the process going on) or reported
by CPython as `Exception ignored in: …` (an exception in `__del__`, dropped). Its attribution (`error-in-package`,
`api-version-mismatch`) says where it was raised as a warning (at info level: a notice) marked handled, ranked below
a real failure later in the same log; a log whose only traceback was handled has no error. A traceback that reached
the program's top (its outermost frame is the module's code), or below which nothing shows the process went on (no
further record), went uncaught, whatever record stands above it.

Before, the attribution rules ignored the mark: the handled traceback was an error ranked first (and, one id per
error, the later real failure of the same id was folded into it). The logs are real runs of Python made here, in a
source checkout shaped like verl's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.explain.stream import explain_lines
from doctor.report import Severity

needs_jinja2 = pytest.mark.skipif(importlib.util.find_spec("jinja2") is None, reason="needs jinja2")

# verl-shaped code that logs an exception it recovers from, with its traceback (exc_info=True), and goes on
_CODE = """
import logging
import sys
import traceback

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
logger = logging.getLogger("verl.handled")


def batch_size(value):
    return int(value)


def sized(value, level=logging.WARNING):
    try:
        return batch_size(value)
    except ValueError:
        logger.log(level, "bad batch size %r, using 8", value, exc_info=True)
        return 8


def env(**kw):
    import jinja2

    try:
        return jinja2.Environment(**kw)
    except TypeError:
        logger.warning("this jinja2 does not take %s, using the defaults", sorted(kw), exc_info=True)
        return jinja2.Environment()


def configured(value):
    try:
        return batch_size(value)
    except ValueError:
        raise RuntimeError("no batch size in the config")


def recovered():
    try:
        return configured("z")
    except RuntimeError:
        logger.warning("no usable config, using the defaults", exc_info=True)


def main(value):
    # a job that prints the traceback of what stops it and exits: the last record above it is the job's last words
    logger.info("loading the config")
    try:
        return batch_size(value)
    except ValueError:
        traceback.print_exc()
        sys.exit(1)


def logged(value, log=logger, then=""):
    # `logger.exception(msg)` (or the root logger's `logging.exception`): an error record with the traceback; the
    # process goes on with 8, or (`then`) says it stops and exits
    try:
        return batch_size(value)
    except ValueError:
        log.exception("bad batch size %r, using 8", value)
        if then:
            logger.info(then)
            sys.exit(1)
        return 8


class Holder:
    def __del__(self):
        batch_size("gone")
"""


def _run(tmp: Path, call: str, *, ok: bool, code: str = _CODE, module: str = "handled") -> list[str]:
    """The output of `call` run after `from verl.utils.<module> import *`, `code` being that module of a source
    checkout shaped like verl's (also tests/explain/test_handled_signatures.py)."""
    root = tmp / "workspace" / "verl"
    (root / "verl" / "utils").mkdir(parents=True)
    (root / "verl" / "__init__.py").write_text("")
    (root / "verl" / "utils" / "__init__.py").write_text("")
    (root / "verl" / "utils" / f"{module}.py").write_text(code)
    done = subprocess.run([sys.executable, "-c", f"from verl.utils.{module} import *\n{call}"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, cwd=tmp, timeout=60, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert (done.returncode == 0) is ok, done.stdout
    return done.stdout.splitlines()


def _said(found: list) -> list[tuple[str, str, str]]:
    return [(f.id, f.severity.value, f.title) for f in found]


def _line_of(lines: list[str], text: str) -> int:
    return next(i + 1 for i, line in enumerate(lines) if line.startswith(text))


def test_a_traceback_logged_as_a_warning_ranks_below_the_real_failure_after_it(tmp_path):
    lines = _run(tmp_path, "sized('x')\nlogger.info('step 1 done')\nbatch_size('y')", ok=False)
    assert " WARNING verl.handled: bad batch size 'x'" in lines[0] and lines[-1].endswith("'y'"), lines
    found = explain_lines(lines)
    errors = [f for f in found if f.severity is Severity.ERROR]
    assert [(f.id, f.evidence["line"]) for f in errors] == [("error-in-package", len(lines))], _said(found)
    assert "handled" not in errors[0].title and found[0] is errors[0]  # the failure ranks first
    handled = [f for f in found if f.evidence.get("handled")]
    assert [(f.id, f.severity, f.evidence["handled"]) for f in handled] == [
        ("error-in-package", Severity.WARNING, "warning")], _said(found)
    assert handled[0].evidence["line"] == _line_of(lines, "ValueError: invalid literal for int() with base 10: 'x'")
    assert handled[0].title.endswith("(handled: the run went on)") and "logged at warning level" in handled[0].detail


@needs_jinja2
def test_an_api_mismatch_logged_as_a_warning_is_no_failure_beside_the_real_one(tmp_path):
    lines = _run(tmp_path, "env(foo_option=1)\nlogger.info('step 1 done')\nbatch_size('y')", ok=False)
    assert any("got an unexpected keyword argument 'foo_option'" in line for line in lines), lines
    found = explain_lines(lines)
    assert [(f.id, f.severity) for f in found] == [
        ("error-in-package", Severity.ERROR), ("api-version-mismatch", Severity.WARNING)], _said(found)
    assert found[0].evidence["line"] == len(lines) and found[1].evidence["handled"] == "warning"


@pytest.mark.parametrize(("call", "how", "severity"), [
    ("sized('x')", "warning", Severity.WARNING),
    ("sized('x', logging.INFO)", "info", Severity.INFO),
    ("h = Holder()\ndel h", "ignored", Severity.WARNING),
], ids=["warning", "info", "exception-ignored"])
def test_a_log_whose_only_traceback_was_handled_has_no_error(tmp_path, call, how, severity):
    lines = _run(tmp_path, f"{call}\nlogger.info('step 1 done')", ok=True)
    assert lines[-1].endswith("step 1 done") and lines[-2].startswith("ValueError: invalid literal"), lines
    found = explain_lines(lines)
    assert [(f.id, f.severity, f.evidence.get("handled")) for f in found] == [
        ("error-in-package", severity, how)], _said(found)
    assert found[0].evidence["line"] == len(lines) - 1 and "the process went on" in found[0].detail


def test_an_uncaught_traceback_below_an_info_record_is_the_failure(tmp_path):
    # the record right above the header is the last one the job logged before it died, not the exception's own:
    # the traceback runs from the module's code, so nothing caught it (also a chain's first traceback, which runs
    # only from the function that caught it); or nothing below it shows the process went on
    lines = _run(tmp_path, "logger.info('step 1 done')\nbatch_size('y')", ok=False)
    chained = _run(tmp_path / "chain", "logger.info('step 1 done')\nconfigured('z')", ok=False)
    assert "During handling of the above exception, another exception occurred:" in chained, chained
    # printed by the job from the function that caught it, then exit 1: the log ends at its exception line
    printed = _run(tmp_path / "printed", "main('w')", ok=False)
    assert " INFO verl.handled: loading the config" in printed[0] and printed[-1].endswith("'w'"), printed
    for log in (lines, chained, printed):
        found = explain_lines(log)
        assert found and found[0].severity is Severity.ERROR and not found[0].evidence.get("handled"), _said(found)
        assert all(not f.evidence.get("handled") for f in found), _said(found)


def test_a_chain_logged_as_a_warning_is_handled_as_a_whole(tmp_path):
    # only the chain's first traceback has the record above it; its last one (the RuntimeError) is handled too
    lines = _run(tmp_path, "recovered()\nlogger.info('step 1 done')", ok=True)
    assert "During handling of the above exception, another exception occurred:" in lines, lines
    assert lines[-2] == "RuntimeError: no batch size in the config", lines
    found = explain_lines(lines)
    assert found and all(f.severity is not Severity.ERROR and f.evidence.get("handled") == "warning"
                         for f in found), _said(found)


@pytest.mark.parametrize("call", ["logged('x')", "logged('x', logging)"], ids=["logger", "logging"])
def test_an_exception_logged_at_error_level_then_going_on_is_handled(tmp_path, call):
    # `logger.exception(msg)` and the process logging its progress after it: caught, not the run's failure; the real
    # failure below it is
    lines = _run(tmp_path, f"{call}\nlogger.info('step 1 done')\nbatch_size('y')", ok=False)
    assert " ERROR " in lines[0] and "bad batch size 'x', using 8" in lines[0] and lines[-1].endswith("'y'"), lines
    found = explain_lines(lines)
    assert [(f.id, f.severity, f.evidence["line"], f.evidence.get("handled")) for f in found] == [
        ("error-in-package", Severity.ERROR, len(lines), None),
        ("error-in-package", Severity.WARNING, _line_of(lines, "ValueError: invalid literal for int() with base 10: 'x'"),
         "exception")], _said(found)
    assert found[1].title.endswith("(handled: the run went on)") and "logger.exception" in found[1].detail


def test_an_exception_logged_at_error_level_as_the_job_stops_is_the_failure(tmp_path):
    # the same record right before the process exits (nothing below it) or says it stops: the run's failure
    for n, call in enumerate(("logger.info('step 1 done')\nlogged('x', then='')\nsys.exit(1)",
                              "logger.info('step 1 done')\nlogged('x', then='shutting down the workers')")):
        lines = _run(tmp_path / str(n), call, ok=False)
        assert "bad batch size 'x', using 8" in lines[1], lines
        found = explain_lines(lines)
        assert [(f.id, f.severity, f.evidence.get("handled")) for f in found][:1] == [
            ("error-in-package", Severity.ERROR, None)], _said(found)


# the same at the module's top level (a script's own code): the traceback runs from `<module>`, as an uncaught one
_MODULE_LEVEL = """try:
    batch_size('x')
except ValueError:
    logging.exception('bad batch size, using 8')
"""


def test_an_exception_logged_at_module_level_then_going_on_is_handled(tmp_path):
    lines = _run(tmp_path, _MODULE_LEVEL + "logger.info('step 1 done')\nlogger.info('step 2 done')", ok=True)
    assert " ERROR root: bad batch size" in lines[0] and '  File "<string>", line 3, in <module>' in lines, lines
    found = explain_lines(lines)
    assert [(f.id, f.severity, f.evidence.get("handled")) for f in found] == [
        ("error-in-package", Severity.WARNING, "exception")], _said(found)


def test_an_uncaught_traceback_at_module_level_below_an_error_record_is_the_failure(tmp_path):
    # an error record, then the script dies: the same shape, and nothing of it below
    lines = _run(tmp_path, "logger.error('no usable batch size')\nbatch_size('y')", ok=False)
    found = explain_lines(lines)
    assert found and found[0].severity is Severity.ERROR and not found[0].evidence.get("handled"), _said(found)


def test_one_last_notice_after_an_exception_logged_at_error_level_is_no_sign_the_job_went_on(tmp_path):
    # `logger.exception(...)`, then one notice that is not in the stop words and the job exits: last words, not work
    lines = _run(tmp_path, "logger.info('step 1 done')\nlogged('x', then='saving the final state')", ok=False)
    assert lines[-1].endswith("saving the final state"), lines
    found = explain_lines(lines)
    assert [(f.id, f.severity, f.evidence.get("handled")) for f in found][:1] == [
        ("error-in-package", Severity.ERROR, None)], _said(found)
