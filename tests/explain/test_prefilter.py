"""The pre-filter never drops a line that holds one of a pattern's fixed phrases, whatever plan it makes, with
the compiled automaton (doctor.explain.aho) and with the pure-`re` fallback alike."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from doctor.explain import aho, prefilter
from doctor.explain.anchors import required_runs
from doctor.explain.db import read_signatures as load_signatures
from doctor.explain.scanner import _FIRST_ERROR_RUNS

DB = load_signatures()
OPTIONS = (*DB.literal_options, *_FIRST_ERROR_RUNS)
ALPHABET = "abcdefghijklmnopqrstuvwxyz      ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/()[]='\"`"


def _lines_with_phrases(rng: random.Random, n: int) -> tuple[list[str], set[int]]:
    lines, wanted = [], set()
    for i in range(n):
        line = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 120)))
        if rng.random() < 0.05:  # a line a pattern could match holds all of the pattern's phrases
            phrases = " ".join(rng.choice(OPTIONS))
            cut = rng.randint(0, len(line))
            line = line[:cut] + phrases + line[cut:]
            wanted.add(i)
        lines.append(line)
    return lines, wanted


def _candidate_lines(pf: prefilter.Prefilter, region: bytes) -> set[int]:
    starts = {start for start, _ in pf.candidates(region)}
    out, pos = set(), 0
    for i, line in enumerate(region.split(b"\n")):
        if pos in starts:
            out.add(i)
        pos += len(line) + 1
    return out


@pytest.fixture(params=["aho", "aho-large", "re"])
def backend(request, monkeypatch):
    """The pre-filter kinds: the automaton of a short log (an NFA over every longest phrase), that of a log past
    aho.LARGE_LOG (a DFA over the pruned phrases), the `re` plan."""
    if request.param.startswith("aho") and not aho.AVAILABLE:
        pytest.skip("ahocorasick_rs is not installed")
    monkeypatch.setattr(prefilter, "BACKEND", request.param.split("-")[0])
    return request.param


def _build(backend: str, options, sample=None):
    return prefilter.build_prefilter(options, sample, large=backend == "aho-large")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_line_holding_a_phrase_is_a_candidate(seed, backend):
    rng = random.Random(seed)
    lines, wanted = _lines_with_phrases(rng, 3000)
    region = ("\n".join(lines) + "\n").encode()
    for sample in (None, prefilter.sample_of(region)):  # the static plan and one tuned to this text
        pf = _build(backend, OPTIONS, sample)
        assert pf is not None
        got = _candidate_lines(pf, region)
        assert wanted <= got, sorted(wanted - got)[:5]


def test_plan_tuned_to_a_log_whose_common_letters_are_gate_bytes(backend):
    # a log made of the bytes the phrases need most forces two-byte gates and translated gates together
    text = ("error code is 0 errno torch_npu lib so Error ERR " * 3000).encode()
    sample = prefilter.sample_of(text)
    pf = _build(backend, OPTIONS, sample)
    for runs in OPTIONS:
        line = b"x " + " ".join(runs).encode() + b" y\n"
        assert pf.candidates(line), runs


def test_no_phrase_no_prefilter(backend):
    assert _build(backend, []) is None


def test_runs_are_every_required_phrase():
    assert required_runs(r"libascend_hal\.so: cannot open (?:shared )?object") == [
        "libascend_hal.so: cannot open ", "object"]
    assert required_runs(r"node annotations\(\d+\) not same node idle\(\d+\)") == [
        "node annotations(", ") not same node idle("]
    assert required_runs("a|b") == []
    for runs in OPTIONS:
        for phrase in runs:
            assert "\n" not in phrase and len(phrase) >= 3 and not re.search(r"[\x00]", phrase)


def test_the_automaton_is_the_default_where_it_is_installed():
    pytest.importorskip("ahocorasick_rs")
    assert prefilter.BACKEND == "aho"
    assert isinstance(prefilter.build_prefilter(OPTIONS), aho.AhoPrefilter)


def test_the_automaton_keeps_one_phrase_per_pattern_and_drops_those_holding_another():
    assert aho.phrases_of([("cannot open shared object",), ("libhccl.so: cannot open shared object", "x" * 3),
                           ("Error",), ("RuntimeError",)]) == (b"Error", b"cannot open shared object")


def test_both_automata_pick_the_same_lines_of_every_real_text():
    """The NFA over every longest phrase (a short log) and the DFA over the pruned ones (a log past LARGE_LOG): a
    line holding a dropped phrase holds the shorter phrase kept, so they pick the same lines, here of every log,
    report and fixture text in tests/."""
    pytest.importorskip("ahocorasick_rs")
    short, large = aho.build(tuple(sorted(set(OPTIONS)))), aho.build(tuple(sorted(set(OPTIONS))), True)
    assert short is not None and large is not None and not short.large and large.large
    assert len(large.phrases) < len(short.phrases)
    texts = [f.read_bytes() for f in sorted(Path(__file__).resolve().parents[1].rglob("*"))
             if f.suffix in (".log", ".toml", ".txt") and f.is_file()]
    assert len(texts) > 100
    for text in texts:
        assert short.candidates(text) == large.candidates(text)


def test_a_log_that_grows_past_large_log_is_scanned_on_by_the_dfa_with_the_same_report(monkeypatch):
    pytest.importorskip("ahocorasick_rs")
    from doctor.explain.signatures import explain_lines

    real = (Path(__file__).resolve().parent / "verl_runs" / "ppo_v0_data_file_missing.log").read_text()
    lines = (real * 4).splitlines()  # ~400 KB: the failure's lines come past 100 KB, more than a block in
    built: list[bool] = []  # the automata compiled: large or not

    class Counted(aho.AhoPrefilter):
        def __init__(self, phrases: tuple[bytes, ...], large: bool = False) -> None:
            built.append(large)
            super().__init__(phrases, large)

    monkeypatch.setattr(aho, "AhoPrefilter", Counted)

    def run(large_log: int) -> list:
        monkeypatch.setattr(aho, "LARGE_LOG", large_log)
        aho.build.cache_clear()
        built.clear()
        return [(f.id, f.evidence.get("line"), f.evidence.get("count")) for f in explain_lines(lines, db=DB)]

    short = run(1 << 40)  # (a re-plan builds another automaton of the same kind: other phrases)
    assert built and not any(built)
    assert run(150_000) == short and built[0] is False and built[-1] is True  # the NFA, the DFA from 150 KB on
    assert run(0) == short and all(built)


@pytest.mark.parametrize("region", [b"ok\nan Error here and Error again\nok\n", b"ok\nlast Error"])
def test_a_line_with_several_phrases_is_one_candidate(region, backend):
    pf = _build(backend, OPTIONS)
    assert pf is not None
    got = pf.candidates(region)
    assert len(got) == 1 and region[got[0][0]:].startswith(b"an Error" if b"again" in region else b"last Error")
    assert got[0][1] == region.find(b"\n", got[0][0])


def test_both_backends_explain_the_corpus_alike(monkeypatch):
    pytest.importorskip("ahocorasick_rs")
    from doctor.explain.signatures import explain_lines
    from tests.corpus.corpus import load

    def run(name: str) -> list:
        monkeypatch.setattr(prefilter, "BACKEND", name)
        out = []
        for r in load():
            if r.log is not None:
                out.append([(f.id, f.evidence.get("line")) for f in explain_lines(r.log.splitlines(), db=DB)])
        return out

    assert run("aho") == run("re")


def _rows_holding(table, line: str) -> list:
    return [row for row in table if not row[0] or row[0] in line]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_candidate_line_is_tried_against_exactly_the_rows_whose_literal_it_holds(seed):
    """The scanner tries a candidate line only against the match-table rows its literals select (one automaton
    pass, not a loop over ~1,100 rows): the same rows, in the same order, as testing every row's literal."""
    pytest.importorskip("ahocorasick_rs")
    rng = random.Random(seed)
    table = DB.match_table
    literals = [row[0] for row in table if row[0]]
    index = aho.LiteralIndex(table)
    for _ in range(2000):
        line = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 80)))
        for _ in range(rng.choice((0, 1, 1, 2, 3))):  # literals that overlap or hold one another included
            lit = rng.choice(literals)
            cut = rng.randint(0, len(line))
            line = line[:cut] + lit[rng.randint(0, len(lit) // 2):] + line[cut:]
        assert list(index.rows_for(line)) == _rows_holding(table, line), line


def test_without_the_automaton_every_row_is_tried(monkeypatch):
    monkeypatch.setattr(aho, "ahocorasick_rs", None)
    table = [("RuntimeError", "a"), (None, "b"), ("Error", "c")]
    assert list(aho.LiteralIndex(table).rows_for("nothing here")) == table  # the caller's `lit in line` decides


def test_a_row_without_a_literal_is_always_tried():
    pytest.importorskip("ahocorasick_rs")
    table = [("RuntimeError", "a"), (None, "b"), ("Error", "c"), ("RuntimeError", "d")]
    index = aho.LiteralIndex(table)
    assert list(index.rows_for("nothing here")) == [(None, "b")]
    assert list(index.rows_for("RuntimeError: x")) == table


def test_the_row_index_explains_the_corpus_as_the_full_loop_does(monkeypatch):
    pytest.importorskip("ahocorasick_rs")
    from doctor.explain.db import SignatureDB
    from doctor.explain.signatures import explain_lines
    from tests.corpus.corpus import load

    def run() -> list:
        return [[(f.id, f.evidence.get("line")) for f in explain_lines(r.log.splitlines(), db=DB)]
                for r in load() if r.log is not None]

    indexed = run()
    monkeypatch.setattr(SignatureDB, "match_index", property(lambda db: _EveryRow(db.match_table)))
    assert run() == indexed


class _EveryRow:
    def __init__(self, table) -> None:
        self.table = table

    def rows_for(self, line: str):
        return self.table


def _candidates(text: bytes) -> int:
    from doctor.explain.scanner import LogScanner

    s = LogScanner()
    for i in range(0, len(text), 1 << 16):
        s.feed_bytes(text[i:i + (1 << 16)])
    s.close()
    return s.candidate_lines


def test_a_healthy_training_log_leaves_the_regexes_idle():
    """The work beyond reading a log is its candidate lines: on the benchmark's healthy verl/vLLM/Ray mix almost no
    line may hold a phrase. A signature whose only fixed phrase is common (`config.py` in `peft[/\\]config\\.py`,
    `ret` in `DCMI.*\\bret ...`) made every vLLM config line a candidate: 200 MB took 186x plain reading."""
    from bench.explain_speed import _LINES

    rng = random.Random(3)
    lines = [rng.choice(_LINES).replace("{i}", str(rng.randint(0, 999))) for _ in range(20_000)]
    assert _candidates(("\n".join(lines) + "\n").encode()) < 400  # the first warnings, and a met context's lines


def test_a_met_context_stops_selecting_lines():
    # `\braylet\b` is a context of a vllm-ascend FAQ signature: once a raylet line is seen, raylet lines are no
    # longer read (Ray prefixes every line of its raylet log with `(raylet)`)
    line = b"(raylet) [2025-06-16 15:11:06,443 I 1234 5678] node_manager.cc:1234: Worker 0x1234abcd registered\n"
    assert _candidates(line * 20_000) < 2_000
