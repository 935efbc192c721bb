"""Developer sessions: `nox -s tests` (the README's test command), `lint`, `typecheck`, `bench`, `fuzz`, and
`realworld` (the real upstream install tier; not run by .ci/run: it downloads gigabytes).

Each session builds its own venv with the machine's pip; the test extra pins `torch==2.13.0` (a CPU build),
and verl's wheel is installed with `--no-deps` so its config files are real but torch is not pulled in twice.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

VERL_WHEEL = "verl==0.9.1"
# Older releases whose yaml the launch tests compose against (one verl can be installed; these are only unpacked).
OLDER_VERL = ("0.6.1", "0.7.1", "0.8.0", "0.9.0")


def _install_test_env(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.install("--no-deps", VERL_WHEEL)


def _older_verl_configs(session: nox.Session) -> str:
    """Unpack verl/trainer/config of older verl wheels into .nox/verl-configs/<version>/ (downloaded once)."""
    import pathlib
    import zipfile

    base = pathlib.Path(".nox/verl-configs").resolve()
    for version in OLDER_VERL:
        dest = base / version
        if (dest / "verl" / "trainer" / "config").is_dir():
            continue
        wheels = base / "wheels"
        session.run("python", "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), f"verl=={version}")
        wheel = next(wheels.glob(f"verl-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            for member in z.namelist():
                if member.startswith("verl/trainer/config/") and ".." not in member:
                    z.extract(member, dest)
    return str(base)


@nox.session
def tests(session: nox.Session) -> None:
    """The full test suite (npu-marked tests skip without an Ascend NPU)."""
    _install_test_env(session)
    configs = _older_verl_configs(session)
    workers = ["-n", "2"] if not any(a.startswith("-n") for a in session.posargs) else []
    session.run("python", "-m", "pytest", *workers, *session.posargs, env={"DOCTOR_TEST_VERL_CONFIGS": configs})


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
    args = ["python", "-m", "pytest", "tests/fuzz", "-q", "--hypothesis-show-statistics", *session.posargs]
    session.run(*args, env={"DOCTOR_FUZZ_EXAMPLES": budget})


@nox.session
def realworld(session: nox.Session) -> None:
    """`doctor install` of the newest profile from real upstream artifacts on this x86_64 machine (gigabytes of
    downloads, tens of minutes; not in .ci/run). Figures go to bench/realworld.json."""
    _install_test_env(session)
    session.run("python", "-m", "pytest", "tests/realworld", "-v", "-s", "-p", "no:cacheprovider", *session.posargs,
                env={"DOCTOR_REALWORLD": "1"})
