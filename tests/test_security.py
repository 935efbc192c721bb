"""Security properties that hold across the whole tool.

- no shell: no `shell=True`, `os.system`, `os.popen`, `eval` or `exec` anywhere in the shipped code;
- snapshots, profiles and logs are data: strings that would run something in a shell run nothing when they
  pass through check, diff, explain, collect output or launch rendering.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [p for d in ("doctor", "installers") for p in (ROOT / d).rglob("*.py")]
DOCTOR = [sys.executable, "-m", "doctor"]


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_shell_and_no_dynamic_code(path):
    tree = ast.parse(path.read_text(), str(path))
    for call in _calls(tree):
        for kw in call.keywords:
            assert not (kw.arg == "shell" and isinstance(kw.value, ast.Constant) and kw.value.value is True), \
                f"{path}:{call.lineno}: shell=True"
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        assert not (owner == "os" and name in ("system", "popen")), f"{path}:{call.lineno}: os.{name}"
        assert not (isinstance(f, ast.Name) and name in ("eval", "exec")), f"{path}:{call.lineno}: {name}()"


def _payloads(marker: Path) -> list[str]:
    m = str(marker)
    return [f"$(touch {m}.1)", f"`touch {m}.2`", f"x; touch {m}.3", f"x\ntouch {m}.4", f"'; touch {m}.5; '",
            f"${{IFS}}touch${{IFS}}{m}.6"]


def _no_markers(marker: Path) -> None:
    left = sorted(p.name for p in marker.parent.glob(marker.name + ".*"))
    assert left == [], f"something executed a payload: {left}"


def test_snapshot_strings_are_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    bad = _payloads(marker)
    snap = {
        "schema": "doctor.snapshot/1",
        "complete": True,
        "host": {"arch": "aarch64", "cwd": bad[0], "hostname": bad[1]},
        "python": {"version": "3.11.7", "executable": bad[2]},
        "packages": {"torch": {"version": "2.5.1", "location": bad[3]}, "torch-npu": {"version": bad[4]}},
        "ascend": {"toolkit": {"version": "8.3.RC1", "path": bad[0]}, "devices": [{"id": 0, "chip": bad[5]}]},
        "env": {"ASCEND_HOME_PATH": bad[1], "LD_LIBRARY_PATH": bad[2], "GLOO_SOCKET_IFNAME": bad[3],
                "ASCEND_RT_VISIBLE_DEVICES": bad[0]},
        "network": {"interfaces": [{"name": bad[4], "addresses": [bad[5]]}], "listening_ports": [60000]},
    }
    f = tmp_path / "snap.json"
    f.write_text(json.dumps(snap))
    for args in (["check", "--from", str(f), "-v"], ["--json", "check", "--from", str(f)],
                 ["diff", str(f), str(f)]):
        r = subprocess.run([*DOCTOR, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert r.returncode in (0, 1), (args, r.stderr)
    _no_markers(marker)


def test_log_text_is_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    log = tmp_path / "run.log"
    log.write_text("\n".join(_payloads(marker) + ["ImportError: libhccl.so: cannot open shared object file"]))
    r = subprocess.run([*DOCTOR, "explain", str(log)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 1
    _no_markers(marker)


def test_profile_strings_are_data(tmp_path):
    """A profile whose free text looks like shell is loaded and printed as text, never run."""
    from doctor.knowledge.profiles import load_profiles

    marker = tmp_path / "pwned"
    payload = "The stack " + _payloads(marker)[0]  # source URLs must be pinned upstream URLs: free text carries it
    src = (ROOT / "profiles" / "stacks" / "verl-0.7.1-cann8.5.0-a2.toml").read_text()
    lines = [f"description = {json.dumps(payload)}" if ln.startswith("description =") else ln for ln in src.splitlines()]
    d = tmp_path / "profiles"
    d.mkdir()
    (d / "verl-0.7.1-cann8.5.0-a2.toml").write_text("\n".join(lines) + "\n")
    (loaded,) = load_profiles(d)
    assert loaded.description == payload
    r = subprocess.run([*DOCTOR, "profiles", "--dir", str(d), "show", loaded.name], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert _payloads(marker)[0] in r.stdout
    _no_markers(marker)
