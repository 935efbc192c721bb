"""Class rules for host facts (issue 22 item 4): glibc vs the wheels' manylinux tags, /dev/shm vs Ray and vLLM,
CANN's Python dependencies. Each is silent when its fact is unknown."""

from __future__ import annotations

from typing import Any

from doctor.checks.host_facts import glibc_of, wheel_glibc
from doctor.checks.runner import CheckContext, Skipped
from doctor.snapshot.model import snapshot_from_dict


def _run(fn: Any, doc: dict[str, Any]) -> list[Any]:
    snap = snapshot_from_dict({"schema": "doctor.snapshot/1", **doc})
    try:
        return list(fn(CheckContext(snapshot=snap)))
    except Skipped:
        return []


def test_manylinux_tags_and_glibc_strings():
    assert glibc_of("glibc 2.35") == (2, 35) and glibc_of("musl 1.2") is None and glibc_of(None) is None
    assert wheel_glibc("torch_npu-2.7.1-cp310-cp310-manylinux_2_28_aarch64.whl", "aarch64") == (2, 28)
    assert wheel_glibc("x-1-cp38-cp38-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", "aarch64") == (2, 17)
    assert wheel_glibc("x-1-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl", "aarch64") == (2, 27)
    assert wheel_glibc("x-1-cp310-cp310-manylinux_2_28_aarch64.whl", "x86_64") is None



def test_glibc_string_is_read_as_the_wheel_tag_judge_reads_it():
    """check's glibc rules and its wheel-tag rule read one C library string one way: a snapshot whose libc is the
    first line of `ldd --version` (what users paste) is glibc 2.35 to both, a musl host is not glibc to either."""
    from doctor.checks.wheel_tags import Target

    ldd = "ldd (Ubuntu GLIBC 2.35-0ubuntu3.8) 2.35"
    assert glibc_of(ldd) == (2, 35) == Target((3, 11), "aarch64", ldd).host.libc_version
    assert not Target((3, 11), "aarch64", ldd).fits("cp311-cp311-manylinux_2_36_aarch64")
    assert glibc_of("musl 1.2.4") is None and Target((3, 11), "x86_64", "musl 1.2.4").host.libc == "musl"

def test_glibc_older_than_the_releases_wheels_is_an_error():
    from doctor.checks.host_facts import wheel_glibc_check

    # torch-npu 2.7.1's wheel on PyPI is manylinux_2_28 (profiles/requirements.json names the file)
    doc = {"host": {"arch": "aarch64", "libc": "glibc 2.27"}, "packages": {"torch-npu": {"version": "2.7.1"}}}
    (f,) = _run(wheel_glibc_check, doc)
    assert f.id == "glibc-older-than-wheel" and f.severity.value == "error" and f.components == ("system", "torch-npu")
    assert "2.28" in f.title and "pypi.org/project/torch-npu/2.7.1" in f.source
    doc["host"]["libc"] = "glibc 2.35"
    assert _run(wheel_glibc_check, doc) == []
    assert _run(wheel_glibc_check, {"packages": {"torch-npu": {"version": "2.7.1"}}}) == []  # glibc unknown


def test_a_report_that_names_its_glibc_but_not_its_machine_is_judged_by_every_linux_wheel():
    from doctor.checks.host_facts import wheel_glibc_check

    # "CentOS 7 (glibc 2.17), torch 2.7": torch 2.7.0's Linux wheels (x86_64 and aarch64) are all manylinux_2_28
    doc = {"host": {"libc": "glibc 2.17"}, "packages": {"torch": {"version": "2.7"}}}
    (f,) = _run(wheel_glibc_check, doc)
    assert f.id == "glibc-older-than-wheel" and f.components == ("system", "torch") and "2.28" in f.title
    assert f.evidence["machine"].startswith("not stated")
    doc["host"]["libc"] = "glibc 2.28"
    assert _run(wheel_glibc_check, doc) == []
    # a local build (another index's, or built from source) is not PyPI's wheel: not judged
    assert _run(wheel_glibc_check, {"host": {"libc": "glibc 2.17"}, "packages": {"torch": {"version": "2.7.0+cpu"}}}) == []


def test_every_wheel_pypi_publishes_for_the_stated_python_and_machine_is_judged_not_only_the_one_read():
    """profiles/requirements/ read torch-npu 2.8.0.post2's metadata from its cp310 aarch64 wheel; its files (PyPI's
    JSON API: cp39-cp312, manylinux_2_28 on both machines, no sdist) say the x86_64 wheels need glibc 2.28 too.
    An x86_64 snapshot on glibc 2.27 used to get no finding; the finding names the wheel of the stated Python."""
    from doctor.checks.host_facts import least_glibc, wheel_glibc_check
    from doctor.knowledge.requirements import declared

    doc: dict[str, Any] = {"host": {"arch": "x86_64", "libc": "glibc 2.27"}, "python": {"version": "3.11.6"},
                           "packages": {"torch-npu": {"version": "2.8.0.post2"}}}
    (f,) = _run(wheel_glibc_check, doc)
    assert f.id == "glibc-older-than-wheel" and f.severity.value == "error" and "glibc >= 2.28" in f.title
    page = "https://pypi.org/project/torch-npu/2.8.0.post2/#torch_npu-2.8.0.post2-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert f.evidence["wheel"] == page and f.source.startswith(page + "; ")
    doc["host"]["libc"] = "glibc 2.28"
    assert _run(wheel_glibc_check, doc) == []
    # torch-npu 2.6.0: manylinux2014 x86_64 wheels, manylinux_2_28 aarch64 ones: glibc 2.27 fits only x86_64
    d = declared("torch-npu", "2.6.0")
    assert d is not None and least_glibc(d, "x86_64", "3.10.12") == (2, 17) and least_glibc(d, "aarch64") == (2, 28)
    assert least_glibc(d, None) == (2, 17)  # a machine not stated: the lowest of them
    assert least_glibc(d, "x86_64", "3.12.1") is None  # no cp312 wheel: release-has-no-wheel-for-target's business


def test_a_release_that_also_publishes_an_sdist_is_a_warning_pip_may_have_built_it():
    """vllm 0.12.0 publishes manylinux_2_31 wheels and an sdist (its PyPI files): on glibc 2.28 pip builds the sdist
    instead, so a copy built on the host is not concerned: a warning, not an error."""
    from doctor.checks.host_facts import wheel_glibc_check

    doc = {"host": {"arch": "x86_64", "libc": "glibc 2.28"}, "packages": {"vllm": {"version": "0.12.0"}}}
    (f,) = _run(wheel_glibc_check, doc)
    assert f.id == "glibc-older-than-wheel" and f.severity.value == "warning" and "glibc >= 2.31" in f.title
    assert "also publishes an sdist" in f.detail and "vllm-0.12.0-cp38-abi3-manylinux_2_31_x86_64.whl" in f.source


def test_torch_binaries_need_glibc_2_17_whatever_their_wheel_tag_says():
    from doctor.checks.host_facts import documented_glibc, wheel_glibc_check

    # PyTorch's get-started page (0.4.1 on): glibc >= 2.17; torch 1.0 is in no table, torch 2.0's x86_64 wheel is
    # tagged manylinux1 (glibc 2.5)
    for torch in ("1.0.0", "2.0.0"):
        (f,) = _run(wheel_glibc_check, {"host": {"arch": "x86_64", "libc": "glibc 2.12"},
                                        "packages": {"torch": {"version": torch}}})
        assert f.id == "glibc-older-than-wheel" and f.severity.value == "error" and f.components == ("system", "torch")
        assert "glibc >= 2.17" in f.title and "pytorch.github.io/blob/" in f.source
    assert _run(wheel_glibc_check, {"host": {"libc": "glibc 2.17"}, "packages": {"torch": {"version": "1.2.0"}}}) == []
    assert documented_glibc("torch", "0.4.0") is None and documented_glibc("torch-npu", "2.1.0") is None
    assert documented_glibc("torch", "0.4.1") is not None


def test_an_enterprise_linux_release_stands_for_its_glibc_when_the_c_library_is_not_stated():
    from doctor.checks.host_facts import os_glibc, wheel_glibc_check

    assert os_glibc("CentOS release 6.8 (Final)") == (2, 12)
    assert os_glibc("Red Hat Enterprise Linux Workstation release 6.4 (Santiago)") == (2, 12)
    assert os_glibc("CentOS Linux 7 (Core)") == (2, 17) and os_glibc("RHEL 5.11") == (2, 5)
    assert os_glibc("Ubuntu 22.04.4 LTS") is None and os_glibc("CentOS Stream 9") is None and os_glibc(None) is None
    doc = {"host": {"os": "Red Hat Enterprise Linux Workstation release 6.4 (Santiago)"},
           "packages": {"torch": {"version": "1.2.0"}}}
    (f,) = _run(wheel_glibc_check, doc)
    assert f.evidence["glibc_from_os"].startswith("Red Hat") and "pep-0571" in f.source and "2.12" in f.title
    # CentOS 7's glibc 2.17 with torch 2.7 (manylinux_2_28): the wheel tag decides
    (g,) = _run(wheel_glibc_check, {"host": {"os": "CentOS Linux 7 (Core)"}, "packages": {"torch": {"version": "2.7"}}})
    assert "2.28" in g.title and "pypi.org/project/torch/" in g.source
    # the C library the snapshot states wins over the OS name
    doc["host"]["libc"] = "glibc 2.17"
    assert _run(wheel_glibc_check, doc) == []
    doc["host"]["libc"] = "musl 1.2.4"
    assert _run(wheel_glibc_check, doc) == []


def test_documented_stacks_on_their_images_glibc_give_no_glibc_finding():
    from doctor.checks.host_facts import wheel_glibc_check
    from doctor.knowledge.profiles import load_profiles
    from tests.stacks import stack_snapshot

    for p in load_profiles():
        for arch in ("aarch64", "x86_64"):
            d = stack_snapshot(p, arch)
            d["host"]["libc"] = "glibc 2.35"  # the CANN images' Ubuntu 22.04
            assert _run(wheel_glibc_check, d) == [], p.name


def test_shm_against_rays_object_store_and_vllms_container_guidance():
    from doctor.checks.host_facts import shm_ray_object_store
    from doctor.checks.network import shm_size

    mid = {"host": {"shm_gb": 64.0, "memory_gb": 1024.0, "in_container": True}, "packages": {"ray": {"version": "2.46.0"}}}
    (f,) = _run(shm_ray_object_store, mid)
    assert f.id == "shm-below-ray-object-store" and f.severity.value == "warning" and "307 GB" in f.title
    ok = {"host": {"shm_gb": 400.0, "memory_gb": 1024.0}, "packages": {"ray": {"version": "2.46.0"}}}
    assert _run(shm_ray_object_store, ok) == []
    assert _run(shm_ray_object_store, {"host": {"memory_gb": 1024.0}}) == []  # shm unknown
    # under 1 GB with vLLM: the shm-too-small warning names vLLM and cites its container guidance
    small = {"host": {"shm_gb": 0.06, "memory_gb": 512.0, "in_container": True},
             "packages": {"vllm-ascend": {"version": "0.11.0"}}}
    (g,) = _run(shm_size, small)
    assert g.id == "shm-too-small" and "vllm" in g.components and "docs.vllm.ai" in g.source
    assert _run(shm_ray_object_store, small) == []


def test_cann_python_dependencies_missing_from_the_target():
    from doctor.checks.host_facts import cann_python_deps

    pkgs = {n: {"version": "1.0"} for n in ("torch-npu", "attrs", "sympy", "cffi", "psutil", "scipy", "numpy", "pyyaml",
                                            "protobuf")}
    doc = {"complete": True, "packages": pkgs, "ascend": {"toolkit": {"version": "8.3.RC1"}}}
    (f,) = _run(cann_python_deps, doc)
    assert f.id == "cann-python-deps-missing" and f.evidence["missing"] == ["decorator"] and f.severity.value == "error"
    assert f.components == ("python", "cann")
    doc["complete"] = False  # a hand-written snapshot cannot say decorator is absent
    assert _run(cann_python_deps, doc) == []
    assert _run(cann_python_deps, {"complete": True, "packages": pkgs, "ascend": {"toolkit": None}}) == []


def test_vllm_ascend_release_on_a_chip_family_it_does_not_support():
    from doctor.checks.vllm import vllm_ascend_chip_support

    def doc(va: str, chip: str) -> dict[str, Any]:
        return {"packages": {"vllm-ascend": {"version": va}}, "ascend": {"devices": [{"id": 0, "chip": chip}]}}

    (f,) = _run(vllm_ascend_chip_support, doc("0.9.1", "310P3"))
    assert f.id == "vllm-ascend-release-chip-unsupported" and f.severity.value == "error" and "v0.9.1" in f.source
    assert _run(vllm_ascend_chip_support, doc("0.10.0rc1", "310P3")) == []
    assert [x.evidence["chip"] for x in _run(vllm_ascend_chip_support, doc("0.13.0", "Ascend950DT"))] == ["950"]
    assert _run(vllm_ascend_chip_support, doc("0.23.0", "Ascend950DT")) == []
    assert _run(vllm_ascend_chip_support, doc("0.9.1", "910B3")) == []
    assert _run(vllm_ascend_chip_support, {"packages": {"vllm-ascend": {"version": "0.9.1"}}}) == []  # chip unknown


def test_an_ld_preload_entry_the_loader_cannot_load_is_a_warning_with_the_file_this_host_has():
    from doctor.checks.host_facts import ld_preload

    jemalloc = "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"  # upstream verl's NPU scripts preload this path
    doc = {"host": {"arch": "aarch64", "os": "openEuler 22.03 (LTS-SP4)", "preload": [
        {"entry": jemalloc, "source": "LD_PRELOAD", "exists": False, "alternatives": ["/usr/lib64/libjemalloc.so.2"]},
        {"entry": "/opt/lib/libgood.so", "source": "LD_PRELOAD", "exists": True, "machine": "aarch64"},
        {"entry": "libtcmalloc.so.4", "source": "LD_PRELOAD"}]}}
    (f,) = _run(ld_preload, doc)
    assert (f.id, f.severity.value, f.components) == ("ld-preload-not-loaded", "warning", ("env", "system"))
    assert jemalloc in f.title and "no such file" in f.title and "vllm-ascend" in f.source
    assert "replace /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 with /usr/lib64/libjemalloc.so.2" in f.fix.text
    doc["host"]["preload"][0]["alternatives"] = []
    (f,) = _run(ld_preload, doc)
    assert "yum install -y jemalloc" in f.fix.text and "/usr/lib64/libjemalloc.so.2" in f.fix.text
    doc["host"]["os"] = "Ubuntu 22.04.5 LTS"
    (f,) = _run(ld_preload, doc)
    assert "apt-get install -y libjemalloc2" in f.fix.text


def test_an_ld_preload_entry_for_another_machine_or_not_elf_is_named_and_unknowns_stay_silent():
    from doctor.checks.host_facts import ld_preload

    doc = {"host": {"arch": "x86_64", "preload": [
        {"entry": "/opt/a.so", "source": "LD_PRELOAD", "exists": True, "machine": "aarch64"},
        {"entry": "/opt/b.so", "source": "/etc/ld.so.preload", "exists": True, "machine": None},
        {"entry": "/opt/c.so", "source": "LD_PRELOAD", "exists": True}]}}  # machine unknown: not judged
    found = _run(ld_preload, doc)
    assert [f.key for f in found] == ["/opt/a.so", "/opt/b.so"]
    assert "built for aarch64, this host is x86_64" in found[0].title
    assert "not an ELF" in found[1].title and "/etc/ld.so.preload" in found[1].fix.text
    assert _run(ld_preload, {"host": {"arch": "x86_64"}}) == []  # an older snapshot: nothing known
    assert _run(ld_preload, {"host": {"preload": []}}) == []


def test_an_os_neither_rpm_nor_deb_gets_no_package_manager_it_may_not_have():
    from doctor.checks.host_facts import ld_preload

    doc = {"host": {"arch": "x86_64", "os": "openSUSE Leap 15.6", "preload": [
        {"entry": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "source": "LD_PRELOAD", "exists": False,
         "alternatives": []}]}}
    (f,) = _run(ld_preload, doc)
    assert "apt-get" not in f.fix.text and "yum" not in f.fix.text and "drop" in f.fix.text
