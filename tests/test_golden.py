"""Golden text: the human output of `doctor check` and `doctor explain` on fixed inputs, byte for byte.

Inputs and expected outputs live in tests/golden/ (`*.snapshot.json`, `*.log` -> `*.txt`). A deliberate change of
wording or layout is reviewed as a diff of the expected files. To regenerate them after such a change:

    DOCTOR_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py     # then `git diff tests/golden/`

Two things are normalised under -v: check timings (`(37 µs)` -> `(T)`) and the rules' upstream sources
(`source: <url>` -> `source: (S)`; each rule's source is tested with the rule, and sources move with upstream).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from doctor.cli import cli

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "check-sick.txt": ["check", "--from", "check-sick.snapshot.json"],
    "check-sick-verbose.txt": ["check", "-v", "--from", "check-sick.snapshot.json"],
    "check-sick-quiet.txt": ["check", "-q", "--from", "check-sick.snapshot.json"],
    # `doctor collect` of a plain venv with PyPI's verl 0.9.1 wheel installed --no-deps: its unmet requirements fold
    "check-no-deps.txt": ["check", "--from", "check-no-deps.snapshot.json"],
    "explain-run.txt": ["explain", "run.log"],
    # the plan for the snapshot's machine: host prerequisites, then each step and whether the snapshot satisfies it
    "install-dry-run.txt": ["install", "--dry-run", "--from", "check-sick.snapshot.json", "--venv", "/opt/train-venv",
                            "--src", "/opt/src", "--env-file", "/opt/doctor-env.sh", "--backend", "pip"],
    "install-dry-run-verbose.txt": ["-v", "install", "--dry-run", "--from", "check-sick.snapshot.json", "--venv",
                                    "/opt/train-venv", "--src", "/opt/src", "--env-file", "/opt/doctor-env.sh",
                                    "--profile", "verl-0.9.1-cann9.1.0-a2", "--backend", "pip"],
}


def _render(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(GOLDEN)
    for var in ("DOCTOR_JSON", "DOCTOR_VERBOSE", "DOCTOR_QUIET", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)
    r = CliRunner().invoke(cli, ["--no-color", *argv], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.stderr
    text = r.stdout.replace(sys.executable, "<doctor's python>")  # pip runs as `<doctor's python> -m pip --python`
    text = re.sub(r"\((?:<1|\d+(?:\.\d+)?) (?:µs|ms|s)\)", "(T)", text)
    return re.sub(r"(?m)^(\s+source: ).*$", r"\1(S)", text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_human_output_is_the_golden_text(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    got = _render(CASES[name], monkeypatch)
    expected = GOLDEN / name
    if os.environ.get("DOCTOR_REGEN_GOLDEN") == "1":
        expected.write_text(got, encoding="utf-8")
    assert expected.is_file(), f"{expected} is missing: run with DOCTOR_REGEN_GOLDEN=1 to write it"
    assert got == expected.read_text(encoding="utf-8"), f"{name}: regenerate with DOCTOR_REGEN_GOLDEN=1 if intended"
