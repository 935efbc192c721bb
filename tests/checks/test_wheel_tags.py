"""checks.wheel_tags: pip check's "X is not supported on this platform", from the WHEEL tags the probe records.

The real case (tests/realworld/test_pip_check_differential.py): pip 26.3's `pip check` in a plain venv on CPython 3.11
x86_64 printed "regex 2024.11.6 is not supported on this platform" for regex's aarch64 wheel put into site-packages with
`pip install --target --platform manylinux2014_aarch64` (`import regex` fails: No module named 'regex._regex'), and
"PyYAML 6.0.2 is not supported on this platform" for its cp312 wheel; the doctor said nothing."""

from __future__ import annotations

import pytest

from doctor.checks.diagnose import diagnose
from doctor.checks.wheel_tags import Target
from doctor.snapshot.model import snapshot_from_dict
from tests.fakes import venv_without_pip

HERE = Target((3, 11), "x86_64", "glibc 2.36")


@pytest.mark.parametrize(("tag", "fits"), [
    ("py3-none-any", True),
    ("py2.py3-none-any", True),
    ("py311-none-any", True),
    ("py312-none-any", False),
    ("cp311-cp311-manylinux_2_17_x86_64", True),
    ("cp311-cp311-manylinux2014_x86_64", True),
    ("cp311-cp311-manylinux1_x86_64", True),
    ("cp311-cp311-linux_x86_64", True),  # a local build (torch's +cpu wheels from the CPU index too are manylinux)
    ("cp38-abi3-manylinux_2_17_x86_64", True),
    ("cp312-abi3-manylinux_2_17_x86_64", False),
    ("cp311-cp311-manylinux_2_17_aarch64", False),
    ("cp311-cp311-manylinux2014_aarch64", False),
    ("cp312-cp312-manylinux_2_17_x86_64", False),
    ("cp313-cp313t-manylinux_2_28_x86_64", False),
    ("cp311-cp311-manylinux_2_39_x86_64", False),  # needs a newer glibc than 2.36
    ("cp311-cp311-musllinux_1_2_x86_64", False),
    ("cp311-cp311-macosx_11_0_arm64", False),
    ("cp311-cp311-win_amd64", False),
    ("pp310-pypy310_pp73-manylinux_2_17_x86_64", False),
    ("cp311-none-any", True),
    ("strange", True),  # not read: counts as fitting
    ("xx1-yy-zz", True),
])
def test_a_tag_fits_cpython_3_11_on_x86_64_glibc_2_36_as_pip_supports_it(tag, fits):
    assert HERE.fits(tag) is fits


def test_a_free_threaded_wheel_on_the_same_cpython_is_not_judged():
    # the snapshot does not say whether CPython 3.13 is the free-threaded build (python3.13t), which takes cp313t
    # wheels and no cp313 ones: the tag is not judged, never an error on an unknown; another minor still does not fit
    t313 = Target((3, 13), "x86_64", "glibc 2.36")
    assert t313.fits("cp313-cp313t-manylinux_2_28_x86_64") and t313.fits("cp313-cp313-manylinux_2_28_x86_64")
    assert not t313.fits("cp314-cp314t-manylinux_2_28_x86_64")


def test_a_musl_host_takes_the_musllinux_levels_of_its_musl_version():
    """numpy 2.3.3's aarch64 wheel for musl is musllinux_1_2 (https://pypi.org/pypi/numpy/json): pip 26.3 with the
    platforms of a musl 1.1 host finds no numpy 2.3.3 wheel for CPython 3.12, with a musl 1.2 host's it takes it.
    The check held any musllinux level to fit a musl host."""
    wheel = "cp312-cp312-musllinux_1_2_aarch64"
    assert not Target((3, 12), "aarch64", "musl 1.1.24").fits(wheel)
    assert Target((3, 12), "aarch64", "musl 1.2.4").fits(wheel)
    assert Target((3, 12), "aarch64", None).fits(wheel)  # the C library not stated: not held against it


def test_glibc_unknown_and_musl_hosts():
    assert Target((3, 11), "x86_64", None).fits("cp311-cp311-manylinux_2_39_x86_64")
    musl = Target((3, 11), "x86_64", "musl 1.2.4")
    assert musl.fits("cp311-cp311-musllinux_1_2_x86_64") and not musl.fits("cp311-cp311-manylinux_2_17_x86_64")
    arm = Target((3, 11), "aarch64", "glibc 2.31")
    assert arm.fits("cp311-cp311-manylinux_2_17_aarch64") and not arm.fits("cp311-cp311-manylinux_2_17_x86_64")


def _snap(tags: dict[str, list[str]], python: str = "3.11.7", arch: str = "x86_64", impl: str = "CPython") -> dict:
    pkgs = {n: {"version": "1.0", "requires_dist": [], "wheel_tags": t} for n, t in tags.items()}
    pkgs["verl"] = {"version": "0.9.1", "requires_dist": ["regex"], "wheel_tags": ["py3-none-any"]}
    return {"schema": "doctor.snapshot/1", "python": {"version": python, "implementation": impl, "packages_complete": True},
            "host": {"arch": arch, "libc": "glibc 2.36"}, "packages": pkgs}


def _found(doc: dict) -> list:
    rep = diagnose([(None, snapshot_from_dict(doc), None)], only=["wheel-tags"], live=False)
    return [f for f in rep.findings if f.id == "wheel-not-for-this-platform"]


def test_another_machines_wheel_is_an_error_on_verls_path_and_a_warning_elsewhere():
    got = _found(_snap({"regex": ["cp311-cp311-manylinux_2_17_aarch64", "cp311-cp311-manylinux2014_aarch64"],
                        "pyyaml": ["cp312-cp312-manylinux_2_17_x86_64"], "numpy": ["cp311-cp311-manylinux_2_17_x86_64"]}))
    by = {f.evidence["package"]: f for f in got}
    assert sorted(by) == ["pyyaml", "regex"]
    assert (by["regex"].severity.value, by["pyyaml"].severity.value) == ("error", "warning")
    assert "regex 1.0 is not supported on this platform" in by["regex"].title
    assert by["regex"].fix is not None and by["regex"].fix.commands == (
        "pip install --force-reinstall --no-deps 'regex==1.0'",)


def test_nothing_is_said_without_a_cpython_version_and_machine():
    aarch = {"regex": ["cp311-cp311-manylinux_2_17_aarch64"]}
    assert _found(_snap(aarch, impl="PyPy")) == []
    mac = _snap({"regex": ["cp311-cp311-macosx_11_0_arm64"]}, arch="arm64")
    mac["host"]["os"] = "macOS 15.1"
    assert _found(mac) == []
    doc = _snap(aarch)
    del doc["host"]
    assert _found(doc) == []
    assert len(_found(_snap(aarch))) == 1


def test_the_probe_records_the_wheel_tags_of_a_dist_info(tmp_path):
    """A real interpreter's dist-info with a WHEEL file: `wheel_tags` in the snapshot; an egg-info has none."""
    from doctor.probes import collect_snapshot

    py, site = venv_without_pip(tmp_path / "v")
    dist = site / "regex-2024.11.6.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: regex\nVersion: 2024.11.6\n")
    (dist / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: bdist_wheel (0.44.0)\nRoot-Is-Purelib: false\n"
                                "Tag: cp311-cp311-manylinux_2_17_aarch64\nTag: cp311-cp311-manylinux2014_aarch64\n")
    (dist / "RECORD").write_text("")
    egg = site / "old-1.0.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: old\nVersion: 1.0\n")
    snap = collect_snapshot(python=str(py))
    assert snap.packages["regex"].wheel_tags == ["cp311-cp311-manylinux_2_17_aarch64", "cp311-cp311-manylinux2014_aarch64"]
    assert "wheel_tags" not in snap.to_dict()["packages"]["old"]
    rep = diagnose([(None, snap, None)], only=["wheel-tags"], local=True)
    (f,) = rep.findings
    if snap.host.arch == "aarch64":  # pragma: no cover - this machine is x86_64
        pytest.skip("the wheel fits an aarch64 host")
    assert f.id == "wheel-not-for-this-platform" and f.evidence["wheel_tags"][0].endswith("_aarch64")
    assert f.fix is not None and f.fix.commands == (f"{py} -m ensurepip",
                                                    f"{py} -m pip install --force-reinstall --no-deps 'regex==2024.11.6'")
