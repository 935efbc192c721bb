"""doctor/checks/shared_files.py: two distributions that install the same files with different content, from their
RECORDs (`python.shared_files`, snapshot rule 11); and the real jwt / PyJWT wheels installed by a plain venv's pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from doctor.checks.runner import CheckContext, Skipped
from doctor.snapshot.model import snapshot_from_dict

ROOT = Path(__file__).resolve().parents[2]


def _snap(items: list[dict[str, Any]] | None, packages: dict[str, str] | None = None) -> Any:
    py: dict[str, Any] = {"version": "3.11.9"}
    if items is not None:
        py["shared_files"] = items
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "python": py,
                               "packages": {k: {"version": v} for k, v in (packages or {}).items()}})


def _found(snap: Any) -> list[Any]:
    from doctor.checks.shared_files import shared_files

    try:
        return list(shared_files(CheckContext(snapshot=snap)))
    except Skipped:
        return []


def _item(a: str, b: str, differ: int, on_disk: str | None, top: str = "jwt") -> dict[str, Any]:
    return {"dists": [a, b], "top_level": top, "location": "/v/lib/python3.11/site-packages", "files": differ + 1,
            "differ": differ, "examples": [f"{top}/__init__.py"][:differ], "on_disk": on_disk}


def test_two_packages_outside_the_stack_overwriting_each_other_are_a_warning_naming_whose_copy_is_on_disk():
    (f,) = _found(_snap([_item("PyJWT", "jwt", 3, "PyJWT")], {"pyjwt": "2.10.1", "jwt": "1.3.1"}))
    assert (f.id, f.severity.value) == ("files-overwritten-by-another-package", "warning")
    assert f.title == "pyjwt 2.10.1 and jwt 1.3.1 install the same files under jwt: 3 of 4 differ"
    assert "pyjwt 2.10.1's copy is on disk (installed last), so jwt 1.3.1 runs with files that are not its own" in f.detail
    assert f.fix.commands == ()  # which one to keep is the user's call
    assert "pip uninstall -y pyjwt jwt" in f.fix.text


def test_a_stack_package_overwritten_is_an_error_whose_fix_keeps_the_stack_package():
    (f,) = _found(_snap([_item("opencv-python", "torch-npu", 1, "opencv-python", top="torch_npu")],
                        {"torch-npu": "2.5.1.post1", "opencv-python": "4.10.0.84"}))
    assert f.severity.value == "error" and f.components[0] == "torch-npu"
    assert f.fix.commands == ("pip uninstall -y opencv-python torch-npu",
                              "pip install --no-deps --force-reinstall 'torch-npu==2.5.1.post1'")


@pytest.mark.parametrize("items", [
    [_item("opencensus", "opencensus-context", 0, None, top="opencensus")],  # identical files (pkgutil namespace)
    [_item("triton", "triton-ascend", 4, "triton", top="triton")],          # reported by triton-with-triton-ascend
    # pkgutil-style namespace declarations of two portions, each its own variant (backports.weakref's 121 bytes,
    # backports.functools_lru_cache's 81): whichever is on disk serves both
    [_item("backports.functools_lru_cache", "backports.weakref", 1, "backports.weakref", top="backports")],
    [],                                                                      # collected: nothing shared
])
def test_identical_files_the_triton_pair_and_nothing_shared_say_nothing(items):
    assert _found(_snap(items)) == []


def test_an_older_snapshot_without_the_fact_skips():
    from doctor.checks.shared_files import shared_files

    with pytest.raises(Skipped):
        list(shared_files(CheckContext(snapshot=_snap(None))))


# -- the real wheels, installed with the real pip of a plain venv ----------------------------------------------


def _wheels() -> dict[str, Path]:
    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")  # nox -s tests downloads them next to the verl wheels
    out = {}
    for name in ("jwt-1.3.1", "PyJWT-2.10.1"):
        hits = sorted((Path(d) / "wheels").glob(f"{name}-*.whl")) if d else []
        if hits:
            out[name.split("-")[0]] = hits[0]
    return out


def _check(py: Path, cwd: Path, fid: str = "files-overwritten-by-another-package",
           snapshot: Path | None = None) -> list[dict[str, Any]]:
    how = ["--from", str(snapshot)] if snapshot else ["--python", str(py)]
    r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", *how, "--only", "packages"],
                       capture_output=True, text=True, timeout=300, cwd=str(cwd),
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    return [f for f in json.loads(r.stdout)["findings"] if f["id"] == fid]


@pytest.mark.slow
def test_real_jwt_and_pyjwt_wheels_in_a_plain_venv_are_named_and_the_finding_is_what_pip_then_does(tmp_path):
    """jwt 1.3.1 and PyJWT 2.10.1 as PyPI serves them both install `jwt/`. Installed in either order by a
    `python3 -m venv` target's own pip, check names the pair and whose copy is on disk (the later one); and what the
    finding says happens does: `import jwt` runs the later one's code, and uninstalling the other one deletes
    files the survivor needs."""
    wheels = _wheels()
    if len(wheels) < 2:
        pytest.skip("no jwt-1.3.1 / PyJWT-2.10.1 wheels under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    for first, last in (("jwt", "PyJWT"), ("PyJWT", "jwt")):
        venv = tmp_path / f"venv-{last}"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        py = venv / "bin" / "python"
        for name in (first, last):
            subprocess.run([str(py), "-m", "pip", "install", "--isolated", "--no-index", "--no-deps", "-q",
                            str(wheels[name])], check=True, timeout=600)
        (f,) = _check(py, tmp_path)
        assert f["evidence"]["on_disk"] == last.lower() and f["severity"] == "warning"
        assert f["evidence"]["differ"] >= 1 and "jwt/__init__.py" in f["evidence"]["examples"]
        # pip check never relates the two (it reads Requires-Dist only: jwt's missing cryptography is all it says)
        pc = subprocess.run([str(py), "-m", "pip", "check"], capture_output=True, text=True, timeout=300)
        assert "pyjwt" not in pc.stdout.lower(), pc.stdout
    # PyJWT installed last: uninstalling jwt deletes PyJWT's jwt/__init__.py, and `import jwt` no longer gives PyJWT
    py = tmp_path / "venv-PyJWT" / "bin" / "python"
    ok = subprocess.run([str(py), "-c", "import jwt; jwt.encode({'a': 1}, 'k', algorithm='HS256')"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    subprocess.run([str(py), "-m", "pip", "uninstall", "-y", "-q", "jwt"], check=True, timeout=300)
    broken = subprocess.run([str(py), "-c", "import jwt; jwt.encode({'a': 1}, 'k', algorithm='HS256')"],
                            capture_output=True, text=True, timeout=120)
    assert broken.returncode != 0
    assert _check(py, tmp_path) == []  # one owner left: nothing shared
    # ... but PyJWT's RECORD still lists the jwt/__init__.py that is gone, live and from a collected snapshot
    snap = tmp_path / "snap.json"
    subprocess.run([sys.executable, "-m", "doctor", "collect", "--python", str(py), "-o", str(snap)], check=True,
                   capture_output=True, timeout=300, cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(ROOT)})
    for how in ({}, {"snapshot": snap}):
        (f,) = _check(py, tmp_path, "installed-files-missing", **how)
        assert (f["key"], f["severity"], f["evidence"]["version"]) == ("pyjwt", "warning", "2.10.1")
        assert f["evidence"]["examples"][0] == "jwt/__init__.py" and f["evidence"]["missing"] >= 1
    # the finding's fix, run offline with the same wheel, restores `import jwt` and the finding goes
    fix = f["fix"]["commands"][0]
    assert fix == f"{py} -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'"
    subprocess.run([str(py), "-m", "pip", "install", "--isolated", "--no-index", "--force-reinstall", "--no-deps", "-q",
                    str(wheels["PyJWT"])], check=True, timeout=600)
    ok = subprocess.run([str(py), "-c", "import jwt; jwt.encode({'a': 1}, 'k', algorithm='HS256')"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert _check(py, tmp_path, "installed-files-missing") == []


def test_a_pair_in_another_directory_than_the_named_package_is_not_given_that_copys_version():
    """jwt and PyJWT 2.15.1 clash in the venv; the PyJWT `packages` names is 2.8.0, a copy earlier on sys.path
    (PYTHONPATH): the finding must not call the venv's copy 2.8.0, nor pin the reinstall to it."""
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"version": "3.11.9", "shared_files": [
        _item("jwt", "PyJWT", 3, "PyJWT"), _item("torch-npu", "clash", 1, "clash", top="torch_npu")]},
        "packages": {"pyjwt": {"version": "2.8.0", "location": "/target"},
                     "jwt": {"version": "1.3.1", "location": "/v/lib/python3.11/site-packages"},
                     "torch-npu": {"version": "2.5.1", "location": "/elsewhere"}}})
    f, g = sorted(_found(snap), key=lambda f: f.key)
    assert f.title == "jwt 1.3.1 and pyjwt install the same files under jwt: 3 of 4 differ"
    assert "2.8.0" not in f.detail
    assert g.fix.commands[-1] == "pip install --no-deps --force-reinstall 'torch-npu'"
