"""A Python warning whose header ends at `Category:`, the space after it lost.

warnings.formatwarning writes `f"{file}:{line}: {category}: {message}"` (python/cpython@0124699 Lib/warnings.py
_formatwarnmsg_impl); a message that starts with a line break (torch's old-GPU warning) leaves `UserWarning: ` with a
trailing space that pastes, editors and issue trackers strip. Before, that header was not read as a warning at all
(the quick checks wanted `Warning: `), so its message lines were read as the log's own.
"""

from __future__ import annotations

from doctor.explain.events import is_python_warning
from doctor.explain.pywarnings import message_span
from doctor.explain.stream import explain_lines

# https://github.com/peterjc123/pytorch-scripts/issues/13, as quoted (the header's trailing space gone)
_OLD_GPU = [
    r"C:\Users\amila.rathnayake\AppData\Local\Continuum\anaconda3\envs\deep_voice_test\lib\site-packages\torch\cuda"
    r"\__init__.py:116: UserWarning:",
    "    Found GPU0 GeForce GTX 960M which is of cuda capability 5.0.",
    "    PyTorch no longer supports this GPU because it is too old.",
]


def test_a_header_without_its_trailing_space_is_a_warning():
    assert is_python_warning(_OLD_GPU[0])


def test_its_message_below_is_the_warnings():
    found = [f for f in explain_lines(_OLD_GPU) if f.id == "warning-from-package"]
    assert len(found) == 1, [f.id for f in explain_lines(_OLD_GPU)]
    assert found[0].components[0] == "torch"
    assert "GeForce GTX 960M which is of cuda capability 5.0. PyTorch no longer supports this GPU" in (found[0].detail
                                                                                                     or "")


def test_the_same_word_inside_a_sentence_is_not_a_header():
    # the guards: `Warning:` must end the header (then the message, or nothing); a path-less mention is no warning
    assert not is_python_warning("UserWarning:")
    assert not is_python_warning("/opt/job/train.py:3: UserWarning:slow")
    assert message_span("", ["    Found GPU0 X which is of cuda capability 3.0.", "tensor([9], device='cuda:0')"]) == 1
