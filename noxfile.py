"""Developer sessions: `nox -s tests` (the README's test command), `lint`, `typecheck`, `bench`, `fuzz`.

Each session builds its own venv with the machine's pip; the test extra pins `torch==2.13.0` (a CPU build),
and verl's wheel is installed with `--no-deps` so its config files are real but torch is not pulled in twice.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

VERL_WHEEL = "verl==0.9.1"


def _install_test_env(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.install("--no-deps", VERL_WHEEL)


@nox.session
def tests(session: nox.Session) -> None:
    """The full test suite (npu-marked tests skip without an Ascend NPU)."""
    _install_test_env(session)
    workers = ["-n", "2"] if not any(a.startswith("-n") for a in session.posargs) else []
    session.run("python", "-m", "pytest", *workers, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", "doctor", "installers", "tests", "bench", "noxfile.py")


@nox.session
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".", "mypy>=1.10", "types-PyYAML")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Every benchmark under bench/, side by side; ratios printed, results in bench/results.json."""
    _install_test_env(session)
    session.run("python", "bench/run_all.py", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Hypothesis over every parser and loader with a large fixed budget (>= 10,000 examples per target)."""
    _install_test_env(session)
    budget = session.env.get("DOCTOR_FUZZ_EXAMPLES", "10000")
    args = ["python", "-m", "pytest", "tests/fuzz", "-q", *session.posargs]
    session.run(*args, env={"DOCTOR_FUZZ_EXAMPLES": budget})
