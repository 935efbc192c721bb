"""installers.envfile: doctor-env.sh sources set_env.sh under `set +u`, quotes every value, exports PYTHONPATH."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from doctor.installers import envfile
from doctor.installers.plan import EnvSpec

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def spec(tmp: Path, **kw) -> EnvSpec:
    tk = tmp / "Ascend" / "ascend-toolkit" / "set_env.sh"
    tk.parent.mkdir(parents=True)
    # like Huawei's script: reads variables that may be unset
    tk.write_text('export ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest\n'
                  'export LD_LIBRARY_PATH=$ASCEND_HOME_PATH/lib64:$LD_LIBRARY_PATH\n')
    return EnvSpec(str(tmp / "doctor-env.sh"), set_env_files=(str(tk), str(tmp / "nnal" / "set_env.sh")),
                   pythonpath=(str(tmp / "src dir" / "Megatron-LM"),),
                   exports=(("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "1"), ("WEIRD", "a b'c\"$(touch pwned)")), **kw)


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def test_sourcing_under_set_u_works_and_restores_u(tmp_path: Path) -> None:
    s = spec(tmp_path)
    envfile.write(s, header="profile test")
    cp = bash(f"set -eu; . '{s.path}'; echo \"$ASCEND_HOME_PATH|$PYTHONPATH|$WEIRD|$RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES\";"
              " case $- in *u*) echo U ;; esac", tmp_path)
    assert cp.returncode == 0, cp.stderr
    line, u = cp.stdout.splitlines()
    assert line == f"/usr/local/Ascend/ascend-toolkit/latest|{tmp_path}/src dir/Megatron-LM|a b'c\"$(touch pwned)|1"
    assert u == "U"  # the caller's `set -u` is back
    assert "missing" in cp.stderr and "nnal" in cp.stderr  # a missing set_env.sh is said, not fatal
    assert not (tmp_path / "pwned").exists()


def test_pythonpath_is_prepended(tmp_path: Path) -> None:
    s = spec(tmp_path)
    envfile.write(s)
    cp = bash(f"export PYTHONPATH=/old; . '{s.path}'; echo $PYTHONPATH", tmp_path)
    assert cp.stdout.strip() == f"{tmp_path}/src dir/Megatron-LM:/old"


def test_is_current_and_bad_names(tmp_path: Path) -> None:
    s = spec(tmp_path)
    assert not envfile.is_current(s)
    envfile.write(s, header="h")
    assert envfile.is_current(s, header="h") and not envfile.is_current(s, header="other")
    with pytest.raises(ValueError):
        envfile.render(EnvSpec("x", exports=(("BAD NAME", "1"),)))


def test_the_file_reads_back_as_the_spec_it_was_written_from_and_applies_as_sourcing_does(tmp_path: Path) -> None:
    """The post-install check applies doctor-env.sh by reading back the file the run wrote (envfile.read), not a
    second copy of what it holds: each value as bash sees it after `. doctor-env.sh`, the odd ones included."""
    s = spec(tmp_path)
    envfile.write(s, header="profile test")
    assert envfile.read(s.path) == s
    env = envfile.environ(envfile.read(s.path), {"PYTHONPATH": "/mine", "HOME": "/h"})
    cp = bash(f". '{s.path}' 2>/dev/null; echo \"$PYTHONPATH|$WEIRD|$RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES\"",
              tmp_path)
    assert cp.stdout.strip() == f"{tmp_path}/src dir/Megatron-LM|a b'c\"$(touch pwned)|1"  # bash, no PYTHONPATH before
    assert env == {"PYTHONPATH": f"{tmp_path}/src dir/Megatron-LM:/mine", "HOME": "/h", "WEIRD": "a b'c\"$(touch pwned)",
                   "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": "1"}
    empty = EnvSpec(str(tmp_path / "e.sh"))
    envfile.write(empty)
    assert envfile.read(empty.path) == empty and envfile.environ(empty, {"A": "1"}) == {"A": "1"}
