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
    (tmp_path / ".config" / "uv" / "uv.toml").write_text('resolution = "lowest"\ncache-dir = "/tmp/c"\n')
    cp = uv_offline(made, tmp_path, UV_NO_CONFIG="")
    assert cp.returncode == 0, cp.stderr
    conf = f"{tmp_path}/.config/uv/uv.toml"
    assert f"uv configuration {conf} — followed: uv reads it for every step; what of it changes what the steps " \
           "install is judged setting by setting; not judged: cache-dir" in cp.stdout, cp.stdout
    assert f'resolution = "lowest" ({conf}) — neutralised: each install step passes --resolution highest' in cp.stdout
    assert "--resolution highest" in cp.stdout  # the steps carry it, as for UV_RESOLUTION


def test_a_uv_toml_setting_no_step_undoes_is_refused_before_anything_changes(made, tmp_path) -> None:
    """A uv.toml's settings used to be only named (followed): its `[pip] no-deps = true` installed verl, vLLM and the
    final pins without their dependencies. Each is now judged as its variable is; what no flag undoes is exit 2."""
    (tmp_path / "uv.toml").write_text('[pip]\nno-deps = true\nrequire-hashes = true\n')
    cp = uv_offline(made, tmp_path, UV_NO_CONFIG="", UV_CONFIG_FILE=str(tmp_path / "uv.toml"))
    assert cp.returncode == 2, cp.stdout + cp.stderr
    err = " ".join(cp.stderr.split())
    assert ("uv's configuration would change what the install does, and no flag of a step undoes it, so nothing was "
            f"done: [pip] no-deps = true ({tmp_path}/uv.toml) (uv would install what the steps name without its "
            f"dependencies (verl, vLLM, the final pins), and the target would end without them); [pip] require-hashes "
            f"= true ({tmp_path}/uv.toml) (the plan's pins carry no hashes: uv refuses the first install step)") in err
    assert not (tmp_path / "venv").exists()
    # --isolated: the steps pass --no-config, and nothing of it is judged
    cp = uv_offline(made, tmp_path, "--isolated", UV_NO_CONFIG="", UV_CONFIG_FILE=str(tmp_path / "uv.toml"))
    assert cp.returncode == 0, cp.stderr


PINS = {"torch": {"2.8.0"}}


@pytest.mark.parametrize(("toml", "option", "action"), [
    ('resolution = "lowest"', "UV_RESOLUTION", "neutralised"),
    ('[pip]\nresolution = "lowest-direct"', "UV_RESOLUTION", "neutralised"),
    ('[pip]\npython = "/opt/other/bin/python"', "UV_PYTHON", "neutralised"),
    ("[pip]\nsystem = true", "UV_SYSTEM_PYTHON", "neutralised"),
    ('index-strategy = "first-index"', "UV_INDEX_STRATEGY", "neutralised"),
    ("no-build-isolation = true", "UV_NO_BUILD_ISOLATION", "refused"),
    ('constraint-dependencies = ["torch<2.0"]', "UV_CONSTRAINT", "refused"),
    ('constraint-dependencies = ["torch<2.9"]', "UV_CONSTRAINT", "followed"),
    ('override-dependencies = ["torch==2.1.0"]', "UV_OVERRIDE", "refused"),
    ('exclude-dependencies = ["triton"]', "UV_EXCLUDE", "refused"),
    ("[pip]\nrequire-hashes = true", "UV_REQUIRE_HASHES", "refused"),
    ('[pip]\ntorch-backend = "cpu"', "UV_TORCH_BACKEND", "refused"),
    ("offline = true", "UV_OFFLINE", "refused"),
    ("[pip]\nno-deps = true", "no-deps", "refused"),
    ('[pip]\nonly-binary = [":all:"]', "only-binary", "refused"),
    ('[pip]\nno-binary = ["torch"]', "no-binary", "refused"),
    ("no-build = true", "no-build", "refused"),
    ('[pip]\ntarget = "/opt/t"', "target", "refused"),
    ('[pip]\nprefix = "/opt/p"', "prefix", "refused"),
    ('index-url = "https://mirror.example/simple"', "UV_INDEX_URL", "followed"),
    ('extra-index-url = ["https://a.example/simple"]', "UV_EXTRA_INDEX_URL", "followed"),
    ('[[index]]\nurl = "https://a.example/simple"', "UV_INDEX", "followed"),
    ('[[index]]\nurl = "https://a.example/simple"\ndefault = true', "UV_DEFAULT_INDEX", "followed"),
    ('find-links = ["/opt/wheels"]', "UV_FIND_LINKS", "followed"),
    ('prerelease = "allow"', "UV_PRERELEASE", "followed"),
    ('exclude-newer = "2026-01-01T00:00:00Z"', "UV_EXCLUDE_NEWER", "followed"),
    ('build-constraint-dependencies = ["setuptools<81"]', "UV_BUILD_CONSTRAINT", "followed"),
    ("[pip]\nno-deps = 1", "no-deps", "refused"),  # not a boolean: uv cannot read the file
])
def test_each_setting_of_a_uv_configuration_file_is_decided_as_its_variable_is(tmp_path, toml, option, action) -> None:
    f = tmp_path / "uv.toml"
    f.write_text(toml + "\n")
    got = [s for s in us.judge({"UV_CONFIG_FILE": str(f)}, cwd=str(tmp_path), offline=False, pins=PINS)]
    assert [(s.option, s.action) for s in got] == [(option, action), ("config-file", "followed")], got
    assert got[0].said.endswith(f"({f})")
    if option.startswith("UV_") and option not in ("UV_CONSTRAINT", "UV_NO_BUILD_ISOLATION"):
        # the same row as the variable's: one table
        [env] = us.judge({option: got[0].value, "UV_NO_CONFIG": "1"}, cwd=str(tmp_path), offline=False, pins=PINS)
        assert (env.action, env.how) == (got[0].action, got[0].how)


@pytest.mark.parametrize("toml", ['resolution = "highest"', "[pip]\nno-deps = false", '[pip]\nonly-binary = [":none:"]',
                                  "offline = false", 'cache-dir = "/tmp/c"'])
def test_a_uv_configuration_setting_that_changes_nothing_is_only_named(tmp_path, toml) -> None:
    f = tmp_path / "uv.toml"
    f.write_text(toml + "\n")
    got = us.judge({"UV_CONFIG_FILE": str(f)}, cwd=str(tmp_path), offline=False, pins=PINS)
    assert [(s.option, s.action) for s in got] == [("config-file", "followed")]
    # named, with what of it is not judged (only the keys no row decides)
    assert got[0].how == ("uv reads it for every step; what of it changes what the steps install is judged setting by "
                          "setting" + ("; not judged: cache-dir" if "cache-dir" in toml else ""))


def test_uv_tool_table_of_a_pyproject_is_judged_and_a_file_uv_cannot_parse_is_refused(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.uv]\n[tool.uv.pip]\nno-deps = true\n')
    got = us.judge({"HOME": str(tmp_path / "home"), "XDG_CONFIG_DIRS": str(tmp_path / "no")}, cwd=str(tmp_path),
                   offline=False, pins=PINS)
    assert [(s.option, s.action, s.said) for s in got][0] == (
        "no-deps", "refused", f"[pip] no-deps = true ({tmp_path}/pyproject.toml)")
    (tmp_path / "uv.toml").write_text("[pip\n")
    [bad] = us.judge({"UV_CONFIG_FILE": str(tmp_path / "uv.toml")}, cwd=str(tmp_path), offline=False, pins=PINS)
    assert bad.action == "refused" and bad.how.startswith("uv cannot parse it (not valid TOML")


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


def _setuptools_sdist(dest: Path) -> Path:
    """`epsilon-1.0.tar.gz`, built by setuptools (its build needs setuptools, which a venv uv makes lacks)."""
    import io
    import tarfile

    dest.mkdir(parents=True, exist_ok=True)
    files = {"epsilon-1.0/pyproject.toml": '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = '
                                          '"setuptools.build_meta"\n[project]\nname = "epsilon"\nversion = "1.0"\n',
             "epsilon-1.0/epsilon/__init__.py": ""}
    with tarfile.open(dest / "epsilon-1.0.tar.gz", "w:gz") as t:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    return dest


@pytest.mark.slow
def test_real_uv_keeps_a_configuration_files_flag_that_its_variable_set_false_cannot_undo(tmp_path) -> None:
    """Why a file's `no-build-isolation = true` is refused where UV_NO_BUILD_ISOLATION=1 is neutralised: uv reads
    the steps' UV_NO_BUILD_ISOLATION=0 as the flag not given, and the file's value stands (its sdist then builds
    without setuptools, and fails); only --build-isolation, which no step passes, undoes it. Likewise a step's
    `--only-binary :none:` leaves a file's `only-binary = [":all:"]` in force."""
    from doctor.installers.backends import find_uv
    from tests.installers import wheelkit

    uv = find_uv()
    if uv is None:
        pytest.skip("no uv here")
    links = _setuptools_sdist(tmp_path / "links")
    wheelkit.wheel_of_installed("setuptools", links)
    conf = tmp_path / "uv.toml"
    env = {**wheelkit.hermetic_env(tmp_path), "UV_CONFIG_FILE": str(conf)}
    env.pop("UV_NO_CONFIG")

    def install(text: str, *args: str, **extra: str) -> bool:
        conf.write_text(text)
        venv = tmp_path / f"v{len(list(tmp_path.iterdir()))}"
        subprocess.run([uv, "venv", "-q", str(venv)], check=True, env=env, timeout=120, capture_output=True)
        cp = subprocess.run([uv, "pip", "install", "--python", str(venv / "bin" / "python"), "--no-index",
                             "--find-links", str(links), "--no-cache", *args, "epsilon"], env={**env, **extra},
                            capture_output=True, text=True, timeout=300)
        return cp.returncode == 0

    for text, option in (("[pip]\nno-build-isolation = true\n", "UV_NO_BUILD_ISOLATION"),
                         ('[pip]\nonly-binary = [":all:"]\n', "only-binary")):
        conf.write_text(text)
        assert [(s.option, s.action) for s in us.judge(env, cwd=str(tmp_path), offline=True, pins=PINS)] == [
            (option, "refused"), ("config-file", "followed")]
    assert install("")  # isolated: setuptools comes from the find-links folder
    assert not install("[pip]\nno-build-isolation = true\n")
    assert not install("[pip]\nno-build-isolation = true\n", UV_NO_BUILD_ISOLATION="0")
    assert install("[pip]\nno-build-isolation = true\n", "--build-isolation")
    assert not install('[pip]\nonly-binary = [":all:"]\n', "--only-binary", ":none:")
