"""A real older libstdc++ on LD_LIBRARY_PATH (part of the real-world tier: DOCTOR_REALWORLD=1; downloads ~0.5 MB from
Debian, not in .ci/run).

Debian 11's libstdc++6 (GCC 10.2, GLIBCXX_3.4.28) is unpacked into a directory put on LD_LIBRARY_PATH, the way a
conda environment's or a vendor toolkit's lib/ comes first. A C++ extension built here with the host's g++ that
references GLIBCXX_3.4.29 (`operator>>` into a char array calls std::__istream_extract, versioned 3.4.29 since
GCC 11) then fails to import with "version `GLIBCXX_3.4.29' not found". What the doctor says about the same
process: `doctor check` warns libstdcxx-older-than-system before anything is imported (the probe asks the loader,
which takes the older copy), says nothing without it, and `doctor explain` names the import failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") != "1",
                       reason="downloads Debian 11's libstdc++6: run with DOCTOR_REALWORLD=1 (nox -s realworld)"),
    pytest.mark.skipif(not (shutil.which("g++") and shutil.which("dpkg-deb")), reason="needs g++ and dpkg-deb"),
    pytest.mark.skipif(os.uname().machine != "x86_64", reason="the Debian package fetched is the amd64 one"),
]
REPO = Path(__file__).resolve().parents[2]
DEB = "https://deb.debian.org/debian/pool/main/g/gcc-10/libstdc++6_10.2.1-6_amd64.deb"
EXT = """
#include <Python.h>
#include <sstream>
static PyObject* hello(PyObject*, PyObject*) {
    std::istringstream is("ok"); char buf[8]; is >> buf;
    return PyUnicode_FromString(buf);
}
static PyMethodDef M[] = {{"hello", hello, METH_NOARGS, ""}, {nullptr, nullptr, 0, nullptr}};
static PyModuleDef D = {PyModuleDef_HEAD_INIT, "ext", nullptr, -1, M};
PyMODINIT_FUNC PyInit_ext(void) { return PyModule_Create(&D); }
"""


@pytest.fixture(scope="module")
def old_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("oldcxx")
    deb = work / "libstdc++6.deb"
    with urllib.request.urlopen(DEB, timeout=120) as r:  # noqa: S310 - a fixed https URL
        deb.write_bytes(r.read())
    subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "root")], check=True, timeout=120)
    lib = work / "root" / "usr" / "lib" / "x86_64-linux-gnu"
    assert (lib / "libstdc++.so.6").exists()
    return lib


@pytest.fixture(scope="module")
def ext_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ext")
    (d / "ext.cpp").write_text(EXT)
    out = d / f"ext{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run(["g++", "-O2", "-std=c++20", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
                    str(d / "ext.cpp"), "-o", str(out)], check=True, timeout=300)
    return d


def _env(lib: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if lib is not None:
        env["LD_LIBRARY_PATH"] = str(lib)
    env["PYTHONPATH"] = str(REPO)
    return env


def _import_ext(ext_dir: Path, lib: Path | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "import ext; print(ext.hello())"], cwd=ext_dir, env=_env(lib),
                          capture_output=True, text=True, timeout=120)


def _check(lib: Path | None, tmp_path: Path) -> dict:
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", sys.executable,
                        "--only", "libstdcxx-system"], cwd=tmp_path, env=_env(lib), capture_output=True, text=True,
                       timeout=300)
    return json.loads(r.stdout)


def test_the_extension_fails_under_the_older_copy_and_loads_without_it(old_lib: Path, ext_dir: Path) -> None:
    ok = _import_ext(ext_dir, None)
    assert ok.returncode == 0 and ok.stdout.strip() == "ok", ok.stderr
    bad = _import_ext(ext_dir, old_lib)
    assert bad.returncode != 0
    assert "version `GLIBCXX_3.4.29' not found" in bad.stderr


def test_check_warns_before_the_import_and_explain_names_the_failure(old_lib: Path, ext_dir: Path,
                                                                      tmp_path: Path) -> None:
    rep = _check(old_lib, tmp_path)
    found = [f for f in rep["findings"] if f["id"] == "libstdcxx-older-than-system"]
    assert len(found) == 1, rep["findings"]
    ev = found[0]["evidence"]
    assert ev["glibcxx"] == "3.4.28" and ev["libstdcxx"].startswith(str(old_lib))
    assert ev["LD_LIBRARY_PATH"] == str(old_lib)
    assert any(c.startswith("export LD_PRELOAD=/") and str(old_lib) not in c  # the host's own copy
               for c in found[0]["fix"]["commands"])

    assert not [f for f in _check(None, tmp_path)["findings"] if f["id"] == "libstdcxx-older-than-system"]

    log = tmp_path / "fail.log"
    log.write_text(_import_ext(ext_dir, old_lib).stderr)
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "explain", str(log)], env=_env(None),
                       capture_output=True, text=True, timeout=120)
    assert "glibc-version-too-old" in [f["id"] for f in json.loads(r.stdout)["findings"]]
