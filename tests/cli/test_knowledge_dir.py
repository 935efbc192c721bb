"""`DOCTOR_KNOWLEDGE=DIR` / `doctor --knowledge DIR`: a newer copy of profiles/ (stacks, releases, signatures,
requirements/) carried onto an air-gapped cluster is used instead of the packaged one, validated the same
way (a broken copy is exit 2 naming its file), and `doctor check` names the copy and its date."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.knowledge.profiles import load_profiles
from tests.stacks import stack_snapshot

ROOT = Path(__file__).parents[2]


def doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if k != "DOCTOR_KNOWLEDGE"}
    e.update(PYTHONPATH=str(ROOT), NO_COLOR="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "doctor", *args], cwd=ROOT, capture_output=True, text=True,
                          env=e, timeout=120)


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    """A newer knowledge directory: the packaged one with a later date."""
    d = tmp_path / "knowledge"
    shutil.copytree(ROOT / "profiles", d)
    rel = d / "releases.toml"
    rel.write_text(rel.read_text().replace('knowledge_date = "2026-12-03"', 'knowledge_date = "2027-01-15"'))
    return d


@pytest.fixture()
def snap(tmp_path: Path) -> Path:
    p = next(x for x in load_profiles() if x.name == "verl-0.9.1-cann9.1.0-a2")
    f = tmp_path / "node.json"
    f.write_text(json.dumps(stack_snapshot(p)))
    return f


def test_packaged_copy_is_named_by_default(snap: Path) -> None:
    r = doctor("--json", "check", "--from", str(snap))
    k = json.loads(r.stdout)["knowledge"]
    assert k["copy"] == "packaged" and k["date"] == "2026-12-03"


@pytest.mark.parametrize("how", ["env", "option", "option-after"])
def test_a_newer_copy_is_used_and_named(copy: Path, snap: Path, how: str) -> None:
    env = {"DOCTOR_KNOWLEDGE": str(copy)} if how == "env" else None
    pre = ("--knowledge", str(copy)) if how == "option" else ()
    post = ("--knowledge", str(copy)) if how == "option-after" else ()
    r = doctor(*pre, "--json", "check", "--from", str(snap), *post, env=env)
    assert r.returncode in (0, 1), r.stderr
    k = json.loads(r.stdout)["knowledge"]
    # named by what the user used (trial item 11: `--knowledge kn` was reported as DOCTOR_KNOWLEDGE)
    named = "DOCTOR_KNOWLEDGE" if how == "env" else "--knowledge"
    assert (k["copy"], k["dir"], k["date"]) == (named, str(copy), "2027-01-15")
    text = doctor(*pre, "check", "--from", str(snap), *post, env=env)
    assert f"knowledge: 2027-01-15, {copy} ({named})" in text.stdout + text.stderr
    listed = doctor(*pre, "profiles", env=env) if how != "option-after" else doctor("profiles", *post, env=env)
    assert f"Knowledge from 2027-01-15 ({copy}, {named})." in listed.stdout + listed.stderr


def test_the_copys_stacks_are_the_ones_listed(copy: Path) -> None:
    for f in (copy / "stacks").glob("*.toml"):
        if "0.9.1" not in f.name:
            f.unlink()
    r = doctor("--json", "profiles", env={"DOCTOR_KNOWLEDGE": str(copy)})
    names = {p["name"] for p in json.loads(r.stdout)["profiles"]}
    assert names == {"verl-0.9.1-cann9.1.0-a2", "verl-0.9.1-cann9.1.0-a3"}
    text = doctor("profiles", env={"DOCTOR_KNOWLEDGE": str(copy)})
    assert f"Knowledge from 2027-01-15 ({copy}, DOCTOR_KNOWLEDGE)." in text.stdout + text.stderr


@pytest.mark.parametrize("file,breakage,where", [
    ("releases.toml", ('knowledge_date = "2027-01-15"', 'knowledge_date = "soon"'), "releases.toml: knowledge_date"),
    ("requirements/index.json", ('"schema": "doctor.requirements-index/1"', '"schema": "x"'),
     "requirements/index.json: schema"),
    ("stacks/verl-0.9.1-cann9.1.0-a2.toml", ('max = "9.2.0"', 'max = "9.0.0"'), "verl-0.9.1-cann9.1.0-a2.toml: cann.max"),
])
def test_a_broken_copy_is_refused_like_the_packaged_one(copy: Path, snap: Path, file: str,
                                                       breakage: tuple[str, str], where: str) -> None:
    f = copy / file
    text = f.read_text()
    assert breakage[0] in text
    f.write_text(text.replace(breakage[0], breakage[1], 1))
    r = doctor("check", "--from", str(snap), env={"DOCTOR_KNOWLEDGE": str(copy)})
    assert r.returncode == 2
    assert str(copy) in r.stderr and where in r.stderr


def test_a_missing_directory_is_a_usage_error() -> None:
    r = doctor("--knowledge", "/nonexistent/knowledge", "check")
    assert r.returncode == 2 and "--knowledge" in r.stderr


def test_explain_reads_the_copys_signatures(copy: Path, tmp_path: Path) -> None:
    (copy / "signatures.toml").write_text("not = [valid toml\n")
    log = tmp_path / "x.log"
    log.write_text("hello\n")
    r = doctor("explain", str(log), env={"DOCTOR_KNOWLEDGE": str(copy)})
    assert r.returncode == 2 and str(copy / "signatures.toml") in r.stderr
