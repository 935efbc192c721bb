"""A `--set` version the `--index-url` mirror does not serve is refused when the plan is made, if the mirror is a
local simple index (`file://`) or a folder whose listing can be read without downloading anything: exit 2, naming
the index and the versions it serves, before anything in the target changes. It used to be found by the last install
step, after every clone and build. An http(s) mirror is not read before the run: the plan says the install step
will find out. Through the CLI on the real verl 0.7.1 A2 profile (pins transformers 4.57.6), with a target made by
plain `python3 -m venv`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.installers import wheelhouse as wh
from tests.cli.test_install import doctor
from tests.installers.test_set_offline import tree
from tests.installers.wheelkit import make_simple_index, make_wheel

PROFILE = "verl-0.7.1-cann8.5.0-a2"


@pytest.fixture
def index(tmp_path: Path) -> str:
    wheels = tmp_path / "served"
    make_wheel(wheels, "transformers", "4.57.6")
    make_wheel(wheels, "transformers", "4.57.4")
    return make_simple_index(wheels, tmp_path / "simple")


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    v = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(v)], check=True, timeout=120)  # bundled pip
    return v


def install(env: dict[str, str], venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return doctor("--no-color", "install", "--profile", PROFILE, "--no-host-check", "--backend", "pip",
                  "--python", str(venv / "bin" / "python"), *args, env={**env, "NO_COLOR": "1"})


def test_a_set_version_a_file_index_does_not_serve_is_refused_before_anything_changes(index, venv, tmp_path,
                                                                                      hermetic) -> None:
    before = tree(venv)
    cp = install(hermetic, venv, "--index-url", index, "--set", "transformers=4.57.5")
    assert cp.returncode == 2, cp.stderr
    assert (f"transformers 4.57.5 is not served by {index} (it serves transformers 4.57.4, 4.57.6; its listing read, "
            "nothing downloaded)") in cp.stderr, cp.stderr
    assert "--set" in cp.stderr
    assert tree(venv) == before and not (venv / ".doctor").exists()
    # a project the index has no page for: it serves none of it
    cp = install(hermetic, venv, "--index-url", index, "--set", "numpy=1.26.4", "--dry-run")
    assert cp.returncode == 2 and f"numpy 1.26.4 is not served by {index} (it serves no numpy;" in cp.stderr, cp.stderr
    # a version it serves is planned as before, and so is one a --find-links folder (a wheelhouse, online) holds
    cp = install(hermetic, venv, "--index-url", index, "--set", "transformers=4.57.4", "--dry-run", "--json")
    assert cp.returncode == 0, cp.stderr
    assert "set_unchecked" not in json.loads(cp.stdout) and "not checked" not in cp.stderr
    house = tmp_path / "house"
    make_wheel(house / wh.WHEELS, "transformers", "4.57.5")
    wh.write(house, wh.scan(house, wh.Manifest(profile=PROFILE, target={})))
    cp = install(hermetic, venv, "--index-url", index, "--wheelhouse", str(house), "--set", "transformers=4.57.5",
                 "--dry-run")
    assert cp.returncode == 0, cp.stderr


def test_an_http_index_is_named_as_checked_at_install(index, venv, hermetic) -> None:
    """Not read before the run (no request is made for the plan): the plan says the install step finds out. With a
    local index beside it that lacks the version, the http one may still serve it: not refused either."""
    mirror = "https://mirror.invalid/simple"
    for args in (("--index-url", mirror), ("--index-url", index, "--extra-index-url", mirror)):
        cp = install(hermetic, venv, *args, "--set", "transformers=4.57.5", "--dry-run", "--json")
        assert cp.returncode == 0, cp.stderr
        assert (f"--set transformers=4.57.5: not checked against {mirror} before the run (an http(s) index is not "
                "read until a step installs from it)") in cp.stderr, cp.stderr
        assert json.loads(cp.stdout)["set_unchecked"] == {"transformers": "4.57.5"}


def test_a_local_index_page_is_read_as_pip_reads_it(tmp_path: Path) -> None:
    """A PEP 503 project page as mirrors write it: PyPI's own form (a files.pythonhosted.org link with its #sha256
    fragment and an escaped data-requires-python), an upper-case tag, single quotes, an unquoted attribute and an
    entity in the file name; every link's version is read, with the Requires-Python it states (unescaped), and a
    link that is not a distribution is not."""
    from doctor.installers.setcheck import index_offers

    page = tmp_path / "numpy" / "index.html"
    page.parent.mkdir()
    page.write_text(
        "<!DOCTYPE html><html><body>\n"
        '<a href="https://files.pythonhosted.org/packages/aa/bb/numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.'
        'manylinux2014_x86_64.whl#sha256=0123" data-requires-python="&gt;=3.9">numpy-1.26.4-cp311.whl</a><br/>\n'
        "<A HREF='../../packages/numpy-2.2.6.tar.gz#sha256=4567'>numpy-2.2.6.tar.gz</A>\n"
        "<a href=numpy-1.26.0-cp311-cp311-manylinux_2_17_aarch64.whl>numpy-1.26.0</a>\n"
        '<a href="numpy-2.0.0&#45;cp311-cp311-manylinux_2_17_x86_64.whl">numpy-2.0.0</a>\n'
        '<a href="../">up</a>\n'
        "</body></html>\n")
    offers = index_offers(str(tmp_path), "numpy") or []
    assert sorted(o.version for o in offers) == ["1.26.0", "1.26.4", "2.0.0", "2.2.6"]
    assert {o.version: o.requires_python for o in offers}["1.26.4"] == ">=3.9"
