"""Colour follows the no-color.org convention: NO_COLOR turns it off when present and not empty."""

from __future__ import annotations

import pytest

from doctor import console as console_mod


@pytest.mark.parametrize(("value", "color"), [(None, True), ("1", False), ("0", False), ("", True)])
def test_no_color_when_present_and_not_empty(monkeypatch, value, color):
    monkeypatch.setattr(console_mod, "running_in_ci", lambda environ=None: False)
    monkeypatch.setattr(console_mod, "_isatty", lambda stream: True)  # a terminal
    if value is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", value)
    assert console_mod.Console.create().color is color


def test_term_dumb_turns_colour_off(monkeypatch):
    """Emacs' M-x shell and editors' command panes set TERM=dumb and show escape sequences as text: no colour
    there, as git prints none (other terminals keep it)."""
    monkeypatch.setattr(console_mod, "running_in_ci", lambda environ=None: False)
    monkeypatch.setattr(console_mod, "_isatty", lambda stream: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "dumb")
    c = console_mod.Console.create()
    assert (c.color, c.style("x", "red"), c.err_style("x", "red")) == (False, "x", "x")
    monkeypatch.setenv("TERM", "xterm-256color")
    assert console_mod.Console.create().style("x", "red") == "\x1b[31mx\x1b[0m"


def test_stderr_colour_follows_stderr_not_stdout(monkeypatch, capsys):
    """`doctor check 2>err.log` on a terminal: the report on stdout keeps its colour, the status and error lines in
    err.log are plain (they took stdout's colour, so the file held escape sequences)."""
    import sys

    monkeypatch.setattr(console_mod, "running_in_ci", lambda environ=None: False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    monkeypatch.setattr(console_mod, "_isatty", lambda stream: stream is sys.stdout)
    c = console_mod.Console.create()
    c.status("probing this host…")
    c.error("bad")
    c.print(c.style("report", "bold"))
    out, err = capsys.readouterr()
    assert err == "probing this host…\nerror: bad\n"
    assert out == "\x1b[1mreport\x1b[0m\n"
    # the other way round (`doctor collect -o s.json > log` with a terminal's stderr): stderr keeps colour
    monkeypatch.setattr(console_mod, "_isatty", lambda stream: stream is sys.stderr)
    c = console_mod.Console.create()
    c.error("bad")
    assert capsys.readouterr().err == "\x1b[31;1merror: \x1b[0mbad\n"
