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
from tests.installers.wheelkit import make_wheel

PROFILE = "verl-0.7.0-cann8.3.rc1-a2"


def test_the_post_install_check_sees_megatron_on_the_env_files_pythonpath_and_its_exports(tmp_path: Path) -> None:
    """Its exports too: the operator's shell has ASCEND_RT_VISIBLE_DEVICES set (one job per chip set), and
    doctor-env.sh exports RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1, which the check reads: probed with the
    PYTHONPATH alone, the install ended in a false `ray-noset-visible-devices-unset` warning."""
    got = download_only(PROFILE, tmp_path / "world")
    got["env"] = {**got["env"], "ASCEND_RT_VISIBLE_DEVICES": "0,1"}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    # Ray, which verl runs on (its stand-in: the check reads only that it is installed), there before the install
    make_wheel(tmp_path / "ray", "ray", "2.49.2")
    subprocess.run([sys.executable, "-m", "pip", "--isolated", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-index", "--find-links", str(tmp_path / "ray"), "ray==2.49.2"], check=True, timeout=120,
                   env=got["env"])
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
    assert "export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1" in env_file
    assert "ray-noset-visible-devices-unset" not in ids, [f["title"] for f in rep["findings"]]
    assert [c.get("status") for c in rep["checks"] if c["id"] == "env-ray-visible-devices"] == ["pass"], \
        [c for c in rep["checks"] if c["id"] == "env-ray-visible-devices"]
    # and the import it judged works the way the user runs it
    cp = subprocess.run(["bash", "-c", f". {venv}/doctor-env.sh 2>/dev/null; {venv}/bin/python -c 'import megatron.core'"],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
