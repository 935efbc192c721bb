"""doctor/knowledge/requirements.py: the packaged requirements table (read from PyPI) answers what a release
declares; a malformed table is refused naming the file and the key, and the CLI exits 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.errors import InputError
from doctor.knowledge import requirements as req

ROOT = Path(__file__).parents[2]
GOOD = {"schema": "doctor.requirements/1", "read": "2026-12-03", "projects": {"torch-npu": {"2.14.0": {
    "requires_python": None, "requires_dist": ["torch==2.14.0.*", "numpy", "pyyaml"], "uploaded": "2026-10-15",
    "source": "https://pypi.org/project/torch-npu/2.14.0/#torch_npu-2.14.0-cp310-cp310-manylinux_2_28_aarch64.whl"}}}}


def test_packaged_table_holds_what_pypi_declares_today() -> None:
    d = req.declared("verl", "0.9.1")
    assert d is not None
    assert d.requires_python == "<3.13,>=3.10"
    assert "numpy>=2.0.0" in d.requires_dist
    assert d.source.startswith("https://pypi.org/project/verl/0.9.1/")
    assert req.read_date() >= "2026-12-03"
    tn = req.declared("torch_npu", "2.14.0")
    assert tn is not None and "torch==2.14.0.*" in tn.requires_dist


def test_lookup_by_public_version_and_unknowns() -> None:
    t = req.parse_requirements(GOOD, "x.json")
    assert t.declared("Torch_NPU", "2.14.0+git123") == t.declared("torch-npu", "2.14.0")
    assert t.declared("torch-npu", "2.99.0") is None
    assert t.declared("nope", "1.0") is None
    assert t.declared("torch-npu", "not a version") is None


@pytest.mark.parametrize("mutate,where", [
    (lambda d: d.update(schema="doctor.requirements/9"), "schema"),
    (lambda d: d.update(read="December"), "read"),
    (lambda d: d["projects"]["torch-npu"]["2.14.0"].update(requires_dist="numpy"), "projects.torch-npu.2.14.0.requires_dist"),
    (lambda d: d["projects"]["torch-npu"]["2.14.0"].update(requires_python=">=3.x"), "projects.torch-npu.2.14.0.requires_python"),
    (lambda d: d["projects"]["torch-npu"]["2.14.0"].pop("source"), "projects.torch-npu.2.14.0.source"),
    (lambda d: d["projects"]["torch-npu"]["2.14.0"].update(source="https://pypi.org/simple/torch-npu/"), "projects.torch-npu.2.14.0.source"),
    (lambda d: d["projects"].update(Torch_NPU={}), "projects.Torch_NPU"),
])
def test_malformed_table_names_file_and_key(mutate, where) -> None:
    d = json.loads(json.dumps(GOOD))
    mutate(d)
    with pytest.raises(InputError) as e:
        req.parse_requirements(d, "/k/requirements.json")
    assert str(e.value).startswith(f"/k/requirements.json: {where}: ")


def test_unreadable_or_invalid_json_is_an_input_error(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        req.read_file(str(tmp_path / "missing.json"))
    bad = tmp_path / "requirements.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        req.read_file(str(bad))


def test_malformed_table_makes_the_loader_exit_2(tmp_path) -> None:
    bad = tmp_path / "requirements.json"
    bad.write_text(json.dumps({**GOOD, "schema": "x"}))
    code = ("import sys\nfrom doctor.knowledge.requirements import load_requirements\n"
            "from doctor.errors import DoctorError\n"
            f"try:\n    load_requirements({str(bad)!r})\nexcept DoctorError as e:\n    print(e, file=sys.stderr)\n"
            "    raise SystemExit(e.exit_code)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2
    assert "requirements.json: schema: unsupported schema" in r.stderr
