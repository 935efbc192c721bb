"""Class rules for the C++ runtime the target interpreter loads (python.libstdcxx): the GLIBCXX / CXXABI versions
the wheels' manylinux tag allows them to need (auditwheel's policy), and a conda environment's libstdc++ older than
the host's. Each is silent when its fact is unknown."""

from __future__ import annotations

from typing import Any

from doctor.checks.cxx_runtime import (
    GCC_OF_GLIBCXX,
    MANYLINUX_CXX,
    libstdcxx_system,
    libstdcxx_wheel_policy,
    node_minor,
    policy_cxx,
)
from doctor.checks.runner import CheckContext, Skipped
from doctor.snapshot.model import snapshot_from_dict

SYSTEM = {"path": "/usr/lib/aarch64-linux-gnu/libstdc++.so.6.0.30", "glibcxx": "3.4.30", "cxxabi": "1.3.13"}


def _run(fn: Any, doc: dict[str, Any]) -> list[Any] | None:
    """The findings, or None when the check skipped (an unknown fact must never read as a pass)."""
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", **doc})
    try:
        return list(fn(CheckContext(snapshot=snap)))
    except Skipped:
        return None


def _conda(glibcxx: str, cxxabi: str | None, system: dict[str, Any] | None = SYSTEM) -> dict[str, Any]:
    return {"prefix": "/opt/conda/envs/rl",
            "libstdcxx": {"path": f"/opt/conda/envs/rl/lib/libstdc++.so.6.0.{glibcxx.rsplit('.', 1)[-1]}",
                          "glibcxx": glibcxx, "cxxabi": cxxabi, "system": system}}


def test_the_policy_table_agrees_with_the_peps_that_define_the_legacy_tags():
    # PEP 599 (manylinux2014 = manylinux_2_17): GLIBCXX_3.4.19, CXXABI_1.3.7; PEP 571 (manylinux2010 = 2_12):
    # GLIBCXX_3.4.13, CXXABI_1.3.3 -- a second reading of what auditwheel's policy file says
    assert MANYLINUX_CXX[(2, 17)] == {"x86_64": (19, 7), "aarch64": (19, 7)}
    assert MANYLINUX_CXX[(2, 12)]["x86_64"] == (13, 3)
    keys = sorted(MANYLINUX_CXX)
    for arch in ("x86_64", "aarch64"):
        rows = [MANYLINUX_CXX[k][arch] for k in keys if arch in MANYLINUX_CXX[k]]
        assert rows == sorted(rows), arch  # a newer glibc never allows less
    # a tag between two policies takes the older one's; an unknown machine the lowest of the row
    assert policy_cxx((2, 29), "aarch64") == (24, 11) and policy_cxx((2, 26), None) == (22, 10)
    assert policy_cxx((2, 4), "x86_64") is None and policy_cxx((2, 12), "aarch64") is None
    assert node_minor("3.4.30", (3, 4)) == 30 and node_minor("3.4", (3, 4)) == 0 and node_minor("1.3.13", (3, 4)) is None
    assert node_minor(None, (3, 4)) is None and node_minor("3.4.x", (3, 4)) is None
    # GCC's ABI page: GCC 11.1.0 brought GLIBCXX_3.4.29, GCC 12.1.0 GLIBCXX_3.4.30
    assert GCC_OF_GLIBCXX[29] == "11.1" and GCC_OF_GLIBCXX[30] == "12.1"


def test_a_libstdcxx_older_than_the_wheel_tag_allows_is_a_warning_with_the_conda_fix():
    # torch-npu 2.7.1's aarch64 wheel is manylinux_2_28 (profiles/requirements.json): GLIBCXX <= 3.4.24, CXXABI <= 1.3.11
    doc = {"host": {"arch": "aarch64", "libc": "glibc 2.35"}, "python": _conda("3.4.21", "1.3.9"),
           "packages": {"torch-npu": {"version": "2.7.1"}}}
    (f,) = _run(libstdcxx_wheel_policy, doc)
    assert f.id == "libstdcxx-older-than-wheel-policy" and f.severity.value == "warning"
    assert f.components == ("system", "torch-npu")
    assert "GLIBCXX_3.4.24 and CXXABI_1.3.11" in f.title and "manylinux_2_28" in f.title
    assert f.evidence["manylinux"] == "2_28" and f.evidence["glibcxx"] == "3.4.21"
    assert "auditwheel/blob/957233d" in f.source and "pypi.org/project/torch-npu/2.7.1" in f.source
    assert f.fix.commands == ("conda install -c conda-forge 'libstdcxx-ng>=7.2'", f"export LD_PRELOAD={SYSTEM['path']}")
    # the boundary: exactly what the policy allows is enough
    doc["python"] = _conda("3.4.24", "1.3.11")
    assert _run(libstdcxx_wheel_policy, doc) == []
    # a CXXABI that is not known is not judged; GLIBCXX alone decides
    doc["python"] = _conda("3.4.24", None)
    assert _run(libstdcxx_wheel_policy, doc) == []
    doc["python"] = _conda("3.4.24", "1.3.10")
    (g,) = _run(libstdcxx_wheel_policy, doc)
    assert "lacks CXXABI_1.3.11," in g.title


def test_the_wheel_policy_rule_skips_unknowns_and_does_not_judge_local_builds():
    pkgs = {"torch-npu": {"version": "2.7.1"}}
    assert _run(libstdcxx_wheel_policy, {"host": {"arch": "aarch64"}, "packages": pkgs}) is None  # older snapshot
    assert _run(libstdcxx_wheel_policy, {"python": {"libstdcxx": None}, "packages": pkgs}) is None  # none loads
    no_versions = {"python": {"libstdcxx": {"path": "/x/libstdc++.so.6", "glibcxx": None}}, "packages": pkgs}
    assert _run(libstdcxx_wheel_policy, no_versions) is None
    # torch 2.7.0+cpu comes from another index: its tag is not the table's
    local = {"host": {"arch": "x86_64"}, "python": _conda("3.4.19", "1.3.7"), "packages": {"torch": {"version": "2.7.0+cpu"}}}
    assert _run(libstdcxx_wheel_policy, local) == []


def test_a_report_without_its_machine_is_judged_by_the_lowest_policy_of_every_linux_wheel():
    # torch 2.7.0's Linux wheels (x86_64 and aarch64) are all manylinux_2_28
    doc = {"python": {"libstdcxx": {"path": "/usr/lib64/libstdc++.so.6.0.19", "glibcxx": "3.4.19", "cxxabi": "1.3.7"}},
           "packages": {"torch": {"version": "2.7"}}}
    (f,) = _run(libstdcxx_wheel_policy, doc)
    assert f.evidence["machine"].startswith("not stated") and "GLIBCXX_3.4.24" in f.title
    assert f.fix.commands == ()  # not a conda environment's copy, and no newer system copy is known
    assert "LD_LIBRARY_PATH" in f.fix.text


def test_a_conda_libstdcxx_older_than_the_hosts_is_a_warning():
    doc = {"python": _conda("3.4.29", "1.3.13")}
    (f,) = _run(libstdcxx_system, doc)
    assert f.id == "libstdcxx-older-than-system" and f.severity.value == "warning" and f.components == ("system", "python")
    assert "GLIBCXX_3.4.29" in f.title and "GLIBCXX_3.4.30" in f.title
    assert f.fix.commands == ("conda install -c conda-forge 'libstdcxx-ng>=12.1'", f"export LD_PRELOAD={SYSTEM['path']}")
    assert f.source.startswith("https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html; https://github.com/conda-forge/")
    # a newer conda copy than the host's is the normal case; the same file is no case at all
    assert _run(libstdcxx_system, {"python": _conda("3.4.32", "1.3.14")}) == []
    same = {"python": {"libstdcxx": {**SYSTEM, "system": SYSTEM}}}
    assert _run(libstdcxx_system, same) == []
    # unknowns skip: an older snapshot, a cache that lists none, versions not read
    assert _run(libstdcxx_system, {"python": {"version": "3.11.7"}}) is None
    assert _run(libstdcxx_system, {"python": _conda("3.4.29", "1.3.13", system=None)}) is None
    assert _run(libstdcxx_system, {"python": _conda("3.4.29", "1.3.13", system={"path": "/usr/lib/x"})}) is None


def test_an_older_libstdcxx_on_ld_library_path_names_it_and_preloads_the_hosts():
    old = "/usr/local/Ascend/thirdparty/lib64"
    doc = {"python": {"prefix": "/opt/venv", "libstdcxx": {"path": f"{old}/libstdc++.so.6.0.28", "glibcxx": "3.4.28",
                                                          "cxxabi": "1.3.12", "system": SYSTEM}},
           "env": {"PATH": "/usr/bin", "LD_LIBRARY_PATH": f"{old}:/usr/local/Ascend/driver/lib64"}}
    (f,) = _run(libstdcxx_system, doc)
    assert f.evidence["LD_LIBRARY_PATH"].startswith(old) and f.fix.commands == (f"export LD_PRELOAD={SYSTEM['path']}",)
    assert old in f.fix.text and "conda" not in f.fix.text and f.source == "https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html"


def test_documented_stacks_with_a_gcc_12_libstdcxx_give_no_libstdcxx_finding():
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    for p in load_profiles():
        for arch in ("aarch64", "x86_64"):
            d = stack_snapshot(p, arch)
            d.setdefault("python", {})["libstdcxx"] = {**SYSTEM, "system": SYSTEM}
            assert _run(libstdcxx_wheel_policy, d) == [], p.name
            assert _run(libstdcxx_system, d) == [], p.name


def test_no_libstdcxx_at_all_with_the_stacks_wheels_installed_is_a_warning():
    from doctor.checks.cxx_runtime import libstdcxx_present

    doc = {"python": {"prefix": "/opt/venv", "libstdcxx": None}, "packages": {"torch": {"version": "2.7.1"},
                                                                            "torch-npu": {"version": "2.7.1"}}}
    (f,) = _run(libstdcxx_present, doc)
    assert f.id == "libstdcxx-missing" and f.severity.value == "warning" and f.components == ("system", "torch", "torch-npu")
    assert "auditwheel/blob/" in f.source and any(c.startswith("apt-get install -y libstdc++6") for c in f.fix.commands)
    # found, unknown (an older snapshot), or only a local build installed: nothing to say
    assert _run(libstdcxx_present, {**doc, "python": {"libstdcxx": {**SYSTEM, "system": SYSTEM}}}) == []
    assert _run(libstdcxx_present, {**doc, "python": {"prefix": "/opt/venv"}}) is None
    assert _run(libstdcxx_present, {"python": {"libstdcxx": None}, "packages": {"torch": {"version": "2.7.1+cpu"}}}) == []
