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
from packaging.tags import Tag, parse_tag, sys_tags

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
