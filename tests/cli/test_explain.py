"""`doctor explain` as a user runs it: one log, stdin, a directory of node logs, several files, empty and binary
input, an unknown error, a user signature database, JSON output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from doctor.cli import cli
from tests.explain.test_multi import four_nodes

HCCL = "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"


def run(*args: str, stdin: bytes | str | None = None):
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def js(result) -> dict:
    return json.loads(result.stdout)


def test_one_log_names_the_cause_and_the_line(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("INFO starting\n" + HCCL)
    r = run("explain", str(log))
    assert r.exit_code == 1
    assert "cann-libhccl-missing" in r.stdout and "line 2" in r.stdout


def test_json_report_carries_findings_ranked_with_evidence(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("Since the operator is called asynchronously, the stacktrace may be inaccurate.\n"
                   "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n")
    r = run("explain", "--json", str(log))
    doc = js(r)
    assert r.exit_code == 1 and doc["command"] == "explain"
    ids = [f["id"] for f in doc["findings"]]
    assert ids[0] == "npu-out-of-memory"  # the root cause before the knock-on hint
    first = doc["findings"][0]
    assert first["evidence"]["line"] == 2 and first["evidence"]["rank"] == 1
    assert doc["signatures"]["count"] > 100


def test_stdin(tmp_path):
    r = run("explain", "--json", "-", stdin=HCCL)
    assert r.exit_code == 1
    assert js(r)["findings"][0]["id"] == "cann-libhccl-missing"


def test_no_log_argument_reads_a_pipe_and_asks_for_a_log_on_a_terminal():
    """`journalctl -u job | doctor explain` / `doctor explain < job.log`: with no LOG, a pipe or redirect on stdin is
    the log (it said 'Missing argument'); on a terminal, where nothing is piped, exit 2 saying what LOG may be."""
    import os
    import pty
    import subprocess
    import sys

    r = run("explain", "--json", stdin=HCCL)
    assert r.exit_code == 1 and js(r)["findings"][0]["id"] == "cann-libhccl-missing"
    main, tty = pty.openpty()
    try:
        p = subprocess.run([sys.executable, "-m", "doctor", "explain"], stdin=tty, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    finally:
        os.close(main)
        os.close(tty)
    assert p.returncode == 2 and "LOG: missing: give a log file" in p.stderr and "- to read stdin" in p.stderr, p.stderr
    assert "LOG: LOG" not in p.stderr  # the label once


def test_the_header_counts_one_line_in_the_singular(tmp_path):
    """`doctor explain one-line.log` said "(1 lines, …)"; a directory of one log "1 file(s)"."""
    one = tmp_path / "logs" / "one.log"
    one.parent.mkdir()
    one.write_text("ImportError: libhccl.so: cannot open shared object file: No such file or directory\n")
    r = run("explain", str(one))
    assert f"log: {one} (1 line, " in r.output, r.output
    r = run("explain", str(one.parent))
    assert "logs: 1 file, 1 line, " in r.output, r.output


def test_a_secret_in_the_log_is_not_in_the_report(tmp_path):
    """The lines explain quotes go into bug reports: a token in a pip index URL or an env dump line is matched as
    read but printed redacted, in the text report and in --json (evidence, context lines)."""
    token = "hf_" + "Zx9" * 12
    log = tmp_path / "run.log"
    log.write_text(f"HF_TOKEN={token}\nLooking in indexes: https://ci:{token}@pypi.example/simple\n{HCCL}")
    for args in (("explain", str(log)), ("explain", "--json", str(log))):
        r = run(*args)
        assert r.exit_code == 1 and "cann-libhccl-missing" in r.stdout
        assert token not in r.stdout + r.stderr
    context = js(r)["findings"][0]["evidence"]["context"]["before"]
    assert context == ["HF_TOKEN=<redacted>", "Looking in indexes: https://<redacted>@pypi.example/simple"]


def test_empty_and_binary_input_warn_that_nothing_was_readable(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    binary = tmp_path / "core.log"
    binary.write_bytes(bytes(range(256)) * 64)
    for p in (empty, binary):
        r = run("explain", "--json", str(p))
        doc = js(r)
        assert r.exit_code == 0
        assert [f["id"] for f in doc["findings"]] == ["log-unreadable"]
        assert doc["findings"][0]["severity"] == "warning"
        said = doc["findings"][0]["detail"]  # it said "The input holds an empty input" before
        assert said.startswith("The log is empty (0 bytes" if p is empty else "The log holds binary data"), said
        assert f"Check that {p} is the run's text log" in said, said


def test_empty_standard_input_is_not_told_to_check_a_path(tmp_path):
    """`doctor explain - < /dev/null`: there is no path; what was piped in is what to check."""
    r = run("explain", "--json", "-", stdin="")
    said = js(r)["findings"][0]["detail"]
    assert r.exit_code == 0 and "Check that what was piped in (standard input) is the run's text log" in said, said


def test_unknown_error_names_the_first_error_line(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("INFO ok\nTraceback (most recent call last):\nFrobnicatorError: the widget is sideways\n")
    r = run("explain", "--json", str(log))
    doc = js(r)
    assert r.exit_code == 0
    f = doc["findings"][0]
    assert f["id"] == "no-known-signature" and f["severity"] == "info"
    assert "widget is sideways" in f["evidence"]["first_error"]["text"]


def test_unknown_error_fix_names_the_line_and_the_snapshot_command(tmp_path):
    """The fix said "Start from the first error line; … report it with the doctor collect snapshot": no line number
    (the evidence has it) and a snapshot no step had made. It names the line and gives the command, printed once."""
    log = tmp_path / "run.log"
    log.write_text("starting job\nERROR: widget count 7 exceeds 5\nexiting\n")
    f = js(run("explain", "--json", str(log)))["findings"][0]
    assert f["id"] == "no-known-signature" and f["fix"]["text"].startswith("Start from line 2, the first error line")
    assert f["fix"]["commands"] == ["doctor collect -o snapshot.json"]
    text = run("--no-color", "explain", str(log)).output
    assert text.count("doctor collect -o snapshot.json") == 1, text


def test_directory_of_node_logs_names_the_first_failing_node(tmp_path):
    root = four_nodes(tmp_path / "session")
    r = run("explain", "--json", str(root))
    doc = js(r)
    assert r.exit_code == 1
    assert doc["findings"][0]["id"] == "root-cause-node"
    assert doc["root_cause"]["node"] == "node-c"
    assert len(doc["logs"]) == 8
    text = run("explain", str(root)).stdout
    assert "node-c" in text and "first failure" in text.lower()


def test_several_files_are_read_together(tmp_path):
    a, b = tmp_path / "rank0.log", tmp_path / "rank1.log"
    a.write_text("EI0002: [PID: 1] 2025-03-05-07:17:45.645.648 The wait execution of the Notify register times out.\n")
    b.write_text("[ERROR] 2025-03-05-07:15:39 (PID:2, Device:0, RankID:1) ERR00006 PTA memory error\n")
    doc = js(run("explain", "--json", str(a), str(b)))
    assert doc["root_cause"]["node"] == "rank1"


def test_user_signature_database(tmp_path):
    db = tmp_path / "mine.toml"
    db.write_text('schema = "doctor.signatures/1"\n\n[[signature]]\nid = "widget-sideways"\nseverity = "error"\n'
                  'components = ["config"]\nspecificity = 50\nregex = [\'the widget is sideways\']\n'
                  'title = "The widget is sideways"\nfix = "Turn it."\nsource = "https://example.org/widget"\n'
                  'example_kind = "source-message"\nexample = "FrobnicatorError: the widget is sideways"\n')
    log = tmp_path / "run.log"
    log.write_text("FrobnicatorError: the widget is sideways\n")
    r = run("explain", "--json", "--signatures", str(db), str(log))
    assert r.exit_code == 1 and js(r)["findings"][0]["id"] == "widget-sideways"


def test_unreadable_inputs_exit_2(tmp_path):
    r = run("explain", str(tmp_path / "missing.log"))
    assert r.exit_code == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = 1\n")
    log = tmp_path / "run.log"
    log.write_text(HCCL)
    r = run("explain", "--signatures", str(bad), str(log))
    assert r.exit_code == 2 and "bad.toml" in (r.stdout + r.stderr)


def test_evidence_lines_are_printed(tmp_path: Path):
    log = tmp_path / "run.log"
    log.write_text(HCCL)
    out = run("explain", str(log)).stdout
    assert "evidence:" in out and "libhccl.so" in out


def test_jobs_reads_one_big_log_in_parts_with_the_same_report(tmp_path, monkeypatch):
    from doctor.explain import parts

    monkeypatch.setattr(parts, "PART_BYTES", 64 * 1024)
    log = tmp_path / "big.log"
    filler = "".join(f"(WorkerDict pid=2231, ip=10.0.0.2) step:{i} - actor/pg_loss:0.0213\n" for i in range(20_000))
    log.write_text(filler + "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n" + filler + HCCL)
    one, four = js(run("explain", "--json", "--jobs", "1", str(log))), js(run("explain", "--json", "--jobs", "4", str(log)))
    assert [(f["id"], f["evidence"]["line"]) for f in four["findings"]] == [
        (f["id"], f["evidence"]["line"]) for f in one["findings"]]
    assert one["lines"] == four["lines"] == 40_002


def test_a_time_without_a_year_is_printed_without_one(tmp_path: Path):
    # vLLM's record format has no year: the doctor must not print its own default year as the log's
    log = tmp_path / "serve.log"
    log.write_text("(Worker_TP0 pid=12235) ERROR 01-13 07:50:04 [multiproc_executor.py:824] Worker failed\n"
                   "(Worker_TP0 pid=12235) ERROR 01-13 07:50:04 [multiproc_executor.py:824] RuntimeError: shape "
                   "'[19, -1]' is invalid for input of size 640\n")
    out = run("explain", str(log)).stdout
    assert "01-13 07:50:04" in out and "2025-01-13" not in out, out
    log.write_text("2026-01-13 07:49:58,001 INFO starting\n" + log.read_text())
    assert "2026-01-13 07:50:04" in run("explain", str(log)).stdout


def test_a_line_that_holds_its_time_behind_a_cut_prefix_is_not_said_to_have_none(tmp_path: Path):
    # the finding shows the message without vLLM's `(EngineCore pid=…) ERROR 01-13 07:50:04 [core.py:710]` prefix;
    # the stamp is still that line's own, while a traceback line after it is dated by the line before
    log = tmp_path / "serve.log"
    log.write_text("INFO 01-13 07:50:01 [core.py:100] starting\n"
                   "(EngineCore_DP0 pid=123) ERROR 01-13 07:50:04 [core.py:710] RuntimeError: shape '[19, -1]' is "
                   "invalid for input of size 640\n")
    out = run("explain", str(log)).stdout
    assert "line 2 [01-13 07:50:04.000]: RuntimeError" in out and "no timestamp" not in out, out
    log.write_text("INFO 01-13 07:50:01 [core.py:100] starting\nTraceback (most recent call last):\n"
                   "RuntimeError: shape '[19, -1]' is invalid for input of size 640\n")
    assert "(no timestamp; the last one before it: 01-13 07:50:01.000)" in run("explain", str(log)).stdout


def test_a_snapshot_named_as_the_log_is_refused_naming_the_flags_that_read_it(tmp_path):
    """`doctor explain snap.json` (for `--snapshot snap.json LOG`): the JSON's lines were read as a log, and the
    snapshot's `"error": "npu-smi not found on PATH"` gave `error-line-names-component`, exit 1. A file collect
    wrote is exit 2 naming `check --from` and `--snapshot`, alone or beside a log; a log still reads."""
    from doctor.probes import collect_snapshot

    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(collect_snapshot().to_dict(), indent=2))
    log = tmp_path / "run.log"
    log.write_text(HCCL)
    for args in ([str(snap)], [str(snap), str(log)]):
        r = run("explain", "--json", *args)
        assert r.exit_code == 2, r.stdout
        (f,) = js(r)["findings"]
        assert f["id"] == "input-invalid"
        assert "doctor check --from" in f["title"] and "--snapshot" in f["title"] and str(snap) in f["title"]
    r = run("explain", "--json", "--snapshot", str(snap), str(log))
    assert r.exit_code == 1 and js(r)["findings"][0]["id"] == "cann-libhccl-missing"


def test_a_log_that_names_no_chip_and_no_npu_smi_table_imports_neither_reader(tmp_path):
    """`doctor explain` reads every log's head for the environment it states. On verl#5659's Ray log it imported
    the snapshot model (through the snapshot loader, for the is-it-a-snapshot test, and through the chip table)
    and the npu-smi parser, ~20 ms of every run, none of which such a log needs; a log whose head names a chip
    still gets it read, in a fresh process."""
    import subprocess
    import sys

    real = Path(__file__).resolve().parents[1] / "explain" / "multiproc" / "verl-5659.log"
    named = tmp_path / "named.log"
    named.write_text("NPU: 910B3\n" + real.read_text())
    code = ("import json, sys, runpy; log = sys.argv[1]; sys.argv = ['doctor', '--json', 'explain', log]\n"
            "try:\n    runpy.run_module('doctor', run_name='__main__')\nexcept SystemExit: pass\n"
            "print('LOADED=' + ','.join(m for m in ('doctor.snapshot.model', 'doctor.probes.npu_smi') "
            "if m in sys.modules), file=sys.stderr)")
    loaded, stated = [], []
    for log in (real, named):
        p = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=120)
        loaded.append([x for x in p.stderr.splitlines() if x.startswith("LOADED=")])
        stated.append(json.loads(p.stdout).get("stated"))
    assert loaded[0] == ["LOADED="] and stated[0] is None
    assert {"fact": "ascend.chip", "value": "910B3", "line": 1} in stated[1]


def test_a_short_log_is_explained_with_one_database_parse_one_automaton_and_no_process_pool(tmp_path):
    """On a log a user pastes, explain's fixed cost is its run time. One run, in a fresh process (text output, so the
    report is rendered too), reads and validates the signature database at most once (the next run takes it from the
    cache directory) and compiles one pre-filter automaton over the phrases (the NFA, ~2 ms; the DFA over the pruned
    phrases cost ~19 ms: an automaton to prune them and the DFA), and imports neither the process pool (only a log worth parts uses it) nor `packaging`
    (the fold of install lines and the version sort of profile pins: neither is asked for here)."""
    import os
    import subprocess
    import sys

    import pytest

    pytest.importorskip("ahocorasick_rs")
    real = Path(__file__).resolve().parents[1] / "explain" / "verl_runs" / "sft_torchrun_no_npu.log"
    code = ("import collections, runpy, sys\n"
            "import ahocorasick_rs, doctor.explain.db as db\n"
            "n = collections.Counter()\n"
            "def counted(name, f):\n"
            "    def call(*a, **k):\n"
            "        n[name] += 1\n"
            "        return f(*a, **k)\n"
            "    return call\n"
            "db._load = counted('parse', db._load)\n"
            "ahocorasick_rs.BytesAhoCorasick = counted('automaton', ahocorasick_rs.BytesAhoCorasick)\n"
            "sys.argv = ['doctor', 'explain', sys.argv[1]]\n"
            "try:\n    runpy.run_module('doctor', run_name='__main__')\nexcept SystemExit: pass\n"
            "print('COUNTED=%d,%d' % (n['parse'], n['automaton']), 'LOADED=' + ','.join(m for m in "
            "('concurrent.futures.process', 'packaging') if m in sys.modules), file=sys.stderr)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    counted = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", code, str(real)], capture_output=True, text=True, timeout=120,
                           env=env)
        assert "torch-nccl-backend-missing" in p.stdout, p.stderr[-2000:]
        counted.append([x for x in p.stderr.splitlines() if x.startswith("COUNTED=")])
    # the first run, with an empty cache directory, reads the message-owner table's file (validated with `packaging`)
    assert counted[0][0].startswith("COUNTED=1,1 ")
    assert counted[1] == ["COUNTED=0,1 LOADED="]  # the next takes the database from the cache


def test_the_pinned_pairs_of_a_crossing_are_read_without_the_snapshot_model():
    """A traceback crossing from one package into another (the bench's 10-line log: verl's main calling vLLM's
    arg_utils) names the versions the stack profiles pin together, so the run reads the profiles. Reading them took
    the snapshot model along (~20 ms of imports) for one name-normalising function; the fix prints the same pairs
    without it."""
    import subprocess
    import sys

    from bench.explain_speed import SHORT_LOG

    code = ("import runpy, sys\n"
            "sys.argv = ['doctor', 'explain', '-']\n"
            "try:\n    runpy.run_module('doctor', run_name='__main__')\nexcept SystemExit: pass\n"
            "print('MODEL=' + str('doctor.snapshot.model' in sys.modules), file=sys.stderr)\n"
            "print('REQUIREMENTS=' + str('packaging.requirements' in sys.modules), file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code], input=SHORT_LOG, capture_output=True, text=True, timeout=120)
    assert "called by verl's main" in p.stdout and "The verified stack profiles pin them together as verl" in p.stdout
    assert "MODEL=False" in p.stderr.splitlines(), p.stderr[-2000:]
    # nor `packaging.requirements` (~18 ms of imports) to check lines of the profiles only an install plan reads
    assert "REQUIREMENTS=False" in p.stderr.splitlines(), p.stderr[-2000:]


def test_two_runs_at_once_one_on_a_full_disk_prune_the_old_cache_entries_and_nothing_else(tmp_path):
    """Each version of the signature file, the message table or their readers leaves a cache entry (~1 MB, ~7 MB).
    Two explain processes at once on a cache holding older versions' entries, one of them unable to write (a file
    size limit: a full disk), both print the same report and exit the same; the entry in use and the two used most
    recently before it stay in each directory (always, whatever their size), the older ones that would take the
    directory past its 32 MB budget go, and another process's temp file mid-write, an entry-like symlink and the file
    it points to are left alone."""
    import os
    import resource
    import subprocess
    import sys

    real = Path(__file__).resolve().parents[1] / "explain" / "verl_runs" / "sft_torchrun_no_npu.log"
    doctor_cache = tmp_path / "cache" / "verl-ascend-doctor"
    planted = {"signatures": [f"0000000{i}-74228-030b07f0.marshal" for i in range(4)],
               "message_owners": [f"{i:032x}.marshal" for i in range(4)]}
    for sub, names in planted.items():
        (doctor_cache / sub).mkdir(parents=True)
        for age, name in enumerate(names):  # 00… the most recently used
            with open(doctor_cache / sub / name, "wb") as f:  # 12 MB (sparse): past the budget from the third
                f.write(b"an older version's entry")
                f.truncate(12 << 20)
            os.utime(doctor_cache / sub / name, (1_700_000_000 - age, 1_700_000_000 - age))
    writing = doctor_cache / "signatures" / ".doctor-4242-0123456789ab"
    writing.write_bytes(b"half written")
    outside = tmp_path / "precious"
    outside.write_bytes(b"not the doctor's")
    (doctor_cache / "message_owners" / f"{99:032x}.marshal").symlink_to(outside)

    def full_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    runs = [subprocess.Popen([sys.executable, "-m", "doctor", "explain", str(real)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env, preexec_fn=limit)
            for limit in (None, full_disk)]
    (out, err), (out_full, err_full) = (p.communicate(timeout=300) for p in runs)
    assert "torch-nccl-backend-missing" in out, err[-2000:]
    assert (out_full, runs[1].returncode) == (out, runs[0].returncode), err_full[-2000:]
    for sub, names in planted.items():
        left = sorted(p.name for p in (doctor_cache / sub).iterdir() if p.name.endswith(".marshal"))
        assert len(left) == 3 + (sub == "message_owners"), (sub, left)  # + the symlink
        assert set(names[:2]) < set(left) and not set(names[2:]) & set(left), (sub, left)
    assert writing.read_bytes() == b"half written" and outside.read_bytes() == b"not the doctor's"
    assert (doctor_cache / "message_owners" / f"{99:032x}.marshal").is_symlink()
    assert [p.name for p in doctor_cache.rglob(".doctor-*")] == [writing.name]


def test_a_compressed_log_is_read_as_its_text(tmp_path):
    """logrotate's `train.log.1.gz`, an archive's `.xz` / `.bz2`: read as bytes each was "binary data" and the
    warning log-unreadable said there was nothing to explain. Told by the first bytes, not the name; piped in too."""
    import bz2
    import gzip
    import lzma
    import os
    import subprocess
    import sys

    text = ("INFO starting\n" * 2000 + HCCL).encode()
    for name, data in (("train.log.1.gz", gzip.compress(text)), ("train.log.xz", lzma.compress(text)),
                       ("archived.log", bz2.compress(text))):
        log = tmp_path / name
        log.write_bytes(data)
        r = run("explain", "--json", str(log))
        doc = js(r)
        assert r.exit_code == 1, (name, r.output)
        assert [f["id"] for f in doc["findings"]] == ["cann-libhccl-missing"], name
        assert doc["findings"][0]["evidence"]["line"] == 2001, name
    cp = subprocess.run([sys.executable, "-m", "doctor", "explain", "--json", "-"], input=gzip.compress(text),
                        capture_output=True, timeout=120,
                        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert cp.returncode == 1 and json.loads(cp.stdout)["findings"][0]["id"] == "cann-libhccl-missing", cp.stderr


def test_a_compressed_log_cut_short_is_exit_2_naming_the_command_that_reads_it(tmp_path):
    """A copy of a .gz cut short (still being written, a transfer that stopped): exit 2 naming the compression and
    `zcat LOG | doctor explain -`, which reads the part that decompresses; never a traceback."""
    import gzip

    log = tmp_path / "train.log.1.gz"
    whole = gzip.compress(("INFO starting\n" * 2000 + HCCL).encode())
    log.write_bytes(whole[: len(whole) // 2])
    r = run("explain", str(log))
    assert r.exit_code == 2, r.output
    assert f"{log}: cannot read log: gzip-compressed, and Compressed file ended before the end-of-stream marker was " \
           f"reached; `zcat {log} | doctor explain -` reads the part that decompresses" in r.stderr, r.stderr


def test_a_zstd_log_is_read_where_python_has_the_codec_else_exit_2_naming_zstdcat(tmp_path):
    """zstd has a codec in Python's standard library from 3.14 on; before it the log is exit 2 naming `zstdcat`, not
    the warning that the log holds nothing readable."""
    import importlib.util

    data = HCCL.encode()
    # one zstd frame (RFC 8878): magic, a single-segment header with a one-byte content size, one raw last block
    frame = bytes.fromhex("28b52ffd20") + bytes([len(data)]) + ((len(data) << 3) | 1).to_bytes(3, "little") + data
    log = tmp_path / "train.log.zst"
    log.write_bytes(frame)
    r = run("explain", str(log))
    if importlib.util.find_spec("compression") is not None and importlib.util.find_spec("compression.zstd"):
        assert r.exit_code == 1 and "cann-libhccl-missing" in r.stdout, r.output
    else:
        assert r.exit_code == 2 and (f"{log}: cannot read log: zstd-compressed, and this Python has no zstd codec; "
                                     f"`zstdcat {log} | doctor explain -` reads it") in r.stderr, r.stderr
    import shutil
    import subprocess

    if shutil.which("zstd"):  # the frame is one zstd itself reads as the text
        assert subprocess.run(["zstd", "-dc", str(log)], capture_output=True).stdout == data


def test_a_logrotated_directory_is_read_whole_and_the_files_not_read_are_named(tmp_path):
    """`doctor explain DIR` on logrotate's output read train.log only: the failure in train.log.2.gz went unread and
    the report said "no known failure signature", exit 0. Every copy is read now; the files the walk does not read
    are named, with why, under the header."""
    import gzip

    (tmp_path / "train.log").write_text("INFO step 30\n")
    (tmp_path / "train.log.1").write_text("INFO step 20\n")
    (tmp_path / "train.log.2.gz").write_bytes(gzip.compress(("INFO step 10\n" + HCCL).encode()))
    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main_ppo\n")
    r = run("--no-color", "explain", str(tmp_path))
    assert r.exit_code == 1, r.output
    assert "cann-libhccl-missing" in r.stdout
    lines = r.stdout.splitlines()
    assert lines[1] == "read: train.log, train.log.1, train.log.2.gz", r.stdout
    assert lines[2].startswith("not read (not a log's name; logs are *.log, *.out, *.err, *.txt, rotated") \
        and lines[2].endswith("): run.sh"), r.stdout
    doc = js(run("explain", "--json", str(tmp_path)))
    assert [Path(x["log"]).name for x in doc["logs"]] == ["train.log", "train.log.1", "train.log.2.gz"]
    assert [Path(s["path"]).name for s in doc["skipped"]] == ["run.sh"]
    # a directory read whole gets no such lines
    (tmp_path / "run.sh").unlink()
    assert "not read" not in run("--no-color", "explain", str(tmp_path)).stdout
