"""npu-smi: every real pasted layout parses to its .expect.json; the live probe runs fake npu-smi
scripts (recorded layouts, a hang, a failure) under one time budget and leaves no process behind."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.probes.npu_smi import parse_board, parse_info, probe_npu_smi
from tests.fakes import BOARD, EXPECTED_SOC, fake_npu_smi


def _fixtures(shared: Path) -> list[Path]:
    return sorted((shared / "fixtures" / "npu-smi").glob("*.txt"))


def _as_expect(parsed: dict) -> dict:
    return {
        "version": parsed["version"],
        "devices": [{"id": d["id"], "chip_id": d["chip_index"], "name": d["chip"], "health": d["health"],
                     "hbm_used_mb": d["hbm_used_mb"], "hbm_total_mb": d["hbm_total_mb"]} for d in parsed["devices"]],
        "processes": [{"npu": p["npu"], "pid": p["pid"], "name": p["name"], "hbm_mb": p["hbm_mb"]} for p in parsed["processes"]],
    }


def test_every_recorded_layout_parses_to_its_expectation(shared_dir: Path) -> None:
    files = _fixtures(shared_dir)
    assert len(files) >= 5
    for f in files:
        exp = json.loads(f.with_suffix(".expect.json").read_text())
        parsed = parse_info(f.read_text(encoding="utf-8"))
        assert parsed["error"] is None, f.name
        assert _as_expect(parsed) == {k: exp[k] for k in ("version", "devices", "processes")}, f.name


def test_a3_rows_carry_phy_ids_and_310p_rows_their_device_number(shared_dir: Path) -> None:
    a3 = parse_info((shared_dir / "fixtures/npu-smi/vllm-ascend-960.txt").read_text())
    assert [d["phy_id"] for d in a3["devices"]] == list(range(16))
    assert a3["devices"][1]["bus_id"] == "0000:9F:00.0"
    p310 = parse_info((shared_dir / "fixtures/npu-smi/ascend-pytorch-94.txt").read_text())
    assert [d.get("logic_id") for d in p310["devices"]] == [0, 1]
    assert all(d["phy_id"] is None for d in p310["devices"])


# 950 / A5 layout (docs/npu-smi.md: an extra NPU ID column; rebuilt from a single capture)
A5 = """\
+-------------------------------------------------------------------------------------------------+
| npu-smi 25.7.rc1.6                               Version: 25.7.rc1.6                            |
+--------+------------------+---------------+-----------------------------------------------------+
| NPU ID | Name             | Health        | Power(W)    Temp(C)           Hugepages-Usage(page) |
|        |                  | Bus-Id        | NPU Util(%) Memory-Usage(MB)  HBM-Usage(MB)         |
+========+==================+===============+=====================================================+
| 0      | Ascend950PR      | OK            | 195.6       56                0     / 0             |
|        |                  | 0000:61:00.0  | 0           0    / 0          5239  / 131072        |
+========+==================+===============+=====================================================+
| 1      | Ascend950PR      | Warning       | 190.1       55                0     / 0             |
|        |                  | 0000:62:00.0  | 0           0    / 0          100  / 131072         |
+========+==================+===============+=====================================================+
"""


def test_950_layout() -> None:
    p = parse_info(A5)
    assert p["version"] == "25.7.rc1.6" and p["error"] is None
    assert [(d["id"], d["chip"], d["health"], d["hbm_used_mb"], d["hbm_total_mb"], d["bus_id"]) for d in p["devices"]] == [
        (0, "Ascend950PR", "OK", 5239, 131072, "0000:61:00.0"), (1, "Ascend950PR", "Warning", 100, 131072, "0000:62:00.0")]


@pytest.mark.parametrize("text", ["", "garbage\n", "dcmi module initialize failed. ret is -8005\n", "+---+\n| x |\n"])
def test_garbage_is_an_error_not_an_exception(text: str) -> None:
    p = parse_info(text)
    assert p["devices"] == [] and p["error"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.binary()))
def test_parse_info_never_raises(data) -> None:
    p = parse_info(data)
    assert isinstance(p["devices"], list) and (p["error"] is None or isinstance(p["error"], str))
    json.dumps(p)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["|", "+", "=", "-", " ", "0", "12", "/", "OK", "910B3", "NPU", "Name", "Health", "HBM",
                                 "Chip", "Phy-ID", "Process id", "\n", "0000:C1:00.0", "npu-smi 1.0 Version: 2"]), max_size=200))
def test_parse_info_never_raises_on_table_like_noise(tokens: list[str]) -> None:
    p = parse_info("".join(tokens))
    for d in p["devices"]:
        assert isinstance(d["id"], int)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), st.binary()))
def test_parse_board_never_raises(data) -> None:
    b = parse_board(data)
    assert b["soc"] is None or isinstance(b["soc"], str)


@pytest.mark.parametrize(("fixture", "soc"), sorted(EXPECTED_SOC.items()))
def test_board_soc(fixture: str, soc: str) -> None:
    assert parse_board(BOARD[fixture])["soc"] is None
    assert parse_board(BOARD[f"{fixture}-c0"])["soc"] == soc
    assert parse_board("        NPU Name  : 9579\n        Chip Name : Ascend950PR\n")["soc"] == "Ascend950PR_9579"


# -- live probe with fake npu-smi scripts -----------------------------------------------------------------


@pytest.mark.parametrize("fixture", sorted(EXPECTED_SOC))
def test_probe_reads_table_and_board(tmp_path: Path, fixture: str) -> None:
    fake_npu_smi(tmp_path / "bin", fixture)
    facts, runs = probe_npu_smi(10.0, path=str(tmp_path / "bin"), root=str(tmp_path))
    assert facts["npu_smi"]["status"] == "ok"
    assert facts["devices"] and all(d["soc"] == EXPECTED_SOC[fixture] for d in facts["devices"])
    assert [r.argv[1:] for r in runs][:2] == [["info"], ["info", "-t", "board", "-i", str(facts["devices"][0]["id"])]]


def test_processes_are_attached_to_their_device(tmp_path: Path) -> None:
    fake_npu_smi(tmp_path / "bin", "vllm-ascend-5111")
    facts, _ = probe_npu_smi(10.0, path=str(tmp_path / "bin"), root=str(tmp_path))
    assert facts["devices"][7]["processes"] == [{"pid": 16150, "name": "VLLMWorker_DP", "hbm_mb": 43094}]
    assert facts["npu_smi"]["version"] == "25.2.0"


def test_missing_binary(tmp_path: Path) -> None:
    facts, runs = probe_npu_smi(5.0, path=str(tmp_path), root=str(tmp_path))
    assert facts == {"npu_smi": {"status": "missing", "version": None, "error": "npu-smi not found on PATH"}}
    assert runs == []


def test_found_in_the_container_location_under_root(tmp_path: Path) -> None:
    fake_npu_smi(tmp_path / "usr/local/bin", "vllm-ascend-5111")
    facts, _ = probe_npu_smi(5.0, path="", root=str(tmp_path))
    assert facts["npu_smi"]["status"] == "ok"


def test_exit_1_is_an_error_with_its_message(tmp_path: Path) -> None:
    fake_npu_smi(tmp_path / "bin", "exit1")
    facts, _ = probe_npu_smi(5.0, path=str(tmp_path / "bin"), root=str(tmp_path))
    assert facts["npu_smi"]["status"] == "error"
    assert "dcmi module initialize failed" in facts["npu_smi"]["error"]
    assert "devices" not in facts


def test_the_dcmi_line_after_a_first_line_is_kept(tmp_path: Path) -> None:
    """A non-root `npu-smi info` on a host that gives DCMI to root only prints the driver's log-level complaint
    first and the DCMI error code second (https://github.com/hw-native-sys/simpler/pull/2043): the code is what
    says why, so it is kept in the error, not only the first line."""
    exe = tmp_path / "bin" / "npu-smi"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\necho 'DrvMngGetConsoleLogLevel failed. (ret=4)'\n"
                   "echo 'dcmi module initialize failed. ret is -8005'\nexit 187\n")
    exe.chmod(0o755)
    facts, _ = probe_npu_smi(5.0, path=str(tmp_path / "bin"), root=str(tmp_path))
    err = facts["npu_smi"]["error"]
    assert facts["npu_smi"]["status"] == "error" and "exit 187" in err
    assert "DrvMngGetConsoleLogLevel failed. (ret=4)" in err and "ret is -8005" in err


def test_garbage_output_is_an_error(tmp_path: Path) -> None:
    fake_npu_smi(tmp_path / "bin", "Segmentation fault (core dumped)\n")
    facts, _ = probe_npu_smi(5.0, path=str(tmp_path / "bin"), root=str(tmp_path))
    assert facts["npu_smi"]["status"] == "error"
    assert "unrecognised npu-smi output" in facts["npu_smi"]["error"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); check its state
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1].split()[0] != "Z"
    except OSError:
        return False


def _wait_pid_file(p: Path) -> int:
    for _ in range(100):
        if p.exists() and p.read_text().strip():
            return int(p.read_text())
        time.sleep(0.02)
    raise AssertionError(f"{p} never written")


def test_hang_is_killed_with_its_children_at_the_budget(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_npu_smi(bin_dir, "hang")
    t0 = time.monotonic()
    facts, runs = probe_npu_smi(1.0, path=str(bin_dir), root=str(tmp_path))
    elapsed = time.monotonic() - t0
    assert facts["npu_smi"]["status"] == "timeout"
    assert "killed" in facts["npu_smi"]["error"]
    assert elapsed < 30  # the script sleeps 600 s: the budget, not the script, ended it
    for name in ("npu-smi.pid", "child.pid"):
        pid = _wait_pid_file(bin_dir / name)
        for _ in range(50):
            if not _alive(pid):
                break
            time.sleep(0.02)
        assert not _alive(pid), f"{name} {pid} still running"


def test_one_budget_covers_the_board_query_too(tmp_path: Path) -> None:
    """The table answers, the board query hangs: status timeout, the table's devices are kept."""
    bin_dir = tmp_path / "bin"
    fake_npu_smi(bin_dir, "vllm-ascend-5111")
    script = (bin_dir / "npu-smi").read_text().replace('if [ "$6" = "-c" ]', 'sleep 600; if [ "$6" = "-c" ]')
    (bin_dir / "npu-smi").write_text(script)
    facts, runs = probe_npu_smi(1.0, path=str(bin_dir), root=str(tmp_path))
    assert facts["npu_smi"]["status"] == "timeout"
    assert len(facts["devices"]) == 8 and facts["devices"][0]["soc"] is None
    assert runs[-1].status == "timeout"
