"""Every profile installs what its verl release needs to run (issue 21, item 4).

The requirements are read from the real verl wheel's METADATA (verl 0.9.1, installed `--no-deps` in the test
venv, read with importlib.metadata): every requirement without an extra marker must be installed by some step of
every profile's plan — by name in a step's requirements, or by a verl install that resolves dependencies (upstream's
scripts run `pip install -e .`, never `--no-deps`)."""

from __future__ import annotations

import importlib.metadata

import pytest
from packaging.requirements import Requirement

from doctor.installers.plan import EDITABLE, INSTALL
from doctor.installers.resolve import resolve
from doctor.knowledge.profiles import load_profiles
from doctor.snapshot.model import normalize_name
from tests.installers.test_resolve import facts


def verl_requires() -> list[Requirement]:
    try:
        dist = importlib.metadata.distribution("verl")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("verl is not installed in the test environment (nox -s tests installs its wheel --no-deps)")
    reqs = [Requirement(r) for r in dist.requires or ()]
    return [r for r in reqs if not (r.marker and "extra" in str(r.marker))]


def covered(plan, req: Requirement) -> str | None:
    """The id of the step that installs `req`, None when no step does."""
    name = normalize_name(req.name)
    for s in plan.steps:
        verl_step = (s.kind == EDITABLE and s.editable_dist == "verl") or \
            (s.kind == INSTALL and any(normalize_name(Requirement(r).name) == "verl" for r in s.requirements if r[:1].isalpha()))
        if verl_step and not s.no_deps:
            return s.id
        if s.kind == INSTALL and any(normalize_name(Requirement(r).name) == name for r in s.requirements
                                     if r[:1].isalpha() and "@" not in r):
            return s.id
    return None


@pytest.mark.parametrize("profile", load_profiles(), ids=lambda p: p.name)
def test_every_profile_installs_verls_declared_requirements(profile) -> None:
    reqs = verl_requires()
    assert {"tensordict", "hydra-core", "ray", "torchdata", "tensorboard"} <= {normalize_name(r.name) for r in reqs}
    plan = resolve(profile, facts(profile, "x86_64"), src_dir="/s")
    missing = [str(r) for r in reqs if covered(plan, r) is None]
    assert not missing, f"{profile.name}: no step installs {missing}"


@pytest.mark.parametrize("name", ["verl-0.9.1-cann9.1.0-a2", "verl-0.9.1-cann9.1.0-a3"])
def test_091_does_what_upstreams_script_does(profile, name) -> None:
    """verl with its dependencies, then requirements-npu.txt, then transformers==5.10.4 xgrammar==0.1.33."""
    p = profile(name)
    plan = resolve(p, facts(p, "x86_64"), src_dir="/s")
    ids = [s.id for s in plan.steps]
    assert ids.index("install-verl") < ids.index("verl-requirements") < ids.index("final-pins")
    v = plan.step("install-verl")
    assert v.requirements == ("verl==0.9.1",) and not v.no_deps
    r = plan.step("verl-requirements")
    assert "numpy<2.0.0" in r.requirements and "tensordict>=0.8.0,<=0.10.0,!=0.9.0" in r.requirements
    assert r.source_ref.endswith("/requirements-npu.txt")
    assert {"transformers==5.10.4", "xgrammar==0.1.33"} <= set(plan.step("final-pins").requirements)


def test_a_line_that_is_no_requirement_is_refused_by_the_plan_naming_the_file_and_line(tmp_path) -> None:
    """The lines are checked where they are read (the plan), not when every run loads the profiles for their pins:
    the profile loads, and its plan stops with an InputError (exit 2) naming the file and the line's key."""
    import shutil
    from pathlib import Path

    from doctor.errors import InputError
    from doctor.knowledge.profiles import installed_stacks_dir

    name = "verl-0.9.1-cann9.1.0-a3"
    f = tmp_path / f"{name}.toml"
    shutil.copy(Path(installed_stacks_dir()) / f"{name}.toml", f)
    f.write_text(f.read_text().replace('lines = [\n    "accelerate",', 'lines = [\n    "accelerate ==",', 1))
    [p] = load_profiles(tmp_path)
    with pytest.raises(InputError) as e:
        resolve(p, facts(p, "x86_64"), src_dir="/s")
    assert str(f) in str(e.value) and "verl_requirements.lines[0]: not a requirement" in str(e.value)


@pytest.mark.parametrize("name", ["verl-0.10.0.dev20260822-cann9.1.0-a2", "verl-0.10.0.dev20260822-cann9.1.0-a3"])
def test_main_snapshot_installs_transferqueue_from_its_pypi_release_not_git_main(profile, name) -> None:
    """verl main's requirements-npu.txt at 1dda039b9 installs TransferQueue from git `main`, a moving branch: the
    snapshot stack installs the file's lines with TransferQueue==0.1.10 (the release whose API verl's calls match),
    so nothing of the plan takes a branch head; a ref the user chooses for verl reads that clone's own file."""
    p = profile(name)
    plan = resolve(p, facts(p, "x86_64"), src_dir="/s")
    r = plan.step("verl-requirements")
    assert "TransferQueue==0.1.10" in r.requirements and "-r" not in r.requirements
    assert not [x for x in r.requirements if "git+" in x], r.requirements
    assert {"numpy<2.0.0", "triton-ascend==3.2.2", "hf_transfer"} <= set(r.requirements)
    assert r.source_ref.endswith("/1dda039b9c6311889a9c9a26040677e1254814f9/requirements-npu.txt")
    ids = [s.id for s in plan.steps]
    assert ids.index("install-verl") < ids.index("verl-requirements") < ids.index("final-pins")
    chosen = resolve(p, facts(p, "x86_64"), src_dir="/s", git_refs={"verl": "v0.9.0"})
    assert chosen.step("verl-requirements").requirements == ("-r", "/s/verl/requirements-npu.txt")
    # offline, the clone is the commit the wheelhouse's bundle holds: another one (a --git-ref when it was made)
    # reads that clone's file, as the download did; the profile's own commit takes the lines
    other = resolve(p, facts(p, "x86_64"), src_dir="/s", bundled={"verl": "0123456789abcdef0123456789abcdef01234567"})
    assert other.step("verl-requirements").requirements == ("-r", "/s/verl/requirements-npu.txt")
    same = resolve(p, facts(p, "x86_64"), src_dir="/s", bundled={"verl": p.git["verl"].commit})
    assert "TransferQueue==0.1.10" in same.step("verl-requirements").requirements
