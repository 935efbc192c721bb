"""The README stays true: its first lines are the two fresh-machine commands, `.ci/run` runs its test command,
and every finding id the code can emit (or the signature database holds) is documented in it."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
FINDING_FACTORIES = {"finding", "Finding", "Attribution"}  # explain: doctor/explain/attribution.py


def _static_ids() -> set[str]:
    ids: set[str] = set()
    for path in [*(ROOT / "doctor").rglob("*.py"), *(ROOT / "installers").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            first = node.args[0]
            if name in FINDING_FACTORIES and isinstance(first, ast.Constant) and isinstance(first.value, str):
                ids.add(first.value)
    return ids


def test_first_lines_are_the_two_commands():
    block = README.split("```")[1].strip().splitlines()
    assert block[0] == "bash"
    install, tests = block[1], block[2]
    assert "pip install ." in install and "doctor check" in install
    assert "nox -s tests" in tests
    # neither runs pip with the system's python3: Debian's refuses it (PEP 668, externally-managed-environment)
    # outside a venv, which is why the install line makes one; the test line uses that venv too
    for line in (install, tests):
        assert not re.search(r"(^|[\s;&|])python3 -m pip ", line), line


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "nox -s tests" in ci and "nox -s lint" in ci


def test_every_finding_id_is_documented():
    documented = set(re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", README))
    missing = sorted(_static_ids() - documented)
    assert not missing, f"finding ids missing from the README: {missing}"
    assert len(_static_ids()) > 150


def test_every_signature_is_documented():
    db = tomllib.loads((ROOT / "profiles" / "signatures.toml").read_text())
    ids = {s["id"] for s in db["signature"]}
    documented = set(re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", README))
    assert not sorted(ids - documented)
    assert len(ids) >= 40


def test_the_signature_counts_the_readme_states_are_the_databases():
    """Every "N known signatures" figure in the README is the database's current size."""
    n = len(tomllib.loads((ROOT / "profiles" / "signatures.toml").read_text())["signature"])
    stated = {int(x) for x in re.findall(r"\b(\d{2,4}) known signatures\b", README)}
    assert stated and stated == {n}, f"README states {sorted(stated)} signatures; the database has {n}"


def test_no_table_row_is_written_twice():
    """A merge can repeat a table row (the command table once held `doctor explain LOG` four times)."""
    lines = README.splitlines()
    # body rows only: a header row (the line above a `|---` rule) may repeat across tables
    rows = [line for i, line in enumerate(lines) if line.startswith("| ")
            and not (i + 1 < len(lines) and lines[i + 1].startswith("|---"))]
    twice = sorted({r for r in rows if rows.count(r) > 1})
    assert not twice, twice


def test_the_ci_runner_install_line_plans_on_a_host_without_cann(tmp_path: Path):
    """README's install example for an image build / CI runner without CANN or NPU (`--no-host-check`), run as it
    is written (its /opt/verl a fresh venv, plus --dry-run) on a root with no Ascend install, plans the stack:
    exit 0 with the host findings listed apart. Written without `--profile` it was exit 2, "no verified stack
    matches this host": with no CANN there is nothing to match a stack by."""
    import json
    import shlex

    from tests.cli.test_install import doctor

    block = README.split("## `doctor install`", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    (line,) = [x for x in block.splitlines() if "--no-host-check" in x and x.startswith("doctor install ")]
    args = [str(tmp_path / "venv") if a == "/opt/verl" else a for a in shlex.split(line.split("#", 1)[0])[1:]]
    cp = doctor(*args, "--dry-run", "--json", "--root", str(tmp_path))
    assert cp.returncode == 0, cp.stderr
    rep = json.loads(cp.stdout)
    assert any(f["id"] == "install-system-cann-missing" for f in rep["host_findings"])
    assert not (tmp_path / "venv").exists()
