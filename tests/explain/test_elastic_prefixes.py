"""torch elastic's line prefixes besides `[default0]:` (doctor.explain.processes, doctor.explain.events strip_prefix):
`[trainer0]:` of a custom --role, `[3]:` of a `${rank}` log_line_prefix_template, and TorchX's `ddp/0 ` before them.

torch writes its prefix right before the line (TailLog's header f"[{name}{local_rank}]:", no space; a template is
string.Template-substituted with role_name, rank, local_rank), so these are read only where the line goes on with no
space or with a frame's indentation: `[1]:` alone is a ChildFailedError summary's, `[worker0]: text` someone's words,
`[1] loss: 1.485` a program's own print. Before, none of these forms was a prefix: their lines kept it in their text,
named no process, and the same traceback from four ranks said nothing of ranks."""

from __future__ import annotations

import pytest

from doctor.explain.events import line_process, strip_prefix
from doctor.explain.stream import explain_lines
from doctor.report import Severity

# A TorchX run (`torchx run --scheduler local_cwd dist.ddp --cpu 2 --script ddp.py`) quoted in public notes on TorchX
# (the index's stored copy of them), and the lines torch's own test expects from TailLog with role "trainer"
# (pytorch/pytorch test/distributed/elastic/multiprocessing/api_test.py: `[trainer0]:helloA stdout from 0`).
_TORCHX = [
    "ddp/0 [0]:[1] loss: 2.046",
    "ddp/0 [1]:[10] loss: 0.001",
    "ddp/0 [0]:[rank0]:[W1002 20:57:32.418684829 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() "
    "was not called before program exit, which can leak resources. For more info, please see "
    "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
]


@pytest.mark.parametrize("line, process, text", [
    (_TORCHX[0], "ddp/0 [0]", "[1] loss: 2.046"),
    (_TORCHX[1], "ddp/0 [1]", "[10] loss: 0.001"),
    (_TORCHX[2], "ddp/0 [0]", _TORCHX[2].split("[rank0]:", 1)[1]),
    ("[trainer0]:helloA stdout from 0", "trainer0", "helloA stdout from 0"),
    ("[trainer1]:worldA stderr from 1", "trainer1", "worldA stderr from 1"),
])
def test_torch_elastic_and_torchx_prefixes_name_their_process(line, process, text):
    assert line_process(line) == process
    assert strip_prefix(line) == text


@pytest.mark.parametrize("line, process", [
    # pytorch/pytorch#75087, a `--tee 3` log: the default role, read before as now
    ("[default3]:Fatal Python error: Segmentation fault", "default3"),
    # the guards: torchrun without --tee (the same notes: the program prints `[epoch] loss`), a ChildFailedError
    # summary's rank header (Vision-CAIR/MiniGPT-4#237), and words that only look like a prefix
    ("[1] loss: 1.485", None),
    ("[1]:", None),
    ("[0]:", None),
    ("[worker0]: Certificate of Cloudera Manager Agent will expire within 0 days.", None),
])
def test_what_is_no_torch_elastic_prefix_stays_the_line(line, process):
    assert line_process(line) == process
    if process is None:
        assert strip_prefix(line) == line


def _traceback(prefix: str) -> list[str]:
    return [f"{prefix}Traceback (most recent call last):",
            f'{prefix}  File "/usr/local/lib/python3.10/site-packages/verl/trainer/ppo/ray_trainer.py", line 42, in fit',
            f"{prefix}    step()",
            f"{prefix}ValueError: micro batch is 0"]


@pytest.mark.parametrize("template, names", [
    ("[{}]:", ["[0]", "[1]", "[2]", "[3]"]),
    ("[trainer{}]:", ["trainer0", "trainer1", "trainer2", "trainer3"]),
    ("ddp/0 [{}]:", ["ddp/0 [0]", "ddp/0 [1]", "ddp/0 [2]", "ddp/0 [3]"]),
])
def test_one_traceback_from_four_ranks_behind_a_template_prefix_says_which(template, names):
    # the same traceback from every rank is one finding that names the ranks (before: four occurrences of nobody's)
    lines = [line for i in range(4) for line in _traceback(template.format(i))]
    found = [f for f in explain_lines(lines) if f.severity is Severity.ERROR]
    assert [f.id for f in found] == ["error-in-package"]
    assert found[0].evidence["processes"] == 4 and found[0].evidence["process_names"] == names
