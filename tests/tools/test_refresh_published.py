"""The refresh reads where releases are published: PyPI (recorded answers, never the network) and the vendors'
release notes at the newest commit of small clones built here. A published release no row explains is an
unexplained `new-release`; a release-notes pairing our rows contradict is a `changed`."""

from __future__ import annotations

import json
from pathlib import Path

from doctor.knowledge.matrix import MindSpeedRow, TorchNpuRow, VllmAscendRow
from doctor.knowledge.requirements import parse_requirements
from tests.tools.pypi_fake import RecordedPyPI
from tests.tools.test_refresh_knowledge import Repo, knowledge, repos, upstream  # noqa: F401 - the fixture
from tools.refresh_knowledge import main, refresh
from tools.refresh_knowledge import pypi as pypi_mod

REQ = {"schema": "doctor.requirements/1", "read": "2026-12-03", "projects": {}}


def _pypi(projects: tuple[str, ...] = ("verl", "torch-npu", "vllm-ascend")) -> dict:
    return pypi_mod.read_all(projects, RecordedPyPI())


def _k(up, req=REQ, **rows):  # type: ignore[no-untyped-def]
    k = knowledge(up, **rows)
    k.requirements = parse_requirements(req, "requirements.json")
    return k


def test_published_releases_no_row_explains_are_unexplained_new_releases(upstream):  # noqa: F811
    doc = pypi_mod.requirements_table(_pypi(), RecordedPyPI())  # the requirements table current: only rows are missing
    found = refresh(_k(upstream, req=doc), {}, _pypi())
    got = {(d.kind, d.subject): d for d in found.diffs}
    # verl 0.9.0 / 0.9.1 are on PyPI, the (test) release table ends at 0.7.1; the nightly 0.8.0.dev0 is not a release
    assert not got[("new-release", "verl 0.9.1")].explained and ("new-release", "verl 0.8.0.dev0") not in got
    assert "uploaded 2026-09-20" in str(got[("new-release", "verl 0.9.1")].upstream)
    # torch-npu 2.13.0 / 2.14.0 have no CANN row in the (test) table; vllm-ascend 0.30.0rc2 no matrix row
    assert not got[("new-release", "torch-npu 2.14.0")].explained
    assert "sdist only" in str(got[("new-release", "vllm-ascend 0.30.0rc2")].upstream)
    assert ("new-release", "vllm-ascend 0.11.0") not in got  # older than every matrix row
    assert found.checked["pypi"] >= 7


def test_a_release_missing_from_the_requirements_table_is_unexplained(upstream):  # noqa: F811
    tn = (TorchNpuRow("2.13.0", "9.2.0", "https://pypi.org/project/torch-npu/2.13.0/"),
          TorchNpuRow("2.14.0", "9.2.0", "https://pypi.org/project/torch-npu/2.14.0/"))
    found = refresh(_k(upstream, tn=tn), {}, _pypi(("torch-npu",)))
    assert {d.subject for d in found.unexplained} == {"torch-npu 2.13.0", "torch-npu 2.14.0"}
    assert all("not in profiles/requirements/" in str(d.upstream) for d in found.unexplained)
    doc = pypi_mod.requirements_table(_pypi(("torch-npu",)), RecordedPyPI())
    found = refresh(_k(upstream, req=doc, tn=tn), {}, _pypi(("torch-npu",)))
    assert found.unexplained == []


def test_a_kept_release_whose_sdist_states_no_requirements_is_recorded_not_reported_missing(upstream, monkeypatch):  # noqa: F811
    # older deepspeed / flash-attn / vllm 0.1.x sdists have a PKG-INFO before Metadata-Version 2.2 without
    # Requires-Dist: the refresh records them as `unstated` instead of reporting them missing on every run
    tn = (TorchNpuRow("2.13.0", "9.2.0", "https://pypi.org/project/torch-npu/2.13.0/"),
          TorchNpuRow("2.14.0", "9.2.0", "https://pypi.org/project/torch-npu/2.14.0/"))
    real = pypi_mod.declared
    monkeypatch.setattr(pypi_mod, "declared", lambda http, r: None if r.version == "2.13.0" else real(http, r))
    doc = pypi_mod.requirements_table(_pypi(("torch-npu",)), RecordedPyPI())
    assert doc["unstated"] == {"torch-npu": ["2.13.0"]} and "2.13.0" not in doc["projects"]["torch-npu"]
    k = _k(upstream, req=doc, tn=tn)
    assert k.requirements.unstated("torch_npu") == {"2.13.0"}
    assert refresh(k, {}, _pypi(("torch-npu",))).unexplained == []
    # without the record it would be a difference
    doc.pop("unstated")
    found = refresh(_k(upstream, req=doc, tn=tn), {}, _pypi(("torch-npu",)))
    assert [d.subject for d in found.unexplained] == ["torch-npu 2.13.0"]


def test_declared_pins_that_contradict_a_row_are_changed(upstream):  # noqa: F811
    va = (VllmAscendRow("0.30.0rc2", "0.30.0", ">=3.10,<3.13", "9.2.0", "==2.10.0", "==2.10.0.post2", True,
                        "https://pypi.org/project/vllm-ascend/0.30.0rc2/", triton_ascend="3.2.2"),)
    doc = pypi_mod.requirements_table(_pypi(("vllm-ascend",)), RecordedPyPI())
    found = refresh(_k(upstream, req=doc, va=va), {}, _pypi(("vllm-ascend",)))
    d = next(x for x in found.diffs if x.subject == "vllm-ascend 0.30.0rc2 torch-npu")
    assert (d.kind, d.ours, d.upstream, d.explained) == ("changed", "==2.10.0.post2", "==2.10.0.post4", None)


def test_release_notes_pairings_are_compared(upstream, tmp_path):  # noqa: F811
    pt = upstream["torch-npu"]
    pt.commit({"docs/zh/release_notes.md":  # type: ignore[attr-defined]
               "|TorchNPU代码分支名称|PyTorch版本|TorchNPU版本|TorchNPU安装包版本|CANN版本|Python版本|\n|--|--|--|--|--|--|\n"
               "|v2.8.0-7.3.0|2.8.0|7.3.0|2.8.0.post2|8.5.0|Python3.10|\n"
               "|v2.14.0-26.2.0|2.14.0|26.2.0|2.14.0|9.2.0|Python3.10|\n"})
    va = upstream["vllm-ascend"]
    va.commit({"docs/source/user_guide/release_notes.md": "# Release notes\n\n## v0.32.0rc1 - 2026.11.20\n\nx\n\n"  # type: ignore[attr-defined]
               "## v0.13.0 - 2026.01.01\n"})
    ms = upstream["mindspeed"]
    ms.git("checkout", "-q", "main")  # type: ignore[attr-defined]
    ms.commit({"docs/zh/release_notes_core.md":  # type: ignore[attr-defined]
               "|MindSpeed Core代码分支名称|CANN版本|TorchNPU版本|Python版本|PyTorch版本|\n|--|--|--|--|--|\n"
               "|master（在研版本）|在研版本|在研版本|Python3.10|2.7.1|\n"
               "|core_r0.16.0|9.1.0|26.1.0|Python3.10|2.7.1|\n"})
    rows = (MindSpeedRow("core_r0.16.0", "0.16.0", "0.16", "core_r0.16.0",
                         "https://github.com/Ascend/MindSpeed/blob/0000000/README.md", cann="9.0.0", torch="2.7.1"),)
    tn = (TorchNpuRow("2.8.0.post2", "8.5.0", "https://pypi.org/project/torch-npu/2.8.0.post2/"),
          TorchNpuRow("2.14.0", "9.1.0", "https://pypi.org/project/torch-npu/2.14.0/"))
    found = refresh(_k(upstream, tn=tn, ms=rows), repos(upstream))
    got = {d.subject: d for d in found.unexplained}
    assert (got["torch-npu 2.14.0 CANN"].ours, got["torch-npu 2.14.0 CANN"].upstream) == ("9.1.0", "9.2.0")
    assert got["vllm-ascend 0.32.0rc1"].kind == "missing-row" and "release_notes.md" in got["vllm-ascend 0.32.0rc1"].where
    assert (got["MindSpeed core_r0.16.0 CANN"].ours, got["MindSpeed core_r0.16.0 CANN"].upstream) == ("9.0.0", "9.1.0")
    assert "torch-npu 2.8.0.post2 CANN" not in got  # agrees with the row


def test_no_answer_from_pypi_exits_2(upstream, capsys):  # noqa: F811
    rc = main(["--torch-npu", str(upstream["torch-npu"].path), "--profiles", str(upstream["profiles"]),  # type: ignore[attr-defined]
               "--releases", str(upstream["releases"])], http=RecordedPyPI(down=True))
    assert rc == 2
    assert "no answer" in capsys.readouterr().err


def test_write_requirements_rewrites_the_knowledge_copys_table(upstream, tmp_path, monkeypatch, capsys):  # noqa: F811
    import shutil

    kdir = tmp_path / "knowledge"
    shutil.copytree(Path(__file__).parents[2] / "profiles", kdir)
    before = {f.name: f.read_text() for f in (kdir / "requirements").iterdir()}
    monkeypatch.setenv("DOCTOR_KNOWLEDGE", str(kdir))
    args = ["--torch-npu", str(upstream["torch-npu"].path), "--profiles", str(upstream["profiles"]),  # type: ignore[attr-defined]
            "--releases", str(upstream["releases"]), "--write-requirements"]
    # a project PyPI does not answer for: exit 2 and the table is left as it was
    assert main(args, http=RecordedPyPI()) == 2
    assert "HTTP 404" in capsys.readouterr().err
    assert {f.name: f.read_text() for f in (kdir / "requirements").iterdir()} == before
    monkeypatch.setattr(pypi_mod, "PROJECTS", ("verl", "torch-npu", "vllm-ascend"))
    assert main(args, http=RecordedPyPI()) in (0, 1)
    assert sorted(f.name for f in (kdir / "requirements").iterdir()) == [
        "index.json", "torch-npu.json", "verl.json", "vllm-ascend.json"]
    index = json.loads((kdir / "requirements" / "index.json").read_text())
    assert set(index["projects"]) == {"verl", "torch-npu", "vllm-ascend"}
    doc = json.loads((kdir / "requirements" / "torch-npu.json").read_text())
    assert "torch==2.14.0.*" in doc["releases"]["2.14.0"]["requires_dist"]
    assert "pypi: 3 projects, 7 releases" in capsys.readouterr().out
