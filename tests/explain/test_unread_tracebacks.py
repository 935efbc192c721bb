"""A failure's traceback that no signature and no other attribution rule reads still gets a finding: where the
exception was raised, the function called into that code and who called it (doctor.explain.boundary,
`exception-in-traceback`). Before, an exception class outside the ones that say "a value was rejected" (EOFError,
`_csv.Error`, a bare `Exception`) raised in a package's code, or a library's class whose package no table names
(jinja2's), gave `no-known-signature` and exit 0; `re.error`, whose lower-case name the reader did not take for the
exception line below the last frame, read as a traceback cut before its exception line.

A traceback the log shows as handled stays silent: one logged at warning or info level (`logger.warning(msg,
exc_info=True)`) and CPython's `Exception ignored in:` report (an exception in `__del__`, dropped), the process going
on. The logs are real runs of Python made here, in a source checkout shaped like verl's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.explain.stream import explain_lines
from doctor.report import Severity

needs_jinja2 = pytest.mark.skipif(importlib.util.find_spec("jinja2") is None, reason="needs jinja2")

# a FileSystemLoader over a directory without the template the code asks for (jinja2 3.1 loaders.py get_source)
_TEMPLATE_NOT_FOUND = """
import jinja2


def render(root, name):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(root))
    return env.get_template(name).render()
"""
# a chat template file read with StrictUndefined that uses a field the messages lack (jinja2 3.1 runtime.py
# Undefined._fail_with_undefined_error)
_TEMPLATE_FIELD = """
import jinja2


def render(root, messages):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(root), undefined=jinja2.StrictUndefined)
    return env.get_template("qwen.jinja").render(messages=messages)
"""
# pickle.load on an empty file (a checkpoint written by a job killed before it flushed)
_EMPTY_PICKLE = """
import pickle


def load(path):
    with open(path, "rb") as fh:
        return pickle.load(fh)
"""
# a strict CSV reader on a quote left open
_CSV = """
import csv
import io


def rows(text):
    return list(csv.reader(io.StringIO(text), strict=True))
"""
# re's own lower-case class (re.error), which the reader takes for the exception line by its place
_PATTERN = """
import re


def pattern(p):
    return re.compile(p)
"""
_RAISES = """
def check(world):
    if world % 8:
        raise Exception(f"world size {world} must be a multiple of 8 NPUs per node")
"""


def _checkout(tmp: Path, name: str, code: str) -> Path:
    root = tmp / "workspace" / "verl"
    (root / "verl" / "utils").mkdir(parents=True, exist_ok=True)
    (root / "verl" / "__init__.py").write_text("")
    (root / "verl" / "utils" / "__init__.py").write_text("")
    (root / "verl" / "utils" / f"{name}.py").write_text(code)
    return root


def _run(tmp: Path, name: str, code: str, call: str, *, ok: bool = False) -> list[str]:
    root = _checkout(tmp, name, code)
    done = subprocess.run([sys.executable, "-c", f"from verl.utils.{name} import *\n{call}"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, cwd=tmp, timeout=60, text=True,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert (done.returncode == 0) is ok, done.stdout
    return done.stdout.splitlines()


def _errors(lines: list[str]) -> list:
    return [f for f in explain_lines(lines) if f.severity is Severity.ERROR]


def _said(found: list) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.id, f.components, f.title) for f in found]


@needs_jinja2
def test_a_library_class_raised_in_its_code_called_by_a_package_names_both(tmp_path):
    (tmp_path / "templates").mkdir()
    lines = _run(tmp_path, "tmpl", _TEMPLATE_NOT_FOUND, f"render({str(tmp_path / 'templates')!r}, 'chat.jinja')")
    assert lines[-1].startswith("jinja2.exceptions.TemplateNotFound: 'chat.jinja' not found"), lines
    found = _errors(lines)
    assert [f.id for f in found] == ["exception-in-traceback"], _said(found)
    f = found[0]
    assert f.title.startswith("TemplateNotFound raised in jinja2's get_template, called by verl's render"), f.title
    assert f.components[:2] == ("python", "verl"), f.components
    assert f.evidence["line"] == len(lines) and f.evidence["caller"] == "verl"
    assert "jinja2/loaders.py" in f.evidence["read"] and "verl/utils/tmpl.py" in f.evidence["read"]


@needs_jinja2
def test_a_template_files_undefined_field_names_jinja2_and_the_template_that_called_it(tmp_path):
    # chat-template-rejected-messages reads the same exception line only beside a chat template's frames
    # (apply_chat_template, `File "<template>"`): here its context never comes, so the signature does not fire
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "qwen.jinja").write_text("{% for m in messages %}{{ m.tool_calls[0].id }}{% endfor %}")
    lines = _run(tmp_path, "chat", _TEMPLATE_FIELD,
                 f"render({str(tmp_path / 'templates')!r}, [{{'role': 'user', 'content': 'hi'}}])")
    assert lines[-1] == "jinja2.exceptions.UndefinedError: 'dict object' has no attribute 'tool_calls'", lines
    found = _errors(lines)
    assert [f.id for f in found] == ["exception-in-traceback"], _said(found)
    assert found[0].title.startswith("UndefinedError raised in jinja2's "), found[0].title
    assert "called from the job's own code (qwen.jinja)" in found[0].title  # the template's own frame called it


@pytest.mark.parametrize(("name", "code", "call", "exc", "func"), [
    ("ckpt", _EMPTY_PICKLE, "load('/dev/null')", "EOFError", "load"),
    ("rows", _CSV, "rows('a,\"b\\n')", "_csv.Error", "rows"),
    ("world", _RAISES, "check(12)", "Exception", "check"),
    ("regex", _PATTERN, "pattern('answer: (\\\\d+')", "re.error", "pattern"),
], ids=["pickle-eof", "csv", "exception", "re-error"])
def test_an_exception_outside_the_checked_classes_in_a_packages_code_is_placed(tmp_path, name, code, call, exc, func):
    lines = _run(tmp_path, name, code, call)
    assert lines[-1].startswith(f"{exc}:"), lines
    found = _errors(lines)
    assert [f.id for f in found] == ["exception-in-traceback"], _said(found)
    assert found[0].title.startswith(f"{exc} raised in verl's {func}"), found[0].title
    assert found[0].components[0] == "verl" and found[0].evidence["raised_in"] == "verl"


_LOGGED = """
import logging
import jinja2

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
logger = logging.getLogger("verl.tmpl")


def optional(root, level):
    try:
        return jinja2.Environment(loader=jinja2.FileSystemLoader(root)).get_template("custom.jinja")
    except jinja2.TemplateNotFound:
        logger.log(level, "no custom template, using the default one", exc_info=True)


class Renderer:
    def __init__(self, root):
        self.root = root

    def __del__(self):
        jinja2.Environment(loader=jinja2.FileSystemLoader(self.root)).get_template("gone.jinja")
"""


@needs_jinja2
def test_a_traceback_logged_as_a_warning_or_dropped_by_the_interpreter_is_no_failure(tmp_path):
    (tmp_path / "templates").mkdir()
    root = str(tmp_path / "templates")
    lines = _run(tmp_path, "logged", _LOGGED,
                 f"optional({root!r}, logging.WARNING)\noptional({root!r}, logging.INFO)\nr = Renderer({root!r})\n"
                 "del r\nlogger.info('training step 1 done')", ok=True)
    text = "\n".join(lines)
    assert text.count("jinja2.exceptions.TemplateNotFound") == 3 and "Exception ignored in" in text, text
    assert lines[-1].endswith("training step 1 done")
    assert _errors(lines) == [], _said(_errors(lines))
