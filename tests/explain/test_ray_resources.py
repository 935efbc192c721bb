"""verl's resource check counts the accelerators Ray reports as *available*, so another job's hold on them reads as
missing devices (verl v0.5.0 verl/trainer/ppo/ray_trainer.py, _check_resource_available:
ray.state.available_resources_per_node()).
"""

from __future__ import annotations

from doctor.explain.signatures import explain_lines


def test_zero_available_names_another_job_holding_the_devices():
    # as https://github.com/verl-project/verl/issues/539 quotes it (the maintainer: a Ray job already ran on the node)
    f = explain_lines(["ValueError: Total available GPUs 0 is less than total desired GPUs 8"])[0]
    assert f.id == "verl-ray-resources-insufficient", f.id
    assert "available_resources_per_node" in f.detail and "another job" in f.detail, f.detail
    assert "stop the job that holds them" in f.fix.text, f.fix.text
