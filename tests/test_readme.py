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


def test_the_launch_spec_example_is_a_spec_launch_takes(tmp_path: Path, monkeypatch):
    """README's `--spec` example, with its `~/models/Qwen3-30B-A3B` under a HOME holding that model's config, run
    through README's own `doctor launch --spec layout.yaml …` line: it validates (exit 0) and the script carries what
    the file says (the spec's keys were documented nowhere but in the source)."""
    import shlex

    from click.testing import CliRunner

    from doctor.cli import cli
    from tests.launch.helpers import QWEN3_MOE, write_model

    section = README.split("## `doctor launch` / `doctor lint`", 1)[1]
    spec = section.split("```yaml", 1)[1].split("```", 1)[0]
    (tmp_path / "layout.yaml").write_text(spec)
    write_model(tmp_path / "home" / "models", "Qwen3-30B-A3B", QWEN3_MOE)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    (line,) = [x for x in block.splitlines() if x.startswith("doctor launch --spec")]
    args = shlex.split(line.split("#", 1)[0])[1:]
    r = CliRunner().invoke(cli, [*args, "--no-compose"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    script = (tmp_path / "run.sh").read_text()
    for want in (f"actor_rollout_ref.model.path={tmp_path}/home/models/Qwen3-30B-A3B", "tensor_model_parallel_size=4",
                 "expert_model_parallel_size=4", "moe_grouped_gemm=True", "trainer.val_before_train=False",
                 "trainer.nnodes=2", "for verl 0.9.1"):
        assert want in script, want


def test_a_signatures_file_with_the_fields_the_readme_names_is_taken(tmp_path: Path):
    """README's `--signatures FILE` sentence names the fields a user's file needs; a file with exactly those (and no
    other) explains a log with it. Before the sentence a user found them one exit 2 at a time (schema, then
    specificity and source, then example)."""
    import json

    from click.testing import CliRunner

    from doctor.cli import cli

    para = next(p for p in README.split("\n\n") if p.startswith("`--signatures FILE` replaces"))
    fields = re.findall(r"`(\w+)`", para.split("tables each with", 1)[1].split("(the header", 1)[0])
    values = {"id": "my-libfoo-missing", "severity": "error", "components": ["system"], "specificity": 50,
              "title": "libfoo is missing", "fix": "Install libfoo.", "source": "https://example.com/libfoo",
              "regex": [r"libfoo\.so: cannot open"], "example": "ImportError: libfoo.so: cannot open shared object file"}
    assert set(fields) == set(values), fields
    body = "\n".join(f"{k} = {json.dumps(values[k])}" for k in fields)
    db = tmp_path / "my.toml"
    db.write_text('schema = "doctor.signatures/1"\n\n[[signature]]\n' + body + "\n")
    log = tmp_path / "run.log"
    log.write_text("INFO start\nImportError: libfoo.so: cannot open shared object file\n")
    r = CliRunner().invoke(cli, ["explain", "--json", "--signatures", str(db), str(log)], catch_exceptions=False)
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["findings"][0]["id"] == "my-libfoo-missing"


def test_the_air_gapped_doctor_lines_also_carry_the_launch_extra():
    """The air-gapped lines built a wheelhouse of the doctor's base requirements only: `doctor launch` / `lint` on the
    cluster then had no hydra-core, and asking pip for `[launch]` with `--only-binary=:all:` fails, since hydra-core
    needs antlr4-python3-runtime 4.9, which PyPI has only as an sdist (pure Python: `pip wheel` makes the one wheel
    that fits every machine). Checked by hand: these lines, run as written, give aarch64 wheels of every requirement
    of the extra; the x86_64 twin installs with --no-index in a fresh venv and launch composes verl 0.9.1's config
    from the downloaded verl wheel with PIP_NO_INDEX=1 PIP_FIND_LINKS."""
    block = README[README.index("# air-gapped: on a connected host"):]
    block = block[:block.index("```")]
    lines = [ln.split("   #")[0].strip() for ln in block.splitlines()]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["launch"]
    assert any(r.startswith("hydra-core") for r in extras)
    assert "python3 -m pip wheel --no-deps -w ./doctor-wheels 'antlr4-python3-runtime==4.9.*'" in lines
    download = next(ln for ln in lines if ln.startswith("python3 -m pip download") and "[launch]" in ln)
    assert "--find-links ./doctor-wheels" in download and "--only-binary=:all:" in download
    assert lines.index(download) > lines.index("python3 -m pip wheel --no-deps -w ./doctor-wheels "
                                               "'antlr4-python3-runtime==4.9.*'")
    assert "verl-ascend-doctor[launch]" in block
