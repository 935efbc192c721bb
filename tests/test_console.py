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
