"""doctor/checks/installed_files.py: files an installed distribution's RECORD lists that are gone from disk
(`python.missing_files`, snapshot rule 12)."""

from __future__ import annotations

from typing import Any

import pytest

from doctor.checks.runner import CheckContext, Skipped, load_all, run_one
from doctor.snapshot.model import snapshot_from_dict

SITE = "/v/lib/python3.11/site-packages"


def _snap(items: list[dict[str, Any]] | None, packages: dict[str, dict[str, Any]] | None = None) -> Any:
    py: dict[str, Any] = {"version": "3.11.9", "executable": "/v/bin/python"}
    if items is not None:
        py["missing_files"] = items
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "python": py, "packages": packages or {}})


def _item(dist: str, version: str | None, top: str, files: int, missing: int) -> dict[str, Any]:
    return {"dist": dist, "version": version, "top_level": top, "location": SITE, "files": files,
            "missing": missing, "examples": [f"{top}/__init__.py"]}


def _found(snap: Any) -> list[Any]:
    found, _ = run_one(load_all()["installed-files"], CheckContext(snapshot=snap))
    return found


def test_a_package_outside_the_stack_missing_its_init_is_a_warning_fixed_by_reinstalling_that_release():
    (f,) = _found(_snap([_item("PyJWT", "2.10.1", "jwt", 13, 4)]))
    assert (f.id, f.severity.value, f.key) == ("installed-files-missing", "warning", "pyjwt")
    assert f.title == "pyjwt 2.10.1 is installed but 4 of the 13 files its RECORD lists under jwt are gone"
    assert "jwt/__init__.py" in f.detail and "empty namespace" in f.detail
    # the target's own pip, that exact release, its dependencies left alone
    assert f.fix.commands == ("/v/bin/python -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'",)


def test_a_stack_package_or_one_verl_requires_is_an_error():
    pkgs = {"verl": {"version": "0.9.1", "requires_dist": ["codetiming", "opencv-python-headless; extra == 'x'"]},
            "codetiming": {"version": "1.4.0", "requires_dist": []}}
    got = _found(_snap([_item("torch_npu", "2.5.1", "torch_npu", 900, 900), _item("codetiming", "1.4.0", "codetiming", 5, 1),
                        _item("opencv-python-headless", "4.10.0.84", "cv2", 41, 41)], pkgs))
    assert [(f.key, f.severity.value) for f in got] == [
        ("torch-npu", "error"), ("codetiming", "error"), ("opencv-python-headless", "warning")]  # an extra's: not
    assert got[0].title.startswith("torch-npu 2.5.1 is installed but all 900 files")
    assert "`import torch_npu` fails" in got[0].detail


def test_without_a_version_the_reinstall_is_not_pinned_and_the_fix_says_so():
    (f,) = _found(_snap([_item("PyJWT", None, "jwt", 13, 4)]))
    assert f.fix.commands == ("/v/bin/python -m pip install --force-reinstall --no-deps 'pyjwt'",)
    assert "pin the one you had" in f.fix.text


@pytest.mark.parametrize("items", [[], [_item("PyJWT", "2.10.1", "jwt", 13, 0)]])
def test_nothing_missing_says_nothing(items):
    assert _found(_snap(items)) == []


def test_an_older_snapshot_without_the_fact_skips():
    from doctor.checks.installed_files import installed_files

    with pytest.raises(Skipped):
        list(installed_files(CheckContext(snapshot=_snap(None))))


def test_a_local_version_is_not_reinstalled_from_pypi():
    """PyPI serves no local version (`torch==2.13.0+cpu`: "No matching distribution" from PyPI alone): the CPU
    build of torch comes from PyTorch's CPU index, as the doctor's other torch fixes say; another local build or a
    VCS install gets no pip command that cannot work, only where it came from."""
    pkgs = {"torch": {"version": "2.13.0+cpu"}, "mylib": {"version": "1.0+local"},
            "verl": {"version": "0.9.1.dev0", "url": "https://github.com/volcengine/verl.git", "commit": "ab" * 20}}
    got = {f.key: f for f in _found(_snap([_item("torch", "2.13.0+cpu", "torch", 11989, 1),
                                           _item("mylib", "1.0+local", "mylib", 3, 1),
                                           _item("verl", "0.9.1.dev0", "verl", 300, 1)], pkgs))}
    assert got["torch"].fix.commands == ("/v/bin/python -m pip install --force-reinstall --no-deps --index-url "
                                         "https://download.pytorch.org/whl/cpu 'torch==2.13.0+cpu'",)
    assert got["mylib"].fix.commands == ()
    assert "local version" in got["mylib"].fix.text
    assert got["verl"].fix.commands == ()
    assert "https://github.com/volcengine/verl.git" in got["verl"].fix.text and "ab" * 20 in got["verl"].fix.text


def test_one_file_is_said_in_the_singular():
    (one,) = _found(_snap([_item("six", "1.17.0", "six", 1, 1)]))
    assert one.title == "six 1.17.0 is installed but the 1 file its RECORD lists under six is gone"
    (f,) = _found(_snap([_item("torch", "2.13.0", "torch", 11989, 1)]))
    assert "; 1 is not on disk" in f.detail


def test_an_import_that_finds_another_copy_says_so_not_that_it_fails():
    item = {**_item("PyJWT", "2.10.1", "jwt", 13, 4), "imports_from": "/usr/lib/python3/dist-packages/jwt/__init__.py"}
    (f,) = _found(_snap([item]))
    assert "`import jwt` finds another copy instead: /usr/lib/python3/dist-packages/jwt/__init__.py" in f.detail
    assert "empty namespace" not in f.detail and f.evidence["imports_from"] == item["imports_from"]


def test_a_namespace_init_its_own_subpackage_does_not_need_is_not_reported():
    """Real: backports.functools_lru_cache 1.6.6, backports.weakref and backports.shutil_get_terminal_size each list
    the pkgutil-style backports/__init__.py; `pip uninstall backports.weakref` deletes it, and the other two still
    import (backports is then a PEP 420 namespace): two warnings for working packages. A distribution named
    `<top>-<more>` whose only lost file is `<top>/__init__.py` keeps its code below it (nvidia-*, google-*, zope.*,
    megatron-core); PyJWT (`jwt`) or a `<top>-...` distribution that lost more is still reported."""
    got = _found(_snap([_item("backports.functools_lru_cache", "1.6.6", "backports", 2, 1),
                        _item("nvidia-cublas-cu12", "12.4.5.8", "nvidia", 30, 1),
                        _item("PyJWT", "2.10.1", "jwt", 13, 1),
                        _item("backports.tarfile", "1.2.0", "backports", 4, 2)]))
    assert [f.key for f in got] == ["pyjwt", "backports-tarfile"]


def _snap_at(items: list[dict[str, Any]], site_packages: list[str]) -> Any:
    py = {"version": "3.11.2", "executable": "/usr/bin/python3.11", "prefix": "/usr", "base_prefix": "/usr",
          "site_packages": site_packages, "missing_files": items}
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "python": py, "packages": {}})


def test_the_reinstall_goes_where_the_broken_copy_is():
    """Real: PyJWT 2.10.1 installed with `pip install --user` (PYTHONUSERBASE=/tmp/haudit43/ub) lost jwt/__init__.py;
    the printed `/usr/bin/python3.11 -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'` installs into the
    system's site directory (here refused: externally-managed-environment), never into the user site that holds
    the broken copy. A user-site copy is reinstalled with --user; one in a directory that is no site directory of
    the interpreter (PYTHONPATH, `pip install --target`) gets the directory named, not a command for elsewhere."""
    user = "/tmp/haudit43/ub/lib/python3.11/site-packages"
    item = {**_item("PyJWT", "2.10.1", "jwt", 13, 4), "location": user}
    (f,) = _found(_snap_at([item], ["/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages", user]))
    assert f.fix.commands == ("/usr/bin/python3.11 -m pip install --user --force-reinstall --no-deps 'pyjwt==2.10.1'",)
    item = {**item, "location": "/opt/extra"}
    (g,) = _found(_snap_at([item], ["/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"]))
    assert g.fix.commands == () and "/opt/extra" in g.fix.text and "--target /opt/extra" in g.fix.text
    item = {**item, "location": "/usr/local/lib/python3.11/dist-packages"}
    (h,) = _found(_snap_at([item], ["/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"]))
    assert h.fix.commands == ("/usr/bin/python3.11 -m pip install --force-reinstall --no-deps 'pyjwt==2.10.1'",)
