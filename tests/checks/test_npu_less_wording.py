"""On a machine without Ascend software, the two errors a first `doctor check` prints say what the probe found.

The ascend section below is what `doctor collect` wrote on an x86_64 box with no CANN, no driver and no NPU (a
plain venv, 2026-12-06): npu-smi missing, no device nodes, nothing on PCI, no Ascend root. Before, the details read
"npu-smi lists no device" (it was never run: there is none) and "under the Ascend root" (there is none, and the
text named no directory an operator could list)."""

from __future__ import annotations

from tests.stacks import bare, diagnose_dict

NPU_LESS = {"root": None, "toolkit": None, "kernels": None, "nnal": None, "driver": None, "firmware": None,
            "npu_smi": {"status": "missing", "version": None, "error": "npu-smi not found on PATH"},
            "pci": [], "device_files": [], "toolkits": []}


def _finding(d, fid):
    return next(f for f in diagnose_dict(d).findings if f.id == fid)


def test_a_missing_npu_smi_is_not_said_to_list_no_device():
    f = _finding(bare(ascend=dict(NPU_LESS)), "npu-not-visible")
    assert f.severity.value == "error"
    assert "lists no device" not in f.detail
    assert f.detail.startswith("npu-smi was not found")
    assert "there are no /dev/davinciN nodes" in f.detail and "no Huawei accelerator is on PCI" in f.detail
    assert "doctor check --from" in f.fix.text


def test_npu_smi_that_ran_and_listed_nothing_is_said_so_and_unread_sources_are_not_called_empty():
    asc = dict(NPU_LESS, npu_smi={"status": "ok", "version": "25.0.rc1.1"})
    del asc["pci"]
    f = _finding(bare(ascend=asc), "npu-not-visible")
    assert f.detail.startswith("npu-smi lists no device")
    assert "PCI was not read" in f.detail and "on PCI" not in f.detail


def test_no_ascend_root_names_the_directories_looked_in():
    f = _finding(bare(ascend=dict(NPU_LESS)), "cann-not-installed")
    assert "/usr/local/Ascend" in f.detail and "$HOME/Ascend" in f.detail
    assert "the Ascend root" not in f.detail


def test_an_ascend_root_without_toolkit_is_named_and_so_is_a_variable_naming_a_toolkit():
    d = bare(ascend=dict(NPU_LESS, root="/usr/local/Ascend"), env={"ASCEND_HOME_PATH": "/opt/cann", "PATH": "/usr/bin"})
    f = _finding(d, "cann-not-installed")
    assert "under /usr/local/Ascend" in f.detail
    assert "$ASCEND_HOME_PATH=/opt/cann holds none either" in f.detail


def test_a_snapshot_without_npus_is_not_told_to_collect_a_snapshot_and_check_it_from_elsewhere():
    """The fix told every reader "To diagnose an Ascend host from a machine without NPUs: `doctor collect -o snap.json`
    on it, then `doctor check --from snap.json` here" — also the one who had just done that (README's `collect`, then
    `check --from`): there, the snapshot itself is of a machine or container without NPUs. A live check keeps the
    advice; a cluster's node is told to run on an Ascend host only."""
    from doctor.checks.diagnose import diagnose
    from doctor.snapshot.model import snapshot_from_dict

    def fix(**kw):
        nodes = [("n0" if kw.get("cluster") else None, snapshot_from_dict(bare(ascend=dict(NPU_LESS))), None)]
        return next(f for f in diagnose(nodes, **kw).findings if f.id == "npu-not-visible").fix.text

    on_host = fix(local=True)
    assert "`doctor collect -o snap.json` on it, then `doctor check --from snap.json` here" in on_host
    from_file = fix(live=False)
    assert "on it, then" not in from_file and "the snapshot is of another machine or container" in from_file
    assert "collect it again inside the container that runs the job" in from_file
    on_a_node = fix(live=False, cluster=True)
    assert on_a_node.startswith("Run on an Ascend host") and "snap.json" not in on_a_node
