"""Real PyPI packages in a plain `python3 -m venv` target: a package that checks its own requirements when imported
(part of the real-world tier: DOCTOR_REALWORLD=1; downloads ~15 MB, not in .ci/run).

- transformers 4.51.3 with tokenizers 0.22.0 (installed over its tokenizers<0.22,>=0.21 with --no-deps): its
  dependency_versions_check makes `import transformers` raise ImportError, and the doctor's live check and its
  collect + check --from both report the requirement as an error that says the import raises.
- The table's rows against the PyPI wheels they were read from: each LLaMA-Factory release's check_dependencies
  strings, run through the real require_version of a transformers wheel for a grid of versions, reject exactly what
  the code-needs rows call unmet (one `!=` kept per requirement); verl 0.4.0-0.6.1's __init__.py gate holds the
  row's transformers version and 0.7.0's holds none; transformers' pkgs_to_check_at_runtime is the `[[enforces]]`
  names, accelerate aside.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("DOCTOR_REALWORLD") != "1",
                                reason="real PyPI installs: run with DOCTOR_REALWORLD=1 (nox -s realworld)")
REPO = Path(__file__).resolve().parents[2]


def test_transformers_with_a_tokenizers_it_rejects_fails_to_import_and_is_an_error(tmp_path):
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "transformers==4.51.3"], check=True, timeout=1800)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "tokenizers==0.22.0"], check=True,
                   timeout=1800)
    imp = subprocess.run([str(py), "-c", "import transformers"], capture_output=True, text=True, timeout=300)
    assert imp.returncode != 0 and "tokenizers>=0.21,<0.22 is required" in imp.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # doctor found through the cwd
    live = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--python", str(py), "--only",
                           "packages"], capture_output=True, text=True, timeout=300, env=env, cwd=str(REPO))
    assert live.returncode == 1, live.stderr
    (f,) = [f for f in json.loads(live.stdout)["findings"] if f["evidence"].get("requires") == "tokenizers"]
    assert (f["id"], f["severity"]) == ("requirement-version-unmet", "error")
    assert "`import transformers` raises ImportError" in f["detail"]
    assert f["evidence"]["checked_at_import"].endswith("/v4.51.3/src/transformers/dependency_versions_check.py#L25")
    snapfile = tmp_path / "snap.json"
    subprocess.run([sys.executable, "-m", "doctor", "collect", "--python", str(py), "-o", str(snapfile)],
                   check=True, timeout=300, env=env, cwd=str(REPO), capture_output=True)
    again = subprocess.run([sys.executable, "-m", "doctor", "--json", "check", "--from", str(snapfile), "--only",
                            "packages"], capture_output=True, text=True, timeout=300, env=env, cwd=str(REPO))
    (g,) = [g for g in json.loads(again.stdout)["findings"] if g["evidence"].get("requires") == "tokenizers"]
    assert g["severity"] == "error" and "checked_at_import" in g["evidence"]


def _wheel(tmp: Path, spec: str) -> zipfile.ZipFile:
    name, version = spec.split("==")
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", spec, "-d", str(tmp)], check=True,
                   timeout=600, capture_output=True)
    (path,) = [p for p in tmp.iterdir() if p.name.startswith(f"{name.replace('-', '_')}-{version}-")]
    return zipfile.ZipFile(path)


def _checked(misc: str) -> list[str]:
    """The requirement strings check_dependencies() hands to require_version / check_version."""
    fn = next(n for n in ast.walk(ast.parse(misc)) if isinstance(n, ast.FunctionDef) and n.name == "check_dependencies")
    return [c.args[0].value for c in ast.walk(fn) if isinstance(c, ast.Call)
            and getattr(c.func, "id", "") in ("require_version", "check_version") and c.args
            and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str)]


def test_llamafactory_rows_reject_what_its_real_check_rejects(tmp_path, monkeypatch):
    from doctor.knowledge.code_needs import load

    tf = _wheel(tmp_path, "transformers==4.51.3")
    (tmp_path / "versions.py").write_bytes(tf.read("transformers/utils/versions.py"))
    spec = importlib.util.spec_from_file_location("hf_versions", tmp_path / "versions.py")
    assert spec is not None and spec.loader is not None
    versions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(versions)
    # check_dependencies()'s rows (the deepspeed rows are parser.py's DeepSpeed-config check, tested elsewhere)
    rows = [n for n in load().needs if n.package == "llamafactory" and n.needed != "deepspeed"]
    for release in sorted({r for n in rows for r in n.read_at}):
        lf = _wheel(tmp_path, f"llamafactory=={release}")
        misc = lf.read("llamafactory/extras/misc.py").decode()
        checked = _checked(misc)
        # the values that set the bypass: is_env_enabled's list from 0.9.2, the inline comparison before
        line = next(x for x in misc.splitlines() if ("def is_env_enabled" in misc and ".lower() in [" in x)
                    or ("def is_env_enabled" not in misc and "DISABLE_VERSION_CHECK" in x))
        values = set(re.findall(r'"(\w+)"', line.split(" in ")[-1]))
        assert {tuple(sorted(n.bypass_values)) for n in rows if n.applies_to(release)} == {tuple(sorted(values))}
        assert sorted(re.match(r"[\w-]+", c).group(0) for c in checked) == sorted(  # type: ignore[union-attr]
            n.needed for n in rows if n.applies_to(release)), release
        for line in checked:
            pkg = re.match(r"[\w-]+", line).group(0)  # type: ignore[union-attr]
            (need,) = [n for n in rows if n.applies_to(release) and n.needed == pkg]
            grid = set(re.findall(r"\d+(?:\.\d+)+", line)) | {"0.0.1", "99.0.0"}
            for v in sorted(grid):
                monkeypatch.setattr(versions.importlib.metadata, "version", lambda _name, v=v: v)
                try:
                    versions.require_version(line)
                    raised = False
                except ImportError:
                    raised = True
                assert raised is (need.met_by(v) is False), (release, line, v)


def test_verl_and_transformers_rows_match_their_wheels(tmp_path):
    from doctor.knowledge.code_needs import enforced, load

    gates = {n.releases: n for n in load().needs if n.package == "verl" and n.on == "npu"}
    for release in ("0.4.0", "0.4.1", "0.5.0", "0.6.0", "0.6.1", "0.7.0"):
        init = _wheel(tmp_path, f"verl=={release}").read("verl/__init__.py").decode()
        got = re.findall(r"required_version_spec = [\"']([\d.]+)[\"']", init)
        want = [n.specifier.lstrip(">=") for n in gates.values() if n.applies_to(release)]
        assert got == want, release
        assert ("is required on ASCEND NPU" in init) is bool(want)
    for release in ("4.36.0", "4.45.0", "4.57.6", "5.0.0", "5.25.0"):
        src = _wheel(tmp_path, f"transformers=={release}").read("transformers/dependency_versions_check.py").decode()
        listed = set(re.findall(r'"([\w-]+)"', src.split("pkgs_to_check_at_runtime = [")[1].split("]")[0]))
        row = enforced("transformers", release)
        assert row is not None and listed - {"accelerate"} == row.names, release
