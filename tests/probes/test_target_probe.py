"""The in-target probe's distribution list: what importlib.metadata finds along sys.path, first copy wins and
later copies are recorded as shadowed, with PEP 610 facts; the same script serves `doctor install` (`--dists-only
--files`), so check and install read one list."""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from doctor.probes.pyenv import SCRIPT
from tests.fakes import make_site_packages, write


@pytest.fixture(scope="module")
def probe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_doctor_target_probe_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture()
def sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two site dirs and the cwd, with the odd shapes importlib.metadata accepts."""
    a, b, cwd = tmp_path / "a", tmp_path / "b", tmp_path / "cwd"
    make_site_packages(a, {"torch": "2.5.1", "Torch-NPU": "2.5.1.post1", "vllm_ascend": "0.11.0rc1"},
                       direct_url={"vllm_ascend": {"url": "file:///src/vllm-ascend", "dir_info": {"editable": True}}})
    make_site_packages(b, {"torch": "2.1.0", "numpy": "1.26.4"}, installer="uv")  # torch here is shadowed
    # a setuptools egg-info directory (PKG-INFO, no METADATA) and an old egg-info *file*
    write(a / "megatron_core-0.12.1-py3.11.egg-info" / "PKG-INFO", "Metadata-Version: 2.1\nName: megatron-core\nVersion: 0.12.1\n")
    write(a / "oldpkg-1.0-py3.11.egg-info", "Metadata-Version: 1.0\nName: oldpkg\nVersion: 1.0\n")
    # a METADATA whose header has no Name: only the real parser may decide what it is
    write(a / "noname-1.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nVersion: 1.0\n\nbody\n")
    # a wheel with a long description after the header
    write(b / "big-3.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: big\nVersion: 3.0\n\n" + "x" * 300_000)
    make_site_packages(cwd, {"verl": "0.7.1.dev0"})
    monkeypatch.chdir(cwd)
    return ["", str(a), str(b), str(tmp_path / "missing")]


def _doc(probe: ModuleType, monkeypatch: pytest.MonkeyPatch, path: list[str], **kw: Any) -> list[dict[str, Any]]:
    monkeypatch.setattr(sys, "path", list(path))
    probe._ERRORS[:] = []
    try:
        return probe.distributions(**kw)
    finally:
        monkeypatch.undo()


def test_distributions_in_path_order_with_shadowed_copies(probe: ModuleType, sites: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = os.getcwd()
    doc = _doc(probe, monkeypatch, sites)
    by_name = {d["name"]: d for d in doc}
    assert by_name["torch"]["version"] == "2.5.1" and by_name["torch"]["shadowed"][0]["version"] == "2.1.0"
    assert by_name["vllm_ascend"]["editable"] is True and by_name["vllm_ascend"]["url"] == "file:///src/vllm-ascend"
    assert by_name["numpy"]["installer"] == "uv"
    assert by_name["megatron-core"]["version"] == "0.12.1" and by_name["oldpkg"]["version"] == "1.0"
    assert by_name["big"]["version"] == "3.0" and by_name["verl"]["location"] == cwd
    assert "noname" not in str(doc)  # no Name: skipped, and the reason recorded
    assert any("without a Name" in e for e in probe._ERRORS)
    # every distribution importlib.metadata finds (less the nameless one) is listed once
    names = {probe._normalize(d.metadata["Name"]) for d in importlib.metadata.distributions(path=[p or cwd for p in sites])
             if d.metadata["Name"]}
    assert {probe._normalize(d["name"]) for d in doc} == names


def test_files_mode_lists_record_paths(probe: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = {d["name"].lower(): d for d in _doc(probe, monkeypatch, list(sys.path), with_files=True)}
    click = doc["click"]
    assert click["dist_info"].endswith(".dist-info") and "click/__init__.py" in click["files"]


def test_installer_and_check_read_the_same_installed_set() -> None:
    """`doctor install`'s TargetEnv and `doctor check`'s snapshot come from the one probe: same names, versions."""
    from doctor.installers.target import probe as install_probe
    from doctor.probes import collect_snapshot

    env = install_probe(sys.executable)
    snap = collect_snapshot(python=sys.executable)
    assert {k: v for k, v in env.versions().items()} == {k: p.version for k, p in snap.packages.items()}
    assert env.arch == os.uname().machine and env.purelib and env.glibc


def test_probe_imports_only_what_it_needs(tmp_path: Path) -> None:
    """The probe's start-up is most of a live check's critical path: subprocess (only for git checkouts) and
    platform stay out, nothing it probes is imported, and no METADATA goes through the email parser (it fed
    every long description through line by line: most of the probe's time on a stack's ~300 dists)."""
    import subprocess

    site = make_site_packages(tmp_path / "site", {"verl": "0.9.1"}, requires={"verl": ["numpy>=2"]})
    code = (f"import runpy, sys; sys.path.insert(0, {str(site)!r}); runpy.run_path({str(SCRIPT)!r}, run_name='__main__'); "
            "sys.stderr.write(' '.join(sorted(m for m in sys.modules if m in "
            "('subprocess', 'platform', 'torch', 'numpy', 'email.feedparser'))))")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONNOUSERSITE": "1"}
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env,
                         cwd=str(tmp_path), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == ""
    assert "@@DOCTOR-TARGET-PROBE-BEGIN@@" in out.stdout and '"requires_dist": ["numpy>=2"]' in out.stdout


def test_loading_the_probe_as_a_module_leaves_the_loaders_collector_on() -> None:
    """Run as `__main__` (one short process) the probe switches the cyclic collector off and freezes the heap before it
    exits; loaded as a module (these tests, a tool that reads its functions) it must not change the process that
    loaded it."""
    import gc

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    spec = importlib.util.spec_from_file_location("_doctor_target_probe_gc_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def test_declared_fields_are_what_importlib_metadata_reads(probe: ModuleType, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe reads only METADATA's header block: Name, Version, Requires-Python and every Requires-Dist come
    out as `dist.metadata` gives them, for this interpreter's real distributions and for odd headers (folded
    lines, other case, a body that looks like headers, CRLF, PKG-INFO only)."""
    site = tmp_path / "s"
    write(site / "folded-1.0.dist-info" / "METADATA",
          "Metadata-Version: 2.1\nname: folded\nVersion: 1.0\nDescription: one\n        |two\n"
          "REQUIRES-DIST: numpy>=1.26; python_version >= \"3.9\"\nRequires-Dist:   torch==2.1.0\n\n"
          "Requires-Dist: not-a-header\n")
    write(site / "crlf-2.0.dist-info" / "METADATA",
          "Metadata-Version: 2.1\r\nName: crlf\r\nVersion: 2.0\r\nRequires-Python: >=3.8\r\n\r\nRequires-Dist: x\r\n")
    write(site / "egg-3.0-py3.11.egg-info" / "PKG-INFO", "Metadata-Version: 2.1\nName: egg\nVersion: 3.0\n")
    path = [str(site), *sys.path]
    doc = {d["name"]: d for d in _doc(probe, monkeypatch, path)}
    seen = 0
    for dist in importlib.metadata.distributions(path=path):
        m = dist.metadata
        name = m["Name"]
        if not name or name not in doc or doc[name]["dist_info"] != str(getattr(dist, "_path", "")):
            continue
        seen += 1
        d = doc[name]
        assert d["version"] == m["Version"], name
        assert d["requires_python"] == m.get("Requires-Python"), name
        if d["dist_info"].endswith(".dist-info"):
            assert d["requires_dist"] == (m.get_all("Requires-Dist") or []), name
    assert seen > 20
    assert doc["folded"]["requires_dist"] == ['numpy>=1.26; python_version >= "3.9"', "torch==2.1.0"]
    assert doc["crlf"]["requires_python"] == ">=3.8" and doc["crlf"]["requires_dist"] == []


def test_a_dist_info_file_reads_as_importlib_metadata_reads_it(probe: ModuleType, tmp_path: Path) -> None:
    """The probe opens dist-info files itself (not through pathlib): what it reads is what `dist.read_text` gives,
    newlines as text mode reads them (CRLF and a lone CR as LF), and nothing for a missing or non-UTF-8 file."""
    info = tmp_path / "s" / "nl-1.0.dist-info"
    write(info / "METADATA", "Metadata-Version: 2.1\nName: nl\nVersion: 1.0\n")
    (info / "RECORD").write_bytes(b"nl/__init__.py,sha256=x,1\r\nnl/a.py,,\rnl-1.0.dist-info/RECORD,,\n")
    (info / "INSTALLER").write_bytes(b"pip\xff\n")
    (dist,) = importlib.metadata.distributions(path=[str(tmp_path / "s")])
    assert probe._read_dist_text(dist, "RECORD") == dist.read_text("RECORD") == \
        "nl/__init__.py,sha256=x,1\nnl/a.py,,\nnl-1.0.dist-info/RECORD,,\n"
    assert probe._read_dist_text(dist, "METADATA") == dist.read_text("METADATA")
    with pytest.raises(UnicodeDecodeError):
        dist.read_text("INSTALLER")
    assert probe._read_dist_text(dist, "INSTALLER") is None
    assert probe._read_dist_text(dist, "direct_url.json") is None is dist.read_text("direct_url.json")


# -- the C++ runtime (python.libstdcxx) ---------------------------------------------------------------------------


def _probe_libstdcxx(tmp_path: Path, **env: str) -> dict[str, Any]:
    """The probe's libstdcxx fact, from a real run in this interpreter (a child, as `doctor check` runs it)."""
    from doctor.probes.pyenv import run_target_probe

    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONNOUSERSITE": "1", **env}
    doc, err, _ = run_target_probe(sys.executable, environ=environ, cwd=str(tmp_path))
    assert err is None and doc is not None, err
    assert "libstdcxx" in doc["python"], doc["errors"]
    return doc["python"]["libstdcxx"]


def _loaded_by_a_child(**env: str) -> str:
    """The libstdc++ file a child of this interpreter maps after ctypes.CDLL('libstdc++.so.6') (/proc/self/maps)."""
    import subprocess

    code = ("import ctypes; ctypes.CDLL('libstdc++.so.6'); "
            "print(next(l.split()[-1] for l in open('/proc/self/maps') if '/libstdc++.so' in l))")
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=environ, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _newest_by_scanning(path: str) -> tuple[str, str]:
    """A second reading of the newest GLIBCXX / CXXABI a library defines: every NUL-delimited version string in the
    whole file (the probe reads only the ELF version definitions)."""
    import re

    data = Path(path).read_bytes()
    best: dict[bytes, tuple[int, ...]] = {}
    for base, v in re.findall(rb"(?<=\0)(GLIBCXX|CXXABI)_(\d+(?:\.\d+)+)(?=\0)", data):
        best[base] = max(best.get(base, ()), tuple(int(x) for x in v.split(b".")))
    return ".".join(map(str, best[b"GLIBCXX"])), ".".join(map(str, best[b"CXXABI"]))


def _ldconfig_libstdcxx() -> str | None:
    """What `ldconfig -p` (glibc's own reader of /etc/ld.so.cache) lists first for libstdc++.so.6 on this machine."""
    import shutil
    import subprocess

    exe = shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    if exe is None:
        return None
    machine = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(os.uname().machine)
    for line in subprocess.run([exe, "-p"], capture_output=True, text=True, timeout=30).stdout.splitlines():
        name, _, rest = line.strip().partition(" (")
        if name == "libstdc++.so.6" and (machine is None or machine in rest.split(")")[0]):
            return rest.rsplit("=> ", 1)[-1].strip()
    return None


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc (Linux)")
def test_libstdcxx_is_the_file_the_loader_maps_with_the_versions_it_defines(tmp_path: Path) -> None:
    """On this machine's real libstdc++: the probe's path is what a child's loader maps for ctypes.CDLL, its GLIBCXX /
    CXXABI maxima are what a scan of the whole file finds, and `system` is what glibc's ldconfig lists."""
    got = _probe_libstdcxx(tmp_path)
    loaded = _loaded_by_a_child()
    assert got["path"] == loaded
    assert (got["glibcxx"], got["cxxabi"]) == _newest_by_scanning(loaded)
    listed = _ldconfig_libstdcxx()
    if listed is None:
        pytest.skip("no ldconfig to compare the cache reading with")
    assert got["system"]["path"] == os.path.realpath(listed)
    assert (got["system"]["glibcxx"], got["system"]["cxxabi"]) == _newest_by_scanning(listed)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc (Linux)")
def test_libstdcxx_follows_ld_library_path_as_the_loader_does(tmp_path: Path) -> None:
    """A copy of the host's libstdc++ in a directory on LD_LIBRARY_PATH (what conda's lib/ is to its interpreter):
    the probe reports the copy, which the loader really maps, and the host's own as `system`."""
    import shutil

    host = _loaded_by_a_child()
    lib = tmp_path / "envlib"
    lib.mkdir()
    shutil.copy(host, lib / "libstdc++.so.6")
    got = _probe_libstdcxx(tmp_path, LD_LIBRARY_PATH=str(lib))
    assert got["path"] == str(lib / "libstdc++.so.6") == _loaded_by_a_child(LD_LIBRARY_PATH=str(lib))
    assert got["system"]["path"] == os.path.realpath(host) and got["system"]["glibcxx"] == got["glibcxx"]


def test_libstdcxx_reader_on_files_that_are_not_a_cxx_runtime(probe: ModuleType, tmp_path: Path) -> None:
    """Not an ELF file, an ELF without version definitions (this interpreter, usually), a missing file: no versions,
    and only the unreadable ones leave an error; the cache reader needs a machine to match."""
    probe._ERRORS[:] = []
    text = tmp_path / "libstdc++.so.6"
    text.write_text("not a library")
    assert probe._elf_versions(str(text)) == {"glibcxx": None, "cxxabi": None}
    assert probe._elf_versions(str(tmp_path / "missing")) == {"glibcxx": None, "cxxabi": None}
    assert len(probe._ERRORS) == 2 and "not an ELF file" in probe._ERRORS[0]
    exe = probe._elf_versions(os.path.realpath(sys.executable))
    assert exe["glibcxx"] is None and exe["machine"][0] in (1, 2)
    assert probe._cache_libstdcxx(None) is None


def test_the_installer_mode_skips_the_cxx_runtime(probe: ModuleType) -> None:
    """`--dists-only` (doctor install) needs only the installed set: no dlopen, no libstdcxx key."""
    assert "libstdcxx" not in probe.python_facts(runtime=False)


def test_a_libstdcxx_the_loader_cannot_find_is_null_and_a_broken_one_unknown(probe: ModuleType,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """dlopen's "cannot open shared object file" is the fact (null: none to load, the torch import would fail the same
    way); any other failure leaves the fact out (unknown) with the loader's message in the probe's errors."""
    import types

    def fake(msg: str) -> Any:
        def dlopen(name: str, mode: int) -> None:
            raise OSError(msg)
        return lambda name: types.SimpleNamespace(dlopen=dlopen)

    probe._ERRORS[:] = []
    monkeypatch.setattr(probe, "_stdlib", fake("libstdc++.so.6: cannot open shared object file: No such file or directory"))
    assert probe.libstdcxx() is None and probe._ERRORS == []
    monkeypatch.setattr(probe, "_stdlib", fake("/x/libstdc++.so.6: file too short"))
    assert probe.libstdcxx() is probe._NOT_READ and "file too short" in probe._ERRORS[0]


def _digest(data: bytes) -> str:
    import base64
    import hashlib

    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _installed(site: Path, name: str, files: dict[str, bytes], top: str) -> None:
    """A distribution as pip leaves it: its files, METADATA, top_level.txt and a RECORD with their digests."""
    di = site / f"{name}-1.0.dist-info"
    rows = [f"{p},{_digest(data)},{len(data)}" for p, data in files.items()]
    write(di / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    write(di / "top_level.txt", top + "\n")
    write(di / "RECORD", "\n".join(rows + [f"{name}-1.0.dist-info/RECORD,,", f"{top}/__pycache__/x.cpython-311.pyc,,"]) + "\n")


def test_shared_files_are_the_paths_two_records_list_with_the_digest_of_the_copy_on_disk(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _installed(site, "jwt", {"jwt/__init__.py": b"old\n", "jwt/same.py": b"same\n", "jwt/only_old.py": b"x\n"}, "jwt")
    _installed(site, "PyJWT", {"jwt/__init__.py": b"new\n", "jwt/same.py": b"same\n"}, "jwt")
    write(site / "jwt" / "__init__.py", "new\n")  # PyJWT was installed last
    # a namespace package: the same top-level name, no file in common
    _installed(site, "nvidia-a", {"nvidia/a/__init__.py": b"a\n"}, "nvidia")
    _installed(site, "nvidia-b", {"nvidia/b/__init__.py": b"b\n"}, "nvidia")
    # a pkgutil namespace: both ship the same empty __init__.py, nothing is overwritten
    _installed(site, "ns-a", {"ns/__init__.py": b"", "ns/a.py": b"a\n"}, "ns")
    _installed(site, "ns-b", {"ns/__init__.py": b"", "ns/b.py": b"b\n"}, "ns")
    monkeypatch.setattr(sys, "path", [str(site)])
    probe._ERRORS[:] = []
    got = probe.shared_files(probe._distributions())
    assert probe._ERRORS == []
    (item,) = got
    assert sorted(item["dists"]) == ["PyJWT", "jwt"] and item["top_level"] == "jwt" and item["location"] == str(site)
    assert (item["files"], item["differ"], item["examples"], item["on_disk"]) == (2, 1, ["jwt/__init__.py"], "PyJWT")
    write(site / "jwt" / "__init__.py", "edited by hand\n")
    assert probe.shared_files(probe._distributions())[0]["on_disk"] is None
    # doctor install's --dists-only mode does not read them
    assert "shared_files" not in probe.collect(modules=[])["python"]


def test_an_overwrite_is_found_when_one_of_the_two_has_another_copy_earlier_on_sys_path(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jwt and PyJWT both in the venv's site-packages, and another PyJWT earlier on sys.path (PYTHONPATH, a
    `pip install --target` directory, the user site): the venv's PyJWT is a shadowed copy, and its overwrite of
    jwt's files is still there (a plain venv with the real wheels and PYTHONPATH=<target> reported nothing)."""
    first, site = tmp_path / "target", tmp_path / "site"
    _installed(first, "PyJWT", {"jwt/__init__.py": b"other\n"}, "jwt")
    _installed(site, "jwt", {"jwt/__init__.py": b"old\n"}, "jwt")
    _installed(site, "PyJWT", {"jwt/__init__.py": b"new\n"}, "jwt")
    write(site / "jwt" / "__init__.py", "new\n")
    write(first / "jwt" / "__init__.py", "other\n")
    monkeypatch.setattr(sys, "path", [str(first), str(site), *sys.path])
    got = probe.collect()
    (item,) = [x for x in got["python"]["shared_files"] if x["location"] in (str(first), str(site))]
    assert sorted(item["dists"]) == ["PyJWT", "jwt"] and item["location"] == str(site)
    assert (item["files"], item["differ"], item["on_disk"]) == (1, 1, "PyJWT")
    # the shadowed copy stays a `shadowed` note of the first, not a distribution of its own
    ours = [d for d in got["distributions"] if d["location"] in (str(first), str(site))]
    assert [(d["name"], d["location"]) for d in ours] == [("PyJWT", str(first)), ("jwt", str(site))]
    assert ours[0]["shadowed"] == [{"version": "1.0", "location": str(site)}]


def test_the_same_path_recorded_with_two_hash_algorithms_is_compared_through_the_file_on_disk(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A RECORD may use any hashlib algorithm (sha384 from another installer than pip): two RECORDs naming the same
    path under different algorithms cannot be compared digest to digest, so the file on disk is hashed with each;
    a copy that matches one RECORD and not the other was overwritten, one that matches both was not."""
    import base64
    import hashlib

    def d(alg: str, data: bytes) -> str:
        return alg + "=" + base64.urlsafe_b64encode(hashlib.new(alg, data).digest()).rstrip(b"=").decode()

    site = tmp_path / "site"
    for name, alg, data in (("alpha-one", "sha256", b"one\n"), ("alpha-two", "sha384", b"two\n")):
        di = site / f"{name}-1.0.dist-info"
        write(di / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        write(di / "top_level.txt", "clash\n")
        write(di / "RECORD", f"clash/__init__.py,{d(alg, data)},4\nclash/same.py,{d(alg, b'same')},4\n")
    write(site / "clash" / "__init__.py", "two\n")
    write(site / "clash" / "same.py", "same")
    monkeypatch.setattr(sys, "path", [str(site)])
    probe._ERRORS[:] = []
    (item,) = probe.shared_files(probe._distributions())
    assert probe._ERRORS == []
    assert (item["files"], item["differ"], item["examples"], item["on_disk"]) == (2, 1, ["clash/__init__.py"], "alpha-two")


def test_whose_copy_is_on_disk_is_read_from_the_smallest_differing_file(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """opencv-python and opencv-python-headless differ in cv2/cv2.abi3.so (~70 MB; hashing it doubled the probe's
    time, 65 -> 136 ms) and in cv2/version.py: the digest recomputed is the small file's."""
    site = tmp_path / "site"
    big, small = b"x" * 100_000, b"v1\n"
    _installed(site, "opencv-python", {"cv2/cv2.abi3.so": big, "cv2/version.py": small}, "cv2")
    _installed(site, "opencv-python-headless", {"cv2/cv2.abi3.so": b"y" * 90_000, "cv2/version.py": b"v2\n"}, "cv2")
    write(site / "cv2" / "cv2.abi3.so", big.decode())
    write(site / "cv2" / "version.py", small.decode())
    monkeypatch.setattr(sys, "path", [str(site)])
    read = []
    real = probe._file_hash
    monkeypatch.setattr(probe, "_file_hash", lambda path, algorithm: read.append(path) or real(path, algorithm))
    (item,) = probe.shared_files(probe._distributions())
    assert (item["differ"], item["examples"], item["on_disk"]) == (2, ["cv2/cv2.abi3.so", "cv2/version.py"], "opencv-python")
    assert read == [str(site / "cv2" / "version.py")]


def test_two_copies_of_one_project_in_one_directory_are_not_a_pair(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stale PyJWT-1.0.dist-info left next to the current PyJWT's (an interrupted upgrade) lists the old digests
    of the same files: one project, not two distributions overwriting each other's files."""
    site = tmp_path / "site"
    _installed(site, "PyJWT", {"jwt/__init__.py": b"new\n"}, "jwt")
    stale = site / "PyJWT-0.9.dist-info"
    write(stale / "METADATA", "Metadata-Version: 2.1\nName: pyjwt\nVersion: 0.9\n")
    write(stale / "top_level.txt", "jwt\n")
    write(stale / "RECORD", f"jwt/__init__.py,{_digest(b'old')},4\n")
    write(site / "jwt" / "__init__.py", "new\n")
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    got = probe.collect()
    assert [x for x in got["python"]["shared_files"] if x["location"] == str(site)] == []


def test_one_directory_on_sys_path_twice_through_a_symlink_is_one_directory(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv's lib64 -> lib symlink with both on sys.path (Fedora-style site, or PYTHONPATH naming lib64): every
    distribution is found twice, the second time as a shadowed copy; the clash is one item, at the first path."""
    site = tmp_path / "lib" / "site-packages"
    _installed(site, "jwt", {"jwt/__init__.py": b"old\n"}, "jwt")
    _installed(site, "PyJWT", {"jwt/__init__.py": b"new\n"}, "jwt")
    write(site / "jwt" / "__init__.py", "new\n")
    (tmp_path / "lib64").symlink_to(tmp_path / "lib")
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "lib64" / "site-packages"), *sys.path])
    got = [x for x in probe.collect()["python"]["shared_files"] if str(tmp_path) in x["location"]]
    assert [(sorted(x["dists"]), x["location"], x["on_disk"]) for x in got] == [(["PyJWT", "jwt"], str(site), "PyJWT")]


def _on_disk(site: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        write(site / rel, data)


def test_missing_files_are_what_an_uninstall_of_the_other_owner_left_and_nothing_else(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyJWT whose jwt/__init__.py another distribution's uninstall deleted, opencv-python-headless whose whole cv2/
    is gone: each is listed with how many of its RECORD's files under that name are gone, the __init__.py first.
    Not listed: a healthy package, a module file (`six.py`) and an extension module at the top level, a namespace
    portion (its RECORD lists no nvidia/__init__.py), a top_level.txt name its RECORD does not list (xxhash's
    `_xxhash` lives inside the package), and an editable install whose code is elsewhere."""
    site = tmp_path / "site"
    pyjwt = {"jwt/__init__.py": b"x\n", "jwt/api_jwt.py": b"a\n", "jwt/exceptions.py": b"e\n"}
    _installed(site, "PyJWT", pyjwt, "jwt")
    _on_disk(site, {"jwt/api_jwt.py": b"a\n"})
    _installed(site, "opencv-python-headless", {"cv2/__init__.py": b"c\n", "cv2/version.py": b"v\n"}, "cv2")
    healthy = {"six.py": b"s\n", "_cffi_backend.abi3.so": b"so", "nvidia/nccl/__init__.py": b"",
               "xxhash/__init__.py": b"", "xxhash/_xxhash.abi3.so": b"so"}
    _installed(site, "six", {"six.py": b"s\n"}, "six")
    _installed(site, "cffi", {"_cffi_backend.abi3.so": b"so"}, "_cffi_backend")
    _installed(site, "nvidia-nccl", {"nvidia/nccl/__init__.py": b""}, "nvidia")
    _installed(site, "xxhash", {"xxhash/__init__.py": b"", "xxhash/_xxhash.abi3.so": b"so"}, "xxhash")
    write(site / "xxhash-1.0.dist-info" / "top_level.txt", "_xxhash\nxxhash\n")
    _on_disk(site, healthy)
    _installed(site, "edited", {"edited/__init__.py": b""}, "edited")
    write(site / "edited-1.0.dist-info" / "direct_url.json", '{"url": "file:///src", "dir_info": {"editable": true}}')
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    monkeypatch.setattr(importlib.machinery, "EXTENSION_SUFFIXES", [".abi3.so", ".so"])
    probe._ERRORS[:] = []
    got = probe.collect()["python"]["missing_files"]
    assert [e for e in probe._ERRORS if str(site) in e] == []
    assert got == [
        {"dist": "PyJWT", "version": "1.0", "top_level": "jwt", "location": str(site), "files": 3, "missing": 2,
         "examples": ["jwt/__init__.py", "jwt/exceptions.py"]},
        {"dist": "opencv-python-headless", "version": "1.0", "top_level": "cv2", "location": str(site), "files": 2,
         "missing": 2, "examples": ["cv2/__init__.py", "cv2/version.py"]},
    ]
    _on_disk(site, {**pyjwt, "cv2/__init__.py": b"c\n", "cv2/version.py": b"v\n"})
    assert probe.collect()["python"]["missing_files"] == []
    assert "missing_files" not in probe.collect(modules=[])["python"]  # doctor install's --dists-only


def test_missing_files_counts_no_source_a_sourceless_pyc_stands_for(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deployment that ships bytecode only (`compileall -b`, then the .py files deleted: `import jwt` loads
    jwt/__init__.pyc) is not a package whose files are gone; a package or module with neither source nor bytecode
    still is."""
    import py_compile

    site = tmp_path / "site"
    _installed(site, "PyJWT", {"jwt/__init__.py": b"x = 1\n", "jwt/api_jwt.py": b"a = 1\n"}, "jwt")
    _installed(site, "six", {"six.py": b"s = 1\n"}, "six")
    _installed(site, "gone", {"gone/__init__.py": b"g = 1\n", "gone/mod.py": b"m = 1\n"}, "gone")
    for rel in ("jwt/__init__.py", "jwt/api_jwt.py", "six.py"):
        write(site / rel, "v = 1\n")
        py_compile.compile(str(site / rel), cfile=str(site / rel) + "c")
        (site / rel).unlink()
    _on_disk(site, {"gone/mod.py": b"m = 1\n"})
    py_compile.compile(str(site / "gone" / "mod.py"), cfile=str(site / "gone" / "mod.pyc"))
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    got = [x for x in probe.collect()["python"]["missing_files"] if x["location"] == str(site)]
    assert [(x["dist"], x["missing"], x["examples"]) for x in got] == [("gone", 1, ["gone/__init__.py"])]


def test_missing_files_say_which_other_copy_the_import_finds(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real: a --system-site-packages venv whose PyJWT 2.10.1 lost jwt/__init__.py (pip uninstall jwt) imports the
    system's PyJWT 2.6.0 (/usr/lib/python3/dist-packages/jwt/__init__.py), not an empty namespace: the item says
    where `import jwt` goes (`imports_from`), and says nothing when the import finds no other regular package (names
    no test environment has)."""
    site, system = tmp_path / "site", tmp_path / "system"
    _installed(site, "PyJWT", {"xjwt/__init__.py": b"x = 1\n", "xjwt/api_jwt.py": b"a = 1\n"}, "xjwt")
    _on_disk(site, {"xjwt/api_jwt.py": b"a = 1\n"})
    _installed(site, "opencv-python-headless", {"xcv2/__init__.py": b"c = 1\n"}, "xcv2")
    _on_disk(system, {"xjwt/__init__.py": b"old = 1\n"})
    monkeypatch.setattr(sys, "path", [str(site), *sys.path, str(system)])
    got = {x["dist"]: x for x in probe.collect()["python"]["missing_files"] if x["location"] == str(site)}
    assert got["PyJWT"]["imports_from"] == str(system / "xjwt" / "__init__.py")
    assert "imports_from" not in got["opencv-python-headless"]


def test_record_paths_written_absolute_or_with_a_dot_prefix_are_the_same_paths(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip and uv write RECORD paths relative to the site directory; older setuptools / distutils and some conda
    builds write `./jwt/__init__.py` or the absolute path. The same file is the same path: the overwrite is found,
    and a file gone is counted under its relative name. An absolute path in another directory is not this one's."""
    site = tmp_path / "site"
    _installed(site, "jwt", {"./jwt/__init__.py": b"old\n", "./jwt/jws.py": b"j\n"}, "jwt")
    _installed(site, "PyJWT", {f"{site}/jwt/__init__.py": b"new\n", f"{site}/jwt/api_jwt.py": b"a\n",
                               "/elsewhere/jwt/x.py": b"x\n"}, "jwt")
    _on_disk(site, {"jwt/__init__.py": b"new\n", "jwt/jws.py": b"j\n", "jwt/api_jwt.py": b"a\n"})
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    got = probe.collect()["python"]
    (item,) = [x for x in got["shared_files"] if x["location"] == str(site)]
    assert (item["files"], item["differ"], item["examples"], item["on_disk"]) == (1, 1, ["jwt/__init__.py"], "PyJWT")
    assert [x for x in got["missing_files"] if x["location"] == str(site)] == []
    (site / "jwt" / "__init__.py").unlink()  # `pip uninstall jwt` deleted it
    (gone,) = [x for x in probe.collect()["python"]["missing_files"] if x["dist"] == "PyJWT"]
    assert (gone["files"], gone["missing"], gone["examples"]) == (2, 1, ["jwt/__init__.py"])


def _egg_info(site: Path, name: str, files: dict[str, bytes], top: str) -> None:
    """What `setup.py install` (pip's legacy path, `--no-use-pep517`) leaves: <name>-1.0-py3.11.egg-info with
    PKG-INFO, top_level.txt and installed-files.txt (paths relative to the egg-info directory, no digests)."""
    ei = site / f"{name}-1.0-py3.11.egg-info"
    write(ei / "PKG-INFO", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    write(ei / "top_level.txt", top + "\n")
    lines = [f"../{p}" for p in files] + [f"../{top}/__pycache__/__init__.cpython-311.pyc", "PKG-INFO", "./"]
    write(ei / "installed-files.txt", "\n".join(lines) + "\n")
    _on_disk(site, files)


def test_an_egg_info_install_is_compared_by_the_file_on_disk_against_the_wheels_digest(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An egg-info install records no digests: its shared file is compared through the file on disk. Not the
    wheel's digest: overwritten (whose copy it is cannot be recognised, so on_disk is null). The wheel's content:
    nothing to report (the same content cannot be told from a copy never overwritten). Its files, when gone, are
    counted from installed-files.txt."""
    site = tmp_path / "site"
    _installed(site, "alpha-one", {"clash/__init__.py": b"one\n", "clash/one.py": b"1\n"}, "clash")
    _egg_info(site, "alpha-egg", {"clash/__init__.py": b"egg\n", "clash/egg.py": b"e\n"}, "clash")
    write(site / "clash" / "one.py", "1\n")
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    (item,) = [x for x in probe.collect()["python"]["shared_files"] if x["location"] == str(site)]
    assert sorted(item["dists"]) == ["alpha-egg", "alpha-one"]
    assert (item["files"], item["differ"], item["examples"], item["on_disk"]) == (1, 1, ["clash/__init__.py"], None)
    write(site / "clash" / "__init__.py", "one\n")  # the wheel installed last
    got = probe.collect()["python"]
    assert [x for x in got["shared_files"] if x["location"] == str(site)] == []
    assert [x for x in got["missing_files"] if x["location"] == str(site)] == []
    (site / "clash" / "__init__.py").unlink()  # `pip uninstall alpha-one` deleted it
    gone = sorted((x["dist"], x["files"], x["missing"]) for x in probe.collect()["python"]["missing_files"]
                  if x["location"] == str(site))
    assert gone == [("alpha-egg", 2, 1), ("alpha-one", 2, 1)]


def test_a_source_tree_in_the_cwd_names_its_metadata_by_an_absolute_path(tmp_path: Path) -> None:
    """Seen on a real target: `doctor check` run from a verl checkout that keeps verl.egg-info (an earlier
    `pip install -e .`) read that egg-info through sys.path's '' entry, and the finding said "Declared in
    verl.egg-info/PKG-INFO": a path that means nothing in a snapshot read on another machine or from another
    directory. The distribution's location was already absolute; its metadata file is too."""
    from doctor.probes.pyenv import run_target_probe

    write(tmp_path / "verl.egg-info" / "PKG-INFO",
          "Metadata-Version: 2.1\nName: verl\nVersion: 0.8.0.dev0\nRequires-Python: >=3.10\n")
    write(tmp_path / "verl.egg-info" / "requires.txt", "numpy<2.0.0\n")
    write(tmp_path / "verl" / "__init__.py", "")
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONNOUSERSITE": "1"}
    doc, err, _ = run_target_probe(sys.executable, environ=environ, cwd=str(tmp_path))
    assert err is None and doc is not None, err
    (verl,) = [d for d in doc["distributions"] if d["name"] == "verl" and d["location"] == str(tmp_path)]
    assert verl["metadata"] == str(tmp_path / "verl.egg-info" / "PKG-INFO")
    assert verl["dist_info"] == str(tmp_path / "verl.egg-info") and verl["requires_dist"] == ["numpy<2.0.0"]


# -- what a fix command needs (snapshot rule 13) ----------------------------------------------------------------


def _facts(probe: ModuleType, dists: list[tuple[dict[str, Any], Any]]) -> dict[str, Any]:
    py: dict[str, Any] = {}
    probe.installer_facts(py, dists)
    return py


def test_pip_is_read_off_the_installed_set_and_ensurepip_is_asked_only_without_it(probe: ModuleType) -> None:
    assert _facts(probe, [({"name": "pip"}, None)])["pip"] is True
    assert "ensurepip" not in _facts(probe, [({"name": "pip"}, None)])
    without = _facts(probe, [({"name": "six"}, None)])
    assert without["pip"] is False and without["ensurepip"] is (importlib.util.find_spec("ensurepip") is not None)


def test_a_uv_venv_is_named_by_its_pyvenv_cfg_and_a_venv_is_never_externally_managed(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sysconfig

    write(tmp_path / "venv" / "pyvenv.cfg", "home = /usr/bin\nimplementation = CPython\nuv = 0.13.9\n")
    write(tmp_path / "stdlib" / "EXTERNALLY-MANAGED", "[externally-managed]\n")
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(tmp_path / "stdlib"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    got = _facts(probe, [])
    assert got["uv_venv"] == "0.13.9" and got["externally_managed"] is False  # PEP 668: a venv is the user's
    write(tmp_path / "venv" / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n")
    assert _facts(probe, [])["uv_venv"] is None  # `python -m venv`, virtualenv
    monkeypatch.setattr(sys, "prefix", "/usr")
    got = _facts(probe, [])
    assert got["externally_managed"] is True and got["uv_venv"] is None
    (tmp_path / "stdlib" / "EXTERNALLY-MANAGED").unlink()
    assert _facts(probe, [])["externally_managed"] is False


# -- verify_files: every installed file against its RECORD (check --deep, snapshot rule 14) --------------------


def _wheel(name: str) -> Path | None:
    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")  # nox -s tests downloads them next to the verl wheels
    hits = sorted((Path(d) / "wheels").glob(f"{name}-*.whl")) if d else []
    return hits[0] if hits else None


def _verify(py: Path, *names: str, budget: float = 60) -> dict[str, Any]:
    import json
    import subprocess

    from doctor.probes.pyenv import extract_document

    r = subprocess.run([str(py), "-B", SCRIPT, "--verify-files", str(budget), *names], capture_output=True,
                       text=True, timeout=300)
    doc, err = extract_document(r.stdout)
    assert doc is not None and not doc["errors"], (err, r.stderr, json.dumps(doc)[:500])
    return {d["dist"]: d for d in doc["verify_files"]["dists"]}


@pytest.mark.slow
def test_verify_files_on_real_wheels_in_a_plain_venv_finds_edits_truncations_and_deletions_and_nothing_else(
        tmp_path: Path) -> None:
    """einops 0.6.2rc0, PyJWT 2.10.1 then jwt 1.3.1 (both ship jwt/), installed by a `python3 -m venv` target's
    own pip: untouched, nothing differs, whatever the interpreter compiles; PyJWT's files jwt wrote over are named
    with jwt (the shared-files case, not an edit); then a hand edit, a same-size change, a truncation and a
    deletion are each found as such."""
    import shutil
    import subprocess

    wheels = [_wheel(n) for n in ("einops-0.6.2rc0", "PyJWT-2.10.1", "jwt-1.3.1")]
    if not all(wheels):
        pytest.skip("no einops / PyJWT / jwt wheels under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    for w in wheels:
        subprocess.run([str(py), "-m", "pip", "install", "--isolated", "--no-index", "--no-deps", "-q", str(w)],
                       check=True, timeout=600)
    site = Path(subprocess.run([str(py), "-c", "import einops, os; print(os.path.dirname(einops.__path__[0]))"],
                               capture_output=True, text=True, check=True, timeout=120).stdout.strip())
    got = _verify(py, "einops", "PyJWT", "jwt", "pip")
    assert set(got) == {"einops", "PyJWT", "jwt", "pip"}
    for name in ("einops", "jwt", "pip"):  # untouched (pip: 800 files, its console scripts outside the site dir)
        assert (got[name]["modified"], got[name]["missing"], got[name]["unverified"]) == (0, 0, 0), got[name]
    # the wheel's 23 files (RECORD itself has no digest) and what pip wrote with one: INSTALLER, REQUESTED,
    # direct_url.json
    assert got["einops"]["files"] == 26 and got["einops"]["bytes"] > 100_000
    assert got["pip"]["outside"] >= 3  # bin/pip, bin/pip3, bin/pip3.11: written by the installer, not compared
    pyjwt = got["PyJWT"]
    assert pyjwt["modified"] == pyjwt["shared"] >= 1 and pyjwt["binary"] == 0
    assert all(e["also"] == ["jwt"] for e in pyjwt["examples"]) and "jwt/__init__.py" in [e["path"] for e in pyjwt["examples"]]
    # what the interpreter and pip compile never counts
    subprocess.run([str(py), "-m", "compileall", "-q", str(site / "einops")], check=True, timeout=300)
    subprocess.run([str(py), "-c", "import einops, einops.packing"], check=True, timeout=120)
    (site / "einops" / "parsing.pyc").write_bytes(b"\0" * 16)
    assert _verify(py, "einops")["einops"]["modified"] == 0
    pkg = site / "einops"
    with open(pkg / "einops.py", "a") as fh:  # a hand edit, as a forum thread tells
        fh.write("\n# patched\n")
    data = bytearray((pkg / "parsing.py").read_bytes())
    data[100] ^= 0x20  # the same size, other content: only the digest tells
    (pkg / "parsing.py").write_bytes(bytes(data))
    (pkg / "packing.py").write_bytes((pkg / "packing.py").read_bytes()[:100])  # truncated
    (pkg / "layers" / "flax.py").unlink()
    shutil.rmtree(pkg / "__pycache__")
    e = _verify(py, "einops")["einops"]
    assert (e["modified"], e["missing"], e["shared"], e["binary"]) == (3, 1, 0, 0)
    assert e["missing_examples"] == ["einops/layers/flax.py"]
    by = {x["path"]: x for x in e["examples"]}
    assert by["einops/einops.py"] == {"path": "einops/einops.py", "size": 34853, "expected_size": 34842, "kind": "source"}
    assert by["einops/parsing.py"]["size"] == by["einops/parsing.py"]["expected_size"] == 6717
    assert (by["einops/packing.py"]["size"], by["einops/packing.py"]["expected_size"]) == (100, 7668)
    # bounded: with no time left nothing is hashed, and what was not compared is counted, not guessed (the two
    # files whose size differs need no read)
    late = _verify(py, "einops", budget=0)["einops"]
    assert (late["modified"], late["missing"], late["bytes"]) == (2, 1, 0)
    assert late["unverified"] == 26 - 3 and late["unverified_bytes"] > 0


def test_verify_files_leaves_out_what_it_cannot_or_must_not_compare(probe: ModuleType, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows without a digest, compiled files and files outside the site directory are not compared; an editable
    install and an egg-info install (no digests) are named as skipped, with why; a row in another algorithm is
    hashed with it; a name not asked for is not read."""
    site = tmp_path / "lib" / "site"
    body = b"x = 1\n"
    _installed(site, "mypkg", {"mypkg/__init__.py": body}, "mypkg")
    write(site / "mypkg" / "__init__.py", body)
    rec = site / "mypkg-1.0.dist-info" / "RECORD"
    import base64
    import hashlib

    sha512 = base64.urlsafe_b64encode(hashlib.sha512(b"y\n").digest()).rstrip(b"=").decode()
    write(site / "mypkg" / "other.py", "y\n")
    rec.write_text(rec.read_text() + f"mypkg/other.py,sha512={sha512},2\n../../bin/mytool,{_digest(b'#!x')},3\n"
                   f"mypkg/stale.pyc,{_digest(b'old')},3\n./mypkg/dot.py,{_digest(b'd')},1\n")
    write(site / "mypkg" / "stale.pyc", "new bytecode")
    write(site / "mypkg" / "dot.py", "e")  # `./` rows are the same path: compared, and edited
    make_site_packages(site, {"edit": "1.0"}, editable={"edit": tmp_path / "src"})
    write(site / "old-1.0-py3.11.egg-info" / "PKG-INFO", "Metadata-Version: 2.1\nName: old\nVersion: 1.0\n")
    write(site / "old-1.0-py3.11.egg-info" / "installed-files.txt", "../old/__init__.py\n")
    _installed(site, "other", {"other/__init__.py": b"z"}, "other")  # not asked for, not on disk: not read
    write(site / "mypkg-1.0.dist-info" / "INSTALLER", "pip\n")
    # conda and Debian rewrite installed files (prefix replacement, stripped .so): their RECORD is the build's
    _installed(site, "condapkg", {"condapkg/__init__.py": b"/opt/conda-bld/placehold"}, "condapkg")
    write(site / "condapkg-1.0.dist-info" / "INSTALLER", "conda\n")
    write(site / "condapkg" / "__init__.py", "/home/u/miniconda3/envs/verl")
    _installed(site, "debpkg", {"debpkg/_x.so": b"unstripped"}, "debpkg")
    write(site / "debpkg" / "_x.so", "stripped")
    monkeypatch.setattr(sys, "path", [str(site)])
    probe._ERRORS[:] = []
    got = probe.verify_files(["MyPkg", "edit", "old", "condapkg", "debpkg"], budget=30, workers=2)
    assert probe._ERRORS == []
    (d,) = got["dists"]
    assert (d["dist"], d["files"], d["modified"], d["outside"], d["unverified"]) == ("mypkg", 3, 1, 1, 0)
    assert d["examples"] == [{"path": "mypkg/dot.py", "size": 1, "expected_size": 1, "kind": "source"}]
    assert sorted((s["dist"], s["why"]) for s in got["skipped"]) == [
        ("condapkg", "installed by conda"), ("debpkg", "no INSTALLER (not installed from a wheel by pip / uv)"),
        ("edit", "editable"), ("old", "no_digests")]
    assert got["budget"] == 30 and got["seconds"] >= 0


def test_verify_files_names_an_egg_info_overwrite_as_the_others_copy_and_a_sourceless_pyc_is_not_missing(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What hrecord41's egg-info target (`setup.py install` of a jwt over PyJWT) and haudit43's bytecode-only
    deployment (`compileall -b`, the .py deleted) left: the overwrite is the egg's copy (`also`, files-overwritten's
    case, whose installed-files.txt has no digest), and a .py whose .pyc is there is not gone."""
    site = tmp_path / "site"
    _installed(site, "PyJWT", {"jwt/__init__.py": b"pyjwt\n", "jwt/api.py": b"api\n"}, "jwt")
    write(site / "PyJWT-1.0.dist-info" / "INSTALLER", "pip\n")
    write(site / "jwt" / "__init__.py", "egg\n")
    write(site / "jwtegg-0.1-py3.11.egg-info" / "PKG-INFO", "Metadata-Version: 2.1\nName: jwtegg\nVersion: 0.1\n")
    write(site / "jwtegg-0.1-py3.11.egg-info" / "installed-files.txt", "../jwt/__init__.py\n")
    write(site / "jwt" / "api.pyc", b"\x00bytecode")
    monkeypatch.setattr(sys, "path", [str(site)])
    (d,) = probe.verify_files(["pyjwt"], budget=30)["dists"]
    assert (d["modified"], d["shared"], d["missing"]) == (1, 1, 0)
    assert d["examples"] == [{"path": "jwt/__init__.py", "size": 4, "expected_size": 6, "kind": "source",
                              "also": ["jwtegg"]}]


def test_verify_files_counts_a_file_it_may_not_stat_as_unverified_not_gone(probe: ModuleType, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A package directory the user cannot search (installed by root with umask 077, checked as another user):
    os.stat of its files fails with EACCES. Those files are on disk: not compared, never "gone" (which made an
    error saying the RECORD's files are not on disk; seen with `setpriv --reuid nobody` on a venv whose jwt/ is
    mode 700)."""
    site = tmp_path / "site"
    _installed(site, "PyJWT", {"jwt/__init__.py": b"pyjwt\n", "jwt/api.py": b"api\n"}, "jwt")
    write(site / "PyJWT-1.0.dist-info" / "INSTALLER", "pip\n")
    locked = str(site / "jwt") + os.sep
    real_stat = os.stat

    def stat(path: Any, *a: Any, **k: Any) -> Any:
        if str(path).startswith(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *a, **k)

    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setattr(os, "stat", stat)
    (d,) = probe.verify_files(["pyjwt"], budget=30)["dists"]
    assert (d["missing"], d["modified"], d["unverified"]) == (0, 0, 2) and d["missing_examples"] == []
    assert d["unreadable"] == 2  # said apart: no larger bound compares them


def test_top_level_is_left_unknown_when_the_distribution_has_neither_top_level_txt_nor_record(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An egg-info with only PKG-INFO (real: pillow's dist-info turned into pillow_simd-13.0.0.egg-info, PIL still
    importable) says nothing about what it installs: None, so the snapshot leaves `top_level` out (unknown). A RECORD
    that lists no importable name (py-spy's: a script) is a known nothing: []."""
    site = tmp_path / "site"
    write(site / "pillow_simd-13.0.0.egg-info" / "PKG-INFO", "Metadata-Version: 2.1\nName: pillow-simd\nVersion: 13.0.0\n")
    write(site / "py_spy-0.4.2.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: py-spy\nVersion: 0.4.2\n")
    write(site / "py_spy-0.4.2.dist-info" / "RECORD", "../../../bin/py-spy,,\npy_spy-0.4.2.dist-info/RECORD,,\n")
    got = {d["name"]: d["top_level"] for d in _doc(probe, monkeypatch, [str(site)])}
    assert got == {"pillow-simd": None, "py-spy": []}


def test_top_level_from_record_is_every_importable_first_segment_whatever_rows_precede_it(
        probe: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without top_level.txt the names come from RECORD's rows: a package directory (quoted or not, CRLF or LF) or a
    module file. A row is read on its own: a file `foo` before the package `foo/`, a package whose name begins
    another's (`pkg/`, `pkgextra/`), a quoted row after a blank one or after unquoted ones of the same directory."""
    site = tmp_path / "site"
    rows = ["pkg/__init__.py,,", "pkg/sub/x.py,,", "pkgextra/__init__.py,,", "", '"quoted/__init__.py",sha256=x,1',
            "foo,,", "foo/bar.py,,", "mod.py,,", "mod.py/x,,", 'lone/a.py,,', '"lone/b.py",,',
            "pkg_x-1.0.dist-info/RECORD,,", "_ext.cpython-311-x86_64-linux-gnu.so,,", "__pycache__/m.pyc,,",
            "../../bin/tool,,", "two.words/x.py,,"]
    write(site / "pkg_x-1.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: pkg-x\nVersion: 1.0\n")
    write(site / "pkg_x-1.0.dist-info" / "RECORD", "\n".join(rows[:8]) + "\r\n" + "\r\n".join(rows[8:]) + "\n")
    (d,) = _doc(probe, monkeypatch, [str(site)])
    assert d["top_level"] == ["_ext", "foo", "lone", "mod", "pkg", "pkgextra", "quoted"]
