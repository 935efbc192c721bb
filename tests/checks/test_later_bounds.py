"""doctor/checks/later_bounds.py: a dependency version a later release of its declaring package excludes, judged
with the real table (profiles/later-bounds.json, from PyPI's published metadata)."""

from __future__ import annotations

from typing import Any

from doctor.checks.runner import CheckContext, Skipped
from doctor.snapshot.model import snapshot_from_dict


def _snap(packages: dict[str, Any], python: str | None = "3.11.9") -> Any:
    doc: dict[str, Any] = {"schema": "doctor.snapshot/1", "packages": {k: {"version": v} for k, v in packages.items()}}
    if python:
        doc["python"] = {"version": python, "implementation": "CPython"}
    return snapshot_from_dict(doc)


def _found(snap: Any, profile: Any = None) -> list[Any]:
    from doctor.checks.later_bounds import later_release_bounds

    try:
        return list(later_release_bounds(CheckContext(snapshot=snap, profile=profile)))
    except Skipped:
        return []


def test_ray_before_its_click_bound_with_the_click_it_later_excluded_is_info_naming_the_release():
    """Info, not a warning: Ray 2.50.0 (a later minor, not a patch of 2.49) excludes click 8.3.0 for a Python 3.10
    break, and Ray 2.53.0 accepts it again; Ray 2.49.0 with click 8.3.0 from PyPI started a cluster on Python 3.11
    here (`ray start --head`, tests/realworld/test_pip_check_blind_spots.py)."""
    (f,) = _found(_snap({"ray": "2.49.0", "click": "8.3.0"}))
    assert (f.id, f.severity.value, f.components) == ("requirement-excluded-by-later-release", "info", ("python", "ray"))
    assert f.evidence["grade"] == "evidence only" and "Rated info" in f.detail
    assert f.title == "click 8.3.0 is excluded by ray 2.50.0's requirement `!=8.3.0`; ray 2.49.0 declares no such bound"
    assert f.evidence["readmitted_in"] == "2.53.0" and "either ray changed or the bound was a precaution" in f.detail
    assert f.fix.commands == () and "`pip install 'click!=8.3.0,>=7.0'`" in f.fix.text  # info: no command to run
    assert f.source == "https://pypi.org/project/ray/2.50.0/"


def test_the_fix_installs_the_excluding_clause_within_the_installed_releases_own_range_not_the_later_floor():
    """verl 0.9.0 declares `transformers!=5.6.0,<5.11,>=5.5.3`; its floor says what verl 0.9.0 needs. For verl
    0.4.1 (which declares plain `transformers`) the fix keeps `<5.11` only: `>=5.5.3` would install a transformers
    that verl 0.4.1 cannot import from (verl.models.transformers.qwen2_vl fails on transformers 5.25.0, run here)."""
    fs = [f for f in _found(_snap({"verl": "0.4.1", "transformers": "5.25.0"})) if f.evidence["requires"] == "transformers"]
    (f,) = fs
    assert "`pip install 'transformers<5.11'`" in f.fix.text  # info here (transformers-window says the error)
    assert "verl 0.4.1 declares and verl 0.9.0's `<5.11` admits" in f.fix.text
    (g,) = _found(_snap({"trl": "0.12.1", "transformers": "4.47.0"}))  # a warning: the command is offered
    assert g.fix.commands == ("pip install 'transformers<4.47.0,>=4.46.0'",)


def test_a_floor_raised_for_the_snapshots_python_only():
    (f,) = _found(_snap({"ray": "2.55.0", "pydantic": "2.12.5"}, python="3.14.0"))
    assert f.severity.value == "error" and "ray 2.56.0" in f.title and ">=2.13.0" in f.title
    assert _found(_snap({"ray": "2.55.0", "pydantic": "2.12.5"}, python="3.12.3")) == []
    assert _found(_snap({"ray": "2.55.0", "pydantic": "2.12.5"}, python=None)) == []  # Python unknown: silent


def test_silent_for_the_pairs_nothing_later_excludes_and_for_unknown_packages():
    assert _found(_snap({"ray": "2.49.0", "click": "8.1.7"})) == []
    assert _found(_snap({"ray": "2.53.0", "click": "8.3.0"})) == []
    assert _found(_snap({"somepkg": "1.0", "click": "8.3.0"})) == []


def test_a_release_singled_out_off_the_stack_is_info():
    """wandb 0.18.0 declares protobuf!=5.28.0 and no wandb since accepts it, but the bug was Windows-only
    (https://github.com/wandb/wandb/pull/8346): wandb 0.17.9 with protobuf 5.28.0 ran on Linux in the trust trial.
    Only the stack's own packages (vLLM, Ray, torch, ...) make such an exclusion an error."""
    fs = _found(_snap({"wandb": "0.17.9", "protobuf": "5.28.0"}))
    assert [(f.severity.value, f.evidence["excluded_by"]) for f in fs] == [("info", "wandb 0.18.0")]


def test_a_pair_the_chosen_verified_stack_runs_is_info():
    from doctor.knowledge.profiles import find_profile, load_profiles
    from tests.stacks import stack_snapshot

    p = find_profile(load_profiles(), "verl-0.9.1-cann9.1.0-a2")
    fs = [f for f in _found(snapshot_from_dict(stack_snapshot(p)), p)]
    assert fs and all(f.severity.value == "info" for f in fs)
    assert all("Nothing to change" in f.fix.text for f in fs)


def test_every_documented_stack_gives_no_error_or_warning_from_it():
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import diagnose_dict, stack_snapshot

    for p in load_profiles():
        fs = [f for f in diagnose_dict(stack_snapshot(p)).findings
              if f.id == "requirement-excluded-by-later-release" and f.severity.value != "info"]
        assert not fs, (p.name, [f.title for f in fs])


def test_a_release_a_later_one_singles_out_with_ne_and_none_accepts_again_is_an_error():
    """vLLM 0.19.1 declares transformers!=5.0.*,!=5.1.*,...; no vLLM release since accepts 5.1 (0.24.0 needs
    >=5.5.3): vLLM 0.11.0 with transformers 5.1.0 fails at engine start (the fix: https://github.com/vllm-project/vllm/pull/29686)."""
    (f,) = _found(_snap({"vllm": "0.11.0", "transformers": "5.1.0"}))
    assert f.severity.value == "error" and f.evidence["singled_out_by"] == "vllm 0.19.1"
    assert "vllm 0.11.1's requirement `<5`" in f.title and "names it as broken (`!=5.1.*`)" in f.detail
    # 5.6.0: capped by 0.11.1's `<5`, accepted again by 0.19.1: only a warning
    (g,) = _found(_snap({"vllm": "0.11.0", "transformers": "5.6.0"}))
    assert g.severity.value == "warning" and g.evidence["readmitted_in"] == "0.19.1"


def test_a_package_named_without_its_release_when_no_release_accepts_the_dependency():
    """A report names vllm without a version next to transformers 5.3.0: vLLM 0.11.0 and before admit it, 0.19.1
    names 5.3.* as broken and no release since accepts it, every other release refuses it in its own metadata."""
    doc = {"schema": "doctor.snapshot/1", "python": {"version": "3.11.9"},
           "packages": {"vllm": {}, "transformers": {"version": "5.3.0"}}}
    (f,) = _found(snapshot_from_dict(doc))
    assert (f.id, f.severity.value) == ("requirement-excluded-by-every-release", "error")
    assert f.title.startswith("no release of vllm accepts transformers 5.3.0 (vllm 0.1.4 to ")
    doc["packages"]["transformers"]["version"] = "5.10.4"  # vLLM 0.29.0 .. 0.31.0 accept it
    assert _found(snapshot_from_dict(doc)) == []


def test_no_release_accepts_needs_every_declaring_release_to_refuse():
    from doctor.knowledge.later_bounds import derive, no_release_accepts
    from tests.knowledge.test_later_bounds import _applies

    rels = {"1.0": ["dep>=1"], "1.1": ["dep!=2.1.*,>=1"], "1.2": ["dep>=2.5"]}
    assert no_release_accepts(derive(rels)["dep"], "1.2", "2.1.0", _applies()) == ("1.0", "1.2")
    assert no_release_accepts(derive(rels)["dep"], "1.2", "2.6.0", _applies()) is None
    gap = {"1.0": ["dep!=2.1.*"], "1.1": [], "1.2": ["dep>=2.5"]}  # 1.1 declares no dep: it takes any
    assert no_release_accepts(derive(gap)["dep"], "1.2", "2.1.0", _applies()) is None


def test_a_bound_a_later_patch_release_of_the_same_line_added_is_a_warning():
    """trl 0.12.2 declares transformers<4.47.0; trl 0.12.1 with transformers 4.47.0 fails in DPOTrainer.log
    (https://github.com/huggingface/trl/issues/2445; the trust trial ran it)."""
    (f,) = _found(_snap({"trl": "0.12.1", "transformers": "4.47.0"}))
    assert f.severity.value == "warning" and f.evidence["grade"] == "a later patch release of trl 0.12"


def test_numpy2_against_a_compiled_packages_later_numpy_cap_is_a_warning_and_a_pure_ones_is_info():
    """pandas 2.1.2 caps numpy<2 (pandas publishes compiled wheels: 2.0.3 fails at import under numpy 2);
    accelerate 0.32.0 caps it too (pure Python: 0.30.1 ran under numpy 2.4 in the trust trial)."""
    (f,) = _found(_snap({"pandas": "2.0.3", "numpy": "2.2.6"}))
    assert f.severity.value == "warning" and f.evidence["grade"] == "NumPy 2's ABI break for a compiled package"
    (g,) = _found(_snap({"accelerate": "0.30.1", "numpy": "2.2.6"}))
    assert g.severity.value == "info"


def test_an_info_bound_offers_no_command_that_would_downgrade_a_working_install():
    """transformers 4.52.0 alone capped torch<2.7 (4.53.0 lifted it); transformers 4.40.2 ran on torch 2.13 in the
    trust trial: the info finding says what to do if it fails, and gives no `pip install 'torch<2.7'` to run."""
    (f,) = _found(_snap({"transformers": "4.40.2", "torch": "2.13.0"}))
    assert f.severity.value == "info" and f.fix.commands == ()
    assert f.fix.text.startswith("Nothing to change while transformers works") and "torch<2.7" in f.fix.text


def test_a_later_release_that_moved_its_own_pin_past_the_installed_releases_range_is_not_a_later_bound():
    """Real venv (pip install torch==2.14.1, which brings triton 3.8.0): check said 'triton 3.8.0 is excluded by torch
    2.15.0's requirement `~=3.9.0`; torch 2.14.1 declares no such bound' and offered `pip install
    'triton~=3.8.0,~=3.9.0'`, which no triton release meets. torch 2.14.1 declares `triton~=3.8.0`: the later
    release moved the pin with its own release, it did not add a bound the installed one lacks. Silent; a later
    bound that overlaps the installed release's own range still speaks."""
    own = ['triton~=3.8.0; platform_system == "Linux" and python_version < "3.15"']
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"version": "3.11.7", "implementation": "CPython"},
                               "host": {"arch": "x86_64"},
                               "packages": {"torch": {"version": "2.14.1", "requires_dist": own},
                                            "triton": {"version": "3.8.0", "requires_dist": []}}})
    assert [f.title for f in _found(snap)] == []
    assert _found(_snap({"torch": "2.14.1", "triton": "3.8.0"})) == []  # the table's torch 2.14.1 line, the same
    (g,) = _found(_snap({"trl": "0.12.1", "transformers": "4.47.0"}))  # `<4.47.0` within its `>=4.46.0`: kept
    assert g.fix.commands == ("pip install 'transformers<4.47.0,>=4.46.0'",)


def test_vllm_on_ascend_is_not_judged_by_what_only_its_cuda_wheel_declares():
    """vLLM 0.8.3's PyPI wheel declares `ray[cgraph]!=2.44.*` from requirements/cuda.txt; the VLLM_TARGET_DEVICE=empty
    build Ascend installs reads requirements/common.txt, which names no ray in any release the empty-target table
    read (profiles/requirements-git.toml). So vLLM 0.8.2 with ray 2.44.0 beside vllm-ascend is not told of that
    bound; off Ascend (PyPI's CUDA wheel) it still is, and on Ascend a bound common.txt carries still counts."""
    def bounds(pkgs: dict[str, str]) -> list[tuple[str, str]]:
        return [(f.evidence["requires"], f.evidence["excluded_by"]) for f in _found(_snap(pkgs))]

    assert bounds({"vllm": "0.8.2", "ray": "2.44.0"}) == [("ray", "vllm 0.8.3")]
    assert bounds({"vllm": "0.8.2", "ray": "2.44.0", "vllm-ascend": "0.8.4rc1"}) == []
    assert bounds({"vllm": "0.8.2+empty", "ray": "2.44.0", "torch-npu": "2.5.1"}) == []
    assert bounds({"vllm": "0.11.0", "transformers": "5.1.0", "vllm-ascend": "0.11.0rc1"}) == [
        ("transformers", "vllm 0.11.1")]


def test_pypis_vllm_lines_for_what_the_empty_build_declares_are_the_empty_builds():
    """What lets later-release-bounds keep PyPI's vLLM releases for the dependencies the empty build declares: in
    every release both tables hold, PyPI's lines naming such a dependency (runtime extras aside) are the empty
    build's, clause for clause and marker for marker."""
    from packaging.requirements import Requirement

    from doctor.knowledge.later_bounds import load
    from doctor.knowledge.requirements import declared
    from doctor.knowledge.requirements_git import load as load_git

    def lines(rd: tuple[str, ...] | list[str], dep: str) -> set[tuple[str, str]]:
        out = set()
        for line in rd:
            r = Requirement(line)
            if r.name.lower() == dep and "extra" not in str(r.marker or ""):
                out.add((str(r.specifier), str(r.marker or "")))
        return out

    table, git = load(), load_git()
    declared_by_empty = {Requirement(x).name.lower() for e in git.empty_target for x in e.requires_dist}
    checked = 0
    for e in git.empty_target:
        pypi = declared("vllm", e.version)
        assert pypi is not None, e.version
        for dep in table.dependency_names("vllm"):
            if dep in declared_by_empty:
                assert lines(e.requires_dist, dep) == lines(pypi.requires_dist, dep), (e.version, dep)
                checked += 1
    assert checked > 300 and "ray" not in declared_by_empty
