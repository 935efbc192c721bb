"""The CLI skeleton: help lists every command, version, start-up stays light."""

import subprocess
import sys

from click.testing import CliRunner

from doctor import __version__
from doctor.cli import COMMANDS, cli


def test_help_lists_every_command():
    r = CliRunner().invoke(cli, ["--help"])
    assert r.exit_code == 0
    for name in COMMANDS:
        assert name in r.output


def test_version():
    r = CliRunner().invoke(cli, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"doctor {__version__}"


def test_every_command_module_loads_and_has_help():
    for name in COMMANDS:
        r = CliRunner().invoke(cli, [name, "--help"])
        assert r.exit_code == 0, (name, r.output)


def test_unknown_command_is_usage_error_exit_2():
    r = CliRunner().invoke(cli, ["frobnicate"])
    assert r.exit_code == 2


def test_startup_imports_nothing_heavy():
    code = (
        "import sys, runpy; sys.argv=['doctor','--version'];\n"
        "try:\n    runpy.run_module('doctor', run_name='__main__')\nexcept SystemExit: pass\n"
        "heavy=[m for m in ('torch','torch_npu','vllm','megatron','mindspeed','ray','transformers','numpy','pandas','yaml','hydra') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("HEAVY=")]
    assert line == ["HEAVY="], out.stdout + out.stderr
