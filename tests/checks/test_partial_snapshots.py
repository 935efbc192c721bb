"""An unknown fact never becomes a finding (snapshot rules 2, 3 and 6), audited check by check.

For every registered check, start from verified stacks' healthy snapshots and make them partial one fact at a
time: drop `complete`, drop any key at any depth (a missing key is *unknown*), keep only one section, or keep one
entry (not PATH) of `env` / `packages` / `modules` / `ascend`. Dropping an `env` entry also drops `PATH`, so the env
is no longer a capture of a real environment (rule 3) but a hand-written list. Whatever the check reports on such a
snapshot it must also report on the full one (same id, same or worse severity): a finding that only appears when
facts are missing came from an unknown. The full one counts as judged with its verified stack and with none, since a
partial snapshot may no longer select the stack: a documented deviation that makes a stated fact info then no longer
applies, and the fact's own severity is no unknown.

The bases are one stack per difference the checks branch on, not every profile (each takes 5-10 s, and every xdist
worker audits them all): CANN 8.2 / 8.3 / 8.5 / 9.0 / 9.1 and the 950's unknown CANN, numpy 1 and 2 (the 0.9.0
stacks, the 950 among them), verl from PyPI and from a git checkout (the 0.10.0 dev stack: `modules.verl.git`), the
lines one CANN serves (0.8.0 and 0.9.0 on CANN 9.0.0: a partial snapshot without verl's version must not be judged
by the newer line's pins), stacks with known deviations (0.9.1's torch-npu, 0.8.0's vLLM and transformers, the
950's Megatron-core), A2 / A3 / 950 and aarch64 / x86_64.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from doctor.checks.diagnose import diagnose
from doctor.checks.runner import load_all
from doctor.report import CheckStatus
from doctor.snapshot.model import snapshot_from_dict
from tests.stacks import bare, diagnose_dict, found, healthy

BASES = (("verl-0.7.1-cann8.5.0-a2", "aarch64"), ("verl-0.7.1-cann8.5.0-a2", "x86_64"),
         ("verl-0.9.0-cann9.0.0-a3", "aarch64"), ("verl-0.6.1-cann8.2.rc1-a2", "aarch64"),
         ("verl-0.7.0-cann8.3.rc1-a3", "x86_64"), ("verl-0.8.0-cann9.0.0-a2", "aarch64"),
         ("verl-0.9.1-cann9.1.0-a3", "x86_64"), ("verl-0.10.0.dev20260822-cann9.1.0-a2", "aarch64"),
         ("verl-0.9.0-cannunknown-950", "aarch64"))
# a partial node beside a full one: twice the work per partial, so the two stacks furthest apart (CANN 8.2 / 9.0,
# numpy 1 / 2, A2 / A3)
CLUSTER_BASES = (("verl-0.9.0-cann9.0.0-a3", "aarch64"), ("verl-0.6.1-cann8.2.rc1-a2", "aarch64"))
SECTIONS = ("env", "packages", "modules", "ascend")


def _paths(d: Any, pre: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(d, dict):
        for k, v in d.items():
            if pre or k != "schema":
                yield pre + (k,)
                yield from _paths(v, pre + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            if isinstance(v, dict):
                for k, vv in v.items():
                    yield pre + (i, k)
                    yield from _paths(vv, pre + (i, k))


def _dropped(full: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    d = copy.deepcopy(full)
    d.pop("complete", None)
    cur = d
    for p in path[:-1]:
        cur = cur[p]
    cur.pop(path[-1], None)
    if path[0] == "env" and isinstance(d.get("env"), dict):
        d["env"].pop("PATH", None)
    return d


def _partials(full: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "no complete", {k: v for k, v in full.items() if k != "complete"}
    for path in _paths(full):
        if path != ("complete",):
            yield "drop " + ".".join(map(str, path)), _dropped(full, path)
    for section in (k for k in full if k not in ("schema", "complete")):
        yield f"only {section}", {"schema": full["schema"], section: copy.deepcopy(full[section])}
    for section in SECTIONS:
        # an env holding PATH is a capture of a real environment (rule 3): PATH alone is not a partial env
        for key in (k for k in full[section] if (section, k) != ("env", "PATH")):
            one = {key: copy.deepcopy(full[section][key])}
            rest = {k: copy.deepcopy(v) for k, v in full.items() if k not in ("complete", section)}
            yield f"one {section}.{key}", {**rest, section: one}
            yield f"only {section}.{key}", {"schema": full["schema"], section: one}


def _by_check(d: dict[str, Any], other: dict[str, Any] | None = None, *, stacks: bool = True
              ) -> tuple[dict[tuple[str, str], int], dict[str, CheckStatus]]:
    """Findings by (check, id) -> worst rank; with `other`, the two as a cluster (node a = other, b = d).
    `stacks=False`: judged with no verified stack."""
    profiles = None if stacks else []
    if other is None:
        report = diagnose([(None, snapshot_from_dict(d), None)], profiles=profiles)
    else:
        report = diagnose([("a", snapshot_from_dict(other), None), ("b", snapshot_from_dict(d), None)], cluster=True,
                          profiles=profiles)
    found_ = {}
    for f in report.findings:
        k = (f.check or "", f.id)
        found_[k] = max(found_.get(k, -1), f.severity.rank)
    return found_, {c.id: c.status for c in report.checks}


@cache
def _audit(cluster: bool = False) -> dict[str, list[str]]:
    """check id -> the partial snapshots on which it reported something the full one did not. `cluster`: the
    partial snapshot is the second node beside a full one (what cross-node checks compare)."""
    bad: dict[str, list[str]] = {}
    for name, arch in CLUSTER_BASES if cluster else BASES:
        full = healthy(name, arch)
        other = full if cluster else None
        base, _ = _by_check(full, other)
        for k, rank in _by_check(full, other, stacks=False)[0].items():
            base[k] = max(base.get(k, -1), rank)
        for label, partial in _partials(full):
            got, statuses = _by_check(partial, other)
            assert CheckStatus.CRASH not in statuses.values(), label
            for (check, fid), rank in got.items():
                if rank > base.get((check, fid), -1):
                    bad.setdefault(check, []).append(f"{name}/{arch}: {label} -> {fid}")
    return bad


@pytest.mark.parametrize("check_id", sorted(load_all()) + ["profile-selection"])
def test_check_is_silent_about_unknowns(check_id: str) -> None:
    assert _audit(cluster=load_all()[check_id].cluster if check_id in load_all() else False).get(check_id, []) == []


# The cases that were wrong before, spelled out.


def test_partial_env_with_one_variable_is_not_an_unsourced_set_env():
    d = bare(ascend={"toolkit": {"version": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1"}},
             env={"ASCEND_RT_VISIBLE_DEVICES": "0,1"})
    assert "cann-set-env-not-sourced" not in found(d)
    d["complete"] = True  # a complete snapshot says the rest is unset
    assert found(d)["cann-set-env-not-sourced"] == "error"


def test_a_captured_env_says_what_is_unset():
    """A hand-written env that is a capture of a real environment (it has PATH) lists every relevant variable."""
    d = bare(ascend={"toolkit": {"version": "8.3.RC1", "path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1"}},
             env={"PATH": "/usr/bin:/bin"})
    assert found(d)["cann-set-env-not-sourced"] == "error"


def test_partial_toolkit_without_a_version_key_is_not_unreadable():
    d = bare(ascend={"toolkit": {"path": "/usr/local/Ascend/ascend-toolkit/8.3.RC1"}})
    assert "cann-version-unreadable" not in found(d)
    d["ascend"]["toolkit"]["version"] = None  # the probe looked and could not read it
    assert found(d)["cann-version-unreadable"] == "warning"


def test_partial_env_is_no_vllm_ascend_without_atb():
    d = healthy()
    d.pop("complete")
    d["env"] = {"ASCEND_HOME_PATH": d["env"]["ASCEND_HOME_PATH"]}
    assert "cann-nnal-not-sourced" not in found(d)


def test_cluster_env_skew_ignores_a_node_that_does_not_list_the_variable():
    a, b = healthy(), healthy()
    b.pop("complete")
    b["env"] = {"ASCEND_OPP_PATH": a["env"]["ASCEND_OPP_PATH"]}
    report = diagnose([("a", snapshot_from_dict(a), None), ("b", snapshot_from_dict(b), None)], cluster=True)
    assert "cluster-env-skew" not in {f.id for f in report.findings}


def test_a_stack_without_verl_s_version_is_judged_by_the_line_its_stated_pins_meet():
    """CANN 9.0.0 serves verl 0.8.0 and 0.9.0: the 0.8.0 stack stated without verl's version (torch 2.9.0, vLLM
    0.18.0) is the 0.8.0 stack, not torch, torch-npu, vllm ... off the newest line's pins."""
    d = healthy("verl-0.8.0-cann9.0.0-a2")
    d.pop("complete")
    del d["packages"]["verl"]["version"]
    report = diagnose_dict(d)
    assert report.profile["name"] == "verl-0.8.0-cann9.0.0-a2"
    assert "package-off-profile" not in found(d)
    assert report.profile["reason"].endswith(
        "verl's version not stated; installed torch, torch-npu, torchvision and 8 more meet its pins")
    # the same stack with verl 0.9.0 stated is judged by 0.9.0's pins, as before
    d["packages"]["verl"]["version"] = "0.9.0"
    assert diagnose_dict(d).profile["name"] == "verl-0.9.0-cann9.0.0-a2"
    assert found(d)["package-off-profile"] == "warning"


def test_a_package_without_its_version_that_the_chosen_stack_runs_is_not_refused_by_every_release():
    """verl 0.8.0's stack builds vLLM 0.18.0 from source beside transformers 5.3.0 (a documented deviation): a vllm
    stated without its version there is not "no release of vllm accepts transformers 5.3.0"."""
    d = healthy("verl-0.8.0-cann9.0.0-a2")
    d.pop("complete")
    del d["packages"]["vllm"]["version"]
    assert "requirement-excluded-by-every-release" not in found(d)
    # without a verified stack that runs it, every release still refuses it
    assert found(bare(packages={"vllm": {}, "transformers": {"version": "5.3.0"}, "verl": {"version": "0.9.0"}}))[
        "requirement-excluded-by-every-release"] == "error"
