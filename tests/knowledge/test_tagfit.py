"""knowledge.tagfit: the one judge of wheel tags, for doctor check's release table and for install's --set fit.

Real inputs: the wheel tag triples profiles/requirements/ records (PyPI's files), and this host's own
`packaging.tags.sys_tags()` (what pip installs here) where the host is a CPython on glibc Linux."""

from __future__ import annotations

import glob
import json
import platform
import sys
from pathlib import Path

import pytest
from packaging.tags import Tag, compatible_tags, cpython_tags, parse_tag, sys_tags

from doctor.knowledge import tagfit
from doctor.knowledge.requirements import SDIST, declared

ROOT = Path(__file__).resolve().parents[2]


def _triples() -> set[str]:
    out: set[str] = set()
    for p in glob.glob(str(ROOT / "profiles" / "requirements" / "*.json")):
        if not p.endswith("index.json"):
            for e in json.loads(Path(p).read_text(encoding="utf-8"))["releases"].values():
                out.update(f for f in e.get("files", []) if f != SDIST)
    return out


_LIBC = platform.libc_ver()


@pytest.mark.skipif(sys.implementation.name != "cpython" or _LIBC[0] != "glibc" or not sys.platform.startswith("linux")
                    or bool(getattr(sys, "_is_gil_enabled", lambda: True)() is False),
                    reason="needs a default CPython build on glibc Linux: its sys_tags are the reference")
def test_every_published_wheel_is_judged_for_this_host_as_pip_here_supports_it() -> None:
    """Every wheel tag triple of the release table (883 distinct ones when written) against this interpreter: the
    judge says it fits exactly when one of its tags is in packaging's sys_tags() for this host, which is what pip
    installs. The release table's judge held musllinux wheels to fit a glibc host (11 triples, e.g.
    cp311-cp311-musllinux_1_1_x86_64)."""
    host = set(sys_tags())
    python, arch, glibc = f"{sys.version_info[0]}.{sys.version_info[1]}", platform.machine(), _LIBC[1]
    triples = _triples()
    assert len(triples) > 500
    wrong = sorted(t for t in triples if tagfit.fits(parse_tag(t), python, arch, glibc) != bool(parse_tag(t) & host))
    assert wrong == []


def test_a_musllinux_only_wheel_is_not_installable_on_a_glibc_host() -> None:
    """orjson 3.9.3 (PyPI's files, read from https://pypi.org/pypi/orjson/json 2026-12-07): for CPython 3.12 its
    only aarch64 wheel is orjson-3.9.3-cp312-cp312-musllinux_1_1_aarch64.whl, beside an sdist. pip on an aarch64
    glibc host finds no wheel of it (`pip download --only-binary=:all: --platform manylinux2014_aarch64
    --python-version 3.12 orjson==3.9.3`: "No matching distribution found") and builds orjson-3.9.3.tar.gz. The
    release table's judge said "wheel"; the install side's judge (wheelfit) did not count it."""
    d = declared("orjson", "3.9.3")
    assert d is not None and "cp312-cp312-musllinux_1_1_aarch64" in d.files and SDIST in d.files
    assert d.installable("3.12", "aarch64") == "sdist"
    assert d.wheel_files("3.12", "aarch64") == ()
    assert d.installable("3.12", "x86_64") == "wheel"  # cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64
    assert d.installable("3.11", "aarch64") == "wheel"
    wheel = tagfit.wheel_tags("orjson-3.9.3-cp312-cp312-musllinux_1_1_aarch64.whl")
    assert wheel is not None and not tagfit.fits(wheel, None, None, None)  # glibc hosts only, whatever is unknown
    # what a musllinux wheel's METADATA declares still speaks for a glibc host of its Python and machine (one source,
    # two builds): numpy 1.26.4's row, which the stacks pin, was read from numpy-1.26.4-cp310-cp310-musllinux_1_1_aarch64
    assert tagfit.fits(wheel, "3.12", "aarch64", "2.35", any_libc=True) and d.fits("3.12", "aarch64")
    numpy = declared("numpy", "1.26.4")
    assert numpy is not None and numpy.wheel is not None and "musllinux" in numpy.wheel
    assert numpy.fits("3.11", "x86_64") and numpy.fits(None, None) and numpy.installable("3.11", "x86_64") == "wheel"


def _tags(triple: str) -> frozenset[Tag]:
    return parse_tag(triple)


@pytest.mark.parametrize(("triple", "python", "arch", "glibc", "fits"), [
    # unknown facts are not held against a tag
    ("cp310-cp310-manylinux_2_28_aarch64", None, None, None, True),
    ("cp310-cp310-manylinux_2_28_aarch64", "3.10.12", None, "2.27", False),
    ("cp310-cp310-manylinux_2_28_aarch64", "3.10", "aarch64", None, True),
    ("cp310-cp310-manylinux_2_28_aarch64", None, "x86_64", None, False),
    ("cp310-cp310-manylinux_2_28_aarch64", "3.11", None, None, False),
    ("pp310-pypy310_pp73-manylinux_2_17_x86_64", None, None, None, False),
    # PEP 600 levels and their legacy names, per machine as packaging lists them
    ("cp311-cp311-manylinux2014_aarch64", "3.11", "aarch64", "2.17", True),
    ("cp311-cp311-manylinux2010_x86_64", "3.11", "x86_64", "2.12", True),
    ("cp311-cp311-manylinux2010_aarch64", "3.11", "aarch64", "2.35", False),
    ("cp311-cp311-manylinux_2_12_x86_64", "3.11", "x86_64", "2.17", True),
    ("cp311-cp311-linux_aarch64", "3.11.7", "aarch64", "2.35", True),
    ("cp311-cp311-musllinux_1_2_x86_64", "3.11", "x86_64", "2.35", False),
    # the interpreter and ABI as CPython's default build supports them
    ("cp38-abi3-manylinux_2_17_x86_64", "3.11", "x86_64", None, True),
    ("cp312-abi3-manylinux_2_17_x86_64", "3.11", "x86_64", None, False),
    ("py3-none-any", "3.9", "aarch64", "2.17", True),
    ("cp311-none-any", "3.11", None, None, True),
    ("cp310-none-any", "3.11", None, None, False),
    ("cp37-cp37m-manylinux1_x86_64", "3.7", "x86_64", None, True),
    ("cp313-cp313t-manylinux_2_28_x86_64", "3.13", "x86_64", None, False),
])
def test_partial_facts(triple, python, arch, glibc, fits) -> None:
    assert tagfit.fits(_tags(triple), python, arch, glibc) is fits


def test_manylinux_levels_and_wheel_names() -> None:
    assert tagfit.manylinux_level("manylinux_2_28_aarch64") == ((2, 28), "aarch64")
    assert tagfit.manylinux_level("manylinux2014_x86_64") == ((2, 17), "x86_64")
    assert tagfit.manylinux_level("musllinux_1_2_x86_64") is None and tagfit.manylinux_level("any") is None
    assert tagfit.wheel_tags("numpy-1.21.6.zip") is None and tagfit.wheel_tags(None) is None


def packaging_platforms(monkeypatch: pytest.MonkeyPatch, arch: str, libc: str, version: tuple[int, int]) -> list[str]:
    """The Linux platforms packaging's `_linux_platforms` lists on a host of `arch` whose C library is `libc` at
    `version`: its own generators, with the C library they read from the running host replaced."""
    from packaging import _manylinux, _musllinux

    glibc = _manylinux._GLibCVersion(*version) if libc == "glibc" else _manylinux._GLibCVersion(-1, -1)
    monkeypatch.setattr(_manylinux, "_get_glibc_version", lambda: glibc)
    monkeypatch.setattr(_manylinux, "_is_linux_i686", lambda _exe: True)  # the host's interpreter is a 32-bit build
    monkeypatch.setattr(_musllinux, "_get_musl_version",
                        lambda _exe: _musllinux._MuslVersion(*version) if libc == "musl" else None)
    try:
        return [f"linux_{arch}", *_manylinux.platform_tags([arch]), *_musllinux.platform_tags([arch])]
    finally:
        monkeypatch.undo()


HOSTS = [("x86_64", "glibc", (2, 12)), ("x86_64", "glibc", (2, 17)), ("x86_64", "glibc", (2, 28)),
         ("x86_64", "glibc", (2, 35)), ("aarch64", "glibc", (2, 17)), ("aarch64", "glibc", (2, 28)),
         ("aarch64", "glibc", (2, 31)), ("aarch64", "glibc", (2, 35)), ("i686", "glibc", (2, 17)),
         ("x86_64", "musl", (1, 1)), ("aarch64", "musl", (1, 2))]


@pytest.mark.parametrize(("arch", "libc", "version"), HOSTS)
def test_the_platforms_of_a_host_are_packagings(monkeypatch, arch, libc, version) -> None:
    """The platform list for another machine's facts is the one packaging builds on that machine (for glibc 2.35 on
    x86_64: linux_x86_64, manylinux_2_35 … manylinux_2_5 with manylinux2014 / 2010 / 1 after 2_17 / 2_12 / 2_5)."""
    assert list(tagfit.platform_tags(arch, libc, version)) == packaging_platforms(monkeypatch, arch, libc, version)


# real file names, from https://pypi.org/pypi/<project>/json (read 2026-12-07)
REAL_WHEELS = [
    "torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64.whl", "torch-2.8.0-cp313-cp313t-manylinux_2_28_x86_64.whl",
    "torch-2.8.0-cp311-cp311-manylinux_2_28_aarch64.whl", "torch_npu-2.8.0.post2-cp311-cp311-manylinux_2_28_aarch64.whl",
    "vllm-0.20.0-cp38-abi3-manylinux_2_35_aarch64.whl", "vllm-0.12.0-cp38-abi3-manylinux_2_31_aarch64.whl",
    "vllm_ascend-0.13.0rc3-cp310-cp310-manylinux_2_34_aarch64.whl", "vllm_ascend-0.9.0rc1-cp39-cp39-manylinux1_x86_64.whl",
    "numpy-1.19.5-cp39-cp39-manylinux2010_x86_64.whl", "numpy-2.3.3-cp312-cp312-musllinux_1_2_aarch64.whl",
    "numpy-2.3.3-cp313-cp313t-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", "ray-2.49.2-cp311-cp311-manylinux2014_aarch64.whl",
    "triton_ascend-3.2.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
    "numpy-2.3.3-pp311-pypy311_pp73-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
]


@pytest.mark.parametrize(("arch", "libc", "version"), HOSTS)
@pytest.mark.parametrize(("python", "free_threaded"), [((3, 9), False), ((3, 10), False), ((3, 11), False),
                                                       ((3, 12), False), ((3, 13), False), ((3, 13), True)])
def test_real_wheels_fit_a_host_as_pip_lists_its_tags(monkeypatch, arch, libc, version, python, free_threaded) -> None:
    """Each real wheel fits a host exactly when one of its tags is among those pip supports there: packaging's
    `cpython_tags` / `compatible_tags` for the host's Python and ABI over its platforms, which is what `pip install
    --platform … --python-version … --abi …` asks for (checked against pip 26.3's dry runs for 121 release × host
    pairs when written)."""
    abi = f"cp{python[0]}{python[1]}" + ("t" if free_threaded else "")
    plats = packaging_platforms(monkeypatch, arch, libc, version)
    pip = {*cpython_tags(python, [abi], plats), *compatible_tags(python, abi.rstrip("t"), plats)}
    host = tagfit.Host(python, arch, libc, version, free_threaded)
    for wheel in REAL_WHEELS:
        tags = tagfit.wheel_tags(wheel)
        assert tags is not None
        assert any(tagfit.supports(host, t) for t in tags) is bool(tags & pip), wheel


def test_hosts_pip_was_asked_about() -> None:
    """What pip 26.3 answered (`pip install --dry-run --only-binary=:all: --platform <each platform of the host>
    --python-version X.Y --implementation cp --abi cpXY[t] P==V`, 2026-12-07)."""
    def fits(wheel: str, *host) -> bool:
        return any(tagfit.supports(tagfit.Host(*host), t) for t in tagfit.wheel_tags(wheel) or ())

    arm31, arm35 = ((3, 10), "aarch64", tagfit.GLIBC, (2, 31)), ((3, 10), "aarch64", tagfit.GLIBC, (2, 35))
    # vllm-ascend 0.13.0rc3's aarch64 wheel is manylinux_2_34: pip took it on glibc 2.35, found none on 2.31
    assert fits("vllm_ascend-0.13.0rc3-cp310-cp310-manylinux_2_34_aarch64.whl", *arm35)
    assert not fits("vllm_ascend-0.13.0rc3-cp310-cp310-manylinux_2_34_aarch64.whl", *arm31)
    # a manylinux1 / manylinux2010-only wheel on a glibc 2.35 x86_64 host (pip took them)
    x86 = ((3, 9), "x86_64", tagfit.GLIBC, (2, 35))
    assert fits("vllm_ascend-0.9.0rc1-cp39-cp39-manylinux1_x86_64.whl", *x86)
    assert fits("numpy-1.19.5-cp39-cp39-manylinux2010_x86_64.whl", *x86)
    # musl 1.1 takes no musllinux_1_2 wheel (pip: no numpy 2.3.3 wheel for it), musl 1.2 does
    assert not fits("numpy-2.3.3-cp312-cp312-musllinux_1_2_aarch64.whl", (3, 12), "aarch64", tagfit.MUSL, (1, 1))
    assert fits("numpy-2.3.3-cp312-cp312-musllinux_1_2_aarch64.whl", (3, 12), "aarch64", tagfit.MUSL, (1, 2))
    # python3.13t takes torch's cp313t wheel and not its cp313 one; the default build the other way round
    ft = ((3, 13), "x86_64", tagfit.GLIBC, (2, 35), True)
    assert fits("torch-2.8.0-cp313-cp313t-manylinux_2_28_x86_64.whl", *ft)
    assert not fits("torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64.whl", *ft)
    assert not fits("torch-2.8.0-cp313-cp313t-manylinux_2_28_x86_64.whl", *ft[:4])
    # a free-threaded build takes no abi3 wheel; not knowing which build it is, either's wheels fit
    assert not fits("vllm-0.20.0-cp38-abi3-manylinux_2_35_aarch64.whl", (3, 13), "aarch64", tagfit.GLIBC, (2, 35), True)
    assert fits("torch-2.8.0-cp313-cp313t-manylinux_2_28_x86_64.whl", *ft[:4], None)
    assert fits("torch-2.8.0-cp313-cp313-manylinux_2_28_x86_64.whl", *ft[:4], None)


def test_a_release_whose_only_glibc_2_17_wheel_is_free_threaded_is_built_from_its_sdist() -> None:
    """llguidance 1.6.1 (profiles/requirements/, PyPI's files): cp39-abi3-manylinux_2_28_x86_64,
    cp314-cp314t-manylinux_2_17_x86_64.manylinux2014_x86_64 (and aarch64 peers), an sdist. On glibc 2.17 the
    default build of every CPython 3.9 to 3.14 finds no wheel (pip 26.3, `--abi cpXY`: "No matching distribution
    found"; with `--abi cp314t` it takes the cp314t wheel); with the Python unknown the judge counted the cp314t
    wheel for it."""
    d = declared("llguidance", "1.6.1")
    assert d is not None and SDIST in d.files
    assert d.installable(None, "x86_64", "2.17") == "sdist"
    assert d.installable("3.14", "x86_64", "2.17") == "sdist"
    assert d.installable(None, "x86_64", "2.28") == "wheel"
    assert not any("cp314t" in f for f in d.wheel_files(None, "x86_64"))
