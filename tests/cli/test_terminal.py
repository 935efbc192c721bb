"""What a terminal shows: colour where the stream is a terminal that renders it, plain text in files and in a dumb
terminal. Run in a real pseudo-terminal, as a user's shell runs the doctor."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ESC = "\x1b["


def on_terminal(args: list[str], tmp_path: Path, **env: str) -> tuple[str, str]:
    """Run `doctor ARGS` with stdout on a pseudo-terminal and stderr to a file (`doctor check 2>err.log`): what the
    terminal showed, what the file holds."""
    main, tty = pty.openpty()
    err_path = tmp_path / "err.log"
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "GITHUB_ACTIONS", "GITLAB_CI",
                                                            "BUILDKITE", "JENKINS_URL", "TF_BUILD", "DOCTOR_NO_COLOR")}
    shown = b""
    try:
        with open(err_path, "w") as err:
            p = subprocess.Popen([sys.executable, "-m", "doctor", *args], stdin=subprocess.DEVNULL, stdout=tty,
                                 stderr=err, cwd=tmp_path,
                                 env={**base, "TERM": "xterm-256color", **env, "PYTHONPATH": str(REPO)})
            os.close(tty)
            tty = -1
            while True:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            p.wait(timeout=120)
    finally:
        os.close(main)
        if tty >= 0:
            os.close(tty)
    return shown.decode(), err_path.read_text()


def test_stderr_in_a_file_gets_no_escape_sequences_when_stdout_is_a_terminal(tmp_path):
    """`doctor check 2>err.log` on a terminal: the report keeps its colour on the terminal, and the status line in
    err.log is plain text (it was written with stdout's colour: `\\x1b[2mprobing this host…\\x1b[0m`)."""
    shown, err = on_terminal(["check", "--root", str(tmp_path)], tmp_path)
    assert "[cann-not-installed]" in shown and ESC in shown, shown
    assert err.startswith("probing this host…"), err
    assert ESC not in err, repr(err)
    shown, err = on_terminal(["explain", str(tmp_path / "missing.log")], tmp_path)
    assert "error: " in err and "missing.log: cannot read log" in err and ESC not in err, repr(err)


def test_term_dumb_gets_no_colour(tmp_path):
    """Emacs' M-x shell and editors' command panes set TERM=dumb and print escape sequences as text."""
    shown, _ = on_terminal(["check", "--root", str(tmp_path)], tmp_path, TERM="dumb")
    assert "[cann-not-installed]" in shown and ESC not in shown, repr(shown[:300])


def run_encoded(args: list[str], encoding: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    """`doctor ARGS` with stdout and stderr in `encoding`, as Python sets them from a zh_CN.GBK or latin-1 locale."""
    return subprocess.run([sys.executable, "-m", "doctor", *args], capture_output=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, **env, "PYTHONIOENCODING": encoding, "PYTHONPATH": str(REPO)})


def test_a_gbk_or_ascii_locale_gets_the_report_not_an_internal_error(tmp_path):
    """A zh_CN.GBK locale has no `✗` or `✓`: `doctor check` ended with "internal error: UnicodeEncodeError … this is a
    bug in the doctor", exit 2, and no report. The marks get ASCII stand-ins, what GBK has (`…`, `—`) stays."""
    for encoding in ("gbk", "ascii", "latin-1"):
        cp = run_encoded(["check", "--root", str(tmp_path)], encoding, tmp_path)
        out = cp.stdout.decode(encoding)
        assert cp.returncode == 1, (encoding, cp.stderr.decode(encoding, "replace"))
        assert "[x] cann\n    x No Ascend CANN toolkit found  [cann-not-installed]" in out, out
        assert "internal error" not in cp.stderr.decode(encoding)
    cp = run_encoded(["check", "--root", str(tmp_path)], "gbk", tmp_path)
    assert "\ncheck: errors — " in cp.stdout.decode("gbk") and cp.stderr.decode("gbk") == "probing this host…\n"


def test_json_and_a_quoted_log_line_lose_nothing_on_an_ascii_stream(tmp_path):
    """A log line quoted as evidence can hold any character: the text report writes `?` for what the encoding lacks
    and goes on; `--json` (and collect's snapshot on stdout) escape it, so the document is the same."""
    import json

    log = tmp_path / "run.log"
    line = "ImportError: libhccl.so: cannot open shared object file: No such file or directory 😀 中文"
    log.write_text(line + "\n", encoding="utf-8")
    cp = run_encoded(["explain", str(log)], "ascii", tmp_path)
    assert cp.returncode == 1 and "directory ? ??" in cp.stdout.decode("ascii"), cp.stdout
    cp = run_encoded(["explain", "--json", str(log)], "ascii", tmp_path)
    doc = json.loads(cp.stdout.decode("ascii"))
    assert cp.returncode == 1 and doc["findings"][0]["evidence"]["text"].endswith("😀 中文"), doc["findings"][0]
    cp = run_encoded(["collect"], "ascii", tmp_path, VERL_RUN_NOTE="naïve 😀")
    assert cp.returncode == 0 and json.loads(cp.stdout.decode("ascii"))["env"]["VERL_RUN_NOTE"] == "naïve 😀"
