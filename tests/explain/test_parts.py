"""One big log read in parts by several processes gives the same result as one scanner reading all of it."""

from __future__ import annotations

import random

import pytest

from doctor.explain import parts
from doctor.explain.db import read_signatures as load_signatures
from doctor.explain.stream import explain_path, scan_path

DB = load_signatures()
FILLER = (
    "(WorkerDict pid=2231, ip=10.0.0.2) step:{i} - actor/pg_loss:0.0213 - actor/entropy:1.2312",
    "(TaskRunner pid=12345) INFO 06-16 15:10:58 [__init__.py:44] plugin ascend loaded.",
    "Training Progress:  {i}%|####      | 44/100 [12:31<15:55, 17.07s/it]",
)


def _write(path, n_lines: int, specials: dict[int, str]) -> None:
    rng = random.Random(5)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(1, n_lines + 1):
            fh.write(specials.get(i, rng.choice(FILLER).replace("{i}", str(i))) + "\n")


def _same(a, b) -> None:
    assert a.lines_read == b.lines_read and a.bytes_read == b.bytes_read
    assert a.unmet_context == b.unmet_context
    assert set(a.hits) == set(b.hits)
    for sig_id, hit in a.hits.items():
        other = b.hits[sig_id]
        assert (hit.line, hit.text, hit.before, hit.after, hit.count, hit.lines, hit.time) == (
            other.line, other.text, other.before, other.after, other.count, other.lines, other.time), sig_id
    fa, fb = a.first_error, b.first_error
    assert (fa.line, fa.text, fa.before) == (fb.line, fb.text, fb.before) if fa else fb is None


@pytest.fixture()
def small_parts(monkeypatch):
    monkeypatch.setattr(parts, "PART_BYTES", 256 * 1024)


def test_parts_give_the_same_hits_lines_context_and_first_error(tmp_path, small_parts):
    log = tmp_path / "big.log"
    n = 40_000  # about 3 MB: several parts of 256 KiB minimum
    specials = {
        7_000: "RuntimeError: Some other failure nobody knows",  # the first error line
        15_000: "RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 6; 60.97 GiB total capacity)",
        31_000: "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 1; 60.97 GiB total capacity)",
        36_000: "EI0002: [PID: 7277] 2025-06-16-15:17:45.645.648 The wait execution of the Notify register times out.",
        39_999: "ImportError: libhccl.so: cannot open shared object file: No such file or directory",
    }
    _write(log, n, specials)
    size = log.stat().st_size
    for count in (2, 3, 5):
        ranges = parts.cuts(str(log), size, count)
        assert ranges[0][0] == 0 and ranges[-1][1] == size and len(ranges) == count
        whole, split = scan_path(log, db=DB, jobs=1), parts.scan_parts(str(log), size, db=DB, context_lines=2,
                                                                         parts=count)
        _same(whole, split)
    assert scan_path(log, db=DB, jobs=1).hits["npu-out-of-memory"].count == 2


def test_hit_on_the_first_line_of_a_part_gets_context_from_the_part_before(tmp_path, small_parts):
    log = tmp_path / "edge.log"
    _write(log, 30_000, {})
    size = log.stat().st_size
    start = parts.cuts(str(log), size, 2)[1][0]
    text = log.read_bytes()
    line_no = text[:start].count(b"\n") + 1  # the first line of the second part
    lines = text.decode().splitlines()
    lines[line_no - 1] = "ImportError: libhccl.so: cannot open shared object file: No such file or directory"
    log.write_text("\n".join(lines) + "\n")
    assert parts.cuts(str(log), log.stat().st_size, 2)[1][0] == start  # same cut after the edit
    _same(scan_path(log, db=DB, jobs=1), parts.scan_parts(str(log), log.stat().st_size, db=DB, context_lines=2,
                                                          parts=2))


def test_context_rule_met_in_another_part_counts(tmp_path, small_parts):
    log = tmp_path / "ctx.log"
    # torch-npu-undefined-symbol needs a torch_npu line somewhere in the same log
    _write(log, 30_000, {100: "import torch_npu  # loading the plugin", 29_000: "ImportError: undefined symbol: foo"})
    whole = scan_path(log, db=DB, jobs=1)
    split = parts.scan_parts(str(log), log.stat().st_size, db=DB, context_lines=2, parts=3)
    _same(whole, split)
    assert "torch-npu-undefined-symbol" not in split.unmet_context


def test_explain_path_with_jobs_uses_parts_only_for_big_files(tmp_path, monkeypatch):
    log = tmp_path / "small.log"
    _write(log, 100, {50: "ImportError: libhccl.so: cannot open shared object file: No such file or directory"})
    monkeypatch.setattr(parts, "scan_parts", lambda *a, **k: pytest.fail("a small file is read in one process"))
    findings, lines = explain_path(log, db=DB, jobs=4)
    assert lines == 100 and findings[0].evidence["line"] == 50
    assert parts.part_count(10 * parts.PART_BYTES, 4) == 4 and parts.part_count(parts.PART_BYTES - 1, 4) == 1
