"""When the `doctor …` lines of a report do not run this doctor by its name, and what the note then says."""

from __future__ import annotations

from pathlib import Path

from doctor.invocation import mentions_doctor, name_note


def test_mentions_a_doctor_command_not_the_word():
    assert mentions_doctor(["fix: `doctor check --python PY`"])
    assert mentions_doctor(["doctor install --dry-run --venv verl-venv"])
    assert not mentions_doctor(["the doctor examines the interpreter it runs in", "", "pip install x"])


def test_the_note_names_the_path_unless_the_name_runs_this_doctor(tmp_path: Path):
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "doctor").write_text("#!/bin/sh\n")
    (bin_dir / "activate").write_text("")
    script = str(bin_dir / "doctor")
    assert name_note(script, which=lambda name: script) is None  # the venv is active
    assert name_note(str(tmp_path / "doctor" / "__main__.py"), which=lambda name: None) is None  # python -m doctor
    assert name_note(script, which=lambda name: None) == (
        f"note: `doctor` in the lines above is {script}, which typing `doctor` does not run here: type that path, or "
        f"put {bin_dir} first on PATH (`source {bin_dir}/activate`)")
    note = name_note(script, which=lambda name: "/usr/local/bin/doctor")
    assert note is not None and "; the `doctor` on PATH is another one (/usr/local/bin/doctor):" in note
