"""The CLI skeleton: help lists every command, version, start-up stays light."""

import os
import subprocess
import sys
from pathlib import Path

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


def test_version_under_json_is_the_one_report(monkeypatch):
    """`--json` puts one doctor.report/1 document on stdout for everything, --version too, on either side of it
    and from DOCTOR_JSON (click's version option printed plain text whatever --json said)."""
    import json

    monkeypatch.delenv("DOCTOR_JSON", raising=False)
    for argv in (["--json", "--version"], ["--version", "--json"]):
        r = CliRunner().invoke(cli, argv)
        doc = json.loads(r.stdout)
        assert r.exit_code == 0 and (doc["schema"], doc["command"], doc["version"]) == (
            "doctor.report/1", "doctor", __version__), argv
        assert (doc["status"], doc["findings"]) == ("ok", [])
    r = CliRunner().invoke(cli, ["--version"], env={"DOCTOR_JSON": "1"})
    assert json.loads(r.stdout)["version"] == __version__
    r = CliRunner().invoke(cli, ["--version"], env={"DOCTOR_JSON": "0"})
    assert r.stdout.strip() == f"doctor {__version__}"


def test_version_to_a_full_disk_is_exit_2_with_the_reason():
    """`doctor --version > /dev/full` said OSError in a traceback, exit 1; now exit 2 naming stdout, as every
    command does."""
    if not os.path.exists("/dev/full"):
        import pytest

        pytest.skip("no /dev/full")
    for argv in (["--version"], ["--json", "--version"]):
        with open("/dev/full", "w") as full:
            cp = subprocess.run([sys.executable, "-m", "doctor", *argv], stdout=full, stderr=subprocess.PIPE,
                                text=True, timeout=60, cwd=Path(__file__).resolve().parents[2],
                                env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        assert cp.returncode == 2 and "stdout: cannot write: No space left on device" in cp.stderr, cp.stderr
        assert "Traceback" not in cp.stderr


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


def test_a_live_check_imports_no_pathlib(tmp_path):
    """`doctor check` reads ~20 knowledge files through tomlfile's cache with plain os paths: pathlib (and
    urllib.parse, ipaddress under it) is nothing a live check uses, so it is never imported — cold or warm cache."""
    code = (
        "import sys, runpy; sys.argv=['doctor','--json','check'];\n"
        "try:\n    runpy.run_module('doctor', run_name='__main__')\nexcept SystemExit: pass\n"
        "print('PATHLIB=' + str('pathlib' in sys.modules), file=sys.stderr)"
    )
    import os

    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for run in ("cold cache", "warm cache"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                             env=env)
        assert "PATHLIB=False" in out.stderr.splitlines(), (run, out.stderr[-2000:])


def test_only_a_plain_live_check_starts_the_probe_before_click():
    """The probe starts before the command line is parsed only when the command line can mean nothing but a live
    `check` of the doctor's own interpreter; click parses every command line as before (pyenv.start_early)."""
    import os

    from doctor.cli import _plain_live_check

    main = os.path.join(os.path.dirname(os.path.abspath(__import__("doctor").__file__)), "__main__.py")
    for argv in (["doctor", "check"], ["/venv/bin/doctor", "--json", "check", "-v"], [main, "check", "--deep"]):
        assert _plain_live_check(argv), argv
    for argv in (["doctor"], ["doctor", "--version"], ["doctor", "check", "--help"], ["doctor", "collect"],
                 ["doctor", "check", "--python", "python3.10"], ["doctor", "check", "--from", "check"],
                 ["doctor", "check", "--root", "/img"], ["doctor", "--knowledge", "k", "check"],
                 ["doctor", "check", "--ray"], ["doctor", "check", "check"], ["pytest", "check"], []):
        assert not _plain_live_check(argv), argv


def test_check_in_a_deleted_working_directory_says_so_not_internal_error(tmp_path: Path) -> None:
    """Real: `cd d; rmdir ../d; doctor check` said "internal error: FileNotFoundError ... this is a bug in the
    doctor" (os.getcwd raised in the waivers lookup and in the target probe's start)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); sys.argv = ['doctor', 'check']; "
            "from doctor.cli import main; main()")
    r = subprocess.run([sys.executable, "-c", code, str(gone)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert r.returncode == 2, r.stderr
    assert "working directory no longer exists" in r.stderr and "internal error" not in r.stderr


def test_a_mistyped_command_is_told_the_close_one_and_the_commands():
    """`doctor chek` said only "No such command 'chek'." (click suggests close names for options, `--jsn`, not for
    commands): the close command is named, and every command when none is close (`doctor help`)."""
    r = CliRunner().invoke(cli, ["chek"])
    assert r.exit_code == 2 and "No such command 'chek'. (Did you mean 'check'?)" in r.output
    r = CliRunner().invoke(cli, ["help"])
    assert r.exit_code == 2 and "Did you mean" not in r.output
    assert f"Commands: {', '.join(COMMANDS)}." in " ".join(r.output.split())
    r = CliRunner().invoke(cli, ["--json", "lnit"])
    assert r.exit_code == 2 and "(Did you mean 'lint'?)" in r.stdout  # the one report's usage-error finding


def test_every_option_in_seconds_says_seconds_in_its_help():
    """`--help` names a time option's value SECONDS everywhere (`--npu-smi-timeout SECONDS`); `--deep-timeout` and
    smoke's `--run-timeout` said `FLOAT RANGE`, click's type name, beside it."""
    import click

    from doctor.cli import cli

    ctx = click.Context(cli)
    seen = []
    for name in cli.list_commands(ctx):
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        for p in cmd.params:
            help_text = getattr(p, "help", None) or ""
            if isinstance(p, click.Option) and help_text.startswith("Seconds"):
                seen.append((name, p.opts[0]))
                record = p.get_help_record(click.Context(cmd))
                assert record is not None and record[0].endswith(" SECONDS"), (name, record)
    assert ("check", "--deep-timeout") in seen and ("smoke", "--run-timeout") in seen, seen


def test_a_report_says_how_to_run_its_doctor_lines_when_doctor_is_not_on_path(tmp_path):
    """README's first line runs `.venv/bin/doctor check` in a venv not activated: the report's `doctor check --python
    PY` / `doctor install …` lines were "command not found" when pasted. One note names the script that runs them;
    none when `doctor` on PATH is this one."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "doctor"  # what pip writes for the console script
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom doctor.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    log = tmp_path / "run.log"
    log.write_text("ImportError: libhccl.so: cannot open shared object file: No such file or directory\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "NO_COLOR": "1",
           "PATH": "/usr/bin:/bin"}
    cp = subprocess.run([str(script), "explain", str(log)], capture_output=True, text=True, timeout=120, env=env)
    assert cp.returncode == 1 and "doctor check" in cp.stdout, cp.stdout + cp.stderr
    assert (f"note: `doctor` in the lines above is {script}, which typing `doctor` does not run here: type that path, "
            f"or put {bin_dir} first on PATH") in cp.stdout, cp.stdout
    cp = subprocess.run([str(script), "explain", str(log)], capture_output=True, text=True, timeout=120,
                        env={**env, "PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert cp.returncode == 1 and "note: `doctor`" not in cp.stdout, cp.stdout
