"""tools.refresh_knowledge.pypi on responses recorded from pypi.org (never the network): the release lists
with upload dates and wheel tags, Requires-* read from wheel METADATA through byte ranges or from an sdist's
PKG-INFO, the requirements directory it writes, and exit 2 when PyPI does not answer."""

from __future__ import annotations

import json

import pytest

from doctor.knowledge.requirements import read_dir
from tests.tools.pypi_fake import RecordedPyPI
from tools.refresh_knowledge import pypi

_REAL_OPEN = pypi.Http._open  # captured before conftest's guard replaces it (the retry test fakes urlopen)


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


def test_without_a_pure_wheel_a_linux_wheel_for_the_stacks_pythons_is_read_not_the_smallest(monkeypatch) -> None:
    # torch's smallest wheel is a macOS one, whose metadata never applies to an Ascend host (Declared.fits): the
    # table held torch rows no report could be judged by. Linux aarch64 first, then x86_64; CPython 3.10, 3.11.
    names = ["torch-2.1.0-cp311-none-macosx_11_0_arm64.whl", "torch-2.1.0-cp38-cp38-manylinux2014_aarch64.whl",
             "torch-2.1.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
             "torch-2.1.0-cp311-cp311-manylinux2014_aarch64.whl", "torch-2.1.0-cp310-cp310-manylinux2014_aarch64.whl",
             "torch-2.1.0-cp310-cp310-win_amd64.whl"]
    files = tuple(pypi.PypiFile(n, f"https://f/{i}.whl", 10 if "macosx" in n or "win" in n else 100 + i, None)
                  for i, n in enumerate(names))
    monkeypatch.setattr(pypi, "wheel_metadata", lambda http, f: {"requires_python": None, "requires_dist": [],
                                                                 "where": f.filename})
    r = pypi.PypiRelease("torch", "2.1.0", "2023-10-04", (), False, False, files)
    d = pypi.declared(None, r)  # type: ignore[arg-type]
    assert d is not None and d["source"].endswith("#torch-2.1.0-cp310-cp310-manylinux2014_aarch64.whl")
    r = pypi.PypiRelease("torch", "2.1.0", "2023-10-04", (), False, False, tuple(f for f in files if "aarch64" not in f.filename))
    d = pypi.declared(None, r)  # type: ignore[arg-type]
    assert d is not None and "manylinux_2_17_x86_64" in d["source"]


def test_a_platform_release_lists_the_linux_siblings_that_declare_the_same(monkeypatch) -> None:
    # one wheel's metadata applied only to its own Python and machine: a report on Python 3.11 was never judged
    # by torch's cp310 row. The siblings for cp39-cp312 on aarch64 / x86_64 are read; identical ones are listed
    http = RecordedPyPI()
    r = next(x for x in pypi.releases("torch-npu", http) if x.version == "2.14.0")
    d = pypi.declared(http, r)
    assert d is not None and d["source"].endswith("#torch_npu-2.14.0-cp311-cp311-manylinux_2_28_aarch64.whl")
    assert d["wheels"] == ["torch_npu-2.14.0-cp311-cp311-manylinux_2_28_x86_64.whl"]
    names = ["t-1.0-cp310-cp310-manylinux2014_aarch64.whl", "t-1.0-cp311-cp311-manylinux2014_aarch64.whl",
             "t-1.0-cp312-cp312-manylinux2014_x86_64.whl", "t-1.0-cp38-cp38-manylinux2014_x86_64.whl",
             "t-1.0-cp311-cp311-macosx_11_0_arm64.whl", "t-1.0-cp311-cp311-manylinux2014_aarch64.whl"]
    files = tuple(pypi.PypiFile(n, f"https://f/{i}.whl", 100 + i, None) for i, n in enumerate(names))

    def meta(http, f):  # type: ignore[no-untyped-def]
        deps = ["torch==2.1.0"] if "x86_64" not in f.filename else ["torch==2.1.0", "nvidia-nccl"]
        return {"requires_python": ">=3.8", "requires_dist": deps, "where": f.filename}

    monkeypatch.setattr(pypi, "wheel_metadata", meta)
    d = pypi.declared(None, pypi.PypiRelease("t", "1.0", "2023-10-04", (), False, False, files))  # type: ignore[arg-type]
    assert d is not None and d["source"].endswith("#t-1.0-cp310-cp310-manylinux2014_aarch64.whl")
    # cp311 aarch64 declares the same: listed (once); cp312 x86_64 declares more: left out; cp38 and macOS: not read
    assert d["wheels"] == ["t-1.0-cp311-cp311-manylinux2014_aarch64.whl"]


def test_a_machines_wheels_that_declare_something_else_are_kept_as_that_machines_declaration(monkeypatch) -> None:
    """torch-npu's x86_64 wheels pin torch==X+cpu, its aarch64 ones torch==X: both are kept (`machines`). Wheels
    that differ only in how they write the same requirements (Ray's order, torch 2.6.0's `name (==X) ;`) declare the
    same; a machine whose differing wheels disagree among themselves is left out."""
    names = ["t-1.0-cp310-cp310-manylinux2014_aarch64.whl", "t-1.0-cp311-cp311-manylinux2014_aarch64.whl",
             "t-1.0-cp310-cp310-manylinux2014_x86_64.whl", "t-1.0-cp311-cp311-manylinux2014_x86_64.whl"]
    files = tuple(pypi.PypiFile(n, f"https://f/{i}.whl", 100 + i, None) for i, n in enumerate(names))

    def release(meta):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(pypi, "wheel_metadata", lambda http, f: {**meta(f.filename), "where": f.filename})
        return pypi.declared(None, pypi.PypiRelease("t", "1.0", "2024-01-01", (), False, False, files))  # type: ignore[arg-type]

    d = release(lambda n: {"requires_python": None, "requires_dist": ["torch==1.0+cpu" if "x86_64" in n else "torch ==1.0",
                                                                      "numpy"]})
    assert d is not None and d["requires_dist"] == ["torch ==1.0", "numpy"]
    assert d["wheels"] == [names[1]]
    assert d["machines"] == {"x86_64": {"requires_python": None, "requires_dist": ["torch==1.0+cpu", "numpy"],
                                        "wheels": [names[2], names[3]]}}
    assert list(d) == ["requires_python", "requires_dist", "uploaded", "source", "wheels", "machines", "files"]
    d = release(lambda n: {"requires_python": ">=3.9" if "x86_64" in n else ">= 3.9",
                           "requires_dist": ["NumPy", "torch==1.0"] if "cp311" in n else ["torch (==1.0)", "numpy"]})
    assert d is not None and d["wheels"] == names[1:] and "machines" not in d
    d = release(lambda n: {"requires_python": None, "requires_dist": [] if "aarch64" in n else [n[6:11]]})
    assert d is not None and d["wheels"] == [names[1]] and "machines" not in d


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
    assert index["projects"]["torch-npu"] == {"releases": 2, "newest": "2.14.0", "requires_torch": True}
    assert "0.8.0.dev0" not in json.loads((out / "verl.json").read_text())["releases"]  # dev releases are left out
    t = read_dir(str(out))
    d = t.declared("torch_npu", "2.14.0")
    assert d is not None and d.requires_dist == ("torch==2.14.0.*", "numpy", "pyyaml")
    assert d.uploaded == "2026-10-15"
    # a project no longer tracked loses its file (no stale file the index does not name)
    assert pypi.main(["--out", str(out), "--project", "verl"], http=RecordedPyPI()) == 0
    assert sorted(f.name for f in out.iterdir()) == ["index.json", "verl.json"]


def test_each_release_records_the_files_it_publishes_for_linux_and_files_only_keeps_the_releases(tmp_path,
                                                                                                 capsys) -> None:
    out = tmp_path / "requirements"
    assert pypi.main(["--out", str(out), "--project", "torch-npu", "--project", "vllm-ascend"], http=RecordedPyPI()) == 0
    t = read_dir(str(out))
    d = t.declared("torch-npu", "2.14.0")
    assert d is not None
    assert d.files == ("cp311-cp311-manylinux_2_28_aarch64", "cp311-cp311-manylinux_2_28_x86_64")
    assert d.installable("3.11.7", "aarch64") == "wheel" and d.installable("3.12.1", "aarch64") == "none"
    va = t.declared("vllm-ascend", "0.30.0rc2")
    assert va is not None and va.files[-1] == "sdist"
    # --files-only: the same releases and declarations, each release's files re-read from the one JSON API answer
    # per project (no wheel or sdist is read)
    doc = json.loads((out / "torch-npu.json").read_text())
    for e in doc["releases"].values():
        del e["files"]
    (out / "torch-npu.json").write_text(json.dumps(doc))
    assert read_dir(str(out)).declared("torch-npu", "2.14.0").installable("3.11", "x86_64") == "unknown"
    http = RecordedPyPI()
    assert pypi.main(["--out", str(out), "--files-only"], http=http) == 0, capsys.readouterr().err
    assert all(u.endswith("/json") for u, _ in http.requests) and len(http.requests) == 2
    again = read_dir(str(out))
    assert again.index == t.index
    assert again.declared("torch-npu", "2.14.0") == d


def test_files_only_reads_the_declaration_of_a_release_published_since_the_table_was_read(tmp_path, capsys) -> None:
    """--files-only re-stamps the table with the day PyPI was read, so a release PyPI lists by then must be in it:
    a table written before torch-npu 2.14.0 was published gets its row (one wheel's METADATA read), not only a new
    date over the old releases."""
    out = tmp_path / "requirements"
    assert pypi.main(["--out", str(out), "--project", "torch-npu"], http=RecordedPyPI()) == 0, capsys.readouterr().err
    full = read_dir(str(out)).declared("torch-npu", "2.14.0")
    assert full is not None
    doc = json.loads((out / "torch-npu.json").read_text())
    del doc["releases"]["2.14.0"]
    (out / "torch-npu.json").write_text(json.dumps(doc))
    idx = json.loads((out / "index.json").read_text())
    idx["projects"]["torch-npu"].update(releases=len(doc["releases"]), newest="2.13.0")
    (out / "index.json").write_text(json.dumps(idx))
    assert read_dir(str(out)).declared("torch-npu", "2.14.0") is None
    http = RecordedPyPI()
    assert pypi.main(["--out", str(out), "--files-only"], http=http) == 0, capsys.readouterr().err
    assert [u for u, _ in http.requests if not u.endswith("/json")] != []  # the new release's wheel was read
    again = read_dir(str(out))
    assert again.index["torch-npu"].newest == "2.14.0"
    assert again.declared("torch-npu", "2.14.0") == full


def test_reread_reads_a_projects_declarations_again_and_leaves_the_others(tmp_path, capsys) -> None:
    """`--files-only --reread NAME`: what a change to `declared` adds (e.g. `machines`) reaches that project's rows
    without a whole refresh; the other projects keep their rows as they are."""
    out = tmp_path / "requirements"
    assert pypi.main(["--out", str(out), "--project", "torch-npu", "--project", "verl"], http=RecordedPyPI()) == 0
    full = read_dir(str(out))
    for p, v in (("torch-npu", "2.14.0"), ("verl", "0.9.1")):
        doc = json.loads((out / f"{p}.json").read_text())
        doc["releases"][v]["requires_dist"] = ["edited"]
        (out / f"{p}.json").write_text(json.dumps(doc))
    http = RecordedPyPI()
    assert pypi.main(["--out", str(out), "--files-only", "--reread", "Torch_NPU"], http=http) == 0, capsys.readouterr().err
    again = read_dir(str(out))
    assert again.declared("torch-npu", "2.14.0") == full.declared("torch-npu", "2.14.0")
    assert again.declared("verl", "0.9.1").requires_dist == ("edited",)  # type: ignore[union-attr]
    assert not any("verl" in u for u, _ in http.requests if not u.endswith("/json"))
    with pytest.raises(SystemExit):
        pypi.main(["--out", str(out), "--reread", "verl"], http=RecordedPyPI())
    assert "--reread needs --files-only" in capsys.readouterr().err


def test_a_yanked_release_keeps_its_row_with_the_maintainers_reason_and_the_index_repeats_it(tmp_path, capsys) -> None:
    """einops 0.6.2rc0 as PyPI lists it: every file yanked, reason "0.6.2 cancelled in favor of 0.7.0"."""
    rels = {r.version: r for r in pypi.releases("einops", RecordedPyPI())}
    assert rels["0.6.2rc0"].yanked and rels["0.6.2rc0"].yanked_reason == "0.6.2 cancelled in favor of 0.7.0"
    assert not rels["0.7.0"].yanked and rels["0.7.0"].yanked_reason == ""
    out = tmp_path / "requirements"
    assert pypi.main(["--out", str(out), "--project", "einops"], http=RecordedPyPI()) == 0, capsys.readouterr().err
    index = json.loads((out / "index.json").read_text())
    assert index["projects"]["einops"]["yanked"] == {"0.6.2rc0": "0.6.2 cancelled in favor of 0.7.0"}
    t = read_dir(str(out))
    assert t.yanked("einops", "0.6.2rc0") == "0.6.2 cancelled in favor of 0.7.0"
    assert t.yanked("einops", "0.7.0") is None and t.yanked("einops", "0.6.2rc0+local") is None
    d = t.declared("einops", "0.6.2rc0")
    assert d is not None and d.yanked == "0.6.2 cancelled in favor of 0.7.0" and d.requires_python == ">=3.8"
    # --files-only re-reads the flag with the files (a release yanked after the table was written gets it)
    doc = json.loads((out / "einops.json").read_text())
    del doc["releases"]["0.6.2rc0"]["yanked"]
    (out / "einops.json").write_text(json.dumps(doc))
    idx = json.loads((out / "index.json").read_text())
    del idx["projects"]["einops"]["yanked"]
    (out / "index.json").write_text(json.dumps(idx))
    assert read_dir(str(out)).yanked("einops", "0.6.2rc0") is None
    assert pypi.main(["--out", str(out), "--files-only"], http=RecordedPyPI()) == 0, capsys.readouterr().err
    assert read_dir(str(out)).yanked("einops", "0.6.2rc0") == "0.6.2 cancelled in favor of 0.7.0"


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


def test_a_dropped_request_is_retried_a_missing_page_is_not(monkeypatch) -> None:
    # a refresh makes thousands of requests (every release since 2023 of ~55 projects): one reset connection
    # must not throw the whole table away; a 404 is an answer and fails at once
    import io
    import urllib.error

    calls: list[str] = []

    def flaky(req, timeout):  # type: ignore[no-untyped-def]
        calls.append(req.full_url)
        if req.full_url.endswith("/missing"):
            raise urllib.error.HTTPError(req.full_url, 404, "Not Found", {}, None)  # type: ignore[arg-type]
        if len(calls) < 3:
            raise urllib.error.URLError("Connection reset by peer")
        return io.BytesIO(b"ok")

    monkeypatch.setattr(pypi.Http, "_open", _REAL_OPEN)
    monkeypatch.setattr(pypi.urllib.request, "urlopen", flaky)
    monkeypatch.setattr(pypi.time, "sleep", lambda s: None)
    assert pypi.Http().get("https://pypi.org/x") == b"ok" and len(calls) == 3
    calls.clear()
    with pytest.raises(pypi.PyPIError, match="HTTP 404"):
        pypi.Http().get("https://pypi.org/missing")
    assert len(calls) == 1
    calls.clear()
    monkeypatch.setattr(pypi.urllib.request, "urlopen", lambda req, timeout: (_ for _ in ()).throw(
        urllib.error.URLError("Network is unreachable")))
    with pytest.raises(pypi.PyPIError, match="no answer"):
        pypi.Http(tries=2).get("https://pypi.org/y")


def test_an_answer_cut_off_mid_body_is_asked_for_again(monkeypatch) -> None:
    # the first full refresh of the broader table died on http.client.IncompleteRead (97957 of 1227064 bytes)
    import http.client
    import io

    calls: list[str] = []

    class Cut(io.BytesIO):
        status = 206
        headers = {"Content-Range": "bytes 0-3/10"}

        def read(self, *a):  # type: ignore[no-untyped-def, override]
            if len(calls) < 2:
                raise http.client.IncompleteRead(b"ab", 2)
            return b"abcd"

    def opener(req, timeout):  # type: ignore[no-untyped-def]
        calls.append(req.full_url)
        return Cut()

    monkeypatch.setattr(pypi.Http, "_open", _REAL_OPEN)
    monkeypatch.setattr(pypi.urllib.request, "urlopen", opener)
    monkeypatch.setattr(pypi.time, "sleep", lambda s: None)
    assert pypi.Http().get_range("https://files.pythonhosted.org/x.whl", 0, 3) == (b"abcd", 10) and len(calls) == 2
    calls.clear()
    with pytest.raises(pypi.PyPIError, match="answer cut off"):
        pypi.Http(tries=1).get("https://pypi.org/pypi/x/json")


# The stacks whose newest releases' runtime requirements the table tracks (pypi.py, DEPENDENCIES' criterion).
_DECLARING = ("verl", "vllm", "vllm-ascend", "transformers", "ray", "megatron-core")


def test_the_shipped_table_holds_every_tracked_project_and_what_the_stacks_newest_releases_require() -> None:
    # the criterion written in pypi.py, on the shipped table: a refresh that finds a new runtime requirement of
    # one of these stacks' newest releases fails here until the project is tracked (or left out in writing)
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from doctor.knowledge.requirements import load_requirements

    t = load_requirements()
    assert set(t.index) == {pypi.normalize(p) for p in pypi.PROJECTS}
    assert len(set(pypi.PROJECTS)) == len(pypi.PROJECTS)
    required = set()
    for name in _DECLARING:
        newest = t.newest(name)
        assert newest is not None, name
        for line in t.projects[name][newest].requires_dist:
            r = Requirement(line)
            if r.marker is None or "extra" not in str(r.marker):
                required.add(str(canonicalize_name(r.name)))
    assert sorted(required - set(t.index)) == []
    # the frameworks beside verl on Ascend: each has releases in the size policy's period
    assert all(t.newest(p) is not None for p in pypi.FRAMEWORKS)
