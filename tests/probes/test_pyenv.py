"""The target-interpreter probe, run for real in a throw-away venv holding fake dist-info read by the real
importlib.metadata, a planted `torch` that must never be imported, two megatron copies, a PEP 660
editable finder, git source trees and a source tree in the cwd shadowing an installed package."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.probes.gitrepo import add_git_facts
from doctor.probes.pyenv import SCRIPT, extract_document, freeze_lines, run_target_probe, to_snapshot_parts
from doctor.snapshot.model import snapshot_from_dict
from tests.fakes import make_git_repo, make_package, make_site_packages, write

FINDER = '''\
import os
import sys
from importlib.util import spec_from_file_location

MAPPING = {"mindspeed": %r}


class _Finder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            pkg = MAPPING[fullname]
            return spec_from_file_location(fullname, os.path.join(pkg, "__init__.py"), submodule_search_locations=[pkg])
        return None


def install():
    if _Finder not in sys.meta_path:
        sys.meta_path.append(_Finder)
'''


def _marker(markers: Path, name: str) -> str:
    return f"open({str(markers / name)!r}, 'w').write('imported')\n"


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("pyenv")
    markers = base / "markers"
    markers.mkdir()
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = next((venv / "lib").glob("python*/site-packages"))

    make_site_packages(site, {"torch": "2.5.1", "torch_npu": "2.5.1.post1", "megatron-core": "0.12.1", "numpy": "1.26.4",
                              "vllm_ascend": "0.11.0rc1", "Private_Pkg": "1.0"},
                       direct_url={"Private_Pkg": {"url": "https://github.com/o/p.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}})
    make_package(site, "torch", {"version.py": "__version__ = '2.5.1'\ndebug = False\ncuda: Optional[str] = '12.1'\n"
                                               "git_version = 'abc'\nhip = None\n"}, init=_marker(markers, "torch"))
    make_package(site, "torch_npu", {"version.py": "__version__ = '2.5.1.post1'\n"}, init=_marker(markers, "torch_npu-site"))
    make_package(site, "megatron", {"core/__init__.py": _marker(markers, "megatron.core"),
                                    "core/package_info.py": "MAJOR = 0\nMINOR = 12\nPATCH = 1\nPRE_RELEASE = ''\n"},
                 init=_marker(markers, "megatron"))
    make_package(site, "vllm_ascend", {"_build_info.py": "# Auto-generated file\n__device_type__ = 'A3'\n"
                                                         "__soc_version__ = 'ascend910_9391'\n__sleep_mode_enabled__ = True\n"},
                 init=_marker(markers, "vllm_ascend"))
    write(site / "noisy.pth", "import sys; sys.stdout.write('a .pth that prints\\n')\n")

    # Megatron-LM checkout on PYTHONPATH: `megatron/` without __init__.py (a namespace portion), newer version
    mlm = base / "src" / "Megatron-LM"
    write(mlm / "megatron" / "core" / "package_info.py", "MAJOR = 0\nMINOR = 16\nPATCH = 0\nPRE_RELEASE = 'rc0'\n")
    write(mlm / "megatron" / "core" / "__init__.py", _marker(markers, "mlm"))

    # MindSpeed: a git checkout installed editable through a PEP 660 meta-path finder
    ms = base / "src" / "MindSpeed"
    make_package(ms, "mindspeed", {"megatron_adaptor.py": "import megatron\n\n\ndef repatch(config):\n    pass\n"},
                 init=_marker(markers, "mindspeed"))
    ms_sha = make_git_repo(ms, branch="2.3.0_core_r0.12.1", tag="v2.3.0")
    write(site / "__editable___mindspeed_0_12_1_finder.py", FINDER % str(ms / "mindspeed"))
    write(site / "__editable__.mindspeed-0.12.1.pth",
          "import __editable___mindspeed_0_12_1_finder; __editable___mindspeed_0_12_1_finder.install()\n")
    make_site_packages(site, {"mindspeed": "0.12.1"}, editable={"mindspeed": ms})

    # verl: a dirty checkout installed the legacy way (a path line in a .pth)
    vs = base / "src" / "verl"
    make_package(vs, "verl", {"version/version": "0.7.1.dev\n"}, init=_marker(markers, "verl"))
    verl_sha = make_git_repo(vs, dirty=True)
    write(site / "__editable__.verl-0.7.1.dev0.pth", f"{vs}\n")
    make_site_packages(site, {"verl": "0.7.1.dev0"}, editable={"verl": vs})

    # the user's cwd holds a torch_npu source tree that shadows the installed one
    work = base / "work"
    make_package(work, "torch_npu", {"version.py": "__version__ = '2.5.1+gitdeadbeef'\n"}, init=_marker(markers, "torch_npu-cwd"))

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base), "PYTHONPATH": str(mlm),
           "GIT_CONFIG_NOSYSTEM": "1"}
    doc, err, run = run_target_probe(str(py), environ=env, cwd=str(work), timeout=60)
    git_errors = add_git_facts(doc or {}, env)  # what host.probe_python does after the in-target probe
    assert git_errors == []
    return {"doc": doc, "err": err, "run": run, "parts": to_snapshot_parts(doc or {}), "site": site, "work": work,
            "mlm": mlm, "ms": ms, "ms_sha": ms_sha, "vs": vs, "verl_sha": verl_sha, "markers": markers, "py": py}


def test_probe_ran_and_imported_nothing(target: dict[str, Any]) -> None:
    assert target["err"] is None, target["err"]
    assert target["doc"]["errors"] == []
    assert sorted(p.name for p in target["markers"].iterdir()) == []  # no probed package was imported


def test_python_facts(target: dict[str, Any]) -> None:
    py = target["parts"]["python"]
    assert py["executable"] == str(target["py"])
    assert py["site_packages"] == [str(target["site"])]
    assert py["sys_path"][0] == str(target["work"])  # cwd first, as for the user's `python -c`
    assert py["implementation"] == "CPython"


def test_packages_from_real_importlib_metadata(target: dict[str, Any]) -> None:
    pk = target["parts"]["packages"]
    assert set(pk) == {"torch", "torch-npu", "megatron-core", "numpy", "vllm-ascend", "private-pkg", "mindspeed", "verl"}
    assert pk["torch-npu"]["version"] == "2.5.1.post1" and pk["torch-npu"]["location"] == str(target["site"])
    assert pk["mindspeed"]["editable"] is True and pk["mindspeed"]["url"] == target["ms"].resolve().as_uri()
    assert pk["private-pkg"]["commit"] == "abc123" and pk["private-pkg"]["editable"] is False
    assert pk["torch"]["installer"] == "pip"


def test_cwd_source_tree_shadows_the_installed_package(target: dict[str, Any]) -> None:
    m = target["parts"]["modules"]["torch_npu"]
    assert m["origins"] == [str(target["work"] / "torch_npu"), str(target["site"] / "torch_npu")]
    assert m["version"] == "2.5.1+gitdeadbeef"


def test_torch_build_facts_without_import(target: dict[str, Any]) -> None:
    m = target["parts"]["modules"]["torch"]
    assert m["version"] == "2.5.1"
    assert m["build"] == {"debug": False, "cuda": "12.1", "git_version": "abc", "hip": None}


def test_every_megatron_copy_with_its_version(target: dict[str, Any]) -> None:
    m = target["parts"]["modules"]["megatron"]
    site_copy, mlm_copy = str(target["site"] / "megatron"), str(target["mlm"] / "megatron")
    assert set(m["origins"]) == {site_copy, mlm_copy}
    assert m["resolved"] == [site_copy]  # a regular package beats an earlier namespace portion
    assert {c["path"]: c["version"] for c in m["copies"]} == {site_copy: "0.12.1", mlm_copy: "0.16.0rc0"}
    assert m["version"] == "0.12.1"


def test_pep660_finder_and_git_facts(target: dict[str, Any]) -> None:
    m = target["parts"]["modules"]["mindspeed"]
    assert m["origins"] == [str(target["ms"] / "mindspeed")]
    assert m["features"] == {"repatch": True, "megatron_adaptor": False}  # its __init__ imports no MegatronAdaptor
    g = m["git"]
    assert (g["commit"], g["branch"], g["tag"], g["dirty"]) == (target["ms_sha"], "2.3.0_core_r0.12.1", "v2.3.0", False)
    assert target["doc"]["editable_finders"]["mindspeed"][0]["path"] == str(target["ms"] / "mindspeed")


def test_a_mindspeed_that_imports_megatron_adaptor_says_so_without_importing_it(tmp_path: Path) -> None:
    """MindSpeed core_r0.17.0's mindspeed/__init__.py starts with `import megatron_adaptor` (MegatronAdaptor, a separate
    install): the probe reads that from the file, never imports it, and reports whether megatron_adaptor is findable."""
    src = tmp_path / "MindSpeed"
    markers = tmp_path / "markers"
    markers.mkdir()
    make_package(src, "mindspeed", {"megatron_adaptor.py": "def repatch(args):\n    pass\n"},
                 init='"""Mindspeed."""\n\nimport megatron_adaptor  # noqa: F401\n' + _marker(markers, "mindspeed"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "PYTHONPATH": str(src)}
    doc, _, _ = run_target_probe(sys.executable, environ=env, cwd=str(tmp_path), timeout=60)
    mods = to_snapshot_parts(doc or {})["modules"]
    assert mods["mindspeed"]["features"] == {"repatch": True, "megatron_adaptor": True}
    assert mods["megatron_adaptor"] is None and not list(markers.iterdir())
    make_package(tmp_path / "MegatronAdaptor", "megatron_adaptor", init=_marker(markers, "megatron_adaptor"))
    env["PYTHONPATH"] += os.pathsep + str(tmp_path / "MegatronAdaptor")
    doc, _, _ = run_target_probe(sys.executable, environ=env, cwd=str(tmp_path), timeout=60)
    assert to_snapshot_parts(doc or {})["modules"]["megatron_adaptor"]["origins"] == [
        str(tmp_path / "MegatronAdaptor" / "megatron_adaptor")]
    assert not list(markers.iterdir())


# What `pip install -e Megatron-LM` (core_r0.16.0, setuptools' PEP 660 finder) leaves for `megatron`, a namespace package
# there: MAPPING names only megatron.core; `megatron` resolves to a portion that is a placeholder string on sys.path,
# served by a path hook, not a directory. Written here from how the generated finder behaves, not copied from it.
NS_FINDER = """\
import sys
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_file_location

PLACEHOLDER = "__editable__.megatron_core-0.16.2.finder" + ".__path_hook__"
MAPPING = {"megatron.core": %r}
NAMESPACES = {"megatron": []}


class _Finder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            pkg = MAPPING[fullname]
            return spec_from_file_location(fullname, pkg + "/__init__.py", submodule_search_locations=[pkg])
        return None


class _Portion:
    def __init__(self, entry):
        if entry != PLACEHOLDER:
            raise ImportError(entry)

    def find_spec(self, fullname, target=None):
        if fullname not in NAMESPACES:
            return None
        spec = ModuleSpec(fullname, None, is_package=True)
        spec.submodule_search_locations = [PLACEHOLDER]
        return spec


def install():
    sys.meta_path.append(_Finder)
    sys.path_hooks.append(_Portion)
    sys.path.append(PLACEHOLDER)
    sys.path_importer_cache.clear()
"""


def test_an_editable_megatron_checkout_is_one_copy_at_its_directory(tmp_path: Path) -> None:
    """Real venv (verl's install_vllm_mcore_npu.sh: `pip install -e Megatron-LM` at core_r0.16.0): the probe gave
    megatron the origin '<cwd>/__editable__.megatron_core-0.16.2.finder.__path_hook__' (a placeholder, not a
    directory) and no version; with the same checkout also on PYTHONPATH, as verl's older docs add it, check said
    '2 copies of megatron are importable'. The placeholder stands for the checkout's megatron/ directory."""
    markers = tmp_path / "markers"
    markers.mkdir()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    mlm = tmp_path / "Megatron-LM"
    write(mlm / "megatron" / "core" / "package_info.py", "MAJOR = 0\nMINOR = 16\nPATCH = 2\nPRE_RELEASE = ''\n")
    write(mlm / "megatron" / "core" / "__init__.py", _marker(markers, "megatron.core"))
    write(site / "__editable___megatron_core_0_16_2_finder.py", NS_FINDER % str(mlm / "megatron" / "core"))
    write(site / "__editable__.megatron_core-0.16.2.pth",
          "import __editable___megatron_core_0_16_2_finder; __editable___megatron_core_0_16_2_finder.install()\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    for pythonpath in ("", str(mlm)):
        doc, _, _ = run_target_probe(str(venv / "bin" / "python"), environ={**env, "PYTHONPATH": pythonpath},
                                     cwd=str(tmp_path), timeout=60)
        m = to_snapshot_parts(doc or {})["modules"]["megatron"]
        assert m["origins"] == [str(mlm / "megatron")] and m["version"] == "0.16.2"
        assert "resolved" not in m
    assert not list(markers.iterdir())


def test_legacy_editable_dirty_checkout(target: dict[str, Any]) -> None:
    m = target["parts"]["modules"]["verl"]
    assert m["origins"] == [str(target["vs"] / "verl")]
    assert m["version"] == "0.7.1.dev"
    assert m["git"]["dirty"] is True and m["git"]["commit"] == target["verl_sha"] and m["git"]["branch"] == "main"


def test_vllm_ascend_build_info(target: dict[str, Any]) -> None:
    b = target["parts"]["modules"]["vllm_ascend"]["build"]
    assert b == {"device_type": "A3", "soc_version": "ascend910_9391", "sleep_mode_enabled": True}


def test_absent_modules_are_null(target: dict[str, Any]) -> None:
    mods = target["parts"]["modules"]
    assert mods["transformer_engine"] is None and mods["vllm"] is None and mods["mbridge"] is None


def test_parts_load_as_a_snapshot(target: dict[str, Any]) -> None:
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "complete": True, **target["parts"]})
    assert snap.version("torch_npu") == "2.5.1.post1"
    assert snap.has_package("vllm") is False


def test_libstdcxx_reaches_the_snapshot_and_odd_values_stay_unknown(target: dict[str, Any]) -> None:
    """The probe's C++ runtime fact rides into `python.libstdcxx` (rule 10) as the model reads it; a wrongly typed
    one from an old or hand-edited probe document is left out (unknown), never passed on as a fact."""
    if "libstdcxx" in target["doc"]["python"]:  # Linux: the loader was asked
        snap = snapshot_from_dict({"schema": "doctor.snapshot/1", **target["parts"]})
        cxx = snap.python.libstdcxx
        assert cxx is None or cxx.path == target["doc"]["python"]["libstdcxx"]["path"]
    base = {"version": "3.11.7"}
    odd = [("a string", None), ({"path": 3, "glibcxx": "3.4.30", "system": "x"}, {"glibcxx": "3.4.30"})]
    for raw, want in odd:
        parts = to_snapshot_parts({"python": {**base, "libstdcxx": raw}})
        assert parts["python"].get("libstdcxx", "unknown") == (want if want is not None else "unknown")
    parts = to_snapshot_parts({"python": {**base, "libstdcxx": None}})
    assert parts["python"]["libstdcxx"] is None  # probed: the loader found none
    full = {"path": "/opt/conda/lib/libstdc++.so.6.0.29", "glibcxx": "3.4.29", "cxxabi": "1.3.13",
            "system": {"path": "/usr/lib64/libstdc++.so.6.0.30", "glibcxx": "3.4.30", "cxxabi": "1.3.13"}}
    parts = to_snapshot_parts({"python": {**base, "libstdcxx": full}})
    assert snapshot_from_dict({"schema": "doctor.snapshot/1", **parts}).to_dict()["python"]["libstdcxx"] == full


def test_freeze_lines(target: dict[str, Any]) -> None:
    lines = freeze_lines(target["doc"])
    assert "torch==2.5.1" in lines
    assert f"-e {target['ms'].resolve().as_uri()}" in lines
    assert "Private_Pkg @ git+https://github.com/o/p.git@abc123" in lines


# -- failures are recorded, not raised --------------------------------------------------------------------


def test_missing_interpreter(tmp_path: Path) -> None:
    doc, err, run = run_target_probe(str(tmp_path / "nope" / "python"))
    assert doc is None and "no such file" in err and run is None


def test_crashing_interpreter(tmp_path: Path) -> None:
    exe = write(tmp_path / "python", "#!/bin/sh\necho 'Fatal Python error: init_fs_encoding' >&2\nexit 3\n", mode=0o755)
    doc, err, run = run_target_probe(str(exe), cwd=str(tmp_path))
    assert doc is None and "exit code 3: Fatal Python error" in err


def test_a_shim_that_refuses_to_run_is_named_by_its_first_line(tmp_path: Path) -> None:
    """Seen on a real host: `check --python /root/.pyenv/shims/python3.9` where pyenv has 3.9 installed but not
    selected. The shim prints five lines and exits 127; the error quoted the last ("Python versions to be found at
    the same time."), which says nothing. A traceback's last line is its exception; any other output's first line
    is what went wrong."""
    said = ("pyenv: python3.9: command not found\n\nThe `python3.9' command exists in these Python versions:\n"
            "  3.9.18\n\nNote: See 'pyenv help global' for tips on allowing multiple\n"
            "      Python versions to be found at the same time.\n")
    exe = write(tmp_path / "python3.9", f"#!/bin/sh\ncat >&2 <<'EOF'\n{said}EOF\nexit 127\n", mode=0o755)
    doc, err, run = run_target_probe(str(exe), cwd=str(tmp_path))
    assert doc is None and "exit code 127: pyenv: python3.9: command not found" in err
    exe = write(tmp_path / "python", "#!/bin/sh\necho 'sitecustomize.py:1: UserWarning: x' >&2\n"
                "echo 'Traceback (most recent call last):' >&2\n"
                "echo '  File \"<string>\", line 1' >&2\necho 'SyntaxError: invalid syntax' >&2\nexit 1\n", mode=0o755)
    doc, err, run = run_target_probe(str(exe), cwd=str(tmp_path))
    assert doc is None and "exit code 1: SyntaxError: invalid syntax" in err


def test_hanging_interpreter_is_killed(tmp_path: Path) -> None:
    exe = write(tmp_path / "python", "#!/bin/sh\nsleep 600\n", mode=0o755)
    doc, err, run = run_target_probe(str(exe), cwd=str(tmp_path), timeout=0.5)
    assert doc is None and "killed" in err and run.status == "timeout"


# -- the script itself ------------------------------------------------------------------------------------


def test_script_is_python38_syntax_and_stdlib_only() -> None:
    src = Path(SCRIPT).read_text()
    tree = ast.parse(src, feature_version=(3, 8))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)
    for newer in (".removeprefix(", ".removesuffix(", "functools.cache(", ".is_relative_to(", "dist.name"):
        assert newer not in src
    assert not any(isinstance(n, ast.Match) for n in ast.walk(tree))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_extract_document_never_raises(text: str) -> None:
    doc, err = extract_document(text)
    assert (doc is None) != (err is None)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                     lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.text(max_size=10), ch, max_size=4), max_leaves=20)


@settings(max_examples=120, deadline=None)
@given(st.fixed_dictionaries({}, optional={
    "python": _json | st.fixed_dictionaries({}, optional={"version": _json, "site_packages": _json, "sys_path": _json}),
    "distributions": _json | st.lists(st.fixed_dictionaries({"name": st.text(min_size=1, max_size=8)}, optional={
        "version": _json, "editable": _json, "url": _json, "location": _json, "shadowed": _json, "commit": _json}), max_size=5),
    "modules": _json | st.dictionaries(st.text(max_size=8), _json | st.fixed_dictionaries({}, optional={
        "origins": _json, "version": _json, "git": _json, "features": _json, "build": _json}), max_size=4),
}))
def test_any_probe_document_becomes_a_loadable_snapshot(doc: dict) -> None:
    parts = to_snapshot_parts(doc)
    snapshot_from_dict({"schema": "doctor.snapshot/1", **parts})
    json.dumps(parts)
    freeze_lines(doc)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_in_target_text_readers_never_raise(text: str) -> None:
    from doctor.probes import _target_probe as tp

    assert isinstance(tp.simple_assignments(text), dict)
    assert isinstance(tp.literal_assignments(text), dict)
    m = tp._VERSION_RE.search(text)
    assert m is None or isinstance(m.group(1), str)


def test_stdlib_names_in_the_cwd_do_not_break_the_probe(tmp_path: Path) -> None:
    """The probe starts from `python -c` in the user's cwd: files there named like what it imports first (sys,
    importlib, json, re, marshal) must not stop it, while the cwd stays first on its sys.path."""
    for name in ("sys", "importlib", "json", "re", "marshal", "_frozen_importlib_external"):
        write(tmp_path / f"{name}.py", "raise SystemExit('shadowed: %s' % __name__)\n")
    doc, err, run = run_target_probe(sys.executable, cwd=str(tmp_path), timeout=60)
    assert err is None and doc is not None, (err, run and run.err)
    assert doc["python"]["sys_path"][0] == str(tmp_path) and doc["python"]["cwd"] == str(tmp_path)
    assert doc["distributions"] and not doc["errors"]


# -- the probe started before the command line is parsed (start_early) ------------------------------------


def test_an_early_probe_is_taken_over_by_the_same_start_and_gives_the_same_answer(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from doctor.probes import pyenv

    monkeypatch.chdir(tmp_path)
    pyenv.start_early()
    early = pyenv._EARLY[-1]
    got = pyenv.start_target_probe(None)
    assert got is early and not pyenv._EARLY
    doc, err, _ = run_target_probe(None, started=got)
    fresh, _, _ = run_target_probe(None)
    assert err is None and doc is not None and fresh is not None
    assert [d["name"] for d in doc["distributions"]] == [d["name"] for d in fresh["distributions"]]


def test_an_early_probe_another_start_does_not_match_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from doctor.probes import pyenv

    monkeypatch.chdir(tmp_path)
    pyenv.start_early()
    early = pyenv._EARLY[-1]
    other = pyenv.start_target_probe(None, args=["--dists-only"])
    assert other is not early and not pyenv._EARLY
    assert early.started is not None and early.started.proc is not None and early.started.proc.returncode is not None
    doc, err, _ = run_target_probe(None, started=other)
    assert err is None and doc is not None and doc["modules"] == {}


def test_an_early_probe_nobody_takes_is_killed_at_exit(tmp_path: Path) -> None:
    """A command that ends before its check starts (an error, a crash) leaves no probe running behind it."""
    hang = write(tmp_path / "hang.py", "import time\ntime.sleep(600)\n")
    code = ("import doctor.probes.pyenv as p\n"
            f"p.SCRIPT = {str(hang)!r}\n"
            "p.start_early()\n"
            "print(p._EARLY[0].started.proc.pid)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    pid = int(out.stdout.strip())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_an_early_start_that_fails_is_left_to_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run before the command line is parsed, a failing start (the working directory was deleted) must not raise
    there: the command's own start meets the same failure and reports it."""
    from doctor.probes import pyenv

    def gone() -> str:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(os, "getcwd", gone)
    pyenv.start_early()
    assert not pyenv._EARLY


def test_a_deleted_working_directory_is_a_start_error_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """`doctor check` run from a directory removed under it (os.getcwd raises) said "internal error:
    FileNotFoundError ... this is a bug in the doctor"; it is the probe's start failing, said as such."""
    from doctor.probes import pyenv

    def gone() -> str:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(os, "getcwd", gone)
    tp = pyenv.start_target_probe(None)
    assert tp.started is None and tp.error is not None and "working directory" in tp.error
    doc, err, _ = run_target_probe(None)
    assert doc is None and err == tp.error


def test_the_facts_a_fix_needs_reach_the_snapshot_and_survive_a_round_trip(target: dict[str, Any]) -> None:
    """Rule 13 from the real `venv --without-pip` target: no pip, not externally managed (a venv), not made by uv;
    the values ride through the model and back; wrongly typed ones from an old or hand-edited document are left
    out (unknown)."""
    py = target["parts"]["python"]
    assert py["pip"] is False and py["externally_managed"] is False and py["uv_venv"] is None
    assert isinstance(py["ensurepip"], bool)
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", **target["parts"]})
    assert snap.python.pip is False and snap.python.uv_venv is None
    back = snapshot_from_dict(json.loads(json.dumps(snap.to_dict())))
    assert {k: back.to_dict()["python"][k] for k in ("pip", "ensurepip", "externally_managed", "uv_venv")} == \
        {k: py[k] for k in ("pip", "ensurepip", "externally_managed", "uv_venv")}
    odd = to_snapshot_parts({"python": {"version": "3.11.7", "pip": "yes", "externally_managed": 1, "uv_venv": 3}})
    assert not {"pip", "externally_managed", "uv_venv"} & set(odd["python"])
    assert "break_system_packages" not in py  # rule 15: recorded for an externally managed interpreter only


def test_the_pep_668_override_reaches_the_snapshot_and_odd_entries_are_dropped() -> None:
    """Rule 15: {command: what turns pip's guard off}; other commands and non-text values are not kept; an older
    snapshot without it loads with the fact unknown."""
    from doctor.snapshot.model import known

    parts = to_snapshot_parts({"python": {"version": "3.11.2", "externally_managed": True, "break_system_packages": {
        "install": "/etc/pip.conf", "uninstall": 1, "download": "x"}}})
    assert parts["python"]["break_system_packages"] == {"install": "/etc/pip.conf"}
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", **parts})
    assert snap.python.break_system_packages == {"install": "/etc/pip.conf"}
    assert snapshot_from_dict(json.loads(json.dumps(snap.to_dict()))).python.break_system_packages == \
        {"install": "/etc/pip.conf"}
    old = snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"version": "3.11.2", "externally_managed": True}})
    assert not known(old.python.break_system_packages)
    assert "break_system_packages" not in to_snapshot_parts({"python": {"break_system_packages": "yes"}})["python"]


def test_verified_files_reader_keeps_what_is_well_typed_and_loads_as_a_snapshot() -> None:
    """The probe's `verify_files` answer into `python.verified_files` (rule 14): wrong types are left out (unknown),
    never guessed, and the result loads with the model's own types."""
    from doctor.probes.pyenv import verified_files
    from doctor.snapshot.loader import section_from_dict
    from doctor.snapshot.model import VerifiedFiles, known

    assert verified_files(None) is None and verified_files({"dists": "x"}) is None
    got = verified_files({
        "seconds": 1.5, "budget": True, "skipped": [{"dist": "vllm", "version": None, "why": "editable"}, 3],
        "dists": [
            {"dist": "torch", "version": "2.13.0", "location": "/v", "files": 12, "bytes": -1, "modified": 2,
             "shared": 1, "binary": True, "missing": 0, "unverified": 1.5,
             "examples": [{"path": "torch/lib/libc10.so", "size": 10, "expected_size": None, "kind": "binary",
                           "also": ["x", 1]}, {"path": 3}, "junk", {"path": "a.py", "kind": "weird", "size": "9"}],
             "missing_examples": ["a", None]},
            {"version": "1"}, "junk"]})
    assert got == {
        "seconds": 1.5, "skipped": [{"dist": "vllm", "version": None, "why": "editable"}],
        "dists": [{"dist": "torch", "version": "2.13.0", "location": "/v", "files": 12, "modified": 2, "shared": 1,
                   "missing": 0,
                   "examples": [{"path": "torch/lib/libc10.so", "size": 10, "expected_size": None, "kind": "binary",
                                 "also": ["x"]}, {"path": "a.py"}],
                   "missing_examples": ["a"]}]}
    vf = section_from_dict(VerifiedFiles, got, "python.verified_files")
    assert vf.dists[0].examples[0].kind == "binary" and not known(vf.budget) and not known(vf.dists[0].binary)


def test_a_distribution_whose_files_cannot_be_read_is_named_in_the_error(monkeypatch):
    """When importlib.metadata's `files` raises and neither RECORD nor installed-files.txt can be read either, the
    probe records the error under the distribution's name, not the object's repr, whose memory address made the
    snapshot's text differ from run to run."""
    from doctor.probes import _target_probe as tp

    class Broken:
        @property
        def files(self):
            raise TypeError("make_file() missing 1 required positional argument: 'name'")

    monkeypatch.setattr(tp, "_ERRORS", [])
    assert tp._record_files(Broken(), "numpy") == []
    assert tp._ERRORS == ["numpy: RECORD: TypeError: make_file() missing 1 required positional argument: 'name'"]


def test_a_record_with_a_blank_line_still_gives_its_file_list(tmp_path: Path) -> None:
    """A blank line in RECORD makes importlib.metadata's `files` raise on every Python from 3.8 to 3.13 (csv gives an
    empty row; make_file() misses 'name'). The probe's `--files` (what `doctor install`'s journal keeps, and removes or
    puts back on a rollback) still lists that distribution's files, read from the same RECORD, with no error."""
    site = make_site_packages(tmp_path / "site", {"other": "1.0"})
    di = write(site / "mc-1.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: mc\nVersion: 1.0\n").parent
    write(site / "mc" / "__init__.py", "")
    write(di / "RECORD", "\nmc/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n\n"
                         "mc-1.0.dist-info/METADATA,,\nmc-1.0.dist-info/RECORD,,\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    doc, err, run = run_target_probe(sys.executable, environ={**env, "PYTHONPATH": str(site)}, cwd=str(tmp_path),
                                     args=["--dists-only", "--files"], timeout=60)
    assert err is None and doc is not None, (err, run and run.err)
    mc = next(d for d in doc["distributions"] if d["name"] == "mc")
    assert mc["files"] == ["mc/__init__.py", "mc-1.0.dist-info/METADATA", "mc-1.0.dist-info/RECORD"]
    assert not [e for e in doc["errors"] if e.startswith("mc:")]


def test_an_egg_info_file_outside_the_site_dir_keeps_the_egg_infos_file_list(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An egg-info install's installed-files.txt lists its console scripts outside the site dir (../../../bin/x); on
    Python 3.12 before its fix, importlib.metadata's `files` raises ValueError ('... is not in the subpath of ...'). The
    probe lists the files as 3.13 does: relative to the site dir, the script as ../../bin/x."""
    import importlib.metadata as md

    from doctor.probes import _target_probe as tp

    site = tmp_path / "lib" / "site"
    egg = write(site / "foo-1.egg-info" / "PKG-INFO", "Metadata-Version: 1.1\nName: foo\nVersion: 1\n").parent
    write(egg / "installed-files.txt", "../foo/__init__.py\n../../../bin/foo-cli\n")
    write(site / "foo" / "__init__.py", "")
    write(tmp_path / "bin" / "foo-cli", "")

    class Python312(md.PathDistribution):
        @property
        def files(self):  # what 3.12.1's relative_to does with ../../../bin/foo-cli
            raise ValueError(f"'{tmp_path}/bin/foo-cli' is not in the subpath of '{site}'")

    monkeypatch.setattr(tp, "_ERRORS", [])
    assert tp._record_files(Python312(egg), "foo") == ["foo/__init__.py", "../../bin/foo-cli"]
    assert tp._ERRORS == []


def _bare_venv(base: Path) -> tuple[Path, Path]:
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python", next((venv / "lib").glob("python*/site-packages"))


def _probe_from(py: Path, cwd: Path) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
    doc, err, run = run_target_probe(str(py), environ=env, cwd=str(cwd), timeout=60)
    assert err is None and doc is not None, (err, run and run.err)
    return to_snapshot_parts(doc)


def _snapshot(parts: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return {"schema": "doctor.snapshot/1", "host": {"cwd": str(cwd)}, **parts}


def test_a_ray_session_directory_in_the_cwd_is_not_an_installed_ray(tmp_path: Path) -> None:
    """Run from /tmp on a Ray head node, the probe recorded modules.ray = /tmp/ray (kind namespace): Ray's session
    directory (ray.init's default temp dir) made a `ray` namespace package of the cwd, for an interpreter without Ray,
    and an extra `ray` origin beside the installed one for an interpreter with it, so explain called a Ray job's own
    code (unpacked under /tmp/ray/session_*/runtime_resources/working_dir_files/) Ray's. A process started
    elsewhere (the training job) has no such module; no import loads that directory where Ray is installed."""
    from doctor.knowledge.ownership import owner_of_path
    from doctor.snapshot.model import snapshot_from_dict

    py, site = _bare_venv(tmp_path)
    cwd = tmp_path / "tmp"
    session = cwd / "ray" / "session_2026-12-07_07-48-56_123456_4242"
    job = session / "runtime_resources" / "working_dir_files" / "_ray_pkg_8f2c1a9e3b7d4c60" / "train.py"
    write(job, "import ray\n")
    write(session / "logs" / "raylet.out", "[state-dump] NodeManager:\n")
    write(session / "sockets" / "raylet", "")
    write(session / "prom_metrics_service_discovery.json", "[]\n")
    os.symlink(session, cwd / "ray" / "session_latest")
    os.symlink(session / "prom_metrics_service_discovery.json", cwd / "ray" / "prom_metrics_service_discovery.json")

    assert _probe_from(py, cwd)["modules"]["ray"] is None  # `python -c 'import ray'` in a job: No module named 'ray'

    make_site_packages(site, {"ray": "2.60.0"}, top_level={"ray": ["ray"]})
    make_package(site, "ray", {"_version.py": "version = '2.60.0'\n"})
    parts = _probe_from(py, cwd)
    assert parts["modules"]["ray"]["origins"] == [str(site / "ray")] and "resolved" not in parts["modules"]["ray"]
    snap = snapshot_from_dict(_snapshot(parts, cwd))
    assert owner_of_path(str(job), snap) is None  # the job's own code
    assert owner_of_path(str(site / "ray" / "worker.py"), snap).distribution == "ray"


def test_the_root_of_a_verl_checkout_in_the_cwd_is_not_verl(tmp_path: Path) -> None:
    """`git clone https://github.com/volcengine/verl` in $HOME, the doctor run from $HOME: the checkout's root (setup.py,
    verl/, examples/ ...) is a directory named verl without __init__.py. Without verl installed the probe called it
    the `verl` module (a namespace package of the cwd) and check said `import verl` picks up a source tree in the
    current directory; with it installed editable (setuptools' path line to the checkout) the root was a second verl
    origin. The package is the checkout's verl/verl; a namespace portion in a directory only the cwd puts on the path
    is nothing installed. A portion there that hides an editable finder's package is still recorded (an import run
    from the cwd gets that empty namespace: cwd-shadows-package says so)."""
    from tests.stacks import found

    py, site = _bare_venv(tmp_path)
    home = tmp_path / "home"
    root = home / "verl"
    for rel, text in {"setup.py": "from setuptools import setup\nsetup(name='verl')\n",
                      "pyproject.toml": "[build-system]\nrequires = ['setuptools']\n",
                      "requirements-npu.txt": "torch==2.7.1\n", "README.md": "# verl\n",
                      "verl/__init__.py": "", "verl/version/version": "0.9.1\n",
                      "verl/trainer/__init__.py": "", "verl/trainer/main_ppo.py": "",
                      "examples/grpo_trainer/run_qwen2_5_7b_grpo_npu.sh": "python3 -m verl.trainer.main_ppo\n",
                      "recipe/README.md": "", "tests/__init__.py": ""}.items():
        write(root / rel, text)

    parts = _probe_from(py, home)
    assert parts["modules"]["verl"] is None
    assert "cwd-shadows-package" not in found(_snapshot(parts, home))

    write(site / "__editable__.verl-0.9.1.pth", f"{root}\n")
    make_site_packages(site, {"verl": "0.9.1"}, editable={"verl": root})
    parts = _probe_from(py, home)
    assert parts["modules"]["verl"]["origins"] == [str(root / "verl")] and parts["modules"]["verl"]["version"] == "0.9.1"
    assert "cwd-shadows-package" not in found(_snapshot(parts, home))

    ms = tmp_path / "src" / "MindSpeed"
    make_package(ms, "mindspeed")
    write(site / "__editable___mindspeed_0_12_1_finder.py", FINDER % str(ms / "mindspeed"))
    write(site / "__editable__.mindspeed-0.12.1.pth",
          "import __editable___mindspeed_0_12_1_finder; __editable___mindspeed_0_12_1_finder.install()\n")
    write(home / "mindspeed" / "docs" / "README.md", "")
    m = _probe_from(py, home)["modules"]["mindspeed"]
    assert m["kind"] == "namespace" and m["origins"] == [str(home / "mindspeed"), str(ms / "mindspeed")]


def test_a_target_whose_start_up_reads_stdin_is_probed_not_hung(tmp_path: Path) -> None:
    """The probe script is loaded from its file, not fed through stdin, and the target's stdin is empty: a
    site-wide start-up hook that reads stdin (a `.pth` or sitecustomize waiting for input) gets EOF at once
    and the probe still returns its document, at any size of the probe script."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    write(site / "sitecustomize.py", "import sys\nsys.stdin.read()\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    doc, err, run = run_target_probe(str(venv / "bin" / "python"), environ=env, cwd=str(tmp_path), timeout=30)
    assert err is None and doc is not None, err
    assert run is not None and run.status == "ok"
