"""`doctor explain`: the signature database, the streaming matcher and the command users run."""

from __future__ import annotations

import io
import json
import re
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from doctor.cli import cli
from doctor.errors import InputError
from doctor.explain.signatures import (
    DEFAULT_DB,
    MAX_LINE,
    NO_MATCH_ID,
    SHOWN_CHARS,
    explain_file,
    explain_lines,
    iter_log_lines,
    load_signatures,
)
from doctor.report import COMPONENTS, Severity
from tests.conftest import SCHEMAS
from tests.fuzz._budget import fuzz

DB = load_signatures()
SIGS = DB.signatures


def ids(findings):
    return [f.id for f in findings]


def run(*args, input=None):
    return CliRunner().invoke(cli, ["explain", *args], input=input)


# ------------------------------------------------------------------------------------------- the database


def test_database_has_at_least_40_sourced_signatures():
    assert len(SIGS) >= 40
    assert len({s.id for s in SIGS}) == len(SIGS)
    for s in SIGS:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", s.id)
        assert set(s.components) <= COMPONENTS
        assert s.source.startswith(("https://", "http://"))
        assert s.fix and s.title
        if s.severity is not Severity.INFO:
            assert s.fix.strip()


@pytest.mark.parametrize("sig", SIGS, ids=[s.id for s in SIGS])
def test_every_example_is_explained_by_its_own_signature_only(sig):
    found = explain_lines([*sig.example_context, sig.example], context_lines=0, attribution=False)
    assert ids(found) == [sig.id]
    # With attribution, a class signature (fallback / yields) may give way to what the line's module, library or
    # code says; a specific one never does.
    with_attribution = ids(explain_lines([*sig.example_context, sig.example], context_lines=0))
    assert with_attribution == [sig.id] or (sig.fallback or sig.yields) and sig.id not in with_attribution
    # Every other signature that also matches this line is less specific, or it is a symptom this root
    # cause supersedes, or a generic fallback: it loses.
    for other in SIGS:
        if other.id != sig.id and other.matches(sig.example) and not other.context:
            assert (
                other.specificity < sig.specificity
                or (other.specificity == sig.specificity and other.order > sig.order)
                or other.id in sig.supersedes
                or other.fallback
            ), other.id


def test_the_issue_coverage_list_is_in_the_database():
    wanted = {
        "nnal-libatb-missing", "cann-libhccl-missing", "cann-libascendcl-missing", "driver-libraries-missing",
        "torch-npu-abi-mismatch", "cann-env-not-sourced", "cann-op-env-init-failed", "hccl-connect-timeout",
        "hccl-port-in-use", "npu-device-in-use", "npu-dcmi-init-failed", "npu-out-of-memory",
        "mindspeed-pypi-placeholder", "hydra-could-not-override", "hydra-key-not-in-struct",
        "hydra-could-not-append", "mbridge-with-vpp-unsupported", "mindspeed-flash-attn-required",
        "recompute-config-invalid", "sequence-parallel-without-tp", "mindspeed-megatron-mismatch",
        "transformer-engine-on-npu", "triton-namespace-clash", "numpy2-abi-break", "python-too-old-pep604",
    }
    assert wanted <= {s.id for s in SIGS}


def test_500001_and_eh9999_lines_are_explained():
    found = explain_lines([
        "EH9999: Inner Error!",
        "EH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]",
        "        build op model failed, result = 500001[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]",
    ])
    assert ids(found) == ["cann-op-env-init-failed"]  # the generic EH9999 fallback is dropped
    assert found[0].evidence["line"] == 2 and found[0].evidence["occurrences"] == 2


@pytest.mark.parametrize("code", ["561107", "561109", "561110", "561111", "561113", "561117", "561119"])
def test_an_aclnn_code_of_the_kernel_library_s_files_names_the_kernels_package(code):
    """CANN's aclnn return-code table (ops-nn docs/zh/context/aclnn_return_code.md) defines 561107-561119 as the
    operator kernel library failing to load: ASCEND_OPP_PATH unset, or the library's operator-info json / static
    binary json missing, unreadable or invalid. The kernels package is the one to reinstall or source, not an
    internal error of the operator (561000-561002, 561101-561106)."""
    found = explain_lines([f"RuntimeError: call aclnnRmsNorm failed, error code is {code}"])
    assert found[0].id == "aclnn-kernel-package-missing"
    assert found[0].components[0] == "kernels"
    inner = explain_lines(["RuntimeError: call aclnnRmsNorm failed, error code is 561002"])
    assert inner[0].id == "aclnn-internal-error"


# ------------------------------------------------------------------------------------------- the public cases


def _cases(shared: Path):
    manifest = json.loads((shared / "cases" / "manifest.json").read_text())
    return [c for c in manifest["cases"] if c.get("log")]


def test_every_public_case_log_is_explained_with_an_expected_component(shared_dir):
    rank = {"info": 0, "warning": 1, "error": 2}
    cases = _cases(shared_dir)
    assert cases
    for case in cases:
        findings = explain_file(shared_dir / "cases" / case["log"])
        want = set(case["expect"]["components"])
        floor = rank[case["expect"]["min_severity"]]
        assert any(set(f.components) & want and f.severity.rank >= floor for f in findings), (
            case["id"], [(f.id, f.components, f.severity.value) for f in findings])


def test_every_case_log_with_cli_json_is_a_valid_report(shared_dir):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / "report.schema.json").read_text())
    for case in _cases(shared_dir):
        r = run("--json", str(shared_dir / "cases" / case["log"]))
        assert r.exit_code == 1, r.output  # every case log holds an error
        report = json.loads(r.stdout)  # stdout is exactly one JSON document
        jsonschema.validate(report, schema)
        assert report["command"] == "explain" and report["status"] == "error"
        f = report["findings"][0]
        assert f["evidence"]["line"] >= 1 and f["evidence"]["text"] and f["fix"]["text"] and f["source"]


# ------------------------------------------------------------------------------------------- matching rules


def test_most_specific_signature_wins_a_line():
    line = "ImportError: libatb.so: cannot open shared object file: No such file or directory"
    assert {"nnal-libatb-missing", "shared-library-missing"} <= {s.id for s in SIGS if s.matches(line)}
    assert ids(explain_lines([line])) == ["nnal-libatb-missing"]


def test_several_distinct_problems_give_several_findings_in_log_order():
    log = [
        "starting",
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory",
        "noise",
        "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity)",
        "hydra.errors.ConfigCompositionException: Could not override 'a.b'. To append to your config use +a.b=1",
        "Key 'b' is not in struct",
    ]
    found = explain_lines(log)
    assert ids(found) == ["cann-libhccl-missing", "npu-out-of-memory", "hydra-could-not-override"]
    assert [f.evidence["line"] for f in found] == [2, 4, 5]


def test_a_root_cause_supersedes_its_symptom():
    log = ["RuntimeError: Failed to infer device type", "ImportError: libatb.so: cannot open shared object file"]
    assert ids(explain_lines(log)) == ["nnal-libatb-missing"]
    assert ids(explain_lines(log[:1])) == ["vllm-device-type-not-inferred"]


def test_fallback_signatures_only_when_nothing_specific_matched():
    generic = "[E OpParamMaker.cpp:273] call aclnnEqScalar failed, detail:EZ9999: Inner Error!"
    assert ids(explain_lines([generic])) == ["cann-inner-error"]
    specific = "EZ9999: 2024-05-17-18:46:14.721.067  Op Equal does not has any binary."
    assert ids(explain_lines([generic, specific])) == ["cann-kernels-missing"]


def test_context_rule_is_required_and_the_line_falls_back_without_it():
    line = "IndexError: too many indices for tensor of dimension 3"
    # without its context the signature does not fire; the line is then read like any other (torch raises it)
    assert ids(explain_lines([line])) == ["message-owner"]
    assert ids(explain_lines(["step 1", "step 2", "step 3", "step 4", line])) == ["message-owner"]
    # context may come after the match, too
    found = explain_lines([line, "use_mbridge=True", "virtual_pipeline_model_parallel_size=4"])
    assert ids(found) == ["mbridge-with-vpp-unsupported"]
    assert ids(explain_lines([line, "'use_mbridge': True", "'virtual_pipeline_model_parallel_size': None"])) == [
        "message-owner"]


def test_repeated_error_is_one_finding_with_a_count():
    line = "(WorkerDict pid=7) RuntimeError: NPU out of memory. Tried to allocate 1.00 GiB"
    found = explain_lines([line] * 50)
    assert ids(found) == ["npu-out-of-memory"]
    ev = found[0].evidence
    assert ev["occurrences"] == 50 and ev["line"] == 1 and ev["lines"] == [1, 2, 3, 4, 5]


def test_evidence_is_trimmed_with_context_lines():
    long_tail = "x" * 5000
    log = ["a", "b", "c", f"   RuntimeError: 0 active drivers ([]). There should only be one. {long_tail}", "d", "e", "f"]
    (f,) = explain_lines(log)
    assert f.evidence["line"] == 4
    assert f.evidence["text"].startswith("RuntimeError: 0 active") and len(f.evidence["text"]) <= SHOWN_CHARS
    assert f.evidence["context"] == {"before": ["b", "c"], "after": ["d", "e"]}
    assert f.fix and f.fix.text and f.source.startswith("https://")


def test_ansi_colours_and_crlf_do_not_hide_a_match():
    log = "\x1b[36m(TaskRunner pid=1)\x1b[0m Could not append to config. An item is already at 'x'.\r\n"
    (f,) = explain_lines([log])
    assert f.id == "hydra-could-not-append" and "\x1b" not in f.evidence["text"]


def test_no_match_is_an_info_finding():
    (f,) = explain_lines(["all good", "step:1 - actor/pg_loss:0.1"])
    assert f.id == NO_MATCH_ID and f.severity is Severity.INFO and f.evidence["lines_read"] == 2


# ------------------------------------------------------------------------------------------- the command


def test_cli_no_match_exits_0_with_info_finding(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("(TaskRunner pid=1) step:1 - actor/pg_loss:np.float64(0.1) - actor/grad_norm:np.float64(1.0)\n")
    r = run("--json", str(log))
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["status"] == "ok" and [f["id"] for f in report["findings"]] == [NO_MATCH_ID]
    assert report["lines"] == 1 and report["log"] == str(log)


def test_cli_reads_stdin_dash():
    text = "Traceback (most recent call last):\nValueError: *WARNING*:This project is not functional and is a placeholder form HUAWEI Ascend\n"
    r = run("-", input=text)
    assert r.exit_code == 1
    assert "mindspeed-pypi-placeholder" in r.stdout and "line 2:" in r.stdout


def test_cli_text_output_names_fix_and_evidence(shared_dir):
    r = run(str(shared_dir / "cases" / "vllm-ascend-nnal-not-installed-libatb.log.txt"))
    assert r.exit_code == 1
    assert "[nnal-libatb-missing]" in r.stdout and "fix:" in r.stdout and "line 9:" in r.stdout


def test_cli_missing_log_is_exit_2_naming_the_file(tmp_path):
    missing = tmp_path / "nope.log"
    r = run(str(missing))
    assert r.exit_code == 2
    assert str(missing) in r.stderr and "cannot read log" in r.stderr
    r = run(str(tmp_path))  # a directory
    assert r.exit_code == 2 and str(tmp_path) in r.stderr


MINIMAL = """schema = "doctor.signatures/1"
[[signature]]
id = "{id}"
severity = "error"
components = {components}
specificity = 50
regex = [{regex}]
title = "t"
fix = "f"
source = "https://example.org/x"
example = "{example}"
"""


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"regex": "'bad(regex'"}, ["does not compile"]),
        ({"components": '["gpu"]'}, ["unknown component", "gpu"]),
        ({"example": "something else"}, ["example is not explained"]),
        ({"id": "Not_Kebab"}, ["kebab-case"]),
    ],
)
def test_malformed_database_is_exit_2_naming_file_and_signature(tmp_path, fields, words):
    values = {"id": "my-sig", "components": '["cann"]', "regex": "'boom'", "example": "boom here"} | fields
    db = tmp_path / "sigs.toml"
    db.write_text(MINIMAL.format(**values))
    log = tmp_path / "x.log"
    log.write_text("boom\n")
    r = run("--signatures", str(db), str(log))
    assert r.exit_code == 2, r.output
    assert str(db) in r.stderr
    assert "signature" in r.stderr and all(w in r.stderr for w in words), r.stderr
    if fields.get("id") is None:
        assert "my-sig" in r.stderr


def test_every_missing_field_of_a_signature_is_named_at_once(tmp_path):
    """A user's first `--signatures` entry (id, severity, components, title, fix, a line to match) met the missing
    fields one exit 2 at a time: specificity and source, then "needs an example". One message names them all."""
    db = tmp_path / "sigs.toml"
    db.write_text('schema = "doctor.signatures/1"\n[[signature]]\nid = "my-sig"\nseverity = "error"\n'
                  'components = ["config"]\ntitle = "t"\nfix = "f"\n')
    log = tmp_path / "x.log"
    log.write_text("boom\n")
    r = run("--signatures", str(db), str(log))
    assert r.exit_code == 2, r.output
    assert "missing field(s): specificity, source, regex or libraries or modules, example or examples" in r.stderr


def test_malformed_database_variants_raise_input_error(tmp_path):
    bad = tmp_path / "bad.toml"
    for text, needle in [
        ("schema = 'x'", "schema"),
        ("schema = \"doctor.signatures/1\"\n[[signature]\n", "TOML"),
        (MINIMAL.format(id="a", components='["cann"]', regex="'boom'", example="boom") + "colour = 1\n", "unknown field"),
        (MINIMAL.format(id="a", components='["cann"]', regex="'boom'", example="boom") + "supersedes = ['zz']\n", "zz"),
    ]:
        bad.write_text(text)
        with pytest.raises(InputError) as e:
            load_signatures(bad)
        assert str(bad) in str(e.value) and needle in str(e.value)
    with pytest.raises(InputError):
        load_signatures(tmp_path / "absent.toml")


def test_custom_database_is_used(tmp_path):
    db = tmp_path / "sigs.toml"
    db.write_text(MINIMAL.format(id="my-sig", components='["ray"]', regex="'boom'", example="boom here"))
    found = explain_lines(["x", "big boom"], db=load_signatures(db))
    assert ids(found) == ["my-sig"] and found[0].components == ("ray",)


def test_default_database_ships_in_profiles():
    assert DEFAULT_DB.name == "signatures.toml" and DEFAULT_DB.parent.name == "profiles" and DEFAULT_DB.is_file()


def test_shipped_examples_are_explained_by_their_own_signature():
    # The default load skips this check for start-up speed; loading the file by path runs it.
    assert len(load_signatures(DEFAULT_DB).signatures) == len(DB.signatures)


# ------------------------------------------------------------------------------------------- streaming


def test_overlong_line_is_capped_and_the_next_line_still_read():
    data = b"A" * (3 * MAX_LINE + 17) + b"\nRuntimeError: 0 active drivers ([]). There should only be one.\n"
    lines = list(iter_log_lines(io.BytesIO(data)))
    assert len(lines) == 2 and len(lines[0]) == MAX_LINE and lines[1].startswith("RuntimeError")


def test_large_log_is_streamed_with_bounded_memory(tmp_path):
    log = tmp_path / "big.log"
    filler = (b"(WorkerDict pid=12345) INFO 11-30 12:00:00 [model_runner.py:123] Loading weights took 3.2 s and "
              b"used 1.2 GiB of memory\n")
    with open(log, "wb") as fh:
        fh.write(b"ImportError: libhccl.so: cannot open shared object file: No such file or directory\n")
        fh.write(filler * 40_000)
        fh.write(b"B" * (2 * 1024 * 1024) + b"\n")  # one 2 MiB line without structure
        fh.write(filler * 10_000)
        fh.write(b"RuntimeError: NPU out of memory. Tried to allocate 9.00 GiB\n")
    size = log.stat().st_size
    assert size > 7_000_000
    load_signatures()  # the database is cached; measure the scan only
    tracemalloc.start()
    try:
        found = explain_file(log)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ids(found) == ["cann-libhccl-missing", "npu-out-of-memory"]
    assert found[1].evidence["line"] == 1 + 40_000 + 1 + 10_000 + 1
    # one read block (256 KiB), a few copies of it and the compiled pre-filter; independent of the log size
    assert peak < 3_000_000 and peak < size / 2.5, peak


# ------------------------------------------------------------------------------------------- robustness


@fuzz
@given(st.lists(st.text(max_size=200), max_size=20))
def test_arbitrary_text_never_raises(lines):
    found = explain_lines(lines)
    assert found
    for f in found:
        assert f.id and set(f.components) <= COMPONENTS
        if f.id == "log-unreadable":
            assert f.severity is Severity.WARNING and (f.evidence["binary"] or not "".join(lines).strip())
        elif f.severity is not Severity.INFO:
            assert f.fix is not None and f.evidence["line"] >= 1


@fuzz
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_stream_never_raises(data):
    lines = list(iter_log_lines(io.BytesIO(data), max_len=64))
    assert all(len(line) <= 64 for line in lines)
    assert explain_lines(lines)


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"abcd?e", "abce", True),
        (r"colou?r value", "color value", True),
        (r"x(yy|zz)+ tail", "xzz tail", True),
        (r"a|bcdef", "a", True),
        (r"Can ?not use", "Cannot use", True),
        (r"foo\.bar{2}baz", "foo.barrbaz", True),
        (r"[abc]+ literal", "b literal", True),
        (r"\bword\d{3,4}: end", "word1234: end", True),
    ],
)
def test_prefilter_literal_never_rejects_a_matching_line(pattern, text, matches):
    from doctor.explain.signatures import _literal_for

    compiled = re.compile(pattern)
    assert bool(compiled.search(text)) is matches
    literal = _literal_for(compiled)
    assert literal is None or literal in text


@fuzz
@given(st.sampled_from([p for s in SIGS for p in s.patterns]), st.text(max_size=60), st.text(max_size=60))
def test_prefilter_literal_is_in_every_match(pattern, prefix, suffix):
    from doctor.explain.signatures import _literal_for

    literal = _literal_for(pattern)
    for sig in SIGS:
        if pattern in sig.patterns:
            text = prefix + sig.example + suffix
            if pattern.search(text):
                assert literal is None or literal in text


# ------------------------------------------------------------------------------------------- speed (issue 23)


def test_a_short_log_compiles_only_the_regexes_its_lines_reach():
    # Compiling all ~900 regexes was most of a short run; the pre-filter's literals decide which ones run.
    from doctor.explain.db import _load

    db = _load(DEFAULT_DB, compile_now=False)
    lines = ["INFO start", "Traceback (most recent call last):", '  File "/x/site-packages/verl/a.py", line 3, in f',
             "ImportError: libhccl.so: cannot open shared object file: No such file or directory", "done"]
    assert "cann-libhccl-missing" in ids(explain_lines(lines, db=db))
    pats = [p for s in db.signatures for p in (*s.patterns, *(q for rule in s.context for q in rule))]
    compiled = [p for p in pats if p._rx is not None]
    assert len(pats) > 500 and 0 < len(compiled) < len(pats) // 10, len(compiled)


def test_a_user_database_with_a_broken_regex_is_refused_at_load(tmp_path):
    db = tmp_path / "sigs.toml"
    db.write_text(MINIMAL.format(id="my-sig", components='["ray"]', regex="'boom (unclosed'", example="boom here"))
    with pytest.raises(InputError, match="does not compile"):
        load_signatures(db)


# An `assert` in pasted code (a docs block, a script quoted in an issue) is no failure; the same line printed by a
# traceback (its AssertionError line cut off) or quoted alone as the error is one.
_CODE_BLOCK = ["def build(model_type):", "    media_type = cfg.media", "    assert media_type in {'image', 'video'}",
               "    return load(media_type)", "", "build('qwen2-vl')"]


def test_an_assert_in_pasted_code_is_no_failure_but_one_in_a_traceback_or_quoted_alone_is():
    ids = [f.id for f in explain_lines(_CODE_BLOCK)]
    assert "python-assert-statement-failed" not in ids and "python-check-failed" not in ids
    assert all(f.severity is not Severity.ERROR for f in explain_lines(_CODE_BLOCK))
    truncated = ["Traceback (most recent call last):", '  File "/home/me/train.py", line 12, in <module>',
                 "    build('qwen2-vl')", '  File "/home/me/train.py", line 3, in build',
                 "    assert media_type in {'image', 'video'}"]
    assert any(f.severity is Severity.ERROR for f in explain_lines(truncated))
    (f,) = [f for f in explain_lines(["assert media_type in {'image', 'video'}"]) if f.severity is Severity.ERROR]
    assert f.id == "python-assert-statement-failed" and f.components == ("config", "model")


def test_a_failure_inside_torch_npus_caching_allocator_is_device_memory_not_a_cann_internal_error():
    # torch_npu (Ascend/pytorch 9e73e70) NPUCachingAllocator.cpp, DeviceCachingAllocator::malloc: an allocation error
    # other than ACL_ERROR_RT_MEMORY_ALLOCATION is raised by NPU_CHECK_ERROR(params.err), whose text (NPUException.h)
    # is `__func__:__FILE__:__LINE__ NPU function error: <#err_code>, error code is N`; a build prints
    # compiler_depend.ts as the file, so the allocator's name is not in the line
    log = ["Traceback (most recent call last):", '  File "/home/u/train.py", line 10, in <module>',
           '    x = torch.zeros(10, device="npu")',
           "RuntimeError: malloc:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:1389 NPU function error: "
           "params.err, error code is 500000",
           "[ERROR] 2025-04-07-01:39:08 (PID:2090, Device:0, RankID:-1) ERR00100 PTA call acl api failed"]
    res = run("--json", "-", input="\n".join(log) + "\n")
    first = json.loads(res.output)["findings"][0]
    assert first["id"] == "npu-out-of-memory" and first["components"][:2] == ["config", "npu"], res.output
    # the workspace allocator's malloc synchronising the device is no allocation failing
    sync = ["RuntimeError: malloc:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:88 NPU function error: "
            "c10_npu::acl::AclrtSynchronizeDeviceWithTimeout(), error code is 507035"]
    assert "npu-out-of-memory" not in ids(explain_lines(sync))


@pytest.mark.parametrize("message", [
    # ops-nn (hicann/ops-nn e5c3fa9) op_error_check.h OP_CHECK_DTYPE_NOT_SUPPORT:
    # "Tensor %s not implemented for %s, should be in dtype support list %s."
    "AclNN_Parameter_Error(EZ1001): Tensor gamma not implemented for DT_BFLOAT16, should be in dtype support list "
    "[DT_FLOAT16,DT_FLOAT,].",
    # its siblings in the operators' own checks: "promote dtype %s should be in dtype support list [%s].",
    # "the dtype of x1 must be in dtype support list %s", "self dtype not supported. support list is %s"
    "AclNN_Parameter_Error(EZ1001): promote dtype DT_INT8 should be in dtype support list [DT_FLOAT,DT_FLOAT16,].",
    "EZ1001: the dtype of x1 must be in dtype support list [DT_INT8,DT_FLOAT16]",
    "EZ1001: self dtype not supported. support list is [DT_FLOAT,DT_FLOAT16]",
])
def test_an_operators_dtype_check_is_the_cause_ahead_of_the_aclnn_code_it_returns(message):
    # the dtype check returns ACLNN_ERR_PARAM_INVALID: torch_npu raises 161002 and logs ERR00100 first, the
    # operator's message comes last; the message is the cause, the codes are how it was reported
    log = ["RuntimeError: npu_rms_norm:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:42 NPU function error: "
           "call aclnnRmsNorm failed, error code is 161002",
           "[ERROR] 2025-07-01-15:17:20 (PID:775588, Device:0, RankID:-1) ERR00100 PTA call acl api failed",
           f"[PID: 775588] 2025-07-01-15:17:20.355.304 {message}"]
    res = run("--json", "-", input="\n".join(log) + "\n")
    found = json.loads(res.output)["findings"]
    assert [f["id"] for f in found] == ["npu-op-dtype-not-implemented"], res.output
    assert found[0]["components"] == ["config", "npu"]
    # the code alone is still the argument check
    assert ids(explain_lines(log[:1]))[0] == "aclnn-argument-invalid"


@pytest.mark.parametrize("log", [
    # what the shells print, as run here: dash (/bin/sh on Debian / Ubuntu) `sh: 1: NAME: not found`, a dash script
    # `./install.sh: 12: NAME: not found`, bash `bash: NAME: command not found` (a paste may keep trailing blanks)
    ["sh: 1: lspci: not found"],
    ["./install.sh: 12: modprobe: not found"],
    ["bash: npu-smi: command not found   "],
    # both shells exit 127 for a command they cannot find; CPython's CalledProcessError.__str__ says so
    ["subprocess.CalledProcessError: Command 'lspci -d 19e5:' returned non-zero exit status 127."],
    # GNU coreutils env 9.1, as run here (a script's `#!/usr/bin/env NAME` line too): exit 127
    ["/usr/bin/env: \u2018python3.10\u2019: No such file or directory"],
    # CPython subprocess.py _execute_child raises FileNotFoundError(errno, msg, orig_executable) when the exec fails
    ["Traceback (most recent call last):", '  File "/home/u/probe.py", line 3, in <module>',
     "    subprocess.run(['npu-smi', 'info'], check=True)",
     '  File "/usr/lib/python3.11/subprocess.py", line 1950, in _execute_child',
     "    raise child_exception_type(errno_num, err_msg, err_filename)",
     "FileNotFoundError: [Errno 2] No such file or directory: 'npu-smi'"],
])
def test_a_program_the_stack_runs_that_is_missing_is_the_systems(log):
    res = run("--json", "-", input="\n".join(log) + "\n")
    first = json.loads(res.output)["findings"][0]
    assert first["severity"] == "error" and first["components"][0] == "system", res.output


def test_a_file_the_code_opens_is_still_a_missing_path_not_a_missing_program():
    log = ["Traceback (most recent call last):", '  File "/home/u/train.py", line 3, in <module>',
           "    open('data/train.jsonl')", "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.jsonl'"]
    assert "subprocess-program-not-found" not in ids(explain_lines(log))
    # a script saved with CRLF endings: env names the interpreter with its `\r` (as run here, coreutils 9.1)
    crlf = ["/usr/bin/env: \u2018python3\\r\u2019: No such file or directory",
            "/usr/bin/env: use -[v]S to pass options in shebang lines"]
    assert ids(explain_lines(crlf)) == ["shell-script-line-endings"]
    # a shell's other complaints about a line are no missing command
    assert "system-tool-missing" not in ids(explain_lines(["grep: data.txt: No such file or directory",
                                                          "ls: cannot access 'x': No such file or directory"]))


def test_the_drivers_el0004_is_device_memory_as_torch_npu_reads_it_not_a_driver_fault():
    # torch_npu (9e73e70) NPUException.cpp isCannOOM: an error carrying EL0004 is out of memory (OutOfMemoryError)
    log = ["RuntimeError: NPU function error: c10_npu::acl::AclrtSynchronizeDeviceWithTimeout(), error code is 507899",
           "[PID: 4242] 2025-01-01-00:00:00.000.000 Memory_Allocation_Failure(EL0004): Failed to allocate memory.",
           "        Possible Cause: Available memory is insufficient."]
    res = run("--json", "-", input="\n".join(log[1:]) + "\n")
    first = json.loads(res.output)["findings"][0]
    assert first["id"] == "npu-memory-allocation-failed" and first["components"] == ["config", "npu"], res.output
    assert "cann-driver-error" not in ids(explain_lines(log))
    # the KV pool's fabric-memory quota (its own context) stays the more specific reading
    kv = ["export MOONCAKE_OFFLOAD_LOCAL_BUFFER_SIZE_BYTES=1073741824", log[1]]
    assert ids(explain_lines(kv))[0] == "kv-pool-fabric-mem-quota-exceeded"


def test_a_command_the_shell_found_but_could_not_execute_is_a_permission_not_a_missing_program():
    # as run here: a script without its execute bit, run through subprocess with shell=True -> bash exits 126
    # ("Permission denied"); a command that does not exist exits 127
    (f,) = explain_lines(["subprocess.CalledProcessError: Command '/opt/run/noexec.sh' returned non-zero exit "
                          "status 126."])
    assert f.id == "permission-denied" and f.components == ("system", "config") and f.severity is Severity.ERROR
    assert ids(explain_lines(["subprocess.CalledProcessError: Command 'x' returned non-zero exit status 1."])) != \
        ["permission-denied"]
