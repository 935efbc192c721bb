"""doctor/checks/installed_files.py: files an installed distribution's RECORD lists that are gone from disk
(`python.missing_files`, snapshot rule 12); and, under `check --deep`, installed files that differ from their RECORD
(`python.verified_files`, rule 14)."""

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


def test_a_package_verl_needs_through_another_is_an_error_naming_the_chain():
    """Real venv (torch 2.13.0+cpu, verl 0.9.0 from PyPI with its trainer's undeclared imports): markupsafe's
    __init__.py deleted, check said a warning only, while `import verl.trainer.main_ppo` raised ImportError: cannot
    import name 'Markup' from 'markupsafe' (transformers -> jinja2 -> markupsafe). A package nothing verl needs
    requires (pyjwt here) stays a warning."""
    pkgs = {"verl": {"version": "0.9.0", "requires_dist": ["transformers"]},
            "transformers": {"version": "5.10.4", "requires_dist": ["jinja2"]},
            "jinja2": {"version": "3.1.6", "requires_dist": ["MarkupSafe>=2.0"]},
            "markupsafe": {"version": "3.0.4", "requires_dist": []},
            "pyjwt": {"version": "2.10.1", "requires_dist": []}}
    got = _found(_snap([_item("MarkupSafe", "3.0.4", "markupsafe", 6, 1), _item("PyJWT", "2.10.1", "jwt", 13, 4)],
                       pkgs))
    assert [(f.key, f.severity.value) for f in got] == [("markupsafe", "error"), ("pyjwt", "warning")]
    assert got[0].evidence["required_through"] == ["transformers", "jinja2"]
    assert "transformers -> jinja2 -> markupsafe" in got[0].detail


def test_a_package_a_verl_checkout_imports_at_load_is_on_its_path_by_the_checkouts_commit():
    """verl `--no-deps -e` from a checkout of main at 1dda039b9 reports 0.10.0.dev0, which names no release: what it
    imports when its trainer loads (verl/experimental/reward_loop/reward_loop.py:19 imports aiohttp) is found by the
    commit its git facts give. aiohttp with its __init__.py gone is then an error naming verl -> aiohttp; without
    the commit, a warning."""
    def found(commit: str | None) -> list[Any]:
        pkgs = {"verl": {"version": "0.10.0.dev0", "requires_dist": []}, "aiohttp": {"version": "3.14.5", "requires_dist": []}}
        doc = {"schema": "doctor.snapshot/1", "packages": pkgs,
               "python": {"version": "3.11.7", "executable": "/v/bin/python",
                          "missing_files": [_item("aiohttp", "3.14.5", "aiohttp", 120, 1)]}}
        if commit:
            doc["modules"] = {"verl": {"origins": ["/src/verl/verl"], "git": {"commit": commit, "branch": "main"}}}
        return _found(snapshot_from_dict(doc))

    (f,) = found("1dda039b9c6311889a9c9a26040677e1254814f9")
    assert (f.key, f.severity.value, f.evidence["required_through"]) == ("aiohttp", "error", ["verl"])
    assert "verl needs aiohttp through verl -> aiohttp (verl's modules import aiohttp when its trainer loads" in f.detail
    (f,) = found(None)
    assert (f.key, f.severity.value) == ("aiohttp", "warning") and "required_through" not in f.evidence


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


# -- installed-files-verified (check --deep): installed files against their RECORD, snapshot rule 14 -----------


def _vsnap(dists: list[dict[str, Any]] | None, missing: list[dict[str, Any]] | None = None,
           packages: dict[str, dict[str, Any]] | None = None, **extra: Any) -> Any:
    py: dict[str, Any] = {"version": "3.11.9", "executable": "/v/bin/python", "site_packages": [SITE],
                          "prefix": "/v"}
    if dists is not None:
        py["verified_files"] = {"seconds": 1.2, "budget": 115.0, "dists": dists, "skipped": [], **extra}
    if missing is not None:
        py["missing_files"] = missing
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "python": py, "packages": packages or {}})


def _vdist(dist: str, version: str | None, files: int, examples: list[dict[str, Any]], *, missing: int = 0,
           unverified: int = 0, unreadable: int = 0) -> dict[str, Any]:
    own = [e for e in examples if not e.get("also")]
    return {"dist": dist, "version": version, "location": SITE, "files": files, "bytes": 1000,
            "modified": len(examples), "shared": len(examples) - len(own),
            "binary": sum(1 for e in own if e.get("kind") == "binary"), "missing": missing,
            "unverified": unverified, "unverified_bytes": 7_000_000 if unverified > unreadable else 0,
            "unreadable": unreadable,
            "examples": examples, "missing_examples": [f"{dist}/gone.py"][:missing]}


def _vfound(snap: Any) -> list[Any]:
    found, _ = run_one(load_all()["installed-files-verified"], CheckContext(snapshot=snap))
    return found


def test_a_truncated_shared_library_of_torch_is_an_error_and_its_reinstall_is_the_missing_files_one():
    so = {"path": "torch/lib/libc10.so", "size": 1000000, "expected_size": 1525128, "kind": "binary"}
    (f,) = _vfound(_vsnap([_vdist("torch", "2.13.0+cpu", 12250, [so])]))
    assert (f.id, f.severity.value, f.key, f.components) == ("installed-files-modified", "error", "torch", ("torch",))
    assert f.title == "torch 2.13.0+cpu: 1 of the 12250 files its RECORD lists differs from it"
    assert "torch/lib/libc10.so (shared library: 1000000 bytes on disk, RECORD says 1525128 (truncated))" in f.detail
    # one code path with installed-files-missing: the same command for the same release
    (g,) = _found(_snap([_item("torch", "2.13.0+cpu", "torch", 12250, 1)]))
    assert f.fix.commands == g.fix.commands and "--index-url https://download.pytorch.org/whl/cpu" in f.fix.commands[0]
    assert "Edits made to its files by hand are lost" in f.fix.text
    assert f.evidence["examples"] == [{k: so[k] for k in ("path", "size", "expected_size")}]


def test_edited_sources_are_a_warning_naming_the_files():
    ex = [{"path": "vllm/model_executor/models/qwen2.py", "size": 20001, "expected_size": 20001, "kind": "source"},
          {"path": "vllm/config.py", "size": 900, "expected_size": 800, "kind": "source"}]
    (f,) = _vfound(_vsnap([_vdist("vllm", "0.9.1", 1500, ex)]))
    assert (f.severity.value, f.title) == ("warning", "vllm 0.9.1: 2 of the 1500 files its RECORD lists differ from it")
    assert "qwen2.py (source: same size, other content)" in f.detail and "2 other files changed" in f.detail
    assert f.fix.commands == ("/v/bin/python -m pip install --force-reinstall --no-deps 'vllm==0.9.1'",)


def test_another_distributions_copy_is_left_to_shared_files_and_what_installed_files_missing_said_is_not_repeated():
    """One finding per fact: a file another RECORD lists with other content is files-overwritten-by-another-package's
    (rule 11), files gone that installed-files-missing reports are its; what is left is said once."""
    theirs = {"path": "jwt/__init__.py", "size": 1233, "expected_size": 1711, "kind": "source", "also": ["jwt"]}
    mine = {"path": "jwt/api_jwt.py", "size": 10, "expected_size": 11, "kind": "source"}
    assert _vfound(_vsnap([_vdist("PyJWT", "2.10.1", 21, [theirs])])) == []
    (f,) = _vfound(_vsnap([_vdist("PyJWT", "2.10.1", 21, [theirs, mine])]))
    assert f.evidence["modified"] == 1 and [e["path"] for e in f.evidence["examples"]] == ["jwt/api_jwt.py"]
    assert "1 more is another distribution's copy (said by files-overwritten-by-another-package)" in f.detail
    gone = [_vdist("opencv-python-headless", "4.10.0.84", 41, [], missing=41)]
    assert _vfound(_vsnap(gone, missing=[_item("opencv-python-headless", "4.10.0.84", "cv2", 41, 41)])) == []
    # backports.weakref uninstalled deleted the backports/__init__.py every portion lists: the rest import on
    ns = _vdist("backports.functools-lru-cache", "1.6.6", 8, [], missing=1)
    ns["missing_examples"] = ["backports/__init__.py"]
    assert _vfound(_vsnap([ns], missing=[])) == []
    # a file gone deep inside a package whose __init__.py is there: nobody else says it
    (g,) = _vfound(_vsnap([_vdist("verl", "0.9.1", 514, [], missing=1)], missing=[]))
    assert (g.severity.value, g.title) == ("error", "verl 0.9.1: 1 of the 514 files its RECORD lists is gone")
    assert "verl/gone.py" in g.detail


@pytest.mark.parametrize("waivers", [(("installed-files-verified",), ()), (("deep",), ()),
                                     ((), ("installed-files-missing",))])
def test_files_gone_are_said_here_when_installed_files_missing_is_waived(waivers):
    """`check --deep --only installed-files-verified` (or `--ignore installed-files-missing`) on a real venv with
    verl 0.9.0's verl/__init__.py and verl/utils/__init__.py gone and main_ppo.py edited printed a warning about
    the one edited file only: the two gone files, an error, were left to a finding this run does not report."""
    gone = [_vdist("verl", "0.9.0", 513, [{"path": "verl/trainer/main_ppo.py", "size": 7962, "expected_size": 7955,
                                           "kind": "source"}], missing=2)]
    snap = _vsnap(gone, missing=[_item("verl", "0.9.0", "verl", 420, 2)])
    assert [f.severity.value for f in _vfound(snap)] == ["warning"]  # a run that says nothing of waivers: all checks
    found, _ = run_one(load_all()["installed-files-verified"],
                       CheckContext(snapshot=snap, options={"waivers": waivers}))
    (f,) = found
    assert (f.severity.value, f.evidence["missing"]) == ("error", 2)
    assert f.title == "verl 0.9.0: 1 of the 513 files its RECORD lists differs from it, 2 are gone"


@pytest.mark.parametrize("waivers", [(("installed-files-verified",), ()),
                                     ((), ("files-overwritten-by-another-package",))])
def test_another_distributions_copy_is_said_here_when_files_overwritten_is_waived(waivers):
    """A real venv: verl 0.9.1, then a wheel (verl-patch) whose RECORD lists verl/trainer/main_ppo.py installed over
    it. `check --deep --only installed-files-verified` said "ok": verl's changed file was left to
    files-overwritten-by-another-package, which that run does not report."""
    theirs = {"path": "verl/trainer/main_ppo.py", "size": 30, "expected_size": 7961, "kind": "source",
              "also": ["verl-patch"]}
    snap = _vsnap([_vdist("verl", "0.9.1", 514, [theirs])])
    assert _vfound(snap) == []  # said by files-overwritten-by-another-package
    found, _ = run_one(load_all()["installed-files-verified"],
                       CheckContext(snapshot=snap, options={"waivers": waivers}))
    (f,) = found
    assert (f.severity.value, f.evidence["modified"]) == ("warning", 1)
    assert f.title == "verl 0.9.1: 1 of the 514 files its RECORD lists differs from it"
    assert ("verl/trainer/main_ppo.py (source: 30 bytes on disk, RECORD says 7961; verl-patch's copy, installed "
            "over it)") in f.detail and "said by files-overwritten" not in f.detail


def test_files_not_compared_within_the_bound_are_said_and_nothing_else_is_guessed():
    (f,) = _vfound(_vsnap([_vdist("torch", "2.13.0", 12250, [], unverified=3), _vdist("verl", "0.9.1", 514, [])]))
    assert (f.id, f.severity.value) == ("installed-files-unverified", "info")
    assert f.title == "3 installed file(s) were not compared with their RECORD within 115 s"
    assert "torch 2.13.0: 3 files (7 MB)" in f.detail and "--deep-timeout" in f.fix.text
    (h,) = _vfound(snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {
        "verified_files": {"error": "target Python /v/bin/python: timed out after 120 s"}}}))
    assert h.id == "installed-files-unverified" and "timed out" in h.detail


def test_files_this_user_may_not_read_are_said_apart_from_the_bound_with_a_fix_that_can_help():
    """A package directory root installed with umask 077, checked as another user: EACCES, not the time bound. The
    bound's fix (a larger --deep-timeout) would not compare them; running as the user that installed them does."""
    fs = _vfound(_vsnap([_vdist("torch", "2.13.0", 12250, [], unverified=5, unreadable=2),
                         _vdist("pyjwt", "2.10.1", 13, [], unverified=13, unreadable=13)]))
    bound, denied = sorted(fs, key=lambda f: f.key == "unreadable")
    assert bound.title == "3 installed file(s) were not compared with their RECORD within 115 s"
    assert "torch 2.13.0: 3 files (7 MB)" in bound.detail and "pyjwt" not in bound.detail
    assert denied.title == "15 installed file(s) could not be read by this user and were not compared with their RECORD"
    assert "torch 2.13.0: 2 files, pyjwt 2.10.1: 13 files" in denied.detail and "--deep-timeout" not in denied.fix.text
    assert denied.severity.value == "info" and "as the user that installed" in denied.fix.text


def test_an_untouched_stack_says_nothing_and_a_snapshot_without_deep_skips():
    assert _vfound(_vsnap([_vdist("torch", "2.13.0", 12250, []), _vdist("verl", "0.9.1", 514, [])])) == []
    from doctor.checks.installed_files import installed_files_verified

    with pytest.raises(Skipped):
        list(installed_files_verified(CheckContext(snapshot=_vsnap(None))))


def test_the_distributions_compared_are_the_stack_and_what_verl_requires_that_are_installed():
    from doctor.checks.installed_files import verify_names

    pkgs = {"verl": {"version": "0.9.1", "requires_dist": ["codetiming", "wandb; extra == 'x'", "absent"]},
            "codetiming": {"version": "1.4.0"}, "wandb": {"version": "0.19.0"}, "torch": {"version": "2.13.0"},
            "einops": {"version": "0.8.0"}}
    assert verify_names(_vsnap([], packages=pkgs)) == ["codetiming", "torch", "verl"]


# -- the real verl 0.9.1 wheel, installed with the real pip of a plain venv ------------------------------------


def _verl_wheel() -> Any:
    import os
    from pathlib import Path

    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")
    hits = sorted((Path(d) / "wheels").glob("verl-0.9.1-*.whl")) if d else []
    return hits[0] if hits else None


@pytest.mark.slow
def test_real_verl_wheel_edited_in_site_packages_is_found_live_and_from_collect_deep_and_the_fix_clears_it(tmp_path):
    """verl 0.9.1 as PyPI serves it, in a `python3 -m venv` target: `check --deep` says nothing while it is as
    installed; a line appended to verl/trainer/main_ppo.py (what a forum workaround does) is named live and from a
    `collect --deep` snapshot judged by `check --from`; the finding's fix, run offline with the same wheel, restores
    the file and the finding goes."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    wheel = _verl_wheel()
    if wheel is None:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"

    def pip(*args: str) -> None:
        subprocess.run([str(py), "-m", "pip", *args, "--isolated", "--no-index", "--no-deps", "-q", str(wheel)],
                       check=True, timeout=600)

    def check(*how: str) -> list[dict[str, Any]]:
        r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", *how, "--only", "installed-files-verified"],
                           capture_output=True, text=True, timeout=600, cwd=str(tmp_path), env=env)
        rep = json.loads(r.stdout)
        (ran,) = [c["status"] for c in rep["checks"] if c["id"] == "installed-files-verified"]
        assert ran == "pass" or rep["findings"]  # ran: not skipped for want of the fact
        return rep["findings"]

    pip("install")
    assert check("--deep", "--python", str(py)) == []
    main = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" / "verl" / "trainer" / "main_ppo.py"
    size = main.stat().st_size
    with open(main, "a") as fh:
        fh.write("# patched as a forum thread says\n")
    snap = tmp_path / "deep.json"
    subprocess.run([sys.executable, "-m", "doctor", "collect", "--deep", "--python", str(py), "-o", str(snap)],
                   check=True, capture_output=True, timeout=600, cwd=str(tmp_path), env=env)
    assert json.loads(snap.read_text())["python"]["verified_files"]["dists"][0]["dist"] == "verl"
    for how in (("--deep", "--python", str(py)), ("--from", str(snap))):
        (f,) = check(*how)
        assert (f["id"], f["severity"], f["key"]) == ("installed-files-modified", "warning", "verl")
        assert f["title"].startswith("verl 0.9.1: 1 of the ") and f["title"].endswith(" files its RECORD lists differs from it")
        assert f["evidence"]["examples"] == [{"path": "verl/trainer/main_ppo.py", "size": size + 33, "expected_size": size}]
    assert f["fix"]["commands"] == [f"{py} -m pip install --force-reinstall --no-deps 'verl==0.9.1'"]
    pip("install", "--force-reinstall")  # the fix, offline from the same wheel
    assert main.stat().st_size == size and check("--deep", "--python", str(py)) == []


@pytest.mark.slow
def test_real_verl_edited_in_a_uv_venv_is_cleared_by_the_printed_uv_fix(tmp_path):
    """uv links a venv's files to the unpacked wheel in its cache (hard links on one filesystem, its default): a
    line appended to verl/trainer/main_ppo.py in the venv edits the cache's copy too, and the fix `uv pip install
    --force-reinstall` links that same edited copy again (the finding stayed). The printed uv line is run as
    printed, from the local wheel, with the same cache: the file is verl 0.9.1's again and the finding goes."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from doctor.installers.backends import find_uv

    wheel = _verl_wheel()
    uv = find_uv()
    if wheel is None or uv is None:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels, or no uv")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env.update(UV_NO_INDEX="1", UV_FIND_LINKS=str(wheel.parent), UV_NO_CONFIG="1", UV_CACHE_DIR=str(tmp_path / "cache"),
               PATH=os.path.dirname(uv) + os.pathsep + env.get("PATH", ""))
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=300, env=env)
    py = venv / "bin" / "python"
    subprocess.run([uv, "pip", "install", "-q", "--python", str(py), "--no-deps", "verl==0.9.1"], check=True,
                   timeout=600, env=env)

    def check() -> list[dict[str, Any]]:
        r = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--deep", "--python", str(py), "--only",
                            "installed-files-verified"], capture_output=True, text=True, timeout=600, cwd=str(tmp_path),
                           env={**os.environ, "PYTHONPATH": str(root)})
        return json.loads(r.stdout)["findings"]

    assert check() == []
    main = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" / "verl" / "trainer" / "main_ppo.py"
    size = main.stat().st_size
    with open(main, "a") as fh:  # in place, as `>>` and most editors write
        fh.write("# patched as a forum thread says\n")
    (f,) = check()
    assert f["id"] == "installed-files-modified"
    for c in f["fix"]["commands"]:
        r = subprocess.run(["bash", "-c", c], capture_output=True, text=True, timeout=600, cwd=str(tmp_path), env=env)
        assert r.returncode == 0, (c, r.stderr)
    assert main.stat().st_size == size and check() == []
