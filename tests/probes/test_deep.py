"""--deep import probes: real subprocesses of a real interpreter, with fake torch/torch_npu/mindspeed modules
on PYTHONPATH standing in for the NPU stack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.probes.deep import run_deep_probes, run_probe


@pytest.fixture
def fake_stack(tmp_path: Path) -> Path:
    (tmp_path / "torch.py").write_text("class npu:\n    @staticmethod\n    def device_count():\n        return 2\n")
    (tmp_path / "torch_npu.py").write_text("raise ImportError('libatb.so: cannot open shared object file: No such file or directory')\n")
    ms = tmp_path / "mindspeed"
    ms.mkdir()
    (ms / "__init__.py").write_text("")
    (ms / "megatron_adaptor.py").write_text("import os\nassert os.environ['TORCH_DEVICE_BACKEND_AUTOLOAD'] == '0'\ndef repatch(cfg):\n    pass\n")
    return tmp_path


def env_with(path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(path)}


def test_probes_report_ok_error_and_detail(fake_stack):
    res = run_deep_probes(sys.executable, timeout=60, environ=env_with(fake_stack))
    assert res["torch_npu"]["ok"] is False and "libatb.so" in res["torch_npu"]["error"]
    assert res["mindspeed.megatron_adaptor"] == {**res["mindspeed.megatron_adaptor"], "ok": True, "detail": {"repatch": True}}
    assert res["vllm_ascend"]["ok"] is False and "No module named 'vllm_ascend'" in res["vllm_ascend"]["error"]


def test_device_count_detail(fake_stack):
    (fake_stack / "torch_npu.py").write_text("class npu:\n    @staticmethod\n    def get_soc_version():\n        return 223\n")
    r = run_probe("torch_npu", sys.executable, 60, env_with(fake_stack))
    assert r["ok"] and r["detail"] == {"device_count": 2, "soc": "223"}


def test_hang_is_bounded(fake_stack):
    (fake_stack / "vllm_ascend.py").write_text("import time\ntime.sleep(30)\n")
    r = run_probe("vllm_ascend", sys.executable, 1.0, env_with(fake_stack))
    assert r["ok"] is False and "timed out" in r["error"] and r["seconds"] < 10


def test_missing_interpreter():
    r = run_probe("torch_npu", "/nonexistent/python3", 5)
    assert r["ok"] is False and "cannot run" in r["error"]


def test_check_deep_turns_import_errors_into_findings(fake_stack, tmp_path):
    out = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--deep", "--only", "deep"],
                         capture_output=True, text=True, timeout=120, env=env_with(fake_stack), cwd=tmp_path)
    data = json.loads(out.stdout)
    f = {x["id"]: x for x in data["findings"]}
    assert f["import-torch-npu-failed"]["components"][0] == "nnal"
    assert "import-mindspeed-failed" not in f and out.returncode == 1


def test_verify_files_runs_in_the_target_interpreter_and_answers_in_snapshot_shape(tmp_path):
    """The comparison runs in the named interpreter (here the tests' own, on its own pytest distribution); its
    answer is read into snapshot shape (rule 14) and bounded below the timeout."""
    from doctor.probes.deep import VERIFY_MARGIN, run_verify_files

    got = run_verify_files(["pytest", "not-installed-anywhere"], python=sys.executable, timeout=60, cwd=str(tmp_path))
    (d,) = got["dists"]
    assert d["dist"] == "pytest" and d["files"] > 50 and d["modified"] == 0 and d["unverified"] == 0
    assert got["budget"] == 60 - VERIFY_MARGIN and got["skipped"] == []
    assert run_verify_files(["pytest"], python=sys.executable, timeout=4, cwd=str(tmp_path))["budget"] == 2


def test_verify_files_without_an_answer_says_why():
    from doctor.probes.deep import run_verify_files

    got = run_verify_files(["torch"], python="/nonexistent/python3", timeout=5)
    assert list(got) == ["error"] and "no such file" in got["error"]


def test_the_status_names_only_the_imports_that_can_happen():
    """None of the stack installed: no "importing torch_npu, …" (each import fails at once), and with nothing to
    compare either, no line at all."""
    from doctor.probes.deep import deep_status, imports_worth_saying

    assert imports_worth_saying(lambda name: False) == []
    assert imports_worth_saying(lambda name: name == "mindspeed") == ["mindspeed.megatron_adaptor"]
    assert imports_worth_saying(lambda name: None) == ["torch_npu", "mindspeed.megatron_adaptor", "vllm_ascend"]
    assert deep_status([], 0) is None
    assert deep_status(["vllm_ascend"], 0) == "importing vllm_ascend…"
