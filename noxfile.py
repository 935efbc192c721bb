"""Developer sessions: `nox -s tests` (the README's test command), `lint`, `typecheck`, `bench`, `fuzz`, and
`realworld` (the real upstream install tier; not run by .ci/run: it downloads gigabytes).

Each session builds its own venv with the machine's pip; the test extra pins `torch==2.13.0` (a CPU build),
and verl's wheel is installed with `--no-deps` so its config files are real but torch is not pulled in twice.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True



def _release_rows() -> list[dict]:
    """The verl release table (profiles/releases.toml) read without importing the doctor (nox's own Python)."""
    import pathlib

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads((pathlib.Path(__file__).parent / "profiles" / "releases.toml").read_text())
    from packaging.version import Version

    return sorted((r for r in data["release"] if not r.get("snapshot")), key=lambda r: Version(r["verl"]))


_RELEASES = _release_rows()
# The newest verl release is installed (--no-deps) so launch validation composes against its real config files;
# the older releases that have profiles are only unpacked, for the older-release launch tests.
VERL_WHEEL = f"verl=={_RELEASES[-1]['verl']}"
OLDER_VERL = tuple(r["verl"] for r in _RELEASES[:-1] if "no_profile" not in r)
# Small real wheels that tests install into plain venvs: einops 0.6.2rc0, a release PyPI lists as yanked ("0.6.2
# cancelled in favor of 0.7.0": doctor/checks/yanked.py), and jwt + PyJWT, two distributions that both install the
# `jwt` package (doctor/checks/shared_files.py). Pure wheels, about 80 KB together.
TEST_WHEELS = ("einops==0.6.2rc0", "jwt==1.3.1", "PyJWT==2.10.1")


def _install_test_env(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.install("--no-deps", VERL_WHEEL)


def _older_verl_configs(session: nox.Session) -> str:
    """Unpack verl/trainer/config of older verl wheels into .nox/verl-configs/<version>/, and keep the newest
    release's wheel in .nox/verl-configs/wheels/ (downloaded once)."""
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
    # the newest release's wheel too, as a file: tests install it into plain venvs (declared requirements) and
    # unpack it as a release for lint (a bare config dir checked with the release's dataclass source)
    newest = _RELEASES[-1]["verl"]
    wheels = base / "wheels"
    if not any(wheels.glob(f"verl-{newest}-*.whl")):
        session.run("python", "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), f"verl=={newest}")
    for spec in TEST_WHEELS:
        name, version = spec.split("==")
        if not any(wheels.glob(f"{name}-{version}-*.whl")):
            session.run("python", "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d",
                        str(wheels), spec)
    _junit_schema(session, base)
    return str(base)


def _junit_schema(session: nox.Session, base) -> None:
    """Jenkins' xUnit junit-10.xsd, which the `--junit` files are validated against (tests/test_junit_schema.py): the
    copy pytest's own tests validate its --junitxml with, taken from the sdist of the pytest this session runs
    (PyPI's file; MIT, its licence header kept in the file) into .nox/verl-configs/schemas/."""
    import tarfile

    dest = base / "schemas" / "junit-10.xsd"
    if dest.is_file():
        return
    version = session.run("python", "-c", "import pytest; print(pytest.__version__)", silent=True).strip()
    sdists = base / "sdists"
    session.run("python", "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(sdists),
                f"pytest=={version}")
    with tarfile.open(next(sdists.glob(f"pytest-{version}.tar.gz"))) as t:
        member = t.getmember(f"pytest-{version}/testing/example_scripts/junit-10.xsd")
        data = t.extractfile(member).read()
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)


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
    session.run("ruff", "check", "doctor", "installers", "tests", "bench", "tools", "noxfile.py")


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
    """Hypothesis over every parser and loader: a large fixed budget (>= 10,000 examples per target) unless
    DOCTOR_FUZZ_EXAMPLES says otherwise (.ci/run runs a short pass of a few hundred). The fuzz targets need
    the `launch` extra, not the heavy test stack (torch, ray), so this venv stays small."""
    import os

    session.install("-e", ".[launch]", "pytest>=8", "hypothesis>=6.100")
    budget = os.environ.get("DOCTOR_FUZZ_EXAMPLES", "10000")
    args = ["python", "-m", "pytest", "tests/fuzz", "-q", "--hypothesis-show-statistics", *session.posargs]
    session.run(*args, env={"DOCTOR_FUZZ_EXAMPLES": budget})


@nox.session
def realworld(session: nox.Session) -> None:
    """`doctor install` from real upstream artifacts on this x86_64 machine into targets made by `python3 -m venv`:
    the newest release profile and the newest snapshot, or the profiles named (`nox -s realworld -- PROFILE ...`;
    other arguments go to pytest). Needs DOCTOR_REALWORLD_MIRRORS, a directory of `git clone --mirror` copies
    (tests/realworld/upstream.py). Gigabytes of downloads, tens of minutes; not in .ci/run. Figures go to
    bench/realworld.json."""
    _install_test_env(session)
    names = [a for a in session.posargs if a.startswith("verl-")]
    rest = [a for a in session.posargs if a not in names]
    session.run("python", "-m", "pytest", "tests/realworld", "-v", "-s", "-p", "no:cacheprovider", *rest,
                env={"DOCTOR_REALWORLD": "1", "DOCTOR_REALWORLD_PROFILES": ",".join(names)})
