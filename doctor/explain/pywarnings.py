"""Where a Python warning's message ends when it goes on below its first line.

warnings.formatwarning writes `<file>:<line>: <Category>: <message>` with the message as it is, its line breaks
included, and then, when it can read the source, the warning call's line behind exactly two spaces
(CPython Lib/warnings.py _formatwarnmsg_impl: `s = f"{msg.filename}:{msg.lineno}: {category}: {msg.message}\\n"`,
then `s += "  %s\\n" % line.strip()`; python/cpython@0124699 Lib/warnings.py).
So a message that starts on the next line (torch's `UserWarning: ` then `    Found GPU0 ... which is of cuda
capability 3.0.` / `    PyTorch no longer supports this GPU because it is too old.`, torch/cuda/__init__.py
old_gpu_warn) runs down to that source line, blank lines and its own indentation included; one that announces its
value with a closing ':' (vLLM's `Failed to read commit hash:` then `No module named 'vllm._version'`) goes on on
its next unindented lines. Without the source line below (a paste, a compiled caller), a message that starts
below runs on while its lines keep the first one's indentation. What the message says is the warning's, not a
failure of its own.

Pure logic: the lines below a warning (its process's, launcher prefix removed) in, how many are its message out.
"""

from __future__ import annotations

import re

MAX_MESSAGE_LINES = 24  # torch's compiler warning spans 17 lines between its header and its source line
_SOURCE_LINE = re.compile(r"^  (?! )\S")  # formatwarning's `  <source line>`: exactly two spaces
_WARNING_HEADER = re.compile(r"\.py:\d+: [A-Z]\w*Warning:(?: |$)")
# a line that starts something else: a traceback or its parts, a logged record (a level, a date, glog's `E0621 `)
_STARTS_OTHER = re.compile(r"^\s*(?:Traceback|File \"|During handling|The above exception|"
                           r"(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL)\b|\d{4}-\d\d-\d\d|[EWIF]\d{4} )")


def announces_more(message: str) -> bool:
    """A warning whose first line holds no message (it starts on the next line) or ends with ':' (its value
    follows)."""
    return not message.strip() or message.rstrip().endswith(":")


def message_span(message: str, below: list[str]) -> int:
    """How many of the lines `below` a warning whose first line says `message` (its text after `Category: `) are
    still its message. `below`: the next lines its process printed, launcher prefix removed."""
    if not announces_more(message):
        return 0
    window = below[:MAX_MESSAGE_LINES]
    if not message.strip():  # the message starts below: down to the source line when it comes, blank lines too
        for n, text in enumerate(window):
            if _SOURCE_LINE.match(text):
                return n
            if _starts_other(text):
                break
        indent = _indent(window[0]) if window else ""
        return next((n for n, text in enumerate(window)
                     if not text.strip() or _starts_other(text) or _indent(text) != indent), len(window))
    span = 0  # `...:` then the value on the next unindented lines
    for text in window:
        if not text.strip() or text[:1].isspace() or _starts_other(text):
            break
        span += 1
    return span


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _starts_other(text: str) -> bool:
    return _STARTS_OTHER.match(text) is not None or _WARNING_HEADER.search(text) is not None
