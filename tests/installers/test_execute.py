"""installers.execute: skip satisfied steps, run the rest under the journal, verify, restore on failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from doctor.installers.backends import Command, PipBackend, Source, UvBackend
from doctor.installers.execute import Executor
from doctor.installers.plan import (
    CLONE,
    EDITABLE,
    ENVFILE,
    INSTALL,
    UNINSTALL,
    EnvSpec,
    GitSource,
    IndexOptions,
    Plan,
    Step,
    Target,
)
from tests.installers.wheelkit import Hang, freeze, make_source_repo, make_venv, make_wheel

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("wheels")
    make_wheel(d, "torch", "2.7.1+cpu")
    make_wheel(d, "torch-npu", "2.7.1", requires=["torch==2.7.1+cpu"])
    make_wheel(d, "triton", "3.3.0")
    make_wheel(d, "triton-ascend", "3.2.0rc4", broken=True)  # fails midway: a file and a directory of one name
    make_wheel(d, "numpy", "1.26.4")
    return d


@pytest.fixture(scope="module")
def megatron(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("git")
    shas = make_source_repo(root / "Megatron-LM.git", dist="megatron-core", packages={"megatron/core/__init__.py": ""},
                            refs=[("tag", "core_v0.12.1", "0.12.1")])
    return root / "Megatron-LM.git", shas["core_v0.12.1"]


def plan_for(tmp: Path, steps: tuple[Step, ...]) -> Plan:
    env = EnvSpec(str(tmp / "doctor-env.sh"), set_env_files=("/usr/local/Ascend/ascend-toolkit/set_env.sh",),
                  exports=(("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES", "1"),))
    return Plan("test", "", Target(None, "3.11", "x86_64", None, src_dir=str(tmp / "src")), steps, env=env)


MEG = GitSource("Megatron-LM", "https://github.com/NVIDIA/Megatron-LM.git", "core_v0.12.1", module="megatron")


def good_steps(commit: str) -> tuple[Step, ...]:
    src = GitSource(MEG.name, MEG.url, MEG.ref, commit=commit[:8], module="megatron")
    return (
        Step("remove-conflicts", UNINSTALL, "remove triton", packages=("triton",)),
        Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu", "torch-npu==2.7.1")),
        Step("clone-megatron-lm", CLONE, "clone", source=src),
        Step("install-megatron-lm", EDITABLE, "megatron", source=src, editable_dist="megatron-core", no_deps=True,
             expect=(("megatron-core", "==0.12.1"),)),
        Step("env-file", ENVFILE, "env"),
    )


def executor(plan: Plan, py: Path, wheels: Path, backend=None, mirror: Path | None = None, **kw) -> Executor:
    mirrors = {"https://github.com/NVIDIA/Megatron-LM": str(mirror)} if mirror else {}
    return Executor(plan, backend or UvBackend(isolated=True), str(py), log_path=plan.target.src_dir + "/../install.log",
                    source=Source(find_links=(str(wheels),), no_index=True, offline=True), mirrors=mirrors, **kw)


@pytest.mark.parametrize("backend", [pytest.param(PipBackend(isolated=True), marks=pytest.mark.slow, id="pip"),
                                     pytest.param(UvBackend(isolated=True), id="uv")])
def test_runs_then_second_run_does_nothing(backend, wheels, megatron, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    plan = plan_for(tmp_path, good_steps(megatron[1]))
    out = executor(plan, py, wheels, backend=backend, mirror=megatron[0]).run()
    assert out.ok, out.error
    assert [r.status for r in out.results] == ["satisfied", "done", "done", "done", "done"]
    assert "megatron-core==0.12.1" in freeze(py) and "torch==2.7.1+cpu" in freeze(py)
    assert (tmp_path / "doctor-env.sh").read_text().count("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1") == 1
    assert out.diff["added"] == ["megatron-core", "torch", "torch-npu"]
    again = executor(plan, py, wheels, backend=backend, mirror=megatron[0]).run()
    assert again.ok and not again.changed and {r.status for r in again.results} == {"satisfied"}
    log = (tmp_path / "install.log").read_text()
    assert "git" in log and "already satisfied" in log


@pytest.mark.parametrize("backend", [pytest.param(PipBackend(isolated=True), marks=pytest.mark.slow, id="pip"),
                                     pytest.param(UvBackend(isolated=True), id="uv")])
def test_failed_step_restores_the_environment(backend, wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    subprocess.run(UvBackend(isolated=True).install(str(py), ["triton==3.3.0", "numpy==1.26.4"], source=Source(
        find_links=(str(wheels),), no_index=True)).argv, check=True, capture_output=True, timeout=60)
    before = freeze(py)
    site = next((tmp_path / "v" / "lib").glob("python*/site-packages"))
    listing = sorted(os.listdir(site))
    steps = (
        Step("remove-conflicts", UNINSTALL, "remove triton", packages=("triton",)),
        Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu", "torch-npu==2.7.1")),
        Step("triton-ascend", INSTALL, "triton-ascend", requirements=("triton-ascend==3.2.0rc4",)),
        Step("env-file", ENVFILE, "env"),
    )
    out = executor(plan_for(tmp_path, steps), py, wheels, backend=backend).run()
    assert not out.ok and out.restored["ok"]
    assert [r.status for r in out.results] == ["done", "done", "failed", "not-run"]
    failed = out.results[2]
    assert "exited with" in failed.detail and failed.log_tail
    assert freeze(py) == before
    assert sorted(os.listdir(site)) == listing  # nothing left behind by the wheel that failed midway
    assert not (tmp_path / "doctor-env.sh").exists()


def test_step_that_does_not_produce_its_pin_fails_verification(wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    steps = (Step("torch-stack", INSTALL, "torch", requirements=("torch",), expect=(("torch", "==2.7.1"), ("torch-npu", "==2.7.1"))),)
    out = executor(plan_for(tmp_path, steps), py, wheels).run()
    assert not out.ok and "torch-npu is not installed (expected torch-npu==2.7.1" in out.error
    assert freeze(py) == []


def test_dry_run_statuses_change_nothing(wheels, megatron, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    ex = executor(plan_for(tmp_path, good_steps(megatron[1])), py, wheels)
    from doctor.installers.target import probe

    st = ex.statuses(probe(str(py)))
    assert [s.status for s in st] == ["satisfied", "pending", "pending", "pending", "pending"]
    assert "--index-strategy" in st[1].command and "-e" in st[3].command
    assert freeze(py) == [] and not (tmp_path / "doctor-env.sh").exists()


DRIVER = r"""
import json, sys
sys.path.insert(0, {repo!r})
from doctor.installers.backends import UvBackend, Source
from doctor.installers.execute import Executor
from doctor.installers.plan import *
steps = (Step("remove-conflicts", UNINSTALL, "remove triton", packages=("triton",)),
         Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",)))
plan = Plan("test", "", Target(None, "3.11", "x86_64", None, src_dir={src!r}), steps)
out = Executor(plan, UvBackend(isolated=True), {py!r}, log_path={log!r},
               source=Source(index=IndexOptions(index_url={url!r}))).run()
print(json.dumps({{"ok": out.ok, "interrupted": out.interrupted, "restored": out.restored["ok"] if out.restored else None,
                  "statuses": [r.status for r in out.results], "tail": out.results[-1].log_tail}}))
sys.exit(0 if out.ok else 1)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_mid_step_restores(sig, wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    subprocess.run(UvBackend(isolated=True).install(str(py), ["triton==3.3.0"], source=Source(
        find_links=(str(wheels),), no_index=True)).argv, check=True, capture_output=True, timeout=60)
    before = freeze(py)
    hang = Hang()
    log = tmp_path / "install.log"
    script = DRIVER.format(repo=str(REPO), src=str(tmp_path / "src"), py=str(py), log=str(log), url=hang.url)
    env = {**hermetic, "UV_HTTP_TIMEOUT": "120"}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # wait until the hanging step has started
            if log.exists() and "-- torch-stack" in log.read_text() and hang.conns:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the step never started: " + (log.read_text() if log.exists() else "no log"))
        assert freeze(py) == []  # step 1 really removed triton
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        hang.close()
    assert proc.returncode == 1, err
    res = json.loads(out)
    assert res["interrupted"] == signal.Signals(sig).name and res["restored"] is True
    assert res["statuses"] == ["done", "failed"]
    # the interrupted step's tail is what it was doing when the signal came, not the restore that followed
    assert any("-- torch-stack" in ln for ln in res["tail"]) and any(hang.url in ln for ln in res["tail"]), res["tail"]
    assert not any(ln.startswith(("restore:", "restoring ")) for ln in res["tail"]), res["tail"]
    assert freeze(py) == before


def test_build_steps_find_the_targets_tools_first_on_path(tmp_path: Path) -> None:
    """A build that looks for `python3` on PATH (arctic-inference's CMake FindPython) must find the target's
    interpreter, as in an activated environment, not the first one on the doctor's PATH (a pyenv shim)."""
    step = Step("x", INSTALL, "x", requirements=("numpy",), env=(("TORCH_DEVICE_BACKEND_AUTOLOAD", "0"),))
    py = str(tmp_path / "venv" / "bin" / "python")
    ex = Executor(plan_for(tmp_path, (step,)), PipBackend(isolated=True), py, source=Source(), log_path=tmp_path / "log")
    env = dict(ex._command(step).env)
    assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "venv" / "bin")
    assert env["TORCH_DEVICE_BACKEND_AUTOLOAD"] == "0"
    assert "PATH=" not in (ex.describe(step) or "")


def test_commands_shown_and_logged_carry_no_index_or_mirror_credentials(tmp_path: Path) -> None:
    """`--index-url https://u:TOKEN@pypi.corp/simple` and a `--git-mirror` with a token reach pip and git as given,
    but the plan the dry run prints (and --json, a CI log) and the install log show `<redacted>`, as pip itself masks
    them; the command run keeps them."""
    src = GitSource(MEG.name, MEG.url, MEG.ref, commit="deadbeef", module="megatron")
    steps = (Step("x", INSTALL, "x", requirements=("numpy",)), Step("clone-megatron-lm", CLONE, "clone", source=src))
    log = tmp_path / "install.log"
    ex = Executor(plan_for(tmp_path, steps), PipBackend(isolated=True), sys.executable, log_path=log,
                  source=Source(index=IndexOptions(index_url="https://u:pwTOKEN1@pypi.corp/simple")),
                  mirrors={"https://github.com/NVIDIA/Megatron-LM": "https://oauth2:glTOKEN2@git.corp/m.git"})
    shown = [ex.describe(s) or "" for s in steps]
    assert "https://<redacted>@pypi.corp/simple" in shown[0] and "https://<redacted>@git.corp/m.git" in shown[1]
    assert not any("TOKEN" in t for t in shown)
    assert "pwTOKEN1" in " ".join(ex._command(steps[0]).argv)  # what runs is unchanged
    with open(log, "w", encoding="utf-8") as fh:  # what run() opens around the steps
        ex._log = fh
        ex._run(steps[0], Command((sys.executable, "-c", "pass", "--index-url", "https://u:pwTOKEN1@pypi.corp/simple")))
    assert "TOKEN" not in log.read_text() and "<redacted>" in log.read_text()


def test_a_shown_command_pastes_into_a_shell_as_the_command_it_was(tmp_path: Path) -> None:
    """The dry run prints each step as `$ ENV=… python -m pip … install numpy<2.0.0 pyarrow>=15.0.0,<=24.0.0 …`: pasted
    into a shell, unquoted, `<` and `>` were redirections (a file named `2.0.0` read, one named `=15.0.0,` written) and
    `TransferQueue @ git+…` three words. Each word is now quoted: a shell gives back the command's own argv."""
    import shlex

    reqs = ("numpy<2.0.0", "pyarrow>=15.0.0,<=24.0.0", "TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main")
    steps = (Step("x", INSTALL, "x", requirements=reqs, env=(("VLLM_TARGET_DEVICE", "empty device"),)),)
    ex = Executor(plan_for(tmp_path, steps), PipBackend(isolated=True), sys.executable, log_path=tmp_path / "l",
                  source=Source(index=IndexOptions()))
    line = ex.describe(steps[0]) or ""
    argv = ex._command(steps[0]).argv
    # the program becomes a function printing its words and the variable it was given; run where a redirect would land
    prog = shlex.quote(argv[0])
    script = 'f() { printf "%s\\n" "$VLLM_TARGET_DEVICE" "$@"; }; ' + line.replace(prog, "f", 1)
    cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.splitlines() == ["empty device", *argv[1:]], cp.stdout
    assert not [p.name for p in tmp_path.iterdir() if p.name != "l"]  # no redirection wrote a file


def test_a_no_isolation_build_gets_its_build_system_requires_read_from_the_clone(tmp_path: Path) -> None:
    """Issue 15 item 3: install-vllm-ascend died on `No module named 'setuptools_scm'`; the step before it installs
    the clone's [build-system].requires (read at the checked-out commit), upstream's setuptools-scm and its
    requirements.txt."""
    from doctor.installers.execute import build_requirements

    clone = tmp_path / "vllm-ascend"
    clone.mkdir()
    (clone / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=64", "setuptools-scm>=8", '
                                          '"arctic-inference==0.1.1"]\nbuild-backend = "setuptools.build_meta"\n')
    (clone / "requirements.txt").write_text("torch-npu==2.10.0.post4\n")
    step = Step("vllm-ascend-build-deps", INSTALL, "deps", requirements=("setuptools-scm",), build_for="install-vllm-ascend",
                requirement_files=("requirements.txt", "missing.txt"))
    assert build_requirements(clone, step) == ("setuptools>=64", "setuptools-scm>=8", "arctic-inference==0.1.1",
                                               "setuptools-scm", "-r", str(clone / "requirements.txt"))


def test_build_system_requires_is_read_one_way_with_pep_517s_default(tmp_path) -> None:
    """The clone's pyproject (online build step), the git sources' and the sdists' (wheelhouse) share one reader:
    a source without [build-system] builds with setuptools + wheel, as pip does."""
    from doctor.installers.execute import DEFAULT_BUILD, build_system_requires, read_build_system_requires

    assert build_system_requires(b'[build-system]\nrequires = ["scikit-build-core", "nanobind"]\n', "x") == [
        "scikit-build-core", "nanobind"]
    assert build_system_requires(b"[project]\nname = 'x'\n", "x") == list(DEFAULT_BUILD)
    assert build_system_requires(b"not = [toml", "x") == list(DEFAULT_BUILD)
    assert read_build_system_requires(tmp_path / "missing" / "pyproject.toml") == list(DEFAULT_BUILD)


def test_a_git_requirement_through_a_local_mirror_is_one_the_bundled_pip_accepts(tmp_path: Path) -> None:
    """verl 0.9.1's `TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main`, with `--git-mirror` to a
    local `git clone --mirror` directory: the doctor's pip (the one `python3 -m venv` gives it, 23.2.1 on 3.11) must
    accept the mapped line. It refused `git+file:///path` as an invalid requirement, so --download-only failed."""
    from doctor.installers.execute import map_requirement_line
    from doctor.installers.gitsrc import parse_mirrors
    from tests.installers.test_rollback_guard import bundled_pip_venv, pip

    bare = tmp_path / "mirrors" / "TransferQueue.git"
    make_source_repo(bare, dist="TransferQueue", packages={"transfer_queue/__init__.py": ""},
                     refs=[("branch", "main", "0.1.0")])
    line = map_requirement_line("TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main",
                                parse_mirrors([f"https://github.com/Ascend/TransferQueue.git={bare}"]), offline=False)
    assert line is not None and str(bare) in line
    py = bundled_pip_venv(tmp_path / "venv")
    out = pip(py, "download", "--no-deps", "--no-build-isolation", "-d", str(tmp_path / "got"), line)
    assert "Successfully downloaded TransferQueue" in out
    assert [p.name for p in (tmp_path / "got").iterdir()] == ["TransferQueue-0.1.0.zip"]


def test_the_dry_run_lists_where_the_steps_that_would_run_download_from(tmp_path: Path) -> None:
    """An operator opening a firewall or filling a mirror needs the hosts before the run: the indexes (the profile's,
    or --index-url's in their place, and pip's default), the git repositories (after --git-mirror) and the git URLs of
    requirement lines (verl main's TransferQueue @ git+...@main); none offline."""
    from doctor.installers.execute import PENDING, StepResult

    torch_idx = IndexOptions(extra_index_urls=("https://download.pytorch.org/whl/cpu",))
    src = GitSource("Megatron-LM", "https://github.com/NVIDIA/Megatron-LM.git", "core_v0.12.1", commit="abc1234")
    steps = (Step("remove-conflicts", UNINSTALL, "remove triton", packages=("triton",)),
             Step("torch-stack", INSTALL, "torch", requirements=("torch==2.7.1+cpu",), index=torch_idx),
             Step("clone-megatron-lm", CLONE, "clone", source=src),
             Step("verl-requirements", INSTALL, "reqs", requirements=(
                 "numpy<2.0.0", "TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main")))
    plan = plan_for(tmp_path, steps)
    todo = [StepResult(s.id, s.kind, s.title, PENDING) for s in steps]
    ex = Executor(plan, PipBackend(isolated=True), "/t/bin/python", log_path=tmp_path / "log", source=Source(),
                  mirrors={"https://github.com/NVIDIA/Megatron-LM": "https://git.corp/Megatron-LM.git"})
    assert ex.downloads(todo) == {
        "indexes": ["https://pypi.org/simple", "https://download.pytorch.org/whl/cpu"],
        "git": ["https://git.corp/Megatron-LM.git", "https://github.com/Ascend/TransferQueue.git@main"]}
    # a mirror given with --index-url replaces the profile's indexes; a satisfied step downloads nothing
    mine = Executor(plan, PipBackend(isolated=True), "/t/bin/python", log_path=tmp_path / "log",
                    source=Source(index=IndexOptions(index_url="https://u:TOKEN@pypi.corp/simple")),
                    mirrors={"https://github.com/Ascend/TransferQueue": "https://u:TOKEN@git.corp/TransferQueue.git"})
    assert mine.downloads([*todo[:2], replace(todo[2], status="satisfied"), todo[3]]) == {
        "indexes": ["https://<redacted>@pypi.corp/simple"], "git": ["https://<redacted>@git.corp/TransferQueue.git@main"]}
    offline = Executor(plan, PipBackend(isolated=True), "/t/bin/python", log_path=tmp_path / "log",
                       source=Source(find_links=("/h/wheels",), no_index=True, offline=True),
                       bundles={"Megatron-LM": {"bundle": "/h/git/Megatron-LM.bundle", "commit": "abc1234"}})
    assert offline.downloads(todo) == {"indexes": [], "git": []}


def test_a_bundle_at_another_commit_is_the_commit_the_plan_names(tmp_path: Path) -> None:
    """A wheelhouse made with `--git-ref MindSpeed=...` bundles another commit than the profile's; offline, the clone
    checks the bundle's out (pinned so that it is verified against it). The plan printed, the progress line and the
    log named the profile's commit all the same (seen on verl-0.6.1-cann8.2.rc1-a2: "Clone MindSpeed at f2b0977…",
    then `git checkout --detach c182a2f…`)."""
    from doctor.installers.resolve import Facts, resolve
    from doctor.knowledge.profiles import load_profiles

    p = next(x for x in load_profiles() if x.name == "verl-0.6.1-cann8.2.rc1-a2")
    plan = resolve(p, Facts(arch="x86_64", python_version="3.11", cann=p.cann_version, chip="A2"), src_dir=str(tmp_path))
    pinned = plan.step("clone-mindspeed").source.commit  # type: ignore[union-attr]
    assert pinned and pinned in plan.step("clone-mindspeed").title
    other = "c182a2f3e1e48a6d582c2585f741d75a8c6f7149"
    ex = Executor(plan, PipBackend(isolated=True), "/x/bin/python", log_path=os.devnull, source=Source(offline=True),
                  bundles={"MindSpeed": {"bundle": str(tmp_path / "MindSpeed.bundle"), "commit": other}})
    step = ex.plan.step("clone-mindspeed")
    assert step.source is not None and step.source.commit == other
    assert step.title == f"Clone MindSpeed at {other} (the wheelhouse's bundle)", step.title
    assert ex.plan.step("clone-verl").title == plan.step("clone-verl").title  # a bundle at the profile's commit
