"""installers.resolve: facts + profile + --set pins -> plan, with the upstream order and the refusals."""

from __future__ import annotations

import pytest

from doctor.errors import InputError, RefusedError
from doctor.installers.plan import CLONE, EDITABLE, UNINSTALL
from doctor.installers.resolve import (
    Facts,
    check_seed_rule,
    facts_from_snapshot,
    nearest_profiles,
    parse_sets,
    resolve,
)
from doctor.knowledge.profiles import PYTORCH_CPU_INDEX


def facts(p, arch="aarch64", **kw) -> Facts:
    return Facts(arch=arch, python_version=kw.pop("py", p.python_recommended or "3.11"), cann=kw.pop("cann", p.cann_version),
                 chip=kw.pop("chip", p.chips[0]), **kw)


def all_indexes(plan) -> set[str]:
    return {u for s in plan.steps for u in s.index.extra_index_urls} | {s.index.index_url for s in plan.steps if s.index.index_url}


@pytest.mark.parametrize("name", ["verl-0.7.1-cann8.5.0-a2", "verl-0.9.0-cann9.0.0-a3", "verl-0.6.1-cann8.2.rc1-a2"])
def test_x86_plan_uses_cpu_torch_index_and_aarch64_does_not(profile, name) -> None:
    p = profile(name)
    x86 = resolve(p, facts(p, "x86_64"), src_dir="/s")
    arm = resolve(p, facts(p, "aarch64"), src_dir="/s")
    assert PYTORCH_CPU_INDEX in all_indexes(x86)
    assert PYTORCH_CPU_INDEX not in all_indexes(arm)
    torch_x86 = [r for r in x86.step("torch-stack").requirements if r.startswith("torch==")]
    torch_arm = [r for r in arm.step("torch-stack").requirements if r.startswith("torch==")]
    assert torch_x86 and torch_x86[0].endswith("+cpu")
    assert torch_arm and "+cpu" not in torch_arm[0]


def test_step_order_follows_upstream(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    ids = [s.id for s in resolve(p, facts(p), src_dir="/s").steps]
    assert ids.index("remove-conflicts") < ids.index("torch-stack") < ids.index("install-vllm")
    assert ids.index("install-vllm") < ids.index("install-vllm-ascend") < ids.index("remove-triton") < ids.index("triton-ascend")
    # from verl 0.7.1 on Megatron-LM is installed (-e, --no-deps) before MindSpeed
    assert ids.index("install-megatron-lm") < ids.index("install-mindspeed")
    # triton goes again after the last step that resolves dependencies, then triton-ascend (issue 15 item 5)
    assert ids.index("final-pins") < ids.index("remove-triton") < ids.index("triton-ascend") == len(ids) - 3
    assert ids[-2:] == ["remove-orphans", "env-file"]
    plan = resolve(p, facts(p), src_dir="/s")
    assert plan.step("install-megatron-lm").no_deps
    assert dict(plan.step("install-vllm").env) == {"VLLM_TARGET_DEVICE": "empty", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    assert plan.step("clone-megatron-lm").source.ref == "core_v0.12.1"
    assert plan.step("clone-mindspeed").source.ref == "2.3.0_core_r0.12.1"


def test_verl_070_keeps_megatron_on_pythonpath(profile) -> None:
    p = profile("verl-0.7.0-cann8.3.rc1-a2")
    plan = resolve(p, facts(p), src_dir="/s")
    assert "install-megatron-lm" not in [s.id for s in plan.steps]
    assert plan.env.pythonpath == ("/s/Megatron-LM",)
    assert plan.step("clone-mindspeed").source.commit.startswith("f2b0977e")


def test_seed_rule_refuses_old_vllm_on_new_cann(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    with pytest.raises(RefusedError) as e:
        resolve(p, facts(p), sets=parse_sets(["vllm=0.8.5"]))
    msg = str(e.value)
    assert "seed rule" in msg and "8.5.0" in msg and "vllm==0.8.5" in msg
    # the same pin is fine where CANN is not newer than 8.3.RC1
    check_seed_rule("8.2.RC1", {"vllm": "==0.8.5"}, origin="--set")


def test_set_moves_the_git_ref_and_final_pins(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    plan = resolve(p, facts(p), sets=parse_sets(["vllm=0.13.1", "transformers=4.57.1"]), src_dir="/s")
    assert plan.step("clone-vllm").source.ref == "v0.13.1"
    assert plan.step("clone-vllm").source.commit is None  # the pinned commit is the profile's ref, not this one
    assert dict(plan.step("install-vllm").expect) == {"vllm": "==0.13.1"}
    assert "transformers==4.57.1" in plan.step("final-pins").requirements


@pytest.mark.parametrize("bad", ["vllm", "vllm=", "=1.0", "vllm=not a version", "a b=1.0"])
def test_bad_set_is_an_input_error(bad) -> None:
    with pytest.raises(InputError):
        parse_sets([bad])


def test_inference_card_refuses_mindspeed_training(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    with pytest.raises(RefusedError, match="310P.*inference cards: MindSpeed training is not supported"):
        resolve(p, facts(p, chip="310P"))


def test_python_and_arch_outside_profile_are_refused(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    with pytest.raises(RefusedError, match="needs Python"):
        resolve(p, facts(p, py="3.12"))


def test_triton_ascend_at_wrong_version_is_removed_too(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    plan = resolve(p, facts(p, installed={"triton-ascend": "3.1.0", "triton": "3.3.0"}))
    step = plan.step("remove-conflicts")
    assert step.kind == UNINSTALL and step.packages == ("triton", "triton-ascend")
    ok = resolve(p, facts(p, installed={"triton-ascend": "3.2.0"}))
    assert ok.step("remove-conflicts").packages == ("triton",)


def test_system_packages_are_named_never_installed(profile) -> None:
    p = profile("verl-0.10.0.dev20260822-cann9.1.0-a3")
    plan = resolve(p, facts(p, cann="9.1.0", driver="25.2.0", py="3.12"))
    by = {r.component: r for r in plan.system}
    assert by["cann"].ok is True
    assert by["driver"].ok is False and "26.0.rc1" in by["driver"].need
    assert "Ascend-cann-A3-ops 9.1.0" == by["kernels"].package
    assert all(s.kind != "system" for s in plan.steps)


def test_cann9_layout_sources_cann_set_env(profile) -> None:
    p = profile("verl-0.10.0.dev20260822-cann9.1.0-a2")
    plan = resolve(p, facts(p, py="3.12", ascend_root="/opt/Ascend", toolkit_path="/opt/Ascend/cann-9.1.0"))
    assert plan.env.set_env_files[0] == "/opt/Ascend/cann/set_env.sh"
    assert "/opt/Ascend/nnal/atb/set_env.sh" in plan.env.set_env_files


def test_facts_from_snapshot_and_nearest_profiles(profiles) -> None:
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "host": {"arch": "x86_64", "libc": "glibc 2.35"},
                               "python": {"version": "3.11.4"}, "ascend": {"toolkit": {"version": "7.0.0"},
                                                                          "devices": [{"id": 0, "chip": "910B3"}]}})
    f = facts_from_snapshot(snap)
    assert (f.arch, f.python_version, f.glibc, f.cann, f.chip) == ("x86_64", "3.11", "2.35", "7.0.0", "A2")
    near = nearest_profiles(profiles, f)
    assert len(near) == 3 and all("CANN" in n for n in near)
    with pytest.raises(InputError, match="--arch"):
        facts_from_snapshot(snapshot_from_dict({"schema": "doctor.snapshot/1"}))


def test_nearest_profiles_without_cann_offer_the_newest_release_first(profiles) -> None:
    """A host with no CANN (install --dry-run on a fresh machine): every profile is as near, and the message named the
    dated main snapshot's two stacks first (the table's order); select_profile prefers the newest release."""
    from doctor.snapshot.model import snapshot_from_dict

    f = facts_from_snapshot(snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"version": "3.11.7"},
                                                "host": {"arch": "x86_64", "libc": "glibc 2.36"}}))
    assert f.cann is None
    near = nearest_profiles(profiles, f)
    releases = sorted((p for p in profiles if not p.is_snapshot), key=lambda p: p.verl_version)
    assert near[0].startswith(f"verl-{releases[-1].verl_version}-") and "dev" not in near[0]
    assert not any(n.split(" ")[0] in {p.name for p in profiles if p.is_snapshot} for n in near[:2])


def test_every_profile_resolves_on_both_arches(profiles) -> None:
    for p in profiles:
        for arch in p.arches:
            py = (p.python_recommended or "3.11")
            plan = resolve(p, facts(p, arch, py=py), src_dir="/s")
            kinds = {s.kind for s in plan.steps}
            assert CLONE in kinds and EDITABLE in kinds, p.name


def test_set_cannot_pick_a_version_of_a_source_without_release_tags(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    with pytest.raises(InputError, match="--git-ref mindspeed=REF"):
        resolve(p, facts(p), sets=parse_sets(["mindspeed=0.12.2"]))


def test_git_versions_accept_what_a_checkout_reports(profile) -> None:
    from doctor.installers.satisfy import View, satisfied

    p = profile("verl-0.8.0-cann9.0.0-a2")
    step = resolve(p, facts(p), src_dir="/s").step("install-verl")
    ok = View(versions={"verl": "0.8.0.dev0"}, editable={"verl": True})  # tag v0.8.0's verl/version/version
    assert satisfied(step, ok)
    assert not satisfied(step, View(versions={"verl": "0.7.1"}, editable={"verl": True}))
    # the clone's own version file wins over the profile's record (a ref chosen with --git-ref has no record)
    moved = View(versions={"verl": "0.7.1"}, editable={"verl": True}, clone_versions={"verl": "0.7.1"})
    assert satisfied(step, moved)


# -- issue 15 item 1: every git source pinned; --set / --git-ref choose another ref deliberately ---------------


def test_every_git_source_of_every_profile_is_pinned_to_a_commit_with_its_version(profiles) -> None:
    import re

    for p in profiles:
        for key, g in p.git.items():
            assert g.commit and re.fullmatch(r"[0-9a-f]{9,40}", g.commit), (p.name, key, g.commit)
            assert g.version, (p.name, key)  # what that commit's own version file computes
        plan = resolve(p, facts(p, "aarch64", py=p.python_recommended or "3.11"), src_dir="/s")
        for s in plan.sources():
            assert s.commit, (p.name, s.name)


def test_moving_branch_expects_the_version_its_pinned_commit_reports(profile) -> None:
    # Megatron-LM core_r0.16.0 reports 0.16.2 at the commit verl 0.9.0 used (package_info.py there)
    p = profile("verl-0.9.0-cann9.0.0-a2")
    plan = resolve(p, facts(p), src_dir="/s")
    assert plan.step("clone-megatron-lm").source.commit == "ddc0d6774783b032ddceacc5714e653651daecb9"
    assert dict(plan.step("install-megatron-lm").expect) == {"megatron-core": "==0.16.2"}


def test_git_ref_and_set_choose_another_ref_and_the_expectation_follows(profile) -> None:
    from doctor.installers.resolve import parse_git_refs

    p = profile("verl-0.9.0-cann9.0.0-a2")
    plan = resolve(p, facts(p), src_dir="/s", git_refs=parse_git_refs(["megatron-core=core_r0.16.0"]))
    s = plan.step("clone-megatron-lm").source
    assert (s.ref, s.commit) == ("core_r0.16.0", None)
    assert dict(plan.step("install-megatron-lm").expect) == {"megatron-core": ""}  # read from the clone
    plan = resolve(p, facts(p), src_dir="/s", sets=parse_sets(["megatron-core=0.16.1"]))
    assert plan.step("clone-megatron-lm").source.ref == "core_v0.16.1"
    assert dict(plan.step("install-megatron-lm").expect) == {"megatron-core": "==0.16.1"}
    sha = resolve(p, facts(p), src_dir="/s", git_refs=parse_git_refs(["Megatron-LM=3bec9aa97d"]))
    assert sha.step("clone-megatron-lm").source.commit == "3bec9aa97d"
    with pytest.raises(InputError, match="not a git source"):
        resolve(p, facts(p), git_refs=parse_git_refs(["transformers=main"]))
    with pytest.raises(InputError, match="NAME=REF"):
        parse_git_refs(["verl"])


def test_scm_versioned_sources_are_cloned_with_tags(profile) -> None:
    p = profile("verl-0.9.0-cann9.0.0-a2")
    plan = resolve(p, facts(p), src_dir="/s")
    assert plan.step("clone-vllm-ascend").source.tags and plan.step("clone-vllm").source.tags
    assert not plan.step("clone-megatron-lm").source.tags
    assert dict(plan.step("install-vllm-ascend").expect) == {"vllm-ascend": "==0.23.0rc2.dev138"}


# -- item 3: a --no-build-isolation step first gets its build requirements -----------------------------------


def test_no_build_isolation_step_is_preceded_by_its_build_requirements(profile) -> None:
    p = profile("verl-0.9.0-cann9.0.0-a2")
    plan = resolve(p, facts(p, "x86_64"), src_dir="/s")
    ids = [s.id for s in plan.steps]
    deps, va = plan.step("vllm-ascend-build-deps"), plan.step("install-vllm-ascend")
    assert ids.index("vllm-ascend-build-deps") == ids.index("install-vllm-ascend") - 1
    assert deps.build_for == "install-vllm-ascend" and "setuptools-scm" in deps.requirements
    assert deps.requirement_files == ("requirements.txt",) and not deps.no_build_isolation
    assert va.no_build_isolation and va.no_deps
    for step in plan.steps:  # every other no-isolation build has one too
        if step.no_build_isolation:
            assert any(s.build_for == step.id for s in plan.steps), step.id


# -- item 4: builds on a host without CANN or NPU --------------------------------------------------------------


@pytest.mark.parametrize("chip, soc", [("A2", "ascend910b1"), ("A3", "ascend910_9391")])
def test_build_without_npu_smi_gets_soc_version_and_no_kernels_without_cann(profile, chip, soc) -> None:
    p = profile(f"verl-0.9.0-cann9.0.0-{chip.lower()}")
    bare = resolve(p, facts(p, "x86_64", cann=None, chip=None, npu_seen=False), src_dir="/s")
    env = dict(bare.step("install-vllm-ascend").env)
    assert env["SOC_VERSION"] == soc and env["COMPILE_CUSTOM_KERNELS"] == "0"
    assert env["TORCH_DEVICE_BACKEND_AUTOLOAD"] == "0"
    for s in bare.steps:
        if s.kind == EDITABLE:
            assert dict(s.env).get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0", s.id
    npu = resolve(p, facts(p, "x86_64", npu_seen=True), src_dir="/s")
    env = dict(npu.step("install-vllm-ascend").env)
    assert "SOC_VERSION" not in env and "COMPILE_CUSTOM_KERNELS" not in env  # setup.py asks npu-smi; CANN builds kernels


# -- item 5: triton stays out -----------------------------------------------------------------------------------


def test_every_plan_ends_with_triton_removed_after_the_last_resolve(profiles) -> None:
    from doctor.installers.steps import resolving

    for p in profiles:
        if "triton-ascend" not in p.pins:
            continue
        plan = resolve(p, facts(p, "x86_64", py=p.python_recommended or "3.11"), src_dir="/s")
        ids = [s.id for s in plan.steps]
        last = max(i for i, s in enumerate(plan.steps) if resolving(s))
        assert last < ids.index("remove-triton") < ids.index("triton-ascend"), p.name
        assert plan.step("remove-triton").packages == ("triton", "triton-ascend")
        assert plan.step("triton-ascend").no_deps
        # then what the re-pins left required by nothing goes (installers.orphans), before doctor-env.sh
        assert ids[-2:] == ["remove-orphans", "env-file"], p.name
        assert plan.step("remove-orphans").title == "Remove what the re-pins left required by nothing"


def test_a_stack_without_triton_ascend_ends_with_the_triton_vllm_brought_removed(profiles) -> None:
    """verl 0.6.1's vllm-ascend v0.9.1 has no triton-ascend, and its Dockerfile still uninstalls the mainline triton
    vLLM's xgrammar brings on x86 ("in Ascend, triton doesn't work correctly"): the real-world tier's install of
    verl-0.6.1-cann8.2.rc1-a2 ended with triton 3.9.0 in the venv and the check's triton-on-npu warning."""
    from doctor.installers.steps import resolving

    plain = [p for p in profiles if "triton-ascend" not in p.pins]
    assert {p.name for p in plain} >= {"verl-0.6.1-cann8.2.rc1-a2", "verl-0.6.1-cann8.2.rc1-a3"}
    for p in plain:
        plan = resolve(p, facts(p, "x86_64", py=p.python_recommended or "3.11"), src_dir="/s")
        ids = [s.id for s in plan.steps]
        last = max(i for i, s in enumerate(plan.steps) if resolving(s))
        assert "triton-ascend" not in ids and last < ids.index("remove-triton"), (p.name, ids)
        step = plan.step("remove-triton")
        assert step.packages == ("triton",) and "0740d10211fcdcaa00d29e8659d7de892f5ed4d8/Dockerfile" in step.source_ref
        assert ids[-2:] == ["remove-orphans", "env-file"], p.name


# -- item 7 / issue 13: --set and the target facts are validated ------------------------------------------------


@pytest.mark.parametrize("bad, msg", [("transformer=4.57.1", "did you mean transformers"), ("nosuchpkg=1.0", "not a package")])
def test_set_refuses_unknown_packages(profile, bad, msg) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    with pytest.raises(InputError, match=msg) as e:
        resolve(p, facts(p), sets=parse_sets([bad]))
    assert e.value.source == "--set"


def test_set_refuses_a_pin_that_breaks_the_torch_pairing(profile) -> None:
    p = profile("verl-0.7.1-cann8.5.0-a2")
    with pytest.raises(RefusedError, match="torch-npu 2.8.0 is built for torch 2.8.0"):
        resolve(p, facts(p), sets=parse_sets(["torch=2.1.0"]))
    ok = resolve(p, facts(p), sets=parse_sets(["torch=2.8.0", "torch-npu=2.8.0.post2"]))
    assert "torch-npu==2.8.0.post2" in ok.step("torch-stack").requirements


def test_seed_rule_uses_the_profiles_cann_when_the_host_has_none(profile) -> None:
    p = profile("verl-0.9.0-cann9.0.0-a2")
    with pytest.raises(RefusedError, match="seed rule") as e:
        resolve(p, facts(p, cann=None), sets=parse_sets(["vllm=0.9.0"]))
    assert "needs CANN 9.0.0" in str(e.value) or "CANN 9.0.0" in str(e.value)


@pytest.mark.parametrize("kw, flag", [({"python_version": "banana"}, "--python-version"), ({"glibc": "banana"}, "--glibc"),
                                      ({"python_version": "3.x"}, "--python-version")])
def test_bad_target_versions_are_refused(kw, flag) -> None:
    from doctor.snapshot.model import snapshot_from_dict

    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "host": {"arch": "x86_64"}, "python": {"version": "3.11.4"}})
    with pytest.raises(InputError) as e:
        facts_from_snapshot(snap, **kw)
    assert e.value.source == flag


def test_host_prerequisites_include_driver_and_firmware_for_every_profile(profiles) -> None:
    for p in profiles:
        plan = resolve(p, facts(p, py=p.python_recommended or "3.11", driver="23.0.0"), src_dir="/s")
        by = {r.component: r for r in plan.system}
        assert {"cann", "kernels", "driver", "firmware"} <= set(by), p.name
        assert by["driver"].ok is False, p.name  # 23.0.0 is older than every profile's CANN needs


def test_every_step_cites_an_upstream_file_at_a_tag_or_commit(profiles) -> None:
    """Issue 12: a step's source is a URL a user can open, pinned to a tag or commit (never an internal note)."""
    import re

    pinned = re.compile(r"^https://(github\.com|gitcode\.com)/[^/]+/[^/]+/(blob|tree)/(v\d[\w.\-]*|[0-9a-f]{7,40})(/|$)")
    for p in profiles:
        for arch in p.arches:
            plan = resolve(p, facts(p, arch, py=p.python_recommended or "3.11", cann=None, npu_seen=False), src_dir="/s")
            for s in plan.steps:
                assert pinned.match(s.source_ref), (p.name, s.id, s.source_ref)
            assert all("shared/" not in n and "§" not in n for n in plan.notes[:1])


def test_installers_cite_no_internal_documents() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for f in [*sorted((root / "installers").glob("*.py")), root / "doctor" / "cli" / "install.py"]:
        text = f.read_text(encoding="utf-8")
        assert "shared/" not in text and "DESIGN.md" not in text and "§" not in text, f.name


def test_era_gates_come_from_the_release_table(profiles) -> None:
    """Every profile's plan follows its verl row's [release.install] gates (profiles/releases.toml), not a
    version comparison written into the installer."""
    from doctor.knowledge.releases import load_releases

    table = load_releases()
    for p in profiles:
        gates = table.era(p.verl).install
        plan = resolve(p, facts(p, p.arches[0], py=p.python_recommended or "3.11"), src_dir="/s")
        ids = [s.id for s in plan.steps]
        va = plan.step("install-vllm-ascend")
        assert va.no_build_isolation == gates.vllm_ascend_no_build_isolation, p.name
        assert plan.step("clone-vllm-ascend").source.submodules == gates.vllm_ascend_submodules, p.name
        assert ("mbridge" in ids) == (gates.mbridge or "mbridge" in p.pins), p.name
        if "verl-requirements" in ids:
            assert (ids.index("install-verl") < ids.index("verl-requirements")) == gates.verl_before_requirements, p.name


def test_a_changed_release_row_changes_the_plan(profile, monkeypatch) -> None:
    """Flip 0.9.0's install row in a copy of the table: the plan follows the copy."""
    import dataclasses

    from doctor.knowledge import releases

    table = releases.load_releases()
    row = table.era("0.9.0")
    flags = dict(row.install.flags, vllm_ascend_no_build_isolation=False, verl_before_requirements=True)
    changed = row._replace(install=dataclasses.replace(row.install, flags=flags))
    monkeypatch.setattr(releases, "load_releases", lambda path=None: dataclasses.replace(
        table, rows=tuple(changed if r is row else r for r in table.rows),
        by_version={**table.by_version, row.verl: changed}))
    p = profile("verl-0.9.0-cann9.0.0-a3")
    plan = resolve(p, facts(p), src_dir="/s")
    ids = [s.id for s in plan.steps]
    assert not plan.step("install-vllm-ascend").no_build_isolation
    assert "vllm-ascend-build-deps" not in ids
    assert ids.index("install-verl") < ids.index("verl-requirements")


def test_kernels_matching_a_wrong_toolkit_are_not_met(profile) -> None:
    """A 9.1 profile on a host whose toolkit, kernels and NNAL are all 8.5.0: all three are NOT MET (the
    kernels match the toolkit, but that toolkit is the wrong one)."""
    from doctor.installers.resolve import system_requirements

    p = profile("verl-0.9.1-cann9.1.0-a3")
    by = {r.component: r for r in system_requirements(p, facts(p, cann="8.5.0", kernels="8.5.0", nnal="8.5.0"))}
    assert by["cann"].ok is False and by["kernels"].ok is False and by["nnal"].ok is False
    good = profile("verl-0.7.1-cann8.5.0-a2")
    by = {r.component: r for r in system_requirements(good, facts(good, cann="8.5.0", kernels="8.5.0", nnal="8.5.0"))}
    assert by["kernels"].ok is True and by["nnal"].ok is True and "8.5.0" in by["kernels"].need


def test_a_profile_whose_cann_is_unknown_is_said_so(profiles) -> None:
    from doctor.installers.resolve import cann_said

    said = {p.name: cann_said(p) for p in profiles}
    assert said["verl-0.9.0-cannunknown-950"] == "unknown, inferred [9.1.0, 9.3.0)"
    assert said["verl-0.9.1-cann9.1.0-a2"] == "9.1.0"
