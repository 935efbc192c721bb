"""pip's configuration that changes what the install does, decided per setting before the first change: PIP_NO_DEPS
(and its pip.conf twin) is neutralised in each install step, PIP_ONLY_BINARY too; a constraint that excludes a pin
of the plan is refused (exit 2, nothing changed); index settings are followed and named. Before, PIP_NO_DEPS was
followed silently and the target ended without the dependencies. Real offline installs (pip backend, bundled pip of
a plain `python3 -m venv`) from a wheelhouse made by `--download-only` from the stand-in stack, whose mbridge
requires a package nothing else names, published as a source archive only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.installers import pipsettings as ps
from doctor.installers import wheelhouse as wh
from tests.cli.test_install import PROFILE, doctor, download_only
from tests.installers import wheelkit
from tests.installers.test_housecheck import state


def _mbridge_with_a_dependency(plan, st) -> None:  # type: ignore[no-untyped-def]
    for w in st.wheels.glob("mbridge-*.whl"):
        w.unlink()
    wheelkit.make_wheel(st.wheels, "mbridge", "0.15.1", requires=["mbridge-helper"])
    wheelkit.make_sdist(st.wheels, "mbridge-helper", "1.0")  # a source archive only, as arctic-inference


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return download_only(PROFILE, tmp_path_factory.mktemp("house"), prepare=_mbridge_with_a_dependency)


def offline(made: dict, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {**made["env"], "XDG_CONFIG_DIRS": str(tmp_path / "no-xdg"), "HOME": str(tmp_path), "NO_COLOR": "1", **env}
    return doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--no-check", "--backend", "pip",
                  "--wheelhouse", str(made["house"]), "--offline", *args, env=clean, timeout=900)


@pytest.mark.slow
def test_pip_no_deps_and_only_binary_are_neutralised_and_the_target_gets_its_dependencies(made, tmp_path) -> None:
    assert any(a.path.endswith(".tar.gz") for a in wh.load(made["house"]).artifacts)  # a source archive to build
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)  # bundled pip
    cp = offline(made, tmp_path, "--python", str(venv / "bin" / "python"), PIP_NO_DEPS="1", PIP_ONLY_BINARY=":all:")
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-3000:]
    assert ("PIP_NO_DEPS=1 — neutralised: each install step runs with PIP_NO_DEPS=0 (pip has no flag that turns "
            "dependencies back on; the environment wins over any pip.conf)") in cp.stdout + cp.stderr
    assert "PIP_ONLY_BINARY=:all: — neutralised: each install step passes --only-binary=:none: --no-binary=:none:" \
        in cp.stdout + cp.stderr
    freeze = state(venv)[0]
    assert "mbridge==0.15.1" in freeze and "mbridge-helper==1.0" in freeze, freeze


def test_the_pip_conf_twin_is_neutralised_and_said_in_the_plan(made, tmp_path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[install]\nno-dependencies = yes\n[global]\nextra-index-url = https://mirror.example/simple\n")
    venv = tmp_path / "venv"
    cp = offline(made, tmp_path, "--venv", str(venv), "--dry-run", "--json", PIP_CONFIG_FILE=str(conf))
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    assert {(s["option"], s["action"]) for s in rep["pip_config"]} == {("no-deps", "neutralised"),
                                                                     ("extra-index-url", "followed")}
    said = {s["option"]: s["setting"] for s in rep["pip_config"]}
    assert said["no-deps"] == f"no-deps = yes ({conf})"
    commands = {s["id"]: s["command"] for s in rep["steps"]}
    assert commands["mbridge"].startswith("PIP_NO_DEPS=0 "), commands["mbridge"]
    assert "--no-deps" in commands["triton-ascend"]  # a step that skips dependencies says so itself
    assert not venv.exists()


def test_a_constraint_that_excludes_a_pin_of_the_plan_is_refused_before_anything_changes(made, tmp_path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    before = state(venv)
    cons = tmp_path / "constraints.txt"
    cons.write_text("# site policy\ntransformers<4.50\ntorch<=2.14.1\n")
    cp = offline(made, tmp_path, "--python", str(venv / "bin" / "python"), PIP_CONSTRAINT=str(cons))
    assert cp.returncode == 2, cp.stdout + cp.stderr
    err = " ".join(cp.stderr.split())
    assert (f"error: PIP_CONSTRAINT={cons}: pip's configuration would change what the install does, and no flag of a "
            f"step undoes it, so nothing was done: PIP_CONSTRAINT={cons} (transformers<4.50 ({cons}) excludes the "
            "plan's transformers==4.57.6") in err, err
    assert "Unset it for this run, or pass --isolated" in err
    assert state(venv) == before and not (venv / ".doctor").exists()
    # one every pin is inside is followed, and said
    cons.write_text("torch<=2.14.1\n")
    cp = offline(made, tmp_path, "--python", str(venv / "bin" / "python"), "--dry-run", PIP_CONSTRAINT=str(cons))
    assert cp.returncode == 0, cp.stderr
    assert f"PIP_CONSTRAINT={cons} — followed: pip holds what the plan leaves open to its 1 line(s)" in cp.stdout + cp.stderr


@pytest.mark.parametrize("env, refused", [
    ({"PIP_REQUIRE_HASHES": "1"}, "PIP_REQUIRE_HASHES=1 (the plan's pins carry no hashes"),
    ({"PIP_REQUIREMENT": "/tmp/extra.txt"}, "PIP_REQUIREMENT=/tmp/extra.txt (pip would add it to every install step)"),
    ({"PIP_NO_DEPS": "maybe"}, "PIP_NO_DEPS=maybe (not a boolean: pip stops on it before every step)"),
])
def test_what_no_flag_undoes_is_refused(made, tmp_path, env, refused) -> None:
    cp = offline(made, tmp_path, "--venv", str(tmp_path / "venv"), "--dry-run", **env)
    assert cp.returncode == 2 and refused in cp.stderr, cp.stderr


def test_a_setting_turned_off_changes_nothing_and_the_targets_pip_meets_pip_python() -> None:
    assert ps.judge({"no-deps": ("0", "PIP_NO_DEPS=0"), "pre": ("no", "pre = no (/etc/pip.conf)")},
                    own_pip=True, offline=False) == []
    got = ps.judge({"python": ("/usr/bin/python3", "PIP_PYTHON=/usr/bin/python3")}, own_pip=False, offline=False)
    assert [(s.action, s.how) for s in got] == [
        ("refused", "the target's pip would re-run itself under that interpreter and install into it")]
    n = ps.neutralising(ps.judge({"no-deps": ("1", "PIP_NO_DEPENDENCIES=1")}, own_pip=True, offline=False))
    assert n.env == (("PIP_NO_DEPS", "0"),) and n.unset == ("PIP_NO_DEPENDENCIES",)


def test_the_indexes_and_find_links_pip_reads_from_its_configuration_are_in_downloads_from(tmp_path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nfind-links = /opt/wheels\n")
    env = {"XDG_CONFIG_DIRS": str(tmp_path / "no-xdg"), "HOME": str(tmp_path), "NO_COLOR": "1",
           "PIP_CONFIG_FILE": str(conf), "PIP_INDEX_URL": "https://idx.example/simple",
           "PIP_EXTRA_INDEX_URL": "https://u:secret@mirror.example/simple"}
    cp = doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--backend", "pip", "--venv",
                str(tmp_path / "venv"), "--dry-run", env={**wheelkit.hermetic_env(tmp_path), **env})
    assert cp.returncode == 0, cp.stderr
    line = next(ln for ln in cp.stdout.splitlines() if ln.startswith("downloads from:"))
    assert line.startswith("downloads from: indexes https://idx.example/simple, https://download.pytorch.org/whl/cpu, "
                           "https://<redacted>@mirror.example/simple; git "), line
    assert line.endswith("; find-links /opt/wheels (pip's configuration)") and "pypi.org" not in line, line
    assert "PIP_EXTRA_INDEX_URL=https://<redacted>@mirror.example/simple — followed" in cp.stdout
    assert "secret" not in cp.stdout + cp.stderr


def test_no_build_isolation_read_inverted_and_dry_run_are_neutralised_and_platform_is_refused(made, tmp_path) -> None:
    cp = offline(made, tmp_path, "--venv", str(tmp_path / "venv"), "--dry-run", "--json", PIP_NO_BUILD_ISOLATION="0",
                 PIP_DRY_RUN="1", PIP_IGNORE_REQUIRES_PYTHON="yes", PIP_USE_PEP517="false")
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    assert {(s["option"], s["action"]) for s in rep["pip_config"]} == {
        ("no-build-isolation", "neutralised"), ("dry-run", "neutralised"), ("ignore-requires-python", "neutralised"),
        ("use-pep517", "neutralised")}
    commands = {s["id"]: s["command"] for s in rep["steps"]}
    assert commands["mbridge"].startswith("PIP_DRY_RUN=0 PIP_IGNORE_REQUIRES_PYTHON=0 PIP_NO_BUILD_ISOLATION=1 "), \
        commands["mbridge"]
    assert "--use-pep517" in commands["mbridge"]
    # =1 keeps isolation (pip stores the value itself in build_isolation): nothing to say
    cp = offline(made, tmp_path, "--venv", str(tmp_path / "venv"), "--dry-run", "--json", PIP_NO_BUILD_ISOLATION="1")
    assert cp.returncode == 0 and "pip_config" not in json.loads(cp.stdout), cp.stderr
    cp = offline(made, tmp_path, "--venv", str(tmp_path / "venv"), "--dry-run", PIP_PLATFORM="manylinux2014_x86_64")
    assert cp.returncode == 2, cp.stdout + cp.stderr
    assert "PIP_PLATFORM=manylinux2014_x86_64 (pip stops on it: platform and interpreter options are for" in \
        " ".join(cp.stderr.split())
    assert not (tmp_path / "venv").exists()
