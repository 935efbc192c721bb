"""Real PyPI packages in a plain `python3 -m venv` target: a package that checks its own requirements when imported
(part of the real-world tier: DOCTOR_REALWORLD=1; downloads ~15 MB, not in .ci/run).

- transformers 4.51.3 with tokenizers 0.22.0 (installed over its tokenizers<0.22,>=0.21 with --no-deps): its
  dependency_versions_check makes `import transformers` raise ImportError, and the doctor's live check and its
  collect + check --from both report the requirement as an error that says the import raises.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
