"""A venv the run still has to make is judged with what `python -m venv` will put there: the pip (and setuptools)
its interpreter's ensurepip carries, read without running it. The layouts are real ones (pyenv's CPython 3.11.7 and
3.10.13, Debian 12's /usr/bin/python3, whose ensurepip takes /usr/share/python-wheels); the real interpreters found
here are checked against the venv each one makes; the pre-flight of an offline install into a new venv runs on a
real wheelhouse made by `doctor install --download-only` from the stand-in stack."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.console import Console
from doctor.errors import RefusedError
from doctor.installers import backends, command
from doctor.installers import wheelhouse as wh
from doctor.installers.target import probe
from doctor.installers.venvpip import choose, venv_installs
from tests.cli.test_install import PROFILE
from tests.installers.test_housecheck import copy_house, made, rewrite  # noqa: F401 - made: the module's fixture

PYENV_311 = ["__init__.py", "__pycache__", "pip-23.2.1-py3-none-any.whl", "setuptools-65.5.0-py3-none-any.whl"]
DEBIAN_WHEELS = ["pip-23.0.1-py3-none-any.whl", "setuptools-66.1.1-py3-none-any.whl"]


def test_the_wheels_ensurepip_carries_are_what_a_new_venv_holds() -> None:
    assert choose(PYENV_311, None) == {"pip": "23.2.1", "setuptools": "65.5.0"}
    # Debian removes ensurepip/_bundled and builds with WHEEL_PKG_DIR=/usr/share/python-wheels/
    assert choose((), DEBIAN_WHEELS) == {"pip": "23.0.1", "setuptools": "66.1.1"}
    # a distributor's directory stands in only when it holds each package the bundle has (CPython 3.11's rule)
    assert choose(PYENV_311, ["pip-24.0-py3-none-any.whl"]) == {"pip": "23.2.1", "setuptools": "65.5.0"}
    assert choose(["pip-24.0-py3-none-any.whl"], ["pip-24.2-py3-none-any.whl", "wheel-0.43.0-py3-none-any.whl"]) \
        == {"pip": "24.2", "wheel": "0.43.0"}
    # nothing to read (no ensurepip: Debian without python3-venv): unknown, judged against nothing as before
    assert choose((), None) == {} and venv_installs(None, None) == {}


def test_read_from_the_stdlib_directory_and_the_builds_wheel_dir(tmp_path: Path) -> None:
    (tmp_path / "lib" / "ensurepip" / "_bundled").mkdir(parents=True)
    for n in ("pip-21.2.3-py3-none-any.whl", "setuptools-57.4.0-py3-none-any.whl"):  # what CPython 3.10.0 carries
        (tmp_path / "lib" / "ensurepip" / "_bundled" / n).write_bytes(b"")
    assert venv_installs(str(tmp_path / "lib"), None) == {"pip": "21.2.3", "setuptools": "57.4.0"}
    assert venv_installs(str(tmp_path / "lib"), str(tmp_path / "absent")) == {"pip": "21.2.3", "setuptools": "57.4.0"}


def interpreters() -> list[str]:
    found = [shutil.which("python3.11"), "/root/.pyenv/versions/3.10.13/bin/python", "/usr/bin/python3", sys.executable]
    return sorted({p for p in found if p and os.path.exists(p)})


@pytest.mark.slow
@pytest.mark.parametrize("python", interpreters())
def test_what_is_read_is_what_python_m_venv_installs(python: str, tmp_path: Path) -> None:
    env = probe(python)
    expect = venv_installs(env.stdlib, env.wheel_pkg_dir)
    cp = subprocess.run([python, "-m", "venv", str(tmp_path / "v")], capture_output=True, text=True, timeout=300)
    if cp.returncode != 0:
        assert expect == {} or "ensurepip" in cp.stdout + cp.stderr, cp.stderr
        pytest.skip(f"{python} cannot make a venv here: {cp.stdout.strip()[-200:]}")
    got = {d.name: d.version for d in probe(str(tmp_path / "v" / "bin" / "python")).dists.values()}
    assert "pip" in expect and got == expect, (expect, got)


def _no_pip_wheel(made: dict, tmp_path: Path) -> Path:  # noqa: F811
    house = copy_house(made, tmp_path)
    for w in (house / wh.WHEELS).glob("pip-*.whl"):
        w.unlink()
    rewrite(house)
    return house


@pytest.mark.parametrize(("bundled", "refused"), [({"pip": "21.2.3", "setuptools": "57.4.0"}, True),
                                                   ({"pip": "23.2.1", "setuptools": "65.5.0"}, False)],
                         ids=["python-3.10.0", "python-3.11.7"])
def test_an_offline_install_into_a_venv_to_be_made_judges_the_pip_step_against_its_bundled_pip(
        made, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bundled: dict[str, str], refused: bool) -> None:  # noqa: F811
    """The target's pip runs the plan (the doctor's pip has no --python) and `python -m venv` will bring the pip its
    Python carries: 3.10.0's 21.2.3 is below the floor, and a wheelhouse with no pip wheel cannot bring it up. That is
    found before the venv is made (base: only once the run had made it); 3.11.7's 23.2.1 needs nothing."""
    house = _no_pip_wheel(made, tmp_path)
    for k, v in made["env"].items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(backends, "own_pip_version", lambda: None)
    monkeypatch.setattr("doctor.installers.venvpip.venv_installs", lambda stdlib, wheel_dir: dict(bundled))
    venv = tmp_path / "venv"
    opts = command.Options(profile=PROFILE, venv=str(venv), wheelhouse=str(house), offline=True, backend="pip",
                           isolated=True, no_host_check=True, dry_run=True)
    if refused:
        with pytest.raises(RefusedError) as e:
            command.run(opts, Console(err=io.StringIO()))
        msg = " ".join(str(e.value).split())
        assert "cannot serve this plan offline" in msg and "step pip (Bring the target's pip to >= 21.3)" in msg, msg
        assert "needs pip>=21.3 (it holds no pip)" in msg, msg
    else:
        report = command.run(opts, Console(err=io.StringIO()))
        assert report.extra["dry_run"] is True
    assert not venv.exists()
