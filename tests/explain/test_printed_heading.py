"""A program that catches an exception, prints a line about it and then `traceback.print_exc()` (verl's dataset
filter: `print("Error processing one of the samples, skipping...")`, verl/utils/dataset/rl_dataset.py) writes one
failure: the printed line heads the traceback right below it. When the printed line repeats the exception's message
(`print(f"Failed to load the dataset: {e}")`), it is the same failure told twice, and only the exception line is
reported. The logs are real runs of Python made here (the chat template one through transformers' own renderer)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.explain.stream import explain_lines
from doctor.report import Severity

_REPEATS = """
import traceback

def load(path):
    with open(path) as fh:
        return fh.read()

try:
    load("/nonexistent/data/gsm8k/train.parquet")
except Exception as e:
    print(f"Failed to load the dataset: {e}")
    traceback.print_exc()
"""

# verl's per-sample filter around apply_chat_template, with a template that rejects a system message the way
# Gemma's does (raise_exception, transformers' chat_template_utils)
_SKIPPING = """
import traceback
from transformers.utils.chat_template_utils import render_jinja_template

TEMPLATE = ("{% for message in messages %}{% if message['role'] == 'system' %}"
            "{{ raise_exception('System role not supported') }}{% endif %}"
            "{{ '<start_of_turn>' + message['role'] + '\\n' + message['content'] + '<end_of_turn>\\n' }}{% endfor %}")
try:
    render_jinja_template(conversations=[[{"role": "system", "content": "You are a math tutor."},
                                          {"role": "user", "content": "1+1?"}]], chat_template=TEMPLATE)
except Exception:
    print("Error processing one of the samples, skipping...")
    traceback.print_exc()
"""


def _run(code: str, tmp: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         cwd=tmp, timeout=120, check=True, text=True).stdout
    return out.splitlines()


def _errors(lines: list[str]) -> list[tuple[str, int]]:
    return [(f.id, f.evidence["line"]) for f in explain_lines(lines) if f.severity is Severity.ERROR]


def test_a_printed_line_that_repeats_the_exception_below_is_not_a_second_failure(tmp_path):
    lines = _run(_REPEATS, tmp_path)
    assert lines[0].startswith("Failed to load the dataset: [Errno 2]") and lines[1].startswith("Traceback")
    errors = _errors(lines)
    # the exception line (the last) says it; the printed copy above the traceback adds nothing of its own
    assert errors and all(line == len(lines) for _, line in errors), errors


def test_the_same_printed_line_without_a_traceback_below_is_still_read():
    lines = ["Failed to load the dataset: [Errno 2] No such file or directory: '/nonexistent/data/gsm8k/train.parquet'"]
    assert _errors(lines), "a printed failure on its own is still a failure"


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers")
def test_verls_skipping_line_heads_the_chat_template_failure_below_it(tmp_path):
    lines = _run(_SKIPPING, tmp_path)
    assert lines[0] == "Error processing one of the samples, skipping..."
    assert 'File "<template>"' in "\n".join(lines)
    errors = _errors(lines)
    assert errors == [("chat-template-rejected-messages", len(lines))], errors
