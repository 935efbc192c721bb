"""Snapshot/cluster loader: arbitrary bytes and arbitrary JSON either load or raise InputError."""

import json

from hypothesis import given
from hypothesis import strategies as st

from doctor.errors import InputError
from doctor.snapshot.model import parse_document

from ._budget import fuzz

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=30,
)
keys = st.sampled_from(["host", "python", "packages", "modules", "ascend", "env", "imports", "network", "ray",
                        "complete", "toolkit", "devices", "id", "version", "origins", "nodes", "snapshot", "node",
                        "libstdcxx", "system", "glibcxx", "shared_files", "dists", "differ", "on_disk",
                        "examples", "missing_files", "dist", "missing", "imports_from", "verified_files",
                        "skipped", "why", "path", "size", "expected_size", "kind", "also", "shared", "binary",
                        "unverified", "budget", "seconds"])
shaped = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=25,
)


def _load(raw):
    try:
        doc = parse_document(raw, "fuzz.json")
    except InputError as e:
        assert str(e).startswith("fuzz.json")
        return
    json.dumps(doc.to_dict())  # whatever loads can be written back


@fuzz
@given(st.binary(max_size=200))
def test_arbitrary_bytes(raw):
    _load(raw)


@fuzz
@given(st.one_of(json_values, shaped), st.sampled_from(["doctor.snapshot/1", "doctor.cluster/1", None]))
def test_arbitrary_json(body, schema):
    if isinstance(body, dict) and schema:
        body = {**body, "schema": schema}
    _load(json.dumps(body))


# report text: the stated-facts reader never raises, and what it reads always loads as a snapshot
_report_lines = st.lists(st.one_of(
    st.text(max_size=40),
    st.sampled_from(["PyTorch version: 2.5.1", "vLLM Ascend Version: v0.9.1rc1 (git sha: abc)", "Python version: 3.1",
                     "Python platform: Linux-x-aarch64-with-glibc2.", "Libc version: glibc-2.", "OS: (x86_64)",
                     "[pip3] torch-npu==", "[conda] torch", "package_name=Ascend-cann-toolkit", "version=8.1.RC1",
                     "version=", "$ cat /usr/local/Ascend/driver/version.info", "Version=24.1.rc", "Package  Version",
                     "------- -------", "torch 2.5.1", "- CANN: 8.", "export HCCL_BUFFSIZE=", "VLLM_API_KEY='x",
                     "| npu-smi 24.1.0   Version: 24.1.0 |", "| 0  910B3  | OK | 1 2 0 / 0 |", "+====+====+",
                     "| Item | Version |", "|---|---|", "| CANN | 9.1.0 |", "| OS | Linux aarch64 |",
                     "- `llamafactory` version: 0.9.2", "- Platform: Linux-x-aarch64-with-glibc2.28",
                     "- PyTorch version: 2.1.0 (NPU)", "> torch   2.7.1", "torch_npu.__version__", "'2.1.0.rc1'",
                     "uname -r", "4.14.aarch64", "CANN toolkit = Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run",
                     "Base Image: vllm-ascend:v0.10.2rc1", "ls -l /usr/local/Ascend/ascend-toolkit/latest",
                     "lrwxrwxrwx 1 root root 18 x runtime -> ../8.0.RC2/runtime", "LD_LIBRARY_PATH=/a/lib:" + "x" * 80,
                     "b/lib", "| 32768  310P3 | OK | NA |", "ASCEND_RT_VISIBLE_DEVICES=1 \\", "swift sft \\",
                     "HCCL_BUFFSIZE=1 python setup.py", "cann7.0.0beta1", "ms-swift   2.2.0.dev0  /home/x",
                     "upgrade-tool --version", "Get component version(6.4.12.1.241) succeed for deviceId(0)"]),
), max_size=12)


@fuzz
@given(_report_lines)
def test_report_text_reads_into_a_loadable_snapshot(lines):
    from doctor.snapshot.model import snapshot_from_dict
    from doctor.snapshot.stated import read_stated

    text = "\n".join(lines)
    stated = read_stated(text)
    snapshot_from_dict(stated.document(), source="fuzz.txt")
    n = len(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))  # a lone CR ends a line too
    for f in stated.facts:
        assert 1 <= f.line <= n


# who may open the device nodes: any shape collect or a hand-written snapshot could hold reads without a crash
_node = st.dictionaries(st.sampled_from(["mode", "uid", "gid", "group", "rw"]),
                        st.one_of(st.none(), st.booleans(), st.integers(-2, 70000), st.text("0123456789rwx-", max_size=5)),
                        max_size=5)
_access = st.one_of(shaped, st.fixed_dictionaries({
    "uid": st.one_of(st.integers(-1, 70000), st.text(max_size=3), st.none()),
    "gids": st.one_of(st.lists(st.one_of(st.integers(0, 70000), st.text(max_size=3)), max_size=4), st.none()),
    "nodes": st.one_of(st.dictionaries(st.sampled_from(["/dev/davinci0", "/dev/hisi_hdc", ""]),
                                       st.one_of(_node, st.integers(), st.none()), max_size=3), st.lists(st.text()))}))


@fuzz
@given(_access)
def test_device_access_facts_never_crash_the_check(acc):
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "ascend": {"device_access": acc}}, source="fuzz.json")
    report = diagnose([(None, snap, None)], only=("device-access",))
    assert not [f for f in report.findings if f.id == "check-crashed"]
