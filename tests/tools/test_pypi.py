"""tools.refresh_knowledge.pypi on responses recorded from pypi.org (never the network): the release lists
with upload dates and wheel tags, Requires-* read from wheel METADATA through byte ranges or from an sdist's
PKG-INFO, the requirements directory it writes, and exit 2 when PyPI does not answer."""

from __future__ import annotations

import json

import pytest

from doctor.knowledge.requirements import read_dir
from tests.tools.pypi_fake import RecordedPyPI
from tools.refresh_knowledge import pypi


def test_release_list_has_upload_dates_wheel_tags_and_skips_deleted_uploads() -> None:
    rels = pypi.releases("Torch_NPU", RecordedPyPI())
    assert [r.version for r in rels] == ["2.13.0", "2.14.0"]  # the empty 0.0.1 entry is not a release
    r = rels[-1]
    assert r.uploaded == "2026-10-15"
    assert "cp311-cp311-manylinux_2_28_aarch64" in r.wheels
    assert r.url == "https://pypi.org/project/torch-npu/2.14.0/"


def test_wheel_metadata_is_read_through_byte_ranges_not_downloaded() -> None:
    http = RecordedPyPI()
    r = next(x for x in pypi.releases("verl", http) if x.version == "0.9.1")
    d = pypi.declared(http, r)
    assert d is not None
    assert d["requires_python"] == "<3.13,>=3.10"
    assert "transformers!=5.6.0,<5.11,>=5.5.3" in d["requires_dist"]
    assert d["source"] == "https://pypi.org/project/verl/0.9.1/#verl-0.9.1-py3-none-any.whl"
    whl = [x for x in http.requests if x[0].endswith(".whl")]
    assert whl and all(rng not in (None, "stream") for _, rng in whl)  # only ranges, never the whole file


def test_a_pure_wheel_is_read_before_a_smaller_platform_wheel(monkeypatch) -> None:
    # one wheel's metadata is kept per release: a py3-none-any one holds for every target, a cp312 aarch64 one
    # only for its own (vllm-ascend 0.23.0's pins transformers==5.5.4); the row's source names the file read
    files = (pypi.PypiFile("x-1.0-cp312-cp312-manylinux_2_34_aarch64.whl", "https://f/a.whl", 10, None),
             pypi.PypiFile("x-1.0-py3-none-any.whl", "https://f/b.whl", 999, None))
    r = pypi.PypiRelease("x", "1.0", "2026-01-01", tuple(pypi.wheel_tag(f.filename) or "" for f in files), False, False, files)
    monkeypatch.setattr(pypi, "wheel_metadata", lambda http, f: {"requires_python": None, "requires_dist": [],
                                                                 "where": f.filename})
    d = pypi.declared(None, r)  # type: ignore[arg-type]
    assert d is not None and d["source"].endswith("#x-1.0-py3-none-any.whl")
    d = pypi.declared(None, pypi.PypiRelease("x", "1.0", "2026-01-01", (), False, False, files[:1]))  # type: ignore[arg-type]
    assert d is not None and d["source"].endswith("#x-1.0-cp312-cp312-manylinux_2_34_aarch64.whl")


def test_sdist_only_release_reads_pkg_info() -> None:
    http = RecordedPyPI()
    r = next(x for x in pypi.releases("vllm-ascend", http) if x.version == "0.30.0rc2")
    assert r.wheels == () and r.sdist
    d = pypi.declared(http, r)
    assert d is not None and "torch-npu==2.10.0.post4" in d["requires_dist"]
    assert d["source"].endswith("#vllm_ascend-0.30.0rc2.tar.gz")


def test_main_writes_a_requirements_table_the_loader_accepts(tmp_path, capsys) -> None:
    out = tmp_path / "requirements"
    rc = pypi.main(["--out", str(out), "--project", "verl", "--project", "torch-npu", "--project", "vllm-ascend"],
                   http=RecordedPyPI())
    assert rc == 0, capsys.readouterr().err
    assert sorted(f.name for f in out.iterdir()) == ["index.json", "torch-npu.json", "verl.json", "vllm-ascend.json"]
    index = json.loads((out / "index.json").read_text())
    assert index["schema"] == "doctor.requirements-index/1"
    assert index["projects"]["torch-npu"] == {"releases": 2, "newest": "2.14.0"}
    assert "0.8.0.dev0" not in json.loads((out / "verl.json").read_text())["releases"]  # dev releases are left out
    t = read_dir(str(out))
    d = t.declared("torch_npu", "2.14.0")
    assert d is not None and d.requires_dist == ("torch==2.14.0.*", "numpy", "pyyaml")
    assert d.uploaded == "2026-10-15"
    # a project no longer tracked loses its file (no stale file the index does not name)
    assert pypi.main(["--out", str(out), "--project", "verl"], http=RecordedPyPI()) == 0
    assert sorted(f.name for f in out.iterdir()) == ["index.json", "verl.json"]


def test_no_answer_from_pypi_exits_2_and_writes_nothing(tmp_path, capsys) -> None:
    out = tmp_path / "requirements"
    rc = pypi.main(["--out", str(out), "--project", "verl"], http=RecordedPyPI(down=True))
    assert rc == 2
    assert "no answer" in capsys.readouterr().err
    assert not out.exists()


def test_unknown_project_exits_2(tmp_path, capsys) -> None:
    rc = pypi.main(["--out", str(tmp_path / "r.json"), "--project", "no-such-project"], http=RecordedPyPI())
    assert rc == 2
    assert "HTTP 404" in capsys.readouterr().err


@pytest.mark.parametrize("name,tag", [
    ("torch_npu-2.14.0-cp311-cp311-manylinux_2_28_aarch64.whl", "cp311-cp311-manylinux_2_28_aarch64"),
    ("verl-0.9.1-py3-none-any.whl", "py3-none-any"),
    ("pkg-1.0-1-py3-none-any.whl", "py3-none-any"),
    ("verl-0.9.1.tar.gz", None),
])
def test_wheel_tag(name: str, tag: str | None) -> None:
    assert pypi.wheel_tag(name) == tag
