"""doctor/knowledge/requirements.py: the packaged requirements table (read from PyPI) answers what a release
declares; a malformed table is refused naming the file and the key, and the CLI exits 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

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
    (lambda d: d.update(unstated={"torch-npu": ["2.14.0"]}), "unstated.torch-npu.2.14.0"),
    (lambda d: d.update(unstated={"torch-npu": "2.13.0"}), "unstated.torch-npu"),
    (lambda d: d.update(unstated={"deepspeed": ["0.12.6"]}), "unstated.deepspeed"),
    (lambda d: d["projects"]["torch-npu"]["2.14.0"].update(yanked=True), "projects.torch-npu.2.14.0.yanked"),
])
def test_malformed_table_names_file_and_key(mutate, where) -> None:
    d = json.loads(json.dumps(GOOD))
    mutate(d)
    with pytest.raises(InputError) as e:
        req.parse_requirements(d, "/k/requirements.json")
    assert str(e.value).startswith(f"/k/requirements.json: {where}: ")


def _write(d: Path, doc: dict) -> Path:
    """The directory layout the refresh tool writes (requirements.layout), for a whole document."""
    d.mkdir(parents=True, exist_ok=True)
    for name, content in req.layout(doc).items():
        (d / name).write_text(json.dumps(content))
    return d


def test_unreadable_or_invalid_json_is_an_input_error(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        req.read_dir(str(tmp_path / "missing"))
    d = _write(tmp_path / "r", GOOD)
    (d / "index.json").write_text("{not json")
    with pytest.raises(InputError, match="index.json: not valid JSON"):
        req.read_dir(str(d))


def test_malformed_table_makes_the_loader_exit_2(tmp_path) -> None:
    d = _write(tmp_path / "r", GOOD)
    idx = json.loads((d / "index.json").read_text())
    (d / "index.json").write_text(json.dumps({**idx, "schema": "x"}))
    code = ("import sys\nfrom doctor.knowledge.requirements import load_requirements\n"
            "from doctor.errors import DoctorError\n"
            f"try:\n    load_requirements({str(d)!r})\nexcept DoctorError as e:\n    print(e, file=sys.stderr)\n"
            "    raise SystemExit(e.exit_code)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2
    assert "index.json: schema: unsupported schema" in r.stderr


def test_a_projects_file_is_read_and_validated_only_when_that_project_is_asked_for(tmp_path) -> None:
    # `doctor check` prints the read date and the newest vLLM on every run: the index answers both, and a
    # project's file (transformers' alone is 1.7 MB) is read only when a check asks about that project
    doc = json.loads(json.dumps(GOOD))
    doc["projects"]["vllm"] = {"0.11.0": {**GOOD["projects"]["torch-npu"]["2.14.0"],
                                          "source": "https://pypi.org/project/vllm/0.11.0/#vllm-0.11.0.tar.gz"}}
    d = _write(tmp_path / "r", doc)
    (d / "torch-npu.json").write_text((d / "torch-npu.json").read_text().replace('"numpy"', '7'))
    t = req.read_dir(str(d))
    assert (t.read, t.newest("vllm"), t.newest("torch_npu"), t.newest("nope")) == ("2026-12-03", "0.11.0", "2.14.0", None)
    assert t.declared("vllm", "0.11.0") is not None
    with pytest.raises(InputError) as e:
        t.declared("torch-npu", "2.14.0")
    assert str(e.value).startswith(f"{d / 'torch-npu.json'}: releases.2.14.0.requires_dist: ")


@pytest.mark.parametrize("mutate,where,reason", [
    (lambda f: f["releases"].pop("2.14.0"), "releases", "the index and this file disagree"),
    (lambda f: f.update(read="2027-01-01"), "read", "different refreshes"),
    (lambda f: f.update(project="torch"), "project", "the file is torch-npu.json"),
    (lambda f: f.update(schema="doctor.requirements/1"), "schema", "unsupported schema"),
    (lambda f: f["releases"]["2.14.0"].update(yanked="broken"), "releases", "the index and this file disagree"),
])
def test_a_project_file_that_disagrees_with_the_index_is_refused(tmp_path, mutate, where, reason) -> None:
    d = _write(tmp_path / "r", GOOD)
    f = json.loads((d / "torch-npu.json").read_text())
    mutate(f)
    (d / "torch-npu.json").write_text(json.dumps(f))
    with pytest.raises(InputError) as e:
        req.read_dir(str(d)).declared("torch-npu", "2.14.0")
    assert str(e.value).startswith(f"{d / 'torch-npu.json'}: {where}: ") and reason in str(e.value)


def test_yanked_releases_are_answered_from_the_index_without_reading_a_projects_file(tmp_path) -> None:
    # `doctor check` asks about every installed release: the index holds the yanked ones, so a live check reads no
    # project file unless a release was yanked
    doc = json.loads(json.dumps(GOOD))
    rows = doc["projects"]["torch-npu"]
    rows["2.13.0"] = {**rows["2.14.0"], "yanked": "Contains an incorrect torch dependency"}
    rows["2.12.0"] = {**rows["2.14.0"], "yanked": ""}
    d = _write(tmp_path / "r", doc)
    index = json.loads((d / "index.json").read_text())["projects"]["torch-npu"]
    assert index["yanked"] == {"2.12.0": "", "2.13.0": "Contains an incorrect torch dependency"}
    (d / "torch-npu.json").unlink()
    t = req.read_dir(str(d))
    assert t.yanked("Torch_NPU", "2.13.0") == "Contains an incorrect torch dependency"
    assert t.yanked("torch-npu", "2.13") == "Contains an incorrect torch dependency"  # the same version, spelt short
    assert t.yanked("torch-npu", "2.12.0") == ""  # yanked without a reason
    assert t.yanked("torch-npu", "2.14.0") is None and t.yanked("torch-npu", "2.13.0+cpu") is None
    assert t.yanked("nope", "1.0") is None and t.yanked("torch-npu", "not a version") is None
    with pytest.raises(InputError, match="cannot read"):
        t.declared("torch-npu", "2.14.0")  # the file was never read before this
    assert _index_refusal(d, "yanked", ["2.13.0"]).startswith(f"{d / 'index.json'}: projects.torch-npu.yanked: ")


def _index_refusal(d: Path, key: str, value: object) -> str:
    """What read_dir says of the directory `d` once torch-npu's index line has `key` set to `value`."""
    bad = json.loads((d / "index.json").read_text())
    bad["projects"]["torch-npu"][key] = value
    (d / "index.json").write_text(json.dumps(bad))
    with pytest.raises(InputError) as e:
        req.read_dir(str(d))
    return str(e.value)


def test_whether_the_newest_release_requires_torch_is_answered_from_the_index_without_reading_a_projects_file(
        tmp_path) -> None:
    # every fix line of a check asks it of each package it names (would pip bring torch in?): the index holds the
    # answer, decided from the newest release's Requires-Dist when the table is written
    doc = json.loads(json.dumps(GOOD))
    rows = doc["projects"]
    rows["pyyaml"] = {"6.0.3": {**rows["torch-npu"]["2.14.0"], "requires_dist": [],
                                "source": "https://pypi.org/project/pyyaml/6.0.3/#pyyaml-6.0.3.tar.gz"}}
    rows["accelerate"] = {  # an older release required torch; the newest only under an extra: pip would not take it
        "0.1.0": {**rows["torch-npu"]["2.14.0"], "requires_dist": ["torch>=1.4"],
                  "source": "https://pypi.org/project/accelerate/0.1.0/#accelerate-0.1.0.tar.gz"},
        "9.0.0": {**rows["torch-npu"]["2.14.0"], "requires_dist": ["numpy", "torch>=2 ; extra == 'test'"],
                  "source": "https://pypi.org/project/accelerate/9.0.0/#accelerate-9.0.0.tar.gz"}}
    d = _write(tmp_path / "r", doc)
    index = json.loads((d / "index.json").read_text())["projects"]
    assert {p: index[p]["requires_torch"] for p in index} == {"accelerate": False, "pyyaml": False, "torch-npu": True}
    for name in index:
        (d / f"{name}.json").unlink()
    t = req.read_dir(str(d))
    assert [t.newest_requires_torch(p) for p in ("Torch_NPU", "pyyaml", "accelerate", "nope")] == [True, False, False,
                                                                                                  None]
    assert _index_refusal(d, "requires_torch", "yes").startswith(
        f"{d / 'index.json'}: projects.torch-npu.requires_torch: must be true or false")


def test_an_index_that_says_otherwise_than_the_newest_release_is_refused_and_one_written_before_the_field_is_read(
        tmp_path) -> None:
    d = _write(tmp_path / "r", GOOD)
    index = json.loads((d / "index.json").read_text())
    index["projects"]["torch-npu"]["requires_torch"] = False  # torch-npu 2.14.0 requires torch==2.14.0.*
    (d / "index.json").write_text(json.dumps(index))
    with pytest.raises(InputError) as e:
        req.read_dir(str(d)).declared("torch-npu", "2.14.0")
    assert "newest requires torch True, but index.json says" in str(e.value) and "disagree" in str(e.value)
    # a knowledge directory carried in from a doctor whose index lacks the field: the project's file answers
    del index["projects"]["torch-npu"]["requires_torch"]
    (d / "index.json").write_text(json.dumps(index))
    t = req.read_dir(str(d))
    assert t.newest_requires_torch("torch-npu") is True
    assert t.declared("torch-npu", "2.14.0") is not None


def test_the_packaged_index_and_every_project_file_agree_and_the_knowledge_line_says_the_same() -> None:
    from doctor.knowledge.releases import knowledge_summary

    t = req.load_requirements()
    assert t.path.endswith(os.path.join("profiles", "requirements"))
    for name in t.index:
        rels = t.projects[name]  # each read validates its count and newest against the index
        assert t.newest(name) == req.newest_of(rels)
    k = knowledge_summary()
    assert k["pypi_read"] == t.read
    assert k["newest"]["vllm"] == max(t.projects["vllm"], key=Version)
    on_disk = {p.name for p in (ROOT / "profiles" / "requirements").glob("*.json")}
    assert on_disk == {"index.json", *(f"{n}.json" for n in t.index)}  # no stray file a refresh left


def test_releases_whose_sdist_states_nothing_are_recorded_in_their_projects_file(tmp_path) -> None:
    t = req.load_requirements()
    assert "0.12.6" in t.unstated("deepspeed") and t.declared("deepspeed", "0.12.6") is None
    assert t.unstated("verl") == frozenset() and t.unstated("not-tracked") == frozenset()
    d = _write(tmp_path / "r", {**GOOD, "unstated": {"torch-npu": ["2.13.0"]}})
    assert json.loads((d / "torch-npu.json").read_text())["unstated"] == ["2.13.0"]
    assert req.read_dir(str(d)).unstated("torch-npu") == {"2.13.0"}
    f = json.loads((d / "torch-npu.json").read_text())
    (d / "torch-npu.json").write_text(json.dumps({**f, "unstated": ["2.14.0"]}))
    with pytest.raises(InputError, match="unstated.2.14.0: is also in releases"):
        req.read_dir(str(d)).unstated("torch-npu")


def test_a_platform_wheels_metadata_fits_only_linux_targets_of_its_python_and_machine() -> None:
    def fits(wheel: str, py: str, arch: str) -> bool:
        return req.Declared(None, (), f"https://pypi.org/project/torch/2.2.0/#{wheel}").fits(py, arch)

    # torch 2.2.0's smallest wheel (the one the table used to read) is for macOS: not a Linux x86_64 host's
    assert not fits("torch-2.2.0-cp311-none-macosx_10_9_x86_64.whl", "3.11.7", "x86_64")
    assert not fits("torch-2.2.0-cp311-none-macosx_11_0_arm64.whl", "3.11.7", "aarch64")
    assert fits("torch-2.2.0-cp311-cp311-manylinux1_x86_64.whl", "3.11.7", "x86_64")
    assert fits("tokenizers-0.15.0-cp37-abi3-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", "3.10.1", "aarch64")
    assert not fits("torch-2.2.0-cp311-cp311-win_amd64.whl", "3.11.7", "x86_64")
    assert fits("verl-0.9.1-py3-none-any.whl", "3.11.7", "x86_64")


def test_a_row_applies_to_the_siblings_read_and_found_to_declare_the_same() -> None:
    d = req.Declared(None, ("torch==2.1.0",), "https://pypi.org/project/t/1.0/#t-1.0-cp310-cp310-manylinux2014_aarch64.whl",
                     wheels=("t-1.0-cp311-cp311-manylinux2014_aarch64.whl",))
    assert d.fits("3.10.12", "aarch64") and d.fits("3.11.7", "aarch64")
    assert not d.fits("3.12.1", "aarch64") and not d.fits("3.11.7", "x86_64")
    bad = json.loads(json.dumps(GOOD))
    bad["projects"]["torch-npu"]["2.14.0"]["wheels"] = ["torch_npu-2.14.0.tar.gz"]
    with pytest.raises(InputError, match="projects.torch-npu.2.14.0.wheels: not a wheel file name"):
        req.parse_requirements(bad, "x.json")


def test_a_stated_machine_whose_wheels_declare_something_else_is_judged_by_what_they_declare() -> None:
    page = "https://pypi.org/project/t/1.0/"
    x86 = ("t-1.0-cp310-cp310-manylinux2014_x86_64.whl", "t-1.0-cp311-cp311-manylinux2014_x86_64.whl")
    d = req.Declared(None, ("torch==2.1.0",), page + "#t-1.0-cp310-cp310-manylinux2014_aarch64.whl",
                     machines=(req.MachineDeclaration("x86_64", ">=3.10", ("torch==2.1.0+cpu",), x86),))
    assert d.on("3.10.12", "aarch64") is d
    on = d.on("3.11.7", "x86_64")
    assert on is not None and on.requires_dist == ("torch==2.1.0+cpu",) and on.requires_python == ">=3.10"
    assert on.source == page + "#" + x86[0] and on.source_for("3.11.7", "x86_64") == page + "#" + x86[1]
    assert d.on("3.12.1", "x86_64") is None  # no x86_64 wheel read for 3.12: nothing claimed
    # an unstated machine: the row alone, as before (which machine's declaration holds is unknown)
    assert d.on("3.10.12", None) is d and d.on("3.11.7", None) is None
    # torch-npu 2.8.0 as PyPI publishes it (every wheel's METADATA read): torch==2.8.0 on aarch64, +cpu on x86_64
    tn = req.declared("torch-npu", "2.8.0")
    assert tn is not None and "torch==2.8.0" in {x.replace(" ", "") for x in tn.requires_dist}
    on = tn.on("3.11.7", "x86_64")
    assert on is not None and "torch==2.8.0+cpu" in on.requires_dist and "_x86_64" in on.source


@pytest.mark.parametrize("machines,why", [
    ({"riscv64": {"requires_python": None, "requires_dist": [], "wheels": ["t-1.0-cp310-cp310-linux_riscv64.whl"]}},
     "riscv64: is not a machine"),
    ({"x86_64": {"requires_python": None, "requires_dist": [],
                 "wheels": ["t-1.0-cp310-cp310-manylinux2014_aarch64.whl"]}}, "x86_64.wheels: must name x86_64 wheel"),
    ({"x86_64": {"requires_python": None, "requires_dist": [], "wheels": []}}, "x86_64.wheels: must name"),
    ({"x86_64": {"requires_dist": [], "wheels": ["t-1.0-cp310-cp310-manylinux2014_x86_64.whl"]}},
     "x86_64.requires_python: required"),
    ({"x86_64": {"requires_python": None, "requires_dist": "torch",
                 "wheels": ["t-1.0-cp310-cp310-manylinux2014_x86_64.whl"]}}, "x86_64.requires_dist"),
    (["x86_64"], "machines: must be an object"),
])
def test_a_malformed_machines_entry_is_refused_naming_the_key(machines, why) -> None:
    bad = json.loads(json.dumps(GOOD))
    bad["projects"]["torch-npu"]["2.14.0"]["machines"] = machines
    with pytest.raises(InputError, match=r"projects.torch-npu.2.14.0.machines"):
        req.parse_requirements(bad, "x.json")
    with pytest.raises(InputError, match=why):
        req.parse_requirements(bad, "x.json")


def test_the_packaged_rows_of_platform_releases_cover_the_stacks_pythons() -> None:
    # torch 2.1.0: its aarch64 wheels for 3.9-3.11 declare the same; its x86_64 wheels also list the CUDA wheels
    # (nvidia-*, triton==2.1.0 for Linux x86_64), so nothing is claimed for x86_64 from the aarch64 metadata
    torch = req.declared("torch", "2.1.0")
    assert torch is not None
    assert all(torch.fits(py, "aarch64") for py in ("3.9.18", "3.10.12", "3.11.7"))
    assert not torch.fits("3.11.7", "x86_64")
    # torchvision 0.16.0: the same on both machines
    tv = req.declared("torchvision", "0.16.0")
    assert tv is not None and tv.fits("3.11.7", "x86_64") and tv.fits("3.9.18", "aarch64")
    assert tv.source_for("3.11.7", "x86_64").endswith("#torchvision-0.16.0-cp311-cp311-manylinux1_x86_64.whl")
    assert tv.source_for("3.10.12", "aarch64") == tv.source


def test_the_packaged_table_says_what_a_release_publishes_for_a_python_and_machine() -> None:
    # read from PyPI's JSON API (2026-12-03): vllm 0.3.0 has cp38-cp311 x86_64 wheels and an sdist; torch 2.1.0
    # cp38-cp311 wheels and no sdist; ray 2.11.0 x86_64 wheels only; transformers is a pure wheel
    t = req.load_requirements()
    vllm = t.declared("vllm", "0.3.0")
    assert vllm is not None and "cp311-cp311-manylinux1_x86_64" in vllm.files and "sdist" in vllm.files
    assert vllm.installable("3.11.7", "x86_64") == "wheel"
    assert vllm.installable("3.12.3", "x86_64") == "sdist" and vllm.installable("3.10.12", "aarch64") == "sdist"
    assert vllm.platform_wheels
    torch = t.declared("torch", "2.1.0")
    assert torch is not None and torch.installable("3.12.3", "x86_64") == "none"
    assert torch.installable("3.11.7", "aarch64") == "wheel" and torch.installable("3.12.3", None) == "none"
    ray = t.declared("ray", "2.11.0")
    assert ray is not None and ray.installable("3.11.7", "aarch64") == "none"
    assert ray.installable("3.11.7", "x86_64") == "wheel" and ray.installable("3.11.7", None) == "wheel"
    tf = t.declared("transformers", "4.57.1")
    assert tf is not None and tf.installable("3.12.3", "aarch64") == "pure" and not tf.platform_wheels
    # the nearest release with a wheel for the target: the first newer one (torch 2.2.0 has cp312 wheels)
    assert t.nearest_installable("torch", "2.1.0", "3.12.3", "x86_64") == "2.2.0"
    assert t.nearest_installable("vllm", "0.4.0", "3.10.12", "aarch64") == "0.10.2"
    # a table written before `files` existed still reads: nothing is claimed
    assert req.Declared(None, (), "https://pypi.org/project/t/1.0/").installable("3.12", "x86_64") == "unknown"


@pytest.mark.parametrize("entry", ["torch-2.1.0-cp311-cp311-manylinux1_x86_64.whl", "cp311-cp311", "source", "",
                                   "cp311-cp311-linux_x86_64-extra", 3])
def test_a_malformed_files_entry_is_refused_naming_the_file_and_key(tmp_path, entry) -> None:
    bad = json.loads(json.dumps(GOOD))
    bad["projects"]["torch-npu"]["2.14.0"]["files"] = ["sdist", entry]
    with pytest.raises(InputError, match=r"projects.torch-npu.2.14.0.files: "):
        req.parse_requirements(bad, "x.json")
    # the project file as the doctor reads it: exit 2, naming the file and the key
    good = json.loads(json.dumps(GOOD))
    good["projects"]["torch-npu"]["2.14.0"]["files"] = ["cp311-cp311-manylinux_2_28_aarch64", "sdist"]
    req.parse_requirements(good, "x.json")
    d = _write(tmp_path / "r", good)
    doc = json.loads((d / "torch-npu.json").read_text())
    doc["releases"]["2.14.0"]["files"] = [entry]
    (d / "torch-npu.json").write_text(json.dumps(doc))
    code = ("import sys\nfrom doctor.knowledge.requirements import load_requirements\n"
            "from doctor.errors import DoctorError\n"
            f"try:\n    load_requirements({str(d)!r}).declared('torch-npu', '2.14.0')\n"
            "except DoctorError as e:\n    print(e, file=sys.stderr)\n    raise SystemExit(e.exit_code)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2, r.stderr
    assert "torch-npu.json: releases.2.14.0.files: " in r.stderr


def test_each_distinct_files_entry_is_parsed_once_however_many_releases_and_projects_list_it(tmp_path, monkeypatch):
    """Every release of a project repeats its wheels' tag triples (the ~20 project files a live check reads list
    ~7,800 of them, ~350 distinct): each text is parsed once per process, and every release still answers from it."""
    triples = ["cp399-cp399-manylinux_2_99_riscv64", "py399-none-any"]  # texts no other test parses
    parsed: list[str] = []
    real = req.parse_tag
    monkeypatch.setattr(req, "parse_tag", lambda t: parsed.append(t) or real(t))
    doc = json.loads(json.dumps(GOOD))
    row = doc["projects"]["torch-npu"]["2.14.0"]
    rels = {v: {**row, "source": f"https://pypi.org/project/torch-npu/{v}/#x", "files": [*triples, "sdist"]}
            for v in ("2.14.0", "2.14.1", "2.15.0")}
    doc["projects"] = {"torch-npu": rels,
                       "other": {"1.0": {**row, "source": "https://pypi.org/project/other/1.0/#x", "files": triples}}}
    t = req.read_dir(str(_write(tmp_path / "r", doc)))
    for v in rels:
        d = t.declared("torch-npu", v)
        assert d is not None and d.installable("3.99", "riscv64") == "wheel" and d.platform_wheels
    other = t.declared("other", "1.0")
    assert other is not None and other.installable("3.99", "x86_64") == "pure"
    assert sorted(parsed) == sorted(triples)
