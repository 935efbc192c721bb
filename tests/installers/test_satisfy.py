"""installers.satisfy: when a step is already done, from a live view or from a snapshot."""

from __future__ import annotations

from doctor.installers.plan import CLONE, EDITABLE, INSTALL, UNINSTALL, GitSource, Step
from doctor.installers.satisfy import View, satisfied, snapshot_view
from doctor.snapshot.model import snapshot_from_dict

TORCH = Step("torch-stack", INSTALL, "t", requirements=("torch==2.7.1+cpu", "torch-npu==2.7.1"))
SRC = GitSource("MindSpeed", "u", "master", commit="f2b0977e", module="mindspeed")


def test_local_label_matters_for_pins() -> None:
    assert satisfied(TORCH, View(versions={"torch": "2.7.1+cpu", "torch-npu": "2.7.1"}))
    assert not satisfied(TORCH, View(versions={"torch": "2.7.1", "torch-npu": "2.7.1"}))  # a CUDA torch
    assert not satisfied(TORCH, View(versions={"torch": "2.7.1+cpu"}))


def test_uninstall_and_clone_and_editable() -> None:
    rm = Step("remove-conflicts", UNINSTALL, "r", packages=("triton",))
    assert satisfied(rm, View()) and not satisfied(rm, View(versions={"triton": "3.3.0"}))
    clone = Step("clone-mindspeed", CLONE, "c", source=SRC)
    assert satisfied(clone, View(heads={"MindSpeed": "f2b0977e0123"}))
    assert not satisfied(clone, View(heads={"MindSpeed": "0123"}))
    ed = Step("install-mindspeed", EDITABLE, "e", source=SRC, editable_dist="mindspeed", expect=(("mindspeed", "==0.12.1"),))
    assert satisfied(ed, View(versions={"mindspeed": "0.12.1"}, editable={"mindspeed": True},
                              locations={"mindspeed": "/s/MindSpeed"}, src_dir="/s"))
    assert not satisfied(ed, View(versions={"mindspeed": "0.12.1"}, editable={"mindspeed": True},
                                  locations={"mindspeed": "/elsewhere/MindSpeed"}, src_dir="/s"))
    assert not satisfied(ed, View(versions={"mindspeed": "0.12.1"}, editable={"mindspeed": False}))


def test_snapshot_view_reads_git_facts_of_modules() -> None:
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "complete": True,
                               "packages": {"MindSpeed": {"version": "0.12.1", "editable": True}},
                               "modules": {"mindspeed": {"origins": ["/MindSpeed/mindspeed"],
                                                         "git": {"commit": "f2b0977e99", "branch": "master"}}}})
    v = snapshot_view(snap, sources=[SRC], env_ok=True)
    assert v.heads["MindSpeed"] == "f2b0977e99" and v.editable["mindspeed"] is True
    assert satisfied(Step("clone-mindspeed", CLONE, "c", source=SRC), v)
    other = snapshot_from_dict({"schema": "doctor.snapshot/1", "modules": {"mindspeed": {"origins": ["/x"], "git": {"commit": "abc"}}}})
    assert not satisfied(Step("clone-mindspeed", CLONE, "c", source=SRC), snapshot_view(other, sources=[SRC], env_ok=True))


def test_a_clones_requirements_file_is_satisfied_only_when_every_line_is_met(tmp_path) -> None:
    """A real run of the main-snapshot profile skipped `pip install -r requirements-npu.txt` as "satisfied"
    because verl itself was installed; numpy stayed 2.4.6 where the file pins numpy<2.0.0."""
    f = tmp_path / "requirements-npu.txt"
    f.write_text("# npu\nnumpy<2.0.0\nhydra-core  # config\ntriton; sys_platform == 'win32'\n--extra-index-url x\n")
    step = Step("verl-requirements", INSTALL, "r", requirements=("-r", str(f)))
    assert not satisfied(step, View(versions={"verl": "0.10.0.dev0", "numpy": "2.4.6", "hydra-core": "1.3.2"}))
    assert not satisfied(step, View(versions={"verl": "0.10.0.dev0", "numpy": "1.26.4"}))  # hydra-core missing
    assert satisfied(step, View(versions={"numpy": "1.26.4", "hydra-core": "1.3.2"}))  # the win32 line does not apply
    gone = Step("verl-requirements", INSTALL, "r", requirements=("-r", str(tmp_path / "no-clone-yet.txt")))
    assert not satisfied(gone, View(versions={"numpy": "1.26.4"}))


def test_a_requirements_file_it_names_with_r_counts_too(tmp_path) -> None:
    """pip follows `-r other.txt` inside a requirements file (relative to that file): its lines are the step's too,
    and an unreadable one leaves the step unsatisfied (satisfy.requirement_file_lines, which the remove-orphans step
    reads for what the plan names)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "base.txt").write_text("numpy<2.0.0\n")
    top = tmp_path / "requirements.txt"
    top.write_text("hydra-core\n-r sub/base.txt\n")
    step = Step("verl-requirements", INSTALL, "r", requirements=("-r", str(top)))
    assert not satisfied(step, View(versions={"numpy": "2.4.6", "hydra-core": "1.3.2"}))
    assert satisfied(step, View(versions={"numpy": "1.26.4", "hydra-core": "1.3.2"}))
    top.write_text("hydra-core\n--requirement sub/missing.txt\n")
    assert not satisfied(step, View(versions={"numpy": "1.26.4", "hydra-core": "1.3.2"}))


def test_a_module_installed_from_a_wheel_into_site_packages_is_no_clone() -> None:
    """`install --dry-run --from SNAPSHOT` of a venv where vllm and MindSpeed are wheels in site-packages (no git
    facts, not editable) said `clone-vllm satisfied`: no clone exists there. A checkout on PYTHONPATH or an editable
    install without recorded git facts still counts as the pinned clone (the snapshot cannot tell otherwise)."""
    vllm = GitSource("vllm", "u", "v0.9.1", commit="b6553be1", module="vllm")
    mega = GitSource("Megatron-LM", "u", "core_v0.12.1", commit="a845aa7e", module="megatron")
    site = "/opt/venv/lib/python3.11/site-packages"
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", "complete": True,
                               "packages": {"vllm": {"version": "0.9.1+empty", "editable": False, "location": site},
                                            "mindspeed": {"version": "0.12.1", "editable": False, "location": site}},
                               "modules": {"vllm": {"origins": [f"{site}/vllm"]},
                                           "mindspeed": {"origins": ["/usr/local/lib/python3.11/dist-packages/mindspeed"]},
                                           "megatron": {"origins": ["/work/Megatron-LM/megatron"]}}})
    v = snapshot_view(snap, sources=[vllm, SRC, mega], env_ok=True)
    assert not satisfied(Step("clone-vllm", CLONE, "c", source=vllm), v)
    assert not satisfied(Step("clone-mindspeed", CLONE, "c", source=SRC), v)
    assert satisfied(Step("clone-megatron-lm", CLONE, "c", source=mega), v)  # a checkout on PYTHONPATH
    editable = snapshot_from_dict({"schema": "doctor.snapshot/1", "complete": True,
                                   "packages": {"mindspeed": {"version": "0.12.1", "editable": True}},
                                   "modules": {"mindspeed": {"origins": ["/src/MindSpeed/mindspeed"]}}})
    assert satisfied(Step("clone-mindspeed", CLONE, "c", source=SRC), snapshot_view(editable, sources=[SRC], env_ok=True))


def test_a_line_a_later_step_re_pins_is_judged_by_that_step(tmp_path) -> None:
    """verl 0.9.0: requirements-npu.txt says numpy<2.0.0, verl's setup.py numpy>=2.0.0, and the profile's final
    re-pin numpy>=2.0.0,<2.4 has the last word. Judged by its own numpy line, the requirements step could never be
    done: the real-world tier's second install of verl-0.9.0-cann9.0.0-a2 ran it again (numpy 1.26.x) and the
    re-pin after it, where a finished install must be a no-op. A line no later step pins is still its own."""
    from doctor.installers.plan import Plan, Target

    f = tmp_path / "requirements-npu.txt"
    f.write_text("numpy<2.0.0\nhydra-core\n")
    reqs = Step("verl-requirements", INSTALL, "r", requirements=("-r", str(f)))
    final = Step("final-pins", INSTALL, "f", requirements=("transformers==5.10.4", "numpy>=2.0.0,<2.4"))
    done = View(versions={"numpy": "2.3.5", "hydra-core": "1.3.2", "transformers": "5.10.4"})
    plan = Plan("p", "r", Target("/v/bin/python", "3.11", "x86_64", None), steps=(reqs, final))
    assert satisfied(reqs, done, plan) and satisfied(final, done, plan)
    assert not satisfied(reqs, done)  # without the plan there is no later step: the file's line decides
    assert not satisfied(final, View(versions={"numpy": "1.26.4", "hydra-core": "1.3.2", "transformers": "5.10.4"}), plan)
    assert not satisfied(reqs, View(versions={"numpy": "2.3.5", "transformers": "5.10.4"}), plan)  # hydra-core missing
    # the order matters: a step after the re-pin keeps its own line
    assert not satisfied(reqs, done, Plan("p", "r", Target("/v/bin/python", "3.11", "x86_64", None), steps=(final, reqs)))
    plain = Step("mbridge", INSTALL, "m", requirements=("numpy<2.0.0",))
    assert satisfied(plain, done, Plan("p", "r", Target("/v/bin/python", "3.11", "x86_64", None), steps=(plain, final)))
    # an empty target: a step whose every line a later step pins again still runs (the torch stack goes in before the
    # builds that need it), and so does one whose package is outside the later pin
    torch = Step("torch-stack", INSTALL, "t", requirements=("torch==2.10.0+cpu",))
    again = Step("final-pins", INSTALL, "f", requirements=("torch==2.10.0+cpu",))
    two = Plan("p", "r", Target("/v/bin/python", "3.11", "x86_64", None), steps=(torch, again))
    assert not satisfied(torch, View(), two)
    assert satisfied(torch, View(versions={"torch": "2.10.0+cpu"}), two)
    assert not satisfied(reqs, View(versions={"numpy": "2.4.6", "hydra-core": "1.3.2", "transformers": "5.10.4"}), plan)
