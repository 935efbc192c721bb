"""installers.download: which constraints a failed `pip download` round gives up, on pip's own words."""

from __future__ import annotations

import pytest

from doctor.installers.download import constraints_to_drop

# pip 26's output for the MindSpeed step of `install --download-only` (verl-0.10.0.dev20260822-cann9.1.0-a2, the
# realworld run's download.log): the constraint scipy==1.17.1 from an earlier step needs a numpy MindSpeed forbids.
PIP_CONFLICT = """\
INFO: pip is looking at multiple versions of scipy to determine which version is compatible with other requirements.

The conflict is caused by:
    mindspeed 0.16.0 depends on numpy<=1.26.0
    transformers 5.24.0 depends on numpy>=1.17
    scipy 1.17.1 depends on numpy<2.7 and >=1.26.4

Additionally, some packages in these conflicts have no matching distributions available for your environment:
    numpy
ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""
CONS = {"scipy": "1.17.1", "transformers": "5.10.4", "torch": "2.10.0+cpu", "aiohttp": "3.13.5", "numpy": "1.26.4"}


def test_the_constraints_pip_blames_go_and_no_others() -> None:
    # scipy is constrained at the version pip names; transformers is constrained at another one (5.10.4, not 5.24.0)
    assert constraints_to_drop(PIP_CONFLICT, CONS, {"torch"}, last=False) == {"scipy"}


def test_requested_constraint_lines_are_read_too() -> None:
    out = "ERROR: Cannot install x\n    The user requested (constraint) aiohttp==3.13.5\n"
    assert constraints_to_drop(out, CONS, set(), last=False) == {"aiohttp"}


def test_a_held_pin_pip_names_goes_for_that_step() -> None:
    """vllm-ascend 0.13 requires torch-npu==2.8.0.post2 beside the profile's 2.8.0 (the final pins restore it)."""
    out = ("The conflict is caused by:\n    vllm-ascend 0.13.1.dev14 depends on torch-npu==2.8.0.post2\n"
           "    The user requested (constraint) torch-npu==2.8.0\n")
    assert constraints_to_drop(out, {"torch-npu": "2.8.0", "torch": "2.8.0"}, {"torch", "torch-npu"}, last=False) == {"torch-npu"}


def test_when_nothing_is_named_all_go_but_the_profiles_torch_pins() -> None:
    """The fallback round that once let the MindSpeed step fetch torch 2.15.0 with its CUDA 13 libraries."""
    assert constraints_to_drop("ERROR: something else\n", CONS, {"torch"}, last=False) == set(CONS) - {"torch"}
    assert constraints_to_drop(PIP_CONFLICT, CONS, {"torch"}, last=True) == set(CONS) - {"torch"}
    assert constraints_to_drop("x", {"torch": "2.10.0+cpu"}, {"torch"}, last=True) == set()


def test_the_held_pins_are_the_profiles_torch_stack(profile, tmp_path) -> None:
    import io
    from types import SimpleNamespace

    from doctor.installers.download import Downloader
    from doctor.installers.resolve import resolve
    from tests.installers.test_resolve import facts

    p = profile("verl-0.9.0-cann9.0.0-a3")
    plan = resolve(p, facts(p, "x86_64"), src_dir="/s")
    d = Downloader(SimpleNamespace(index_url=None, extra_index_urls=()), plan, tmp_path, io.StringIO())
    assert {"torch", "torch-npu", "torchvision"} <= d.held <= {"torch", "torch-npu", "torchvision", "torchaudio"}


def test_build_requirements_come_from_the_torch_stacks_index(profile, tmp_path) -> None:
    """On x86 a build-time torch pin must be a CPU wheel (PyPI's is CUDA and brings ~3 GB of nvidia-* wheels)."""
    import io
    from types import SimpleNamespace

    from doctor.installers.download import Downloader
    from doctor.installers.resolve import resolve
    from doctor.knowledge.profiles import PYTORCH_CPU_INDEX
    from tests.installers.test_resolve import facts

    p = profile("verl-0.9.0-cann9.0.0-a3")
    x86 = Downloader(SimpleNamespace(index_url=None, extra_index_urls=()), resolve(p, facts(p, "x86_64"), src_dir="/s"),
                     tmp_path, io.StringIO())
    assert PYTORCH_CPU_INDEX in (x86.build_index.index_url, *x86.build_index.extra_index_urls)
    arm = Downloader(SimpleNamespace(index_url=None, extra_index_urls=()), resolve(p, facts(p, "aarch64"), src_dir="/s"),
                     tmp_path, io.StringIO())
    assert PYTORCH_CPU_INDEX not in (arm.build_index.index_url, *arm.build_index.extra_index_urls)


def test_wheelhouse_file_names_are_read_as_packaging_reads_them() -> None:
    """The names a real wheelhouse holds (the realworld run's): a hyphenated sdist name was once not read at all,
    so that package was never constrained for the later steps."""
    from doctor.installers.download import dist_of

    assert dist_of("arctic-inference-0.1.1.tar.gz") == ("arctic-inference", "0.1.1")
    assert dist_of("antlr4-python3-runtime-4.9.3.tar.gz") == ("antlr4-python3-runtime", "4.9.3")
    assert dist_of("TransferQueue-0.1.10.dev0.zip") == ("transferqueue", "0.1.10.dev0")
    assert dist_of("torch_npu-2.10.0.post4-cp311-cp311-manylinux_2_28_x86_64.whl") == ("torch-npu", "2.10.0.post4")
    assert dist_of("torch-2.10.0+cpu-py3-none-any.whl") == ("torch", "2.10.0+cpu")
    assert dist_of("manifest.json") is None


def test_a_step_gets_the_versions_the_online_install_moves_to(tmp_path, hermetic) -> None:
    """Issue 21, item 6 (the real 0.9.1 run): vLLM's step chose fastapi 0.165.0 + starlette 1.10.0; vllm-ascend's
    `fastapi<0.124.0` under the accumulated constraint starlette==1.10.0 made pip pick the ancient fastapi 0.1.17
    (it caps no starlette), blaming nothing. Online, pip takes fastapi 0.123.10 and moves starlette back to 0.50.0:
    the wheelhouse must hold those too, or the offline install differs."""
    import io
    import os
    import sys
    from types import SimpleNamespace

    from doctor.installers.download import Downloader
    from doctor.installers.plan import Plan, Target
    from tests.installers.wheelkit import make_simple_index, make_wheel

    wheels = tmp_path / "index-wheels"
    make_wheel(wheels, "starlette", "0.50.0")
    make_wheel(wheels, "starlette", "1.10.0")
    make_wheel(wheels, "fastapi", "0.165.0", requires=["starlette>=1.0"])
    make_wheel(wheels, "fastapi", "0.123.10", requires=["starlette<0.51,>=0.40"])
    make_wheel(wheels, "fastapi", "0.1.17", requires=["starlette"])
    index = make_simple_index(wheels, tmp_path / "simple")
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    plan = Plan("p", "", Target(None, py, os.uname().machine, None), ())
    d = Downloader(SimpleNamespace(index_url=index, extra_index_urls=(), git_mirrors=()), plan, tmp_path / "house",
                   io.StringIO())
    d.wheels.mkdir(parents=True)
    d.work.mkdir(parents=True)
    from doctor.installers.plan import IndexOptions

    d.fetch(["fastapi"], IndexOptions())  # the vLLM step
    d.fetch(["fastapi<0.124.0"], IndexOptions())  # vllm-ascend's requirements, under starlette==1.10.0
    got = sorted(p.name.split("-py3")[0] for p in d.wheels.iterdir())
    assert "fastapi-0.123.10" in got and "starlette-0.50.0" in got, got


def test_a_failed_download_says_what_pip_said_and_where_the_whole_output_is(tmp_path, hermetic) -> None:
    """On the connected host a step that cannot be downloaded (a package the mirror lacks) ended `--download-only`
    with only 'pip download failed for ... (see the log)': no reason, no log path. It now carries pip's error line
    and the log file's path."""
    import os
    import sys
    from types import SimpleNamespace

    import pytest

    from doctor.errors import InputError
    from doctor.installers.download import Downloader
    from doctor.installers.plan import IndexOptions, Plan, Target
    from tests.installers.wheelkit import make_simple_index, make_wheel

    make_wheel(tmp_path / "index-wheels", "starlette", "0.50.0")
    index = make_simple_index(tmp_path / "index-wheels", tmp_path / "simple")
    plan = Plan("p", "", Target(None, f"{sys.version_info[0]}.{sys.version_info[1]}", os.uname().machine, None), ())
    log_path = tmp_path / "house" / "download.log"
    log_path.parent.mkdir()
    with open(log_path, "a", encoding="utf-8") as log:
        d = Downloader(SimpleNamespace(index_url=index, extra_index_urls=(), git_mirrors=()), plan, tmp_path / "house",
                       log)
        d.wheels.mkdir(parents=True)
        d.work.mkdir(parents=True)
        with pytest.raises(InputError) as e:
            d.fetch(["transferqueue-missing==0.1.0"], IndexOptions())
    msg = str(e.value)
    assert "No matching distribution found for transferqueue-missing==0.1.0" in msg and str(log_path) in msg, msg


def test_the_printed_offline_install_carries_the_downloads_set_pins() -> None:
    """A wheelhouse made with --set holds that release, not the profile's: the offline install it prints must pin the
    same, or its last resolve stops offline after every clone and build (real trial, verl-0.8.0-cann9.0.0-a3 with
    --set xgrammar=0.1.32: "No matching distribution found for xgrammar==0.1.33", then the restore)."""
    from doctor.installers.download import install_command

    assert install_command("verl-0.8.0-cann9.0.0-a3", "/srv/house", ("xgrammar=0.1.32", "numpy=1.26.4")) == (
        "doctor install --profile verl-0.8.0-cann9.0.0-a3 --wheelhouse /srv/house --offline --set xgrammar=0.1.32 "
        "--set numpy=1.26.4 --venv DIR")
    assert install_command("p", "/my house", ()) == "doctor install --profile p --wheelhouse '/my house' --offline --venv DIR"


@pytest.mark.parametrize("earlier", [False, True], ids=["new-folder", "earlier-wheelhouse"])
def test_a_failed_download_names_the_unfinished_wheelhouse_and_keeps_it(earlier, tmp_path, hermetic) -> None:
    """`--download-only` stops at a step the index cannot serve after an earlier step's wheel was downloaded: the
    failure names the folder, what is in it, that `--offline` refuses it, and that a re-run or deleting it are both
    safe; the wheel stays (a re-run reuses it) and no manifest lists it."""
    import io
    import os
    import sys
    from types import SimpleNamespace

    from doctor.console import Console
    from doctor.errors import InputError
    from doctor.installers import wheelhouse as wh
    from doctor.installers.download import download
    from doctor.installers.plan import INSTALL, Plan, Step, Target
    from doctor.report import Report
    from tests.installers.wheelkit import make_simple_index, make_wheel

    make_wheel(tmp_path / "index-wheels", "starlette", "0.50.0")
    index = make_simple_index(tmp_path / "index-wheels", tmp_path / "simple")
    plan = Plan("p", "", Target(None, f"{sys.version_info[0]}.{sys.version_info[1]}", os.uname().machine, None),
                (Step("web", INSTALL, "starlette", requirements=("starlette==0.50.0",), no_deps=True),
                 Step("tq", INSTALL, "transferqueue", requirements=("transferqueue-missing==0.1.0",), no_deps=True)))
    house = tmp_path / "house"
    if earlier:
        house.mkdir()
        wh.write(house, wh.Manifest(profile="p", target={}))
        before = (house / wh.MANIFEST).read_text()
    o = SimpleNamespace(download_only=str(house), log=None, sets=(), index_url=index, extra_index_urls=(),
                        git_mirrors=())
    with pytest.raises(InputError) as e:
        download(o, plan, Report(command="install"), Console(err=io.StringIO()))
    msg = str(e.value)
    assert "No matching distribution found for transferqueue-missing==0.1.0" in msg, msg
    assert (f"The wheelhouse {house} is left as it is, unfinished: 1 wheel(s)/sdist(s) and 0 git bundle(s)" in msg
            and f"the log {house / 'download.log'}" in msg), msg
    assert ("its manifest.json is an earlier download's" if earlier else "it has no manifest.json") in msg, msg
    assert f"or delete {house}: nothing outside it was changed" in msg, msg
    assert sorted(p.name for p in (house / wh.WHEELS).iterdir()) == ["starlette-0.50.0-py3-none-any.whl"]
    assert (house / wh.MANIFEST).read_text() == before if earlier else not (house / wh.MANIFEST).exists()
    assert not (house / ".work").exists()


def test_the_plan_resolution_line_carries_no_index_credentials(tmp_path, hermetic) -> None:
    """`--download-only --index-url https://u:TOKEN@…` printed the one resolution of the whole plan (its `$ pip install
    --dry-run --report` line, in the output and download.log) with the token in it; every other line redacted it."""
    import io
    import os
    import sys
    from types import SimpleNamespace

    from doctor.installers.download import Downloader
    from doctor.installers.plan import Plan, Target
    from tests.installers.wheelkit import make_simple_index, make_wheel

    wheels = tmp_path / "index-wheels"
    make_wheel(wheels, "tinyx", "1.0")
    index = make_simple_index(wheels, tmp_path / "simple")
    token_url = "https://u:pwTOKEN1@127.0.0.1:9/simple"
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    plan = Plan("p", "", Target(None, py, os.uname().machine, None), ())
    out = io.StringIO()
    d = Downloader(SimpleNamespace(index_url=token_url, extra_index_urls=(index,), git_mirrors=()), plan,
                   tmp_path / "house", out)
    d.wheels.mkdir(parents=True)
    d.work.mkdir(parents=True)
    d.resolve_plan([["tinyx"]])
    said = out.getvalue()
    assert "--dry-run" in said and "https://<redacted>@127.0.0.1:9/simple" in said, said
    assert "pwTOKEN1" not in said


def test_each_git_sources_build_requirements_are_fetched_on_their_own(profile, tmp_path) -> None:
    """Each source builds in its own isolated environment: vLLM v0.13.0's pyproject asks torch == 2.9.0 and
    vllm-ascend's releases/v0.13.0 torch==2.8.0, and the real-world tier's --download-only of
    verl-0.7.1-cann8.5.0-a2 failed when one pip download got their union (ResolutionImpossible)."""
    import io
    from types import SimpleNamespace

    from doctor.installers.download import Downloader
    from doctor.installers.plan import EDITABLE
    from doctor.installers.resolve import resolve
    from tests.installers.test_resolve import facts

    p = profile("verl-0.7.1-cann8.5.0-a2")
    d = Downloader(SimpleNamespace(index_url=None, extra_index_urls=()), resolve(p, facts(p, "x86_64"), src_dir="/s"),
                   tmp_path, io.StringIO())
    torch = {"vllm": "torch == 2.9.0", "vllm-ascend": "torch==2.8.0"}
    for s in d.plan.steps:
        if s.kind == EDITABLE and s.source is not None and s.source.name in torch:
            (d.work / s.source.name).mkdir(parents=True, exist_ok=True)
            (d.work / s.source.name / "pyproject.toml").write_text(
                f'[build-system]\nrequires = ["setuptools", "{torch[s.source.name]}"]\n')
    got = d.build_requires_of_sources()
    assert ["setuptools", "torch == 2.9.0"] in got and ["setuptools", "torch==2.8.0"] in got
    assert not [reqs for reqs in got if "torch == 2.9.0" in reqs and "torch==2.8.0" in reqs]
