"""uv's own configuration (UV_* variables, uv.toml / pyproject [tool.uv]) is decided per setting before the first
change when uv runs the steps, as pip's is for pip: `UV_NO_EDITABLE=1` used to make install-vllm put a copy where the
plan wants an editable install (the step failed, the run restored), `UV_RESOLUTION=lowest` took the oldest release of
what the plan leaves open. Real uv (the tests venv's), a wheelhouse made by `doctor install --download-only` from the
stand-in stack."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from doctor.installers import uvsettings as us
from tests.cli.test_install import PROFILE, doctor, download_only


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return download_only(PROFILE, tmp_path_factory.mktemp("house"))


def uv_offline(made: dict, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {**made["env"], "XDG_CONFIG_DIRS": str(tmp_path / "no-xdg"), "HOME": str(tmp_path), "NO_COLOR": "1", **env}
    return doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--backend", "uv", "--wheelhouse",
                  str(made["house"]), "--offline", "--venv", str(tmp_path / "venv"), "--dry-run", *args, env=clean)


def test_uv_settings_are_neutralised_followed_or_refused_before_anything_changes(made, tmp_path) -> None:
    cp = uv_offline(made, tmp_path, "--json", UV_NO_CONFIG="", UV_NO_EDITABLE="1", UV_RESOLUTION="lowest",
                    UV_FIND_LINKS="/opt/wheels", UV_NO_BUILD_ISOLATION="false")
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    assert {(s["option"], s["action"]) for s in rep["uv_config"]} == {
        ("UV_NO_EDITABLE", "neutralised"), ("UV_RESOLUTION", "neutralised"), ("UV_FIND_LINKS", "followed")}
    commands = {s["id"]: s["command"] for s in rep["steps"]}
    assert commands["install-mindspeed"].startswith("UV_NO_EDITABLE=0 "), commands["install-mindspeed"]
    assert "--resolution highest" in commands["mbridge"], commands["mbridge"]
    cp = uv_offline(made, tmp_path, UV_TORCH_BACKEND="cpu", UV_REQUIRE_HASHES="1")
    assert cp.returncode == 2, cp.stdout + cp.stderr
    err = " ".join(cp.stderr.split())
    assert ("uv's configuration would change what the install does, and no flag of a step undoes it, so nothing was "
            "done: UV_REQUIRE_HASHES=1 (the plan's pins carry no hashes: uv refuses the first install step); "
            "UV_TORCH_BACKEND=cpu (uv would fetch torch") in err, err
    assert not (tmp_path / "venv").exists()


def test_a_uv_constraint_that_excludes_a_pin_is_refused_and_a_uv_toml_is_named(made, tmp_path) -> None:
    (tmp_path / "c.txt").write_text("torch<2.0\n")
    cp = uv_offline(made, tmp_path, UV_CONSTRAINT=str(tmp_path / "c.txt"))
    assert cp.returncode == 2, cp.stdout + cp.stderr
    assert "torch<2.0 (" in cp.stderr and "excludes the plan's torch==" in cp.stderr, cp.stderr
    (tmp_path / ".config" / "uv").mkdir(parents=True)
    (tmp_path / ".config" / "uv" / "uv.toml").write_text("[pip]\nno-deps = true\n")
    cp = uv_offline(made, tmp_path, UV_NO_CONFIG="")
    assert cp.returncode == 0, cp.stderr
    assert f"uv configuration {tmp_path}/.config/uv/uv.toml — followed: uv reads its settings for every step" in \
        cp.stdout, cp.stdout


def test_which_configuration_files_uv_reads(tmp_path: Path) -> None:
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[tool.uv]\nresolution = 'lowest'\n")
    (tmp_path / "etc" / "uv").mkdir(parents=True)
    (tmp_path / "etc" / "uv" / "uv.toml").write_text("")
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_DIRS": str(tmp_path / "etc")}
    assert us.config_files(env, str(tmp_path / "proj" / "sub")) == [str(tmp_path / "proj" / "pyproject.toml"),
                                                                   str(tmp_path / "etc" / "uv" / "uv.toml")]
    assert us.config_files({**env, "UV_NO_CONFIG": "1"}, str(tmp_path / "proj")) == []
    assert us.config_files({**env, "UV_CONFIG_FILE": "/x/uv.toml"}, str(tmp_path)) == ["/x/uv.toml"]


def test_uvs_followed_indexes_and_find_links_are_in_downloads_from(made, tmp_path) -> None:
    cp = uv_offline(made, tmp_path, UV_FIND_LINKS="/opt/wheels", UV_INDEX="https://u:secret@mirror.example/simple")
    assert cp.returncode == 0, cp.stderr
    line = next(ln for ln in cp.stdout.splitlines() if ln.startswith("downloads from:"))
    assert line == "downloads from: find-links /opt/wheels (uv's configuration)", line  # offline: no index read
    assert "secret" not in cp.stdout + cp.stderr
