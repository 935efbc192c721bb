"""installers.backends: command lines, and real pip and uv installing locally built wheels into venvs.

The wheels carry the real names and pins: torch-npu's x86 wheel requires `torch==X+cpu`, which only the
PyTorch CPU index serves (shared/reference/cann_torchnpu_vllm.md §2.4)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from doctor.installers.backends import PipBackend, Source, UvBackend, find_uv, make_backend
from doctor.installers.plan import IndexOptions
from tests.installers.wheelkit import freeze, make_simple_index, make_venv, make_wheel

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is not installed")


def run(cmd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd.argv, env=cmd.environ(), capture_output=True, text=True, timeout=120)


def test_pip_command_line_targets_the_interpreter_and_is_isolated() -> None:
    cmd = PipBackend(isolated=True).install("/t/bin/python", ["torch==2.7.1+cpu"], source=Source(
        index=IndexOptions(extra_index_urls=("https://download.pytorch.org/whl/cpu",))), no_deps=True)
    argv = list(cmd.argv)
    assert argv[argv.index("--python") + 1] == "/t/bin/python" and "--isolated" in argv and "--no-deps" in argv
    assert argv[argv.index("--extra-index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    assert dict(cmd.env)["PIP_CONFIG_FILE"] == "/dev/null"


def test_uv_uses_unsafe_best_match_and_no_config() -> None:
    cmd = UvBackend(isolated=True).install("/t/bin/python", ["torch==2.7.1"], editable="/src/vllm",
                                           env=[("VLLM_TARGET_DEVICE", "empty")])
    argv = list(cmd.argv)
    assert argv[1:3] == ["pip", "install"] and argv[argv.index("--index-strategy") + 1] == "unsafe-best-match"
    assert "--no-config" in argv and argv[-2:] == ["-e", "/src/vllm"]
    assert dict(cmd.env)["VLLM_TARGET_DEVICE"] == "empty" and dict(cmd.env)["UV_NO_CONFIG"] == "1"


def test_the_users_pep_668_override_reaches_uv_as_its_flag_and_pip_through_its_own_configuration() -> None:
    """uv reads neither PIP_BREAK_SYSTEM_PACKAGES nor pip.conf (real, uv 0.13.9 on Debian's python3: refused with
    the variable set, accepted with the flag); pip reads them itself, so its line is unchanged."""
    uv = make_backend("uv", break_system_packages=True)
    assert "--break-system-packages" in uv.install("/usr/bin/python3", ["x"]).argv
    assert "--break-system-packages" in uv.uninstall("/usr/bin/python3", ["x"]).argv
    assert "--break-system-packages" not in make_backend("uv").install("/usr/bin/python3", ["x"]).argv
    pip = make_backend("pip", break_system_packages=True)
    assert pip.install("/t/bin/python", ["x"]).argv == PipBackend().install("/t/bin/python", ["x"]).argv


def test_make_backend() -> None:
    assert make_backend("auto").name == "uv"
    assert make_backend("pip").name == "pip"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("wheels")
    make_wheel(d, "torch", "2.7.1+cpu")
    make_wheel(d, "torch-npu", "2.7.1", requires=["torch==2.7.1+cpu"])
    make_wheel(d, "torchvision", "0.22.1+cpu", requires=["torch==2.7.1+cpu"])
    return d


@pytest.mark.parametrize("backend", [pytest.param(PipBackend(isolated=True), marks=pytest.mark.slow, id="pip"),
                                     pytest.param(UvBackend(isolated=True), id="uv")])
def test_real_install_and_uninstall(backend, wheels: Path, tmp_path: Path, hermetic) -> None:
    py = make_venv(tmp_path / "venv")
    src = Source(find_links=(str(wheels),), no_index=True, offline=True)
    cp = run(backend.install(str(py), ["torch-npu==2.7.1", "torchvision==0.22.1"], source=src))
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert freeze(py) == ["torch-npu==2.7.1", "torch==2.7.1+cpu", "torchvision==0.22.1+cpu"]
    cp = run(backend.uninstall(str(py), ["torchvision"]))
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert freeze(py) == ["torch-npu==2.7.1", "torch==2.7.1+cpu"]


@pytest.mark.parametrize("how", ["PIP_USER", "pip.conf"])
def test_pips_user_setting_does_not_send_a_step_to_the_user_site(how: str, wheels: Path, tmp_path: Path, hermetic,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """PIP_USER=1 or `user = true` in the user's pip.conf: on an interpreter that is not a venv each step installed
    into ~/.local, outside the target and its restore (real: torch, torch-npu, torchvision left there after the
    failed run); in a venv pip refused every step. The steps pass --no-user, which wins over both."""
    if how == "PIP_USER":
        monkeypatch.setenv("PIP_USER", "1")
    else:
        (tmp_path / "pip.conf").write_text("[install]\nuser = true\n")
        monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    py = make_venv(tmp_path / "venv")
    src = Source(find_links=(str(wheels),), no_index=True, offline=True)
    cp = run(PipBackend().install(str(py), ["torch==2.7.1+cpu"], source=src))
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert freeze(py) == ["torch==2.7.1+cpu"]
    assert "--no-user" not in PipBackend(isolated=True).install(str(py), ["x"]).argv  # pip's configuration is ignored


def test_uv_index_strategy_lets_pypi_serve_what_the_cpu_index_also_has(tmp_path: Path, hermetic) -> None:
    """The CPU index also hosts numpy (and pillow, jinja2 ...) at a few versions. With uv's default
    first-index strategy, `numpy==1.26.4` fails because the CPU index has numpy, but not 1.26.4."""
    make_wheel(tmp_path / "pypi", "numpy", "1.26.4")
    make_wheel(tmp_path / "pypi", "torch-npu", "2.7.1", requires=["torch==2.7.1+cpu"])
    make_wheel(tmp_path / "cpu", "numpy", "1.26.3")
    make_wheel(tmp_path / "cpu", "torch", "2.7.1+cpu")
    pypi = make_simple_index(tmp_path / "pypi", tmp_path / "simple-pypi")
    cpu = make_simple_index(tmp_path / "cpu", tmp_path / "simple-cpu")
    py = make_venv(tmp_path / "venv")
    src = Source(index=IndexOptions(index_url=pypi, extra_index_urls=(cpu,)))
    cmd = UvBackend(isolated=True).install(str(py), ["torch-npu==2.7.1", "numpy==1.26.4"], source=src)
    cp = run(cmd)
    assert cp.returncode == 0, cp.stderr
    assert freeze(py) == ["numpy==1.26.4", "torch-npu==2.7.1", "torch==2.7.1+cpu"]
    first = [a for a in cmd.argv if a != "unsafe-best-match"]
    first[first.index("--index-strategy") + 1:first.index("--index-strategy") + 1] = ["first-index"]
    py2 = make_venv(tmp_path / "venv2")
    first[first.index("--python") + 1] = str(py2)
    cp = subprocess.run(first, env=cmd.environ(), capture_output=True, text=True, timeout=120)
    assert cp.returncode != 0  # what the strategy flag prevents
