"""The post-install check judges the environment the install leaves for training: doctor-env.sh, which puts
Megatron-LM's clone on PYTHONPATH for verl <= 0.7.0 (that era's docs install it that way, not with pip). Probed
without it, every complete offline install of verl-0.7.0-cann8.3.rc1-a2 (the tests' stand-in stack of it: real
names, pins and refs; a venv from plain `python3 -m venv`) ended in `mindspeed-megatron-missing` (error, exit 1):
"MindSpeed is installed but Megatron is not importable", while `. doctor-env.sh && python -c 'import megatron'`
works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.test_install import doctor, download_only

PROFILE = "verl-0.7.0-cann8.3.rc1-a2"


def test_the_post_install_check_sees_megatron_on_the_env_files_pythonpath(tmp_path: Path) -> None:
    got = download_only(PROFILE, tmp_path / "world")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    args = ["install", "--profile", PROFILE, "--venv", str(venv), "--wheelhouse", str(got["house"]), "--offline",
            "--isolated", "--no-host-check", "--backend", "pip", "--json"]
    for r in got["stack"].git_refs:
        args += ["--git-ref", r]
    cp = doctor(*args, env=got["env"])
    rep = json.loads(cp.stdout)
    assert [s["status"] for s in rep["steps"] if s["id"] == "env-file"] == ["done"], cp.stderr
    env_file = (venv / "doctor-env.sh").read_text()
    assert f"export PYTHONPATH={venv}/src/Megatron-LM" in env_file  # the install's way to Megatron
    ids = [f["id"] for f in rep["findings"]]
    assert "install-complete" in ids and rep["checks"], ids  # the post-check ran
    assert "mindspeed-megatron-missing" not in ids, [f["title"] for f in rep["findings"] if f["severity"] == "error"]
    # and the import it judged works the way the user runs it
    cp = subprocess.run(["bash", "-c", f". {venv}/doctor-env.sh 2>/dev/null; {venv}/bin/python -c 'import megatron.core'"],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
