"""A traceback frame line whose start was cut off is still a frame.

A frame line pasted without its `  File "` head (CPython Lib/traceback.py writes `  File "{}", line {}, in {}`; a
paste from the middle of a line, a terminal that wrapped a long path) was not a frame, so a log quoting only the
innermost frame read as nothing, and an exception below such a frame was not placed in its package. The positive lines
are quoted from real reports; the guard is a line that names a file and a line and is no frame.
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines

# https://github.com/ArcInstitute/evo2/issues/122: the innermost frame, its `  File "` and path head cut off
CUT = ['TransformerEngine/transformer_engine/pytorch/module/base.py", line 637, in set_extra_state',
       '    self.fp8_meta["recipe"] = state["recipe"]',
       "                              ~~~~~^^^^^^^^^^"]
# https://github.com/THUDM/slime/pull/1486 (in reports2): the same cut, above the exception Megatron-LM asserts
PLACED = ['Megatron-LM/megatron/training/arguments.py", line 561, in validate_args',
          "[rank14]:     assert num_layers % args.transformer_pipeline_model_parallel_size == 0, \\",
          "[rank14]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
          "[rank14]: AssertionError: Number of layers should be divisible by the pipeline-model-parallel size"]
# a sentence naming a file and a line is no frame: the quote is opened before the name
QUOTED = ['Error in "setup.py", line 12: invalid syntax in the package metadata']


def test_a_frame_line_cut_at_its_start_is_still_a_frame():
    fs = explain_lines(CUT)
    assert fs[0].id == "traceback-ends-in-package", [f.id for f in fs]
    assert fs[0].components[0] == "transformer-engine"


def test_an_exception_below_a_cut_frame_line_is_that_frames_package():
    fs = explain_lines(PLACED)
    assert fs[0].id == "error-in-package", [f.id for f in fs]
    assert fs[0].components[0] == "megatron"


def test_a_quoted_file_and_line_is_not_a_frame():
    assert "traceback-ends-in-package" not in [f.id for f in explain_lines(QUOTED)]
