"""The remove-orphans step: what a run installed that the re-pins left required by nothing goes, nothing else.

Modelled on a real run of verl-0.9.1-cann9.1.0-a2: vLLM's build resolved the newest transformers (5.25.0, base
Requires-Dist `kernels<0.20,>=0.19.1`), which brought kernels 0.19.1; the final pins moved transformers back to
5.10.4, whose METADATA names kernels only in its extras [all], [integrations], [kernels], in `<0.13,>=0.12.0`. Here
`xform` plays transformers and `kern` plays kernels, as real wheels with those Requires-Dist lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.installers import orphans as orph
from doctor.installers.backends import PipBackend, Source, UvBackend
from doctor.installers.execute import Executor
from doctor.installers.plan import ENVFILE, INSTALL, PRUNE, EnvSpec, Plan, Step, Target
from doctor.installers.satisfy import View, satisfied
from tests.installers.wheelkit import freeze, make_venv, make_wheel

ENV = orph.marker_env("3.11.9", "x86_64")
XFORM_510 = ("hub>=1", "kern<0.13,>=0.12.0; extra == \"all\"", "kern<0.13,>=0.12.0; extra == \"integrations\"",
             "kern<0.13,>=0.12.0; extra == \"kernels\"")


def test_what_only_a_re_pinned_releases_extras_name_goes_with_its_own_orphans() -> None:
    installed = {"xform": XFORM_510, "kern": ("kdep",), "kdep": (), "hub": (), "vll": ("xform!=5.0.*,>=4.56",)}
    keep = orph.named(["vll==0.23.0", "xform==5.10.4"])
    assert orph.orphans(installed, before=(), keep=keep, env=ENV) == ["kdep", "kern"]


def test_what_was_there_before_the_run_what_the_plan_names_and_what_an_extra_in_use_needs_stay() -> None:
    installed = {"xform": XFORM_510, "kern": (), "old": (), "pinned": (), "svc": ("rayx[default]>=2",),
                 "rayx": ("aiohttpx; extra == 'default'", "colorx; extra == 'cli'"), "aiohttpx": (), "colorx": ()}
    keep = {**orph.named(["xform==5.10.4", "svc"]), "pinned": frozenset()}
    assert orph.orphans(installed, before=("old", "kern"), keep=keep, env=ENV) == ["colorx"]
    # the plan's own line may request the extra too
    assert orph.orphans({"rayx": installed["rayx"], "aiohttpx": ()}, (), orph.named(["rayx[default]"]), ENV) == []


def test_a_marker_false_for_the_target_does_not_require_and_one_it_cannot_decide_keeps() -> None:
    installed = {"top": ("win; sys_platform == 'win32'", "old-py; python_version < '3.9'", "rel; platform_release > '5'",
                         "arm; platform_machine == 'aarch64'", "x; platform_machine == 'x86_64'"),
                 "win": (), "old-py": (), "rel": (), "arm": (), "x": ()}
    assert orph.orphans(installed, (), orph.named(["top"]), ENV) == ["arm", "old-py", "win"]
    # a line packaging refuses keeps the name it starts with
    assert orph.orphans({"top": ("odd >= 1 ; bogus marker",), "odd": ()}, (), orph.named(["top"]), ENV) == []


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("wheels")
    make_wheel(d, "vll", "0.23.0", requires=["xform!=5.0.*,>=4.56"])
    make_wheel(d, "xform", "5.25.0", requires=["hub>=1", "kern<0.20,>=0.19.1", "pinned"])
    make_wheel(d, "xform", "5.10.4", requires=list(XFORM_510), extras=("all", "integrations", "kernels"))
    make_wheel(d, "kern", "0.19.1", requires=["kdep"])
    for name in ("kdep", "hub", "pinned", "old", "aiohttpx"):
        make_wheel(d, name, "1.0")
    make_wheel(d, "svc", "1.0", requires=["rayx[default]>=2"])
    make_wheel(d, "rayx", "2.0", requires=["aiohttpx; extra == 'default'"], extras=("default",))
    make_wheel(d, "bad", "1.0", broken=True)  # fails midway: a later step's failure
    return d


def plan_for(tmp: Path, *after: Step) -> Plan:
    steps = (Step("install-vllm", INSTALL, "vll", requirements=("vll==0.23.0", "svc==1.0")),
             Step("final-pins", INSTALL, "re-pin", requirements=("xform==5.10.4",)),
             Step("remove-orphans", PRUNE, "Remove what the re-pins left required by nothing"), *after,
             Step("env-file", ENVFILE, "env"))
    return Plan("test", "", Target(None, "3.11", "x86_64", None, src_dir=str(tmp / "src")), steps,
                env=EnvSpec(str(tmp / "doctor-env.sh")), pins=(("pinned", "==1.0"), ("xform", "==5.10.4")))


def run(plan: Plan, py: Path, wheels: Path, backend=None):
    return Executor(plan, backend or UvBackend(isolated=True), str(py), log_path=plan.target.src_dir + "/../install.log",
                    source=Source(find_links=(str(wheels),), no_index=True, offline=True)).run()


@pytest.mark.parametrize("backend", [pytest.param(PipBackend(isolated=True), marks=pytest.mark.slow, id="pip"),
                                     pytest.param(UvBackend(isolated=True), id="uv")])
def test_the_re_pinned_releases_leftovers_are_removed_and_named(backend, wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    assert run(Plan("pre", "", Target(None, "3.11", "x86_64", None, src_dir=str(tmp_path / "pre")), (Step("old", INSTALL, "old", requirements=("old",)),)),
               py, wheels).ok
    plan = plan_for(tmp_path)
    ex = Executor(plan, UvBackend(isolated=True), str(py), log_path=str(tmp_path / "dry.log"),
                  source=Source(find_links=(str(wheels),), no_index=True, offline=True))
    from doctor.installers.target import probe

    dry = ex.statuses(probe(str(py)))
    assert [s.status for s in dry] == ["pending", "pending", "pending", "pending"]
    assert "no installed distribution requires" in str(dry[2].command)
    out = run(plan, py, wheels, backend)
    assert out.ok, out.error
    after = freeze(py)
    assert not any(p.startswith(("kern==", "kdep==")) for p in after), after
    for kept in ("old==1.0", "pinned==1.0", "rayx==2.0", "aiohttpx==1.0", "hub==1.0", "xform==5.10.4", "vll==0.23.0"):
        assert kept in after
    prune = out.results[2]
    assert prune.status == "done" and prune.detail.startswith("removed kdep 1.0, kern 0.19.1: installed by this run")
    assert "uninstall" in str(prune.command) and "kern" in str(prune.command)
    assert "removed kdep 1.0, kern 0.19.1" in (tmp_path / "install.log").read_text()
    assert "kern" not in out.diff["added"]
    again = run(plan, py, wheels, backend)
    assert again.ok and not again.changed and {r.status for r in again.results} == {"satisfied"}


def test_a_failure_after_the_removal_restores_the_set_before_the_run(wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    before = freeze(py)
    out = run(plan_for(tmp_path, Step("bad", INSTALL, "bad", requirements=("bad==1.0",))), py, wheels)
    assert not out.ok and out.restored and out.restored["ok"]
    assert [r.status for r in out.results] == ["done", "done", "done", "failed", "not-run"]
    assert freeze(py) == before


def test_the_dry_run_says_nothing_goes_when_nothing_installs() -> None:
    plan = plan_for(Path("/nowhere"))
    view = View(versions={"vll": "0.23.0", "svc": "1.0", "xform": "5.10.4"})
    assert satisfied(plan.step("remove-orphans"), view, plan)
    assert not satisfied(plan.step("remove-orphans"), View(versions={"xform": "5.25.0"}), plan)
