"""`doctor profiles`: list and show the verified stacks, in text and JSON; a bad --dir exits 2 naming the file."""

from __future__ import annotations

import json

from click.testing import CliRunner

from doctor.cli import cli
from doctor.knowledge.profiles import load_profiles
from tests.knowledge.test_profiles import _copy

PROFILES = load_profiles()


def test_cli_bad_profile_dir_exits_2_naming_the_file(tmp_path):
    f = _copy(tmp_path)
    f.write_text(f.read_text().replace('torch = "==2.8.0"', 'torch = "==="'))
    r = CliRunner().invoke(cli, ["profiles", "--dir", str(f.parent)])
    assert r.exit_code == 2 and str(f) in r.output + (r.stderr if r.stderr_bytes is not None else "")


def test_profiles_cli_lists_and_shows():
    r = CliRunner().invoke(cli, ["profiles"])
    assert r.exit_code == 0 and "verl-0.9.0-cann9.0.0-a3" in r.output and "[9.0.0, 9.1.0)" in r.output
    r = CliRunner().invoke(cli, ["profiles", "show", "verl-0.7.1-cann8.5.0-a2"])
    assert r.exit_code == 0
    assert "torch-npu==2.8.0" in r.output and "known deviations" in r.output and "2.3.0_core_r0.12.1" in r.output
    r = CliRunner().invoke(cli, ["profiles", "show", "verl-9.9.9-cann1.0.0-a2"])
    assert r.exit_code == 2


def test_profiles_json():

    r = CliRunner().invoke(cli, ["--json", "profiles"])
    data = json.loads(r.output)
    assert data["schema"] == "doctor.report/1" and data["command"] == "profiles"
    assert len(data["profiles"]) == len(PROFILES)
