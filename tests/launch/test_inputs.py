"""A script with nothing to lint, told from its text."""

from __future__ import annotations

import pytest

from doctor.launch.inputs import script_without_commands


@pytest.mark.parametrize(("text", "why"), [
    ("", "the file is empty"),
    ("\n  \n\t\n", "the file is empty"),
    ("#!/bin/bash\n# nothing yet\n", "the file holds only comments"),
    ("#!/bin/bash\nset -x\n", None),
    ("python3 -m verl.trainer.main_ppo  # the run\n", None),
])
def test_script_without_commands(text, why):
    assert script_without_commands(text) == why
