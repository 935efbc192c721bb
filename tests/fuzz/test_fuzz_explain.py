"""The log matcher: arbitrary text and bytes never raise; every finding is well-formed."""

import io

from hypothesis import given
from hypothesis import strategies as st

from doctor.explain.signatures import explain_lines, load_signatures, scan_stream

from ._budget import fuzz

DB = load_signatures()
EXAMPLES = [s.example for s in DB.signatures if getattr(s, "example", None)]


@fuzz
@given(st.lists(st.one_of(st.text(max_size=120), st.sampled_from(EXAMPLES)), max_size=12))
def test_lines(lines):
    for f in explain_lines(lines, db=DB):
        assert f.id and f.components and f.title


@fuzz
@given(st.binary(max_size=600))
def test_bytes(raw):
    findings, n = scan_stream(io.BytesIO(raw), db=DB)
    assert n >= 0 and findings


# Openings that reach the attribution rules, the failure classes, the message table and the last resort (each in
# its documented shape), followed by arbitrary text: none of them may raise, whatever follows.
OPENINGS = [
    "Traceback (most recent call last):", '  File "/usr/lib/python3.10/site-packages/verl/x.py", line 3, in f',
    "ValueError: ", "RuntimeError: ", "omegaconf.errors.ConfigKeyError: Key '", "Could not override '",
    "full_key: actor_rollout_ref.", "requests.exceptions.ConnectTimeout: ", "torch.distributed.DistBackendError: ",
    "[ERROR] HCCL(1,python):2025-01-02-03:04:05.678.901 [x.cc:1]1 ", "E1203 10:11:12.123456    7 x.go:1] ",
    "ERR02200 ", "ERR0", "/usr/lib/python3.10/site-packages/torch_npu/x.py:5: UserWarning: ",
    "aclnnX or aclnnXGetWorkspaceSize not in ", "version GLIBCXX_3.4.", "Please install ", "torch>=2.1.0 is required",
    "dcmi module initialize failed ", "HCCL 建链失败 ", "Version mismatch: Ray 2.9.0 but ", "NotImplementedError: Could not run '",
    'RuntimeError: "', "make[2]: *** ", "ERROR 06-16 15:15:39 [core.py:845] ", "pkg_resources.VersionConflict: (",
    # this session's readers: a message that goes on below, frames with no exception line, a faulthandler dump, a
    # logged stack, a class named by a call, a symbol's namespace, a checkout named like its distribution
    "RuntimeError: Version mismatch: The cluster was started with:", "    Ray: 2.12.0", "Exception: ",
    "Current thread 0x00007f01 (most recent call first):", "Thread 0x00007f00 (most recent call first):",
    "Stack (most recent call last):", '  File "/env/site-packages/megatron/core/x.py", line 9 in f',
    "TypeError: Trainer.__init__() got an unexpected keyword argument '", "AttributeError: 'DataProto' object has no ",
    "undefined symbol: _ZNK6AsdOps", "/home/vllm-ascend/csrc/k.cpp:3:9: error: ",
    "XXXX does not appear to have a file named ",
]
# The prefixes the reader strips or learns (a container runtime's, compose's, srun's, a quote's, loguru's, any).
PREFIXES = ["", "> ", "2025-01-01T10:00:00.1Z stderr F ", "trainer-1  | ", "0: ", "[default0]:",
            "2025-01-01 10:00:00.123 | ERROR    | m:f:1 - ", "2025-01-01 10:00:00.123 | INFO     | m:f:1 - "]


@fuzz
@given(st.sampled_from(PREFIXES), st.text(max_size=12),
       st.lists(st.tuples(st.sampled_from(OPENINGS), st.text(max_size=40)), max_size=8))
def test_prefixed_openings(known, unknown, parts):
    # every line behind the same prefix (a known one, or one the reader must learn from a traceback header)
    lines = [known + unknown + a + b for a, b in parts]
    for f in explain_lines(lines, db=DB):
        assert f.id and f.components and f.title and f.severity
GENERIC = DB.__class__(DB.path, tuple(s for s in DB.signatures if s.fallback or s.yields))


@fuzz
@given(st.lists(st.tuples(st.sampled_from(OPENINGS), st.text(max_size=80)), max_size=10), st.booleans())
def test_attribution_openings(parts, generic_only):
    lines = [a + b for a, b in parts]
    for f in explain_lines(lines, db=GENERIC if generic_only else DB):
        assert f.id and f.components and f.title and f.severity
