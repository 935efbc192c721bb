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
