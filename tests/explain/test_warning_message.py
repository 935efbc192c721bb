"""A Python warning whose message goes on below its first line (doctor.explain.pywarnings): torch prints
`UserWarning: ` and its message on the next lines, indented or not, then warnings' `  <source line>`. Before, only a
warning whose first line ended with ':' took its next line, and only that one: the finding for torch's old-GPU or
unsupported-architecture warning said `A UserWarning printed by torch: .`, the message lost."""

from __future__ import annotations

import pytest

from doctor.explain.pywarnings import message_span
from doctor.explain.stream import explain_lines

# ROCm/pytorch#627: the message starts below, indented, a whitespace-only line inside, then the source line; the
# program went on (`tensor([9], ...)`)
_OLD_GPU = [
    "/home/lasercat/.local/lib/python3.6/site-packages/torch/cuda/__init__.py:87: UserWarning: ",
    "    Found GPU0 Ellesmere [Radeon RX 470/480/570/570X/580/580X] which is of cuda capability 3.0.",
    "    PyTorch no longer supports this GPU because it is too old.",
    "    The minimum cuda capability that we support is 3.5.",
    "    ",
    "  warnings.warn(old_gpu_warn % (d, name, major, capability[1]))",
    "tensor([9], device='cuda:0')",
]
# meituan/YOLOv6#350: unindented message lines, no source line quoted
_ARCH = [
    ".venv/lib/python3.7/site-packages/torch/cuda/__init__.py:146: UserWarning: ",
    "NVIDIA GeForce RTX 3080 Laptop GPU with CUDA capability sm_86 is not compatible with the current PyTorch "
    "installation.",
    "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
    "If you want to use the NVIDIA GeForce RTX 3080 Laptop GPU GPU with PyTorch, please check the instructions at "
    "https://pytorch.org/get-started/locally/",
]


def _warned(lines: list[str]) -> str:
    found = [f for f in explain_lines(lines) if f.id == "warning-from-package"]
    assert len(found) == 1
    return found[0].detail or ""


def test_a_message_that_starts_below_runs_down_to_the_source_line():
    detail = _warned(_OLD_GPU)
    assert "which is of cuda capability 3.0. PyTorch no longer supports this GPU because it is too old. The minimum " \
           "cuda capability that we support is 3.5" in detail
    assert "warnings.warn" not in detail and "tensor(" not in detail  # the source line and the program's next line


def test_a_message_without_its_source_line_runs_while_its_lines_go_on_alike():
    detail = _warned(_ARCH)
    assert "sm_86 is not compatible with the current PyTorch installation. The current PyTorch install supports CUDA " \
           "capabilities sm_37 sm_50 sm_60 sm_70. If you want to use" in detail


def test_lines_below_a_message_that_ended_are_not_the_warnings():
    # the guards: a warning whose first line holds its whole message takes nothing below, and a message that starts
    # below stops at a line indented otherwise (the program's own next output)
    detail = _warned(["/opt/job/train.py:3: UserWarning: slow tokenizer in use", _ARCH[2]])
    assert "sm_37" not in detail
    assert message_span("", ["    Found GPU0 X which is of cuda capability 3.0.", "tensor([9], device='cuda:0')"]) == 1


@pytest.mark.parametrize("lines, span", [
    (_OLD_GPU, 4),  # the three message lines and the whitespace-only one above the source line
    (_ARCH, 3),
    # pytorch/pytorch#25811: blank lines inside the message, the source line 17 lines below the header
    (["", "                               !! WARNING !!", "",
      "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
      "Your compiler (c++) is not compatible with the compiler Pytorch was",
      "built with for this platform, which is g++ on linux. Please",
      "use g++ to to compile your extension. Alternatively, you may",
      "compile PyTorch from source using c++, and then you can also use",
      "c++ to compile your extension.", "",
      "See https://github.com/pytorch/pytorch/blob/master/CONTRIBUTING.md for help",
      "with compiling PyTorch from source.",
      "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", "",
      "                              !! WARNING !!", "",
      "  platform=sys.platform))"], 16),
])
def test_the_lines_of_a_message_that_starts_below(lines, span):
    below = lines[1:] if lines[0].endswith("UserWarning: ") else lines
    assert message_span("", below) == span
