"""tools/refresh_knowledge/import_surface.py on real git repositories made here (two callee tags, two caller tags):
it reads what a caller imports at load, not what it imports only under a guard or in a function, and which callee
release lacks each name; the table it writes loads, and the check judges a snapshot against it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.test_refresh_knowledge import Repo
from tools.refresh_knowledge import import_surface as gen

UTILS_1 = "def keep():\n    pass\n\n\ndef old():\n    pass\n"
UTILS_2 = "from .helpers import *\n\n\ndef keep():\n    pass\n\n\nif True:\n    new = 1\n"
HELPERS = "__all__ = ['starred']\nstarred = 2\n_private = 3\n"
LAZY = "def __getattr__(name):\n    raise AttributeError(name)\n"

BRIDGE_INIT = ("from contextlib import suppress\nfrom br import util\nfrom .models import llm\n"
               "with suppress(ImportError):\n    from .optional import x\n")
UTIL_1 = "from megatron.core.utils import keep, old\nimport megatron.core.gone\n"
UTIL_2 = """import typing
from megatron.core.utils import keep, new, starred
from megatron.core import fsdp
from megatron.core.lazy import anything
try:
    from megatron.core.utils import fancy
except ImportError:
    fancy = None
if typing.TYPE_CHECKING:
    from megatron.core.typing_only import T


def f():
    from megatron.core.utils import inner
"""
LLM = "from megatron.core.models import GPT\n"
OPTIONAL = "from megatron.core.utils import only_if_present\n"
UNUSED = "from megatron.core.utils import never_loaded\n"


@pytest.fixture()
def repos(tmp_path: Path) -> dict[str, Repo]:
    mc = Repo(tmp_path / "Megatron-LM")
    mc.commit({"megatron/core/__init__.py": "", "megatron/core/utils.py": UTILS_1, "megatron/core/gone.py": "",
               "megatron/core/models/__init__.py": "GPT = 1\n"}, tag="core_v0.1.0")
    mc.git("rm", "-q", "megatron/core/gone.py")
    mc.commit({"megatron/core/utils.py": UTILS_2, "megatron/core/helpers.py": HELPERS,
               "megatron/core/fsdp/x.py": "", "megatron/core/lazy.py": LAZY}, tag="core_v0.2.0")
    br = Repo(tmp_path / "br")
    br.commit({"br/__init__.py": BRIDGE_INIT, "br/util.py": UTIL_1, "br/models/__init__.py": "",
               "br/models/llm.py": LLM, "br/unused.py": UNUSED, "br/optional.py": OPTIONAL}, tag="v1.0")
    br.commit({"br/util.py": UTIL_2}, tag="v2.0")
    return {"mc": mc, "br": br}


def _read(repos: dict[str, Repo]) -> dict[str, object]:
    gits = {"megatron-core": gen.Git(str(repos["mc"].path)), "br": gen.Git(str(repos["br"].path))}
    callee = gen.Project("megatron-core", "Megatron-LM", "megatron/core", "https://github.com/NVIDIA/Megatron-LM")
    caller = gen.Project("br", "br", "br", "https://github.com/x/br", ("br",))
    releases = {"megatron-core": gen.tag_releases(gits["megatron-core"], r"core_v(\d+\.\d+\.\d+)"),
                "br": gen.tag_releases(gits["br"], r"v(\d+\.\d+)")}
    try:
        return gen.read(gits, releases, (caller,), (callee,), date="2026-12-04")
    finally:
        for g in gits.values():
            g.close()


def _load(data: dict[str, object], directory: Path):  # noqa: ANN202
    """The table `data` written as the tool writes it (index.json and a file per release and callee), loaded."""
    from doctor.knowledge.import_surface import load

    gen.write(data, str(directory))
    return load(str(directory / "index.json"))


def test_the_imports_a_caller_makes_at_load_and_the_callee_releases_that_lack_them(repos):
    t = _read(repos)
    br = t["callers"]["br"]["releases"]  # type: ignore[index]
    assert [r["version"] for r in br] == ["1.0", "2.0"] and br[0]["entries"] == ["br"]
    assert br[0]["imports"]["megatron-core"] == {
        "megatron.core.gone:": "br/util.py:2", "megatron.core.models:GPT": "br/models/llm.py:1",
        "megatron.core.utils:keep": "br/util.py:1", "megatron.core.utils:old": "br/util.py:1"}
    # guarded (try/except ImportError, if TYPE_CHECKING, with suppress(ImportError)), in a function, or in a module
    # nothing imports at load: not
    # an import that must succeed
    assert set(br[1]["imports"]["megatron-core"]) == {
        "megatron.core.models:GPT", "megatron.core.utils:keep", "megatron.core.utils:new",
        "megatron.core.utils:starred", "megatron.core:fsdp", "megatron.core.lazy:anything"}
    mc = t["callees"]["megatron-core"]  # type: ignore[index]
    assert [(r["version"], r["ref"]) for r in mc["releases"]] == [("0.1.0", "core_v0.1.0"), ("0.2.0", "core_v0.2.0")]
    names = mc["names"]
    assert names["megatron.core.utils:old"] == {"missing": ["0.2.0"], "unknown": []}
    # the module itself is gone
    assert names["megatron.core.gone:"] == {"missing": ["0.2.0"], "unknown": [], "no_module": ["0.2.0"]}
    assert names["megatron.core.utils:new"] == {"missing": ["0.1.0"], "unknown": []}  # bound under `if`: defined
    assert names["megatron.core.utils:starred"] == {"missing": ["0.1.0"], "unknown": []}  # via `from .helpers import *`
    assert names["megatron.core:fsdp"] == {"missing": ["0.1.0"], "unknown": []}  # a namespace-package submodule
    # a module-level __getattr__ may define anything: unknown, never missing; a module not there is missing
    assert names["megatron.core.lazy:anything"] == {"missing": ["0.1.0"], "unknown": ["0.2.0"], "no_module": ["0.1.0"]}
    assert names["megatron.core.models:GPT"] == {"missing": [], "unknown": []}
    assert not any(k.endswith((":fancy", ":T", ":inner", ":never_loaded", ":only_if_present")) for k in names)


def test_a_module_getattr_makes_a_name_unknown(repos):
    repos["mc"].commit({"megatron/core/utils.py": UTILS_2 + LAZY}, tag="core_v0.3.0")
    names = _read(repos)["callees"]["megatron-core"]["names"]  # type: ignore[index]
    assert names["megatron.core.utils:old"] == {"missing": ["0.2.0"], "unknown": ["0.3.0"]}
    assert names["megatron.core.lazy:anything"] == {"missing": ["0.1.0"], "unknown": ["0.2.0", "0.3.0"],
                                                    "no_module": ["0.1.0"]}


def test_the_written_table_loads_and_the_check_judges_only_releases_read(repos, tmp_path):
    from doctor.knowledge.import_surface import unmet

    t = _load(_read(repos), tmp_path / "import-surface")
    u = unmet(t, "br", "megatron-core", caller_version="2.0", callee_version="0.1.0")
    assert u is not None and [(m, n) for m, n, _ in u.names] == [
        ("megatron.core.lazy", "anything"), ("megatron.core.utils", "new"), ("megatron.core.utils", "starred"),
        ("megatron.core", "fsdp")]
    assert u.fixed_in == () and u.cited.ref == "v2.0"  # 0.2.0 may lack `anything` (its lazy __getattr__)
    u = unmet(t, "br", "megatron-core", caller_version="1.0", callee_version="0.2.0")
    assert u is not None and [(m, n, w) for m, n, w in u.names] == [
        ("megatron.core.gone", "", "br/util.py:2"), ("megatron.core.utils", "old", "br/util.py:1")]
    assert u.no_module == {"megatron.core.gone"}
    assert unmet(t, "br", "megatron-core", caller_version="2.0", callee_version="0.2.0") is None
    # a release between or after the reads, on either side, is not judged
    assert unmet(t, "br", "megatron-core", caller_version="1.5", callee_version="0.1.0") is None
    assert unmet(t, "br", "megatron-core", caller_version="2.0", callee_version="0.1.5") is None
    # caller version unknown: only what every release read imports (GPT, keep): nothing is missing in either
    assert unmet(t, "br", "megatron-core", callee_version="0.1.0") is None


def test_a_project_both_a_caller_and_a_src_layout_callee_is_read_at_the_same_tags(tmp_path, repos, monkeypatch):
    """peft: a caller of megatron-core here (of transformers for real) and a callee of br (verl), one mirror, its
    package under src/: the callee's names are looked up in src/pf/, not reported missing as no module."""
    pf = Repo(tmp_path / "pf")
    pf.commit({"src/pf/__init__.py": "from .mapping import get_model\nfrom megatron.core.utils import keep\n",
               "src/pf/mapping.py": "def get_model():\n    pass\n"}, tag="v0.1.0")
    pf.commit({"src/pf/__init__.py": "from .mapping import Config, get_model\nfrom megatron.core.utils import keep\n",
               "src/pf/mapping.py": "Config = 1\n\n\ndef get_model():\n    pass\n"}, tag="v0.2.0")
    repos["br"].commit({"br/util.py": UTIL_2 + "from pf import Config, get_model\n"}, tag="v3.0")
    monkeypatch.setitem(gen.CALLEE_MODULES, "pf", "pf")
    gits = {"megatron-core": gen.Git(str(repos["mc"].path)), "br": gen.Git(str(repos["br"].path)),
            "pf": gen.Git(str(pf.path))}
    url = "https://github.com/x/pf"
    callers = (gen.Project("br", "br", "br", "https://github.com/x/br", ("br",)),
               gen.Project("pf", "pf", "src/pf", url, ("pf",), callees=("megatron-core",)))
    callees = (gen.Project("megatron-core", "Megatron-LM", "megatron/core", "https://github.com/NVIDIA/Megatron-LM"),
               gen.Project("pf", "pf", "src/pf", url))
    releases = {"megatron-core": gen.tag_releases(gits["megatron-core"], r"core_v(\d+\.\d+\.\d+)"),
                "br": gen.tag_releases(gits["br"], r"v(\d+\.\d+)"),
                "pf": gen.tag_releases(gits["pf"], r"v(\d+\.\d+\.\d+)")}
    try:
        t = gen.read(gits, releases, callers, callees, date="2026-12-06")
    finally:
        for g in gits.values():
            g.close()
    as_caller = t["callers"]["pf"]["releases"]  # type: ignore[index]
    assert [r["imports"] for r in as_caller] == [{"megatron-core": {"megatron.core.utils:keep": "src/pf/__init__.py:2"}}] * 2
    as_callee = t["callees"]["pf"]  # type: ignore[index]
    assert [r["commit"] for r in as_callee["releases"]] == [r["commit"] for r in as_caller]
    assert t["callers"]["br"]["releases"][2]["imports"]["pf"] == {  # type: ignore[index]
        "pf:Config": "br/util.py:15", "pf:get_model": "br/util.py:15"}
    assert as_callee["names"] == {"pf:Config": {"missing": ["0.1.0"], "unknown": []},
                                  "pf:get_model": {"missing": [], "unknown": []}}


def test_a_mirror_that_is_not_a_git_directory_exits_2(tmp_path, capsys):
    assert gen.main(["--mirrors", str(tmp_path), "--out", str(tmp_path / "out.json")]) == 2
    assert "not a git directory" in capsys.readouterr().err and not (tmp_path / "out.json").exists()


def test_a_branch_head_declaring_a_release_version_is_read_as_a_source_build(repos):
    br = repos["br"]
    br.commit({"pyproject.toml": 'version = "2.0"\n', "br/util.py": UTIL_2 + "from megatron.core.utils import later\n"})
    git = gen.Git(str(br.path))
    try:
        released = gen.tag_releases(git, r"v(\d+\.\d+)")
        head = gen.branch_head(git, "main", released)
        assert head is not None and (head.version, head.ref, head.source_build) == ("2.0", "main", True)
        assert gen.branch_head(git, "main", released[:1]) is None  # declares no version that was read
        assert gen.branch_head(git, "no-such-branch", released) is None
    finally:
        git.close()


def test_a_verl_commit_a_stack_pins_is_read_as_a_source_build_found_by_its_commit_only(tmp_path, repos):
    """verl main at the commit a stack pins (profiles/requirements-git.toml) reports a .devN version no release
    has: it is read beside the release tags as a source build, its file named by version and commit, and found by
    that commit; by its version alone it is not (another commit of main reports the same version)."""
    from doctor.knowledge.import_surface import imported_at_load

    verl = Repo(tmp_path / "verl")
    tagged = verl.commit({"verl/__init__.py": "import numpy\n"}, tag="v0.9.0")
    main = verl.commit({"verl/__init__.py": "import numpy\nimport uvicorn\n"})
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "requirements-git.toml").write_text(
        f'[[release]]\nproject = "verl"\ncommit = "{main}"\nref = "main"\nversion = "0.10.0.dev"\n\n'
        f'[[release]]\nproject = "verl"\ncommit = "{tagged}"\nref = "v0.9.0"\nversion = "0.9.0"\n')
    gits = {"verl": gen.Git(str(verl.path)), "megatron-core": gen.Git(str(repos["mc"].path))}
    try:
        rels = gen.default_releases(str(tmp_path), {"verl": gits["verl"]})["verl"]
        # the pin at the tag's commit is that release; the other one a source build of its normalised version
        assert [(r.version, r.ref, r.commit, r.source_build) for r in rels] == [
            ("0.9.0", "v0.9.0", tagged, False), ("0.10.0.dev0", "main", main, True)]
        caller = gen.Project("verl", "verl", "verl", "https://github.com/verl-project/verl", ("verl",), loads=())
        callee = gen.Project("megatron-core", "Megatron-LM", "megatron/core", "https://github.com/NVIDIA/Megatron-LM")
        data = gen.read(gits, {"verl": rels, "megatron-core": gen.tag_releases(
            gits["megatron-core"], r"core_v(\d+\.\d+\.\d+)")}, (caller,), (callee,), date="2026-12-06")
    finally:
        for g in gits.values():
            g.close()
    assert gen.release_files("verl", data["callers"]["verl"]["releases"]) == [  # type: ignore[index]
        "verl/0.9.0.json", f"verl/0.10.0.dev0-{main[:9]}.json"]
    _load(data, tmp_path / "import-surface")
    index = str(tmp_path / "import-surface" / "index.json")
    got = imported_at_load("verl", "0.10.0.dev0", index, commit=main)
    assert got is not None and got[0].where == f"main, commit {main[:9]}"
    assert got[1].modules == {"numpy": "verl/__init__.py:1", "uvicorn": "verl/__init__.py:2"}
    assert imported_at_load("verl", "0.10.0.dev0", index) is None
    assert imported_at_load("verl", "0.10.0.dev0", index, commit="0" * 40) is None
    # a commit the table did not read falls back to the release the version names
    assert imported_at_load("verl", "0.9.0", index, commit="0" * 40)[1].modules == {  # type: ignore[index]
        "numpy": "verl/__init__.py:1"}


LAZY_INIT = """from typing import TYPE_CHECKING
from .utils import define_import_structure
_import_structure = {"configuration_utils": ["PretrainedConfig"]}
if TYPE_CHECKING:
    from .configuration_utils import PretrainedConfig
    from .models import *
else:
    import sys
    sys.modules[__name__] = _LazyModule(__name__, define_import_structure(__file__))
"""
MODELS_INIT = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .gone_model import *\n    from .auto import *\n"


def _wheel(path: Path, version: str, files: dict[str, str]) -> str:
    import zipfile

    w = path / f"tf-{version}-py3-none-any.whl"
    with zipfile.ZipFile(w, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return str(w)


def test_a_callee_read_from_its_wheels_and_a_lazy_package_serves_the_all_of_its_files(tmp_path, repos):
    """transformers' packages are lazy: at run time they serve the `__all__` of the files under them
    (define_import_structure), and their TYPE_CHECKING star imports may name files that are gone."""
    base = {"tf/__init__.py": LAZY_INIT, "tf/utils.py": "def define_import_structure(p):\n    pass\n",
            "tf/configuration_utils.py": "class PretrainedConfig:\n    pass\n", "tf/models/__init__.py": MODELS_INIT,
            "tf/models/auto/__init__.py": "from .modeling_auto import *\n"}
    old = _wheel(tmp_path, "4.0", {**base, "tf/models/auto/modeling_auto.py":
                                   "__all__ = ['AutoModel', 'AutoModelForVision2Seq']\nAutoModel = AutoModelForVision2Seq = 1\n"})
    new = _wheel(tmp_path, "5.0", {**base, "tf/models/auto/modeling_auto.py": "__all__ = ['AutoModel']\nAutoModel = 1\n"})
    assert [v for v, _ in gen.wheel_releases(str(tmp_path), "tf")] == ["4.0", "5.0"]
    repos["br"].commit({"br/models/llm.py": "from tf import AutoModel, AutoModelForVision2Seq, PretrainedConfig\n"},
                       tag="v3.0")
    gits = {"br": gen.Git(str(repos["br"].path))}
    gen.CALLEE_MODULES["tf"] = "tf"
    try:
        callee = gen.Project("tf", "", "tf", "https://github.com/huggingface/transformers")
        caller = gen.Project("br", "br", "br", "https://github.com/x/br", ("br",))
        t = gen.read(gits, {"br": gen.tag_releases(gits["br"], r"v(\d+\.\d+)")}, (caller,), (callee,),
                     date="2026-12-04", wheels={"tf": gen.wheel_releases(str(tmp_path), "tf")})
    finally:
        del gen.CALLEE_MODULES["tf"]
        gits["br"].close()
    tf = t["callees"]["tf"]  # type: ignore[index]
    assert [(r["version"], r["ref"]) for r in tf["releases"]] == [("4.0", "tf-4.0-py3-none-any.whl"),
                                                                 ("5.0", "tf-5.0-py3-none-any.whl")]
    assert len(tf["releases"][0]["sha256"]) == 64 and old != new
    assert tf["names"] == {"tf:AutoModel": {"missing": [], "unknown": []},
                           "tf:AutoModelForVision2Seq": {"missing": ["5.0"], "unknown": []},
                           "tf:PretrainedConfig": {"missing": [], "unknown": []}}
    from doctor.knowledge.import_surface import unmet

    u = unmet(_load(t, tmp_path / "table"), "br", "tf", caller_version="3.0", callee_version="5.0")
    assert u is not None and [n[:2] for n in u.names] == [("tf", "AutoModelForVision2Seq")]
    assert u.source.endswith("https://github.com/huggingface/transformers/tree/v5.0")


def test_platform_wheels_and_a_caller_release_whose_tag_the_mirror_lacks_are_read_from_wheels(tmp_path, repos):
    """torchdata's wheels are per platform (its cp311 manylinux x86_64 one is read, a pure one first when both
    exist); a caller release whose tag the mirror lacks (verl 0.9.1) is read from its PyPI wheel, its package at the
    wheel's top even where the repository has src/ (peft), the file:line cited as in the repository."""
    import zipfile

    def wheel(name: str, files: dict[str, str]) -> None:
        with zipfile.ZipFile(tmp_path / name, "w") as z:
            for f, text in files.items():
                z.writestr(f, text)

    wheel("td-0.7.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", {"td/__init__.py": ""})
    wheel("td-0.7.1-cp310-cp310-manylinux_2_17_x86_64.whl", {"td/__init__.py": "", "td/stateful.py": ""})
    wheel("td-0.8.0-cp311-cp311-macosx_11_0_arm64.whl", {"td/__init__.py": "", "td/stateful.py": ""})
    wheel("td-0.8.0-cp311-cp311-manylinux1_x86_64.whl", {"td/__init__.py": "", "td/stateful.py": "Loader = 1\n"})
    wheel("td-0.9.0-py3-none-any.whl", {"td/__init__.py": "", "td/stateful.py": "Loader = 1\n"})
    wheel("td-0.9.0-cp311-cp311-manylinux1_x86_64.whl", {"td/__init__.py": ""})
    got = gen.wheel_releases(str(tmp_path), "td")
    assert [(v, Path(w.path).name) for v, w in got] == [
        ("0.7.1", "td-0.7.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
        ("0.8.0", "td-0.8.0-cp311-cp311-manylinux1_x86_64.whl"), ("0.9.0", "td-0.9.0-py3-none-any.whl")]
    # br's mirror has v1.0 and v2.0; its 3.0 wheel (src/br in the repository) imports td.stateful at load
    wheel("br-3.0-py3-none-any.whl", {"br/__init__.py": "from br.data import x\n",
                                      "br/data.py": "from td.stateful import Loader\nx = 1\n"})
    wheel("br-2.0-py3-none-any.whl", {"br/__init__.py": "from td.stateful import Loader\n"})
    gits = {"br": gen.Git(str(repos["br"].path))}
    gen.CALLEE_MODULES["td"] = "td"
    try:
        callee = gen.Project("td", "", "td", "https://github.com/pytorch/data", archive="wheel")
        caller = gen.Project("br", "br", "src/br", "https://github.com/x/br", ("br",))
        t = gen.read(gits, {"br": gen.tag_releases(gits["br"], r"v(\d+\.\d+)")}, (caller,), (callee,),
                     date="2026-12-05", wheels={"td": got},
                     caller_wheels={"br": gen.wheel_releases(str(tmp_path), "br")})
    finally:
        del gen.CALLEE_MODULES["td"]
        gits["br"].close()
    rels = t["callers"]["br"]["releases"]  # type: ignore[index]
    assert [(r["version"], r["ref"], r["commit"]) for r in rels][2:] == [("3.0", "br-3.0-py3-none-any.whl", "")]
    assert len(rels[2]["sha256"]) == 64 and rels[1]["commit"] and "sha256" not in rels[1]
    assert rels[2]["imports"] == {"td": {"td.stateful:Loader": "src/br/data.py:1"}}
    assert t["callees"]["td"]["names"] == {  # type: ignore[index]
        "td.stateful:Loader": {"missing": ["0.7.1"], "unknown": [], "no_module": ["0.7.1"]}}
    table = _load(t, tmp_path / "table")
    (rel,) = [r for r in table.callers["br"].releases if r.version == "3.0"]
    assert rel.commit == "" and len(rel.sha256) == 64 and rel.where == "PyPI's br-3.0-py3-none-any.whl"
    from doctor.knowledge.import_surface import unmet

    u = unmet(table, "br", "td", caller_version="3.0", callee_version="0.7.1")
    assert u is not None and u.names == (("td.stateful", "Loader", "src/br/data.py:1"),) and u.fixed_in == (
        "0.8.0", "0.9.0")
    assert u.source == "https://github.com/x/br/blob/v3.0/src/br/data.py#L1; https://github.com/pytorch/data/tree/v0.7.1"
    assert unmet(table, "br", "td", caller_version="3.0", callee_version="0.8.0") is None
    # the index names the wheel by its sha256, the release's file by an empty commit
    index = (tmp_path / "table" / "index.json").read_text()
    assert '"ref": "br-3.0-py3-none-any.whl",\n     "sha256": ' in index
    assert gen.read_layout(str(tmp_path / "table"))["callers"]["br"]["releases"][2]["sha256"] == rels[2]["sha256"]


def _sdist(path: Path, version: str, files: dict[str, str], name: str = "vl") -> str:
    import io
    import tarfile

    s = path / f"{name}-{version}.tar.gz"
    with tarfile.open(s, "w:gz") as tar:
        for name_, text in {"csrc/kernel.cu": "//", "setup.py": "", "tests/vl/t.py": "x = 1\n", **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{name_}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(s)


def test_a_callee_read_from_its_sdists_only_through_the_entries_that_load_it(tmp_path, repos):
    """vLLM is read from PyPI sdists (its *.py under the package, not csrc/ or tests/); a caller's imports of it are
    read from its further entries for that callee (verl's vLLM rollout) and, at a release whose default config
    matches, from a default entry (verl's async server once `mode: async` is the default)."""
    _sdist(tmp_path, "0.9.1", {"vl/__init__.py": "", "vl/utils.py": "def old():\n    pass\n"})
    _sdist(tmp_path, "0.11.0", {"vl/__init__.py": "", "vl/utils.py": "def new():\n    pass\n",
                                "vl/v1/engine/utils.py": "class Manager:\n    pass\n"})
    (tmp_path / "vl-0.10.tar.gz.part").write_text("")
    callee = gen.Project("vl", "", "vl", "https://github.com/vllm-project/vllm", archive="sdist")
    got = gen.sdist_releases(str(tmp_path), callee)
    assert [v for v, _ in got] == ["0.9.1", "0.11.0"]
    assert got[0][1].files("", "vl") == ["vl/__init__.py", "vl/utils.py"] and got[0][1].show("", "tests/vl/t.py") is None
    br = repos["br"]
    br.commit({"br/rollout/__init__.py": "from vl.utils import old\nfrom br.models.llm import GPT\n",
               "br/rollout/server.py": "from vl.v1.engine.utils import Manager\n", "config.yaml": "mode: sync\n"},
              tag="v3.0")
    br.commit({"config.yaml": "mode: async\n", "br/rollout/__init__.py": "from vl.utils import new\n"}, tag="v4.0")
    caller = gen.Project("br", "br", "br", "https://github.com/x/br", ("br",),
                         callee_entries=(("vl", ("br.rollout",)),),
                         default_entries=(("vl", "br.rollout.server", "config.yaml", r"(?m)^mode:\s*async\b"),))
    gits = {"br": gen.Git(str(br.path))}
    gen.CALLEE_MODULES["vl"] = "vl"
    try:
        t = gen.read(gits, {"br": gen.tag_releases(gits["br"], r"v(\d+\.\d+)")}, (caller,), (callee,),
                     date="2026-12-04", wheels={"vl": got})
    finally:
        del gen.CALLEE_MODULES["vl"]
        gits["br"].close()
    rels = {r["version"]: r for r in t["callers"]["br"]["releases"]}  # type: ignore[index]
    assert "callee_entries" not in rels["2.0"] and rels["2.0"]["imports"] == {}
    assert rels["3.0"]["callee_entries"] == {"vl": ["br", "br.rollout"]}
    assert rels["4.0"]["callee_entries"] == {"vl": ["br", "br.rollout", "br.rollout.server"]}
    assert rels["3.0"]["imports"] == {"vl": {"vl.utils:old": "br/rollout/__init__.py:1"}}
    vl = t["callees"]["vl"]  # type: ignore[index]
    assert [(r["version"], r["ref"]) for r in vl["releases"]] == [("0.9.1", "vl-0.9.1.tar.gz"),
                                                                 ("0.11.0", "vl-0.11.0.tar.gz")]
    assert vl["names"]["vl.v1.engine.utils:Manager"] == {"missing": ["0.9.1"], "unknown": [], "no_module": ["0.9.1"]}
    from doctor.knowledge.import_surface import unmet

    s = _load(t, tmp_path / "table")
    u = unmet(s, "br", "vl", caller_version="4.0", callee_version="0.9.1")
    assert u is not None and [n[:2] for n in u.names] == [("vl.utils", "new"), ("vl.v1.engine.utils", "Manager")]
    assert u.cited.entries_for("vl")[-1] == "br.rollout.server" and u.cited.entries_for("megatron-core") == ("br",)
    assert unmet(s, "br", "vl", caller_version="3.0", callee_version="0.9.1") is None


def test_a_caller_read_from_its_sdists_only_and_a_lazy_attach_package(tmp_path):
    """A caller with no mirror (`archive`: vLLM, accelerate) is read at every release whose PyPI file is given, named
    by its sha256; huggingface_hub's package is lazy (`__getattr__, __dir__, __all__ = _attach(__name__,
    submod_attrs=...)`): it serves the names of that table, a literal in the call or a `_SUBMOD_ATTRS` dict, and
    nothing else, so a name outside the table is missing, not unknown."""
    attach = "def _attach(name, submodules=None, submod_attrs=None):\n    pass\n"
    old = tmp_path / "hh-0.9-py3-none-any.whl"
    new = tmp_path / "hh-0.10-py3-none-any.whl"
    import zipfile

    for w, init in ((old, attach + "__getattr__, __dir__, __all__ = _attach(\n    __name__, submodules=[],\n"
                                   "    submod_attrs={'file_download': ['hf_hub_download']})\n"),
                    (new, "_SUBMOD_ATTRS = {'file_download': ['hf_hub_download'], 'serialization': ['split']}\n"
                          + attach + "__getattr__, __dir__, __all__ = _attach(__name__, submod_attrs=_SUBMOD_ATTRS)\n")):
        with zipfile.ZipFile(w, "w") as z:
            z.writestr("hh/__init__.py", init)
    _sdist(tmp_path, "1.0", {"vl/__init__.py": "from vl.llm import LLM\n", "vl/llm.py": "from hh import split\nLLM = 1\n"})
    _sdist(tmp_path, "1.1", {"vl/__init__.py": "from hh import hf_hub_download\n"})
    caller = gen.Project("vl", "", "vl", "https://github.com/vllm-project/vllm", ("vl",), archive="sdist")
    callee = gen.Project("hh", "", "hh", "https://github.com/huggingface/huggingface_hub", archive="wheel")
    gen.CALLEE_MODULES["hh"] = "hh"
    try:
        t = gen.read({}, {}, (caller,), (callee,), date="2026-12-06",
                     wheels={"hh": list(gen.wheel_releases(str(tmp_path), "hh"))},
                     caller_wheels={"vl": list(gen.sdist_releases(str(tmp_path), caller))})
    finally:
        del gen.CALLEE_MODULES["hh"]
    rels = t["callers"]["vl"]["releases"]  # type: ignore[index]
    assert [(r["version"], r["ref"], r["commit"], len(r["sha256"])) for r in rels] == [
        ("1.0", "vl-1.0.tar.gz", "", 64), ("1.1", "vl-1.1.tar.gz", "", 64)]
    assert rels[0]["imports"] == {"hh": {"hh:split": "vl/llm.py:1"}}
    assert t["callees"]["hh"]["names"] == {  # type: ignore[index]
        "hh:hf_hub_download": {"missing": [], "unknown": []}, "hh:split": {"missing": ["0.9"], "unknown": []}}
    from doctor.knowledge.import_surface import unmet

    s = _load(t, tmp_path / "table")
    u = unmet(s, "vl", "hh", caller_version="1.0", callee_version="0.9")
    assert u is not None and u.names == (("hh", "split", "vl/llm.py:1"),) and u.fixed_in == ("0.10",)
    assert u.source == ("https://github.com/vllm-project/vllm/blob/v1.0/vl/llm.py#L1; "
                        "https://github.com/huggingface/huggingface_hub/tree/v0.9")
    assert unmet(s, "vl", "hh", caller_version="1.1", callee_version="0.9") is None


def test_what_vllm_serve_loads_is_read_from_its_console_script_and_recorded_apart(tmp_path):
    """`vllm serve` runs the `vllm` console script: its module (pyproject.toml's [project.scripts], or setup.py's
    console_scripts before) and what that function imports unconditionally, and what those import at module level
    (the API server). The names only it imports are recorded apart (`command.only`), so a finding can say that
    command loads them; a function-level import under `if` is not followed."""
    import zipfile

    for v, init in (("1.0", "Base = 1\n"), ("2.0", "Base = 1\nServeOnly = 2\n")):
        with zipfile.ZipFile(tmp_path / f"tf-{v}-py3-none-any.whl", "w") as z:
            z.writestr("tf/__init__.py", init)
    cli = {"vllm/__init__.py": "from tf import Base\n", "vllm/entrypoints/__init__.py": "",
           "vllm/entrypoints/cli/__init__.py": "", "vllm/entrypoints/openai/__init__.py": "",
           "vllm/entrypoints/cli/serve.py": "from vllm.entrypoints.openai.api_server import run\n",
           "vllm/entrypoints/openai/api_server.py": "import tf\nfrom tf import Base, ServeOnly\nrun = 1\n",
           "vllm/entrypoints/cli/bench.py": "from tf import BenchOnly\n"}
    _sdist(tmp_path, "0.9", {**cli, "setup.py": "setup(entry_points={'console_scripts': ['vllm=vllm.scripts:main']})\n",
                             "vllm/scripts.py": "from vllm.entrypoints.openai.api_server import run\n"}, "vllm")
    _sdist(tmp_path, "1.0", {**cli, "pyproject.toml": '[project.scripts]\nvllm = "vllm.entrypoints.cli.main:main"\n',
                             "vllm/entrypoints/cli/main.py": "import sys\n\n\ndef main():\n"
                             "    import vllm.entrypoints.cli.serve\n    if sys.argv:\n"
                             "        import vllm.entrypoints.cli.bench\n"}, "vllm")
    caller = gen.Project("vllm", "", "vllm", "https://github.com/vllm-project/vllm", ("vllm",), archive="sdist",
                         command="vllm serve", command_from=gen.vllm_cli_entries)
    # a bare `import tf` is not recorded (top_import False, as for torch) on the command's path either
    callee = gen.Project("tf", "", "tf", "https://github.com/huggingface/transformers", archive="wheel",
                         top_import=False)
    gen.CALLEE_MODULES["tf"] = "tf"
    try:
        t = gen.read({}, {}, (caller,), (callee,), date="2026-12-06",
                     wheels={"tf": list(gen.wheel_releases(str(tmp_path), "tf"))},
                     caller_wheels={"vllm": list(gen.sdist_releases(str(tmp_path), caller))})
    finally:
        del gen.CALLEE_MODULES["tf"]
    rels = t["callers"]["vllm"]["releases"]  # type: ignore[index]
    assert [r["command"] for r in rels] == [
        {"name": "vllm serve", "entries": ["vllm.scripts"], "only": {"tf": ["tf:ServeOnly"]}},
        {"name": "vllm serve", "entries": ["vllm.entrypoints.cli.main", "vllm.entrypoints.cli.serve"],
         "only": {"tf": ["tf:ServeOnly"]}}]
    assert rels[1]["entries"] == ["vllm"] and rels[1]["imports"] == {"tf": {
        "tf:Base": "vllm/__init__.py:1", "tf:ServeOnly": "vllm/entrypoints/openai/api_server.py:2"}}
    assert t["callees"]["tf"]["names"] == {  # type: ignore[index]
        "tf:Base": {"missing": [], "unknown": []}, "tf:ServeOnly": {"missing": ["1.0"], "unknown": []}}
    from doctor.knowledge.import_surface import unmet

    s = _load(t, tmp_path / "table")
    cmd = s.callers["vllm"].releases[1].command
    assert cmd is not None and (cmd.name, cmd.entries, dict(cmd.only)) == (
        "vllm serve", ("vllm.entrypoints.cli.main", "vllm.entrypoints.cli.serve"), {"tf": frozenset({"tf:ServeOnly"})})
    u = unmet(s, "vllm", "tf", caller_version="1.0", callee_version="1.0")
    assert u is not None and u.names == (("tf", "ServeOnly", "vllm/entrypoints/openai/api_server.py:2"),)
    assert gen.read_layout(str(tmp_path / "table"))["callers"]["vllm"]["releases"][1]["command"] == rels[1]["command"]


def test_an_import_under_a_test_that_holds_whenever_the_callee_is_installed_counts(tmp_path, repos):
    """trl imports peft under `if is_peft_available():` (importlib.util.find_spec("peft") is not None): true whenever
    a snapshot has peft, so those imports run at load (`installed_if`); any other `if` still does not count."""
    br = Repo(tmp_path / "guarded")
    br.commit({"br/__init__.py": "from .imp import is_mc_available, other\nif is_mc_available():\n"
                                 "    from megatron.core.utils import old\nif other():\n"
                                 "    from megatron.core.utils import skip\n",
               "br/imp.py": "def is_mc_available():\n    return True\n\n\ndef other():\n    return True\n"},
              tag="v1.0")
    gits = {"megatron-core": gen.Git(str(repos["mc"].path)), "br": gen.Git(str(br.path))}
    callee = gen.Project("megatron-core", "Megatron-LM", "megatron/core", "https://github.com/NVIDIA/Megatron-LM")
    caller = gen.Project("br", "br", "br", "https://github.com/x/br", ("br",),
                         installed_if=(("megatron.core", "is_mc_available"),))
    releases = {"megatron-core": gen.tag_releases(gits["megatron-core"], r"core_v(\d+\.\d+\.\d+)"),
                "br": gen.tag_releases(gits["br"], r"v(\d+\.\d+)")}
    try:
        t = gen.read(gits, releases, (caller,), (callee,), date="2026-12-06")
    finally:
        for g in gits.values():
            g.close()
    assert t["callers"]["br"]["releases"][0]["imports"] == {  # type: ignore[index]
        "megatron-core": {"megatron.core.utils:old": "br/__init__.py:3"}}
    assert t["callees"]["megatron-core"]["names"] == {  # type: ignore[index]
        "megatron.core.utils:old": {"missing": ["0.2.0"], "unknown": []}}


def test_keep_holds_the_rows_of_projects_whose_sources_are_not_given(tmp_path, repos, capsys):
    """--keep: a caller or callee whose mirror (or --wheels / --sdists) is absent keeps its rows from the table at
    --out; a name a kept callee was not read for is unknown at its releases, never missing."""
    out = tmp_path / "t"
    old = _read(repos)
    old["callers"]["mbridge"] = {"url": "https://github.com/ISEEKYAN/mbridge", "key": "version", "releases": [  # type: ignore[index]
        {"version": "0.1.0", "ref": "v0.1.0", "commit": "a" * 40, "entries": ["mbridge"],
         "imports": {"transformers": {"transformers:Old": "mbridge/x.py:1"}}}]}
    old["callees"]["transformers"] = {"url": "https://github.com/huggingface/transformers", "releases": [  # type: ignore[index]
        {"version": "4.0", "ref": "transformers-4.0-py3-none-any.whl", "sha256": "c" * 64}],
        "names": {"transformers:Old": {"missing": ["4.0"], "unknown": []}}}
    gen.write(old, str(out))  # type: ignore[arg-type]
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    assert gen.main(["--keep", "--mirrors", str(mirrors), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "mbridge is not read (no mirror): its rows are kept" in err and "vllm is not read (no --sdists)" in err
    new = gen.read_layout(str(out))
    assert new["callers"]["mbridge"] == old["callers"]["mbridge"]  # type: ignore[index]
    assert new["callees"]["transformers"] == old["callees"]["transformers"]  # type: ignore[index]
    assert set(new["callers"]) == {"mbridge"} and set(new["callees"]) == {"megatron-core", "transformers"}
    from doctor.knowledge.import_surface import load

    assert load(str(out / "index.json")).callees["transformers"].missing["transformers:Old"] == {"4.0"}
    assert not (out / "br").exists()  # the files of a caller the new table does not hold are removed
    # without --keep an absent mirror is an error, and the table is not written over
    files = {f: (out / f).read_bytes() for f in gen.layout(new)}
    assert gen.main(["--mirrors", str(mirrors), "--out", str(out)]) == 2
    assert {f: (out / f).read_bytes() for f in gen.layout(new)} == files


ASCEND_SETUP = """from setuptools import setup
setup(name="vllm-ascend", entry_points={
    "vllm.platform_plugins": ["ascend = vllm_ascend:register"],
    "vllm.general_plugins": ["ascend_model = vllm_ascend:register_model"],
    "console_scripts": ["x = vllm_ascend.cli:main"]})
"""
ASCEND_INIT = """def register():
    return "vllm_ascend.platform.NPUPlatform"


def register_model():
    from .models import register_model
    if False:
        from vllm_ascend import guarded
    register_model()
"""
ASCEND_PLATFORM = """from vllm.platforms import Platform
from vllm import envs


class NPUPlatform(Platform):
    @classmethod
    def check_and_update_config(cls, vllm_config):
        parallel_config = vllm_config.parallel_config
        if parallel_config and parallel_config.worker_cls == "auto":
            if envs.VLLM_USE_V1:
                parallel_config.worker_cls = "vllm_ascend.worker.worker_v1.NPUWorker"
            elif vllm_config.speculative_config:
                parallel_config.worker_cls = "vllm_ascend.worker.spec.SpecWorker"
            else:
                parallel_config.worker_cls = "vllm_ascend.worker.worker.NPUWorker"
"""
SUPPORTS_V1 = """

    @classmethod
    def supports_v1(cls, model_config):
        return True
"""


def test_vllm_ascends_entries_are_what_its_plugin_entry_points_load(tmp_path):
    """vllm-ascend's entry modules come from its own files at each tag: the plugin entry points in setup.py (not
    console scripts), what those functions import unconditionally, the platform module `register` returns, and the
    worker the platform picks by default: V0's until the platform defines supports_v1, then V1's; opt-in branches
    (speculative decoding) never."""
    va = Repo(tmp_path / "vllm-ascend")
    files = {"setup.py": ASCEND_SETUP, "vllm_ascend/__init__.py": ASCEND_INIT,
             "vllm_ascend/platform.py": ASCEND_PLATFORM, "vllm_ascend/models/__init__.py": "",
             "vllm_ascend/worker/__init__.py": "", "vllm_ascend/worker/worker.py": "from vllm.worker import W\n",
             "vllm_ascend/worker/worker_v1.py": "from vllm.v1.worker import W1\n",
             "vllm_ascend/worker/spec.py": "from vllm.spec import S\n", "vllm_ascend/guarded.py": ""}
    va.commit(files, tag="v0.7.3")
    va.commit({"vllm_ascend/platform.py": ASCEND_PLATFORM + SUPPORTS_V1}, tag="v0.8.4rc1")
    git = gen.Git(str(va.path))
    try:
        rels = gen.tag_releases(git, r"v(\d+\.\d+\.\d+(?:rc\d+|\.post\d+)?)")
        old, new = (gen.vllm_ascend_entries(git, r.commit) for r in rels)
        assert old[:3] == ("vllm_ascend", "vllm_ascend.platform", "vllm_ascend.worker.worker")
        assert "vllm_ascend.models" in old and "vllm_ascend.guarded" not in old and "vllm_ascend.cli" not in old
        assert "vllm_ascend.worker.worker_v1" in new and "vllm_ascend.worker.worker" not in new
        assert not any("spec" in m for m in old + new)
        (caller,) = [p for p in gen.CALLERS if p.name == "vllm-ascend"]
        assert caller.callees == ("vllm", "torch")
        found, _ = gen.caller_imports(git, caller, rels[1], "vllm", caller.entries_for("vllm", git, rels[1].commit))
        assert [(i.module, i.name, i.file) for i in found] == [
            ("vllm.platforms", "Platform", "vllm_ascend/platform.py"), ("vllm", "envs", "vllm_ascend/platform.py"),
            ("vllm.v1.worker", "W1", "vllm_ascend/worker/worker_v1.py")]
    finally:
        git.close()


def test_what_a_caller_imports_at_load_is_every_package_its_entry_modules_reach_outside_guards(tmp_path):
    """`loads`: the top-level packages a caller's entry modules import at module level, followed through the
    caller's own package (not into a module only a function imports), not under try/except ImportError, `if
    TYPE_CHECKING` or a def; the standard library left out. Written to the release's file and read back by the
    check's loader."""
    from doctor.knowledge.import_surface import imported_at_load

    repo = Repo(tmp_path / "pk")
    repo.commit({"pk/__init__.py": "import os\nfrom . import a\n",
                 "pk/a.py": ("from typing import TYPE_CHECKING\nimport cachetools.keys\ntry:\n    import nvtx\n"
                             "except ImportError:\n    nvtx = None\nif TYPE_CHECKING:\n    import torchcodec\n\n\n"
                             "def f():\n    import mathruler\n    from pk import lazy\n\n\nfrom .b import Server\n"),
                 "pk/b.py": "from uvicorn import Server\nfrom pk.a import f\n",
                 "pk/lazy.py": "import qwen_vl_utils\n", "pk/run.py": "import transfer_queue as tq\n"}, tag="v1.0")
    git = gen.Git(str(repo.path))
    caller = gen.Project("pk", "pk", "pk", "https://github.com/x/pk", ("pk",), loads=("pk.run", "pk.absent"))
    try:
        rel = gen.tag_releases(git, r"v(\d+\.\d+)")
        assert gen.caller_loads(git, caller, rel[0], ("pk",)) == (
            {"cachetools": "pk/a.py:2", "uvicorn": "pk/b.py:1"}, ["pk"])
        data = gen.read({"pk": git}, {"pk": rel}, (caller,), (), date="2026-12-05")
    finally:
        git.close()
    gen.write(data, str(tmp_path / "t"))
    got = imported_at_load("pk", "1.0", str(tmp_path / "t" / "index.json"))
    assert got is not None and got[1].entries == ("pk", "pk.run")
    assert dict(got[1].modules) == {"cachetools": "pk/a.py:2", "transfer_queue": "pk/run.py:1", "uvicorn": "pk/b.py:1"}
    assert imported_at_load("pk", "1.1", str(tmp_path / "t" / "index.json")) is None


def test_verl_0_9_1s_loads_are_what_its_pypi_wheel_gives():
    """The packaged table's verl 0.9.1 `loads` is what the tool reads from the real wheel: of its [verl-core]
    additions, what the trainer imports at load (each, uninstalled from a real venv, broke `import
    verl.trainer.ppo.v1` or ray_trainer) and not what it does not (each uninstalled, every trainer module imported)."""
    import os

    from doctor.knowledge.import_surface import imported_at_load

    d = os.environ.get("DOCTOR_TEST_VERL_CONFIGS")
    hits = sorted((Path(d) / "wheels").glob("verl-0.9.1-py3-none-any.whl")) if d else []
    if not hits:
        pytest.skip("no verl-0.9.1 wheel under $DOCTOR_TEST_VERL_CONFIGS/wheels")
    verl = next(p for p in gen.CALLERS if p.name == "verl")
    assert verl.loads is not None
    wheel = gen.Wheel(str(hits[0]))
    try:
        modules, entries = gen.caller_loads(wheel, verl, gen.Release("0.9.1", hits[0].name, ""),
                                            verl.base_entries() + verl.loads)
    finally:
        wheel.close()
    got = imported_at_load("verl", "0.9.1")
    assert got is not None and dict(got[1].modules) == modules and list(got[1].entries) == entries
    assert {"cachetools", "fastapi", "uvicorn", "transfer_queue"} <= modules.keys()
    assert not {"nvtx", "torchcodec", "mathruler", "qwen_vl_utils", "zmq", "msgspec", "pytest"} & modules.keys()


def test_the_packaged_table_is_what_the_tool_writes_from_it():
    """--keep reads the rows back from the layout and rewrites byte-identical files: the packaged directory holds
    exactly the files `layout` gives for its own contents (a re-run with the same inputs changes nothing)."""
    from doctor.knowledge.location import packaged_dir

    d = Path(packaged_dir()) / "import-surface"
    files = gen.layout(gen.read_layout(str(d)))
    assert {str(p.relative_to(d)) for p in d.rglob("*.json")} == set(files)
    assert all((d / f).read_text(encoding="utf-8") == text for f, text in files.items())
    assert "vllm-ascend/0.9.1.json" in files and "mbridge/0.15.1-10cb17f59.json" in files and "vllm.json" in files


def test_runs_of_consecutive_releases_are_written_a_to_b_and_read_back():
    order = ["0.1", "0.2", "0.3", "0.5", "0.10"]
    assert gen._runs(["0.2", "0.1", "0.3", "0.10"], order) == ["0.1..0.3", "0.10"]
    assert gen._expand(["0.1..0.3", "0.10"], order, ["0.10", "0.1", "0.2", "0.3", "0.5"]) == ["0.10", "0.1", "0.2",
                                                                                              "0.3"]


class _PyPI:
    """PyPI's JSON API and byte ranges of the wheel files it lists, served from memory; counts the ranges read."""

    def __init__(self, wheels: dict[str, bytes]) -> None:
        import hashlib

        self.wheels, self.ranges = wheels, 0
        self.listing = {"info": {"name": "tt"}, "releases": {
            name.split("-")[1]: [{"filename": name, "url": f"../../packages/{name}", "size": len(data),
                                  "digests": {"sha256": hashlib.sha256(data).hexdigest()}}]
            for name, data in wheels.items()}}
        self.listing["releases"]["1.9.0"] = self.listing["releases"]["2.0.0rc1"] = []  # before `since`, no files

    def get(self, url: str) -> bytes:
        import json

        assert url == "https://pypi.org/pypi/tt/json"
        return json.dumps(self.listing).encode()

    def get_range(self, url: str, start: int, end: int) -> tuple[bytes, int]:
        self.ranges += 1
        data = self.wheels[url.rpartition("/")[2]]
        return (data[start:] if start < 0 else data[start:end + 1]), len(data)


def test_a_callee_read_through_byte_ranges_of_pypi_wheels_whose_compiled_modules_are_unknown(tmp_path):
    """torch: each release's smallest PyPI wheel is read through byte ranges, only the files needed, kept in a cache
    that a re-run reads instead. Its package star-imports its compiled torch._C (`from torch._C import *`, a .so
    with .pyi stubs beside it): a name the Python files do not bind is unknown there, never missing, and so is one
    from a module inside the extension (torch._C._distributed_c10d); a name no release read defines is another
    package's (torch_npu registers torch.npu), unknown too. A caller's bare `import tt` is not recorded."""
    import io
    import zipfile

    def wheel(version: str, files: dict[str, str]) -> tuple[str, bytes]:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for f, text in {**files, "tt/_C.cpython-311-darwin.so": "\0", "tt/_C/_dist.pyi": "",
                            "tt/big.bin": "x" * 200_000}.items():
                z.writestr(f, text)
        return f"tt-{version}-cp311-none-macosx_11_0_arm64.whl", buf.getvalue()

    init = "from tt._C import *\nclass Tensor:\n    pass\n"
    pypi = _PyPI(dict([wheel("2.0.0", {"tt/__init__.py": init, "tt/distributed/tensor/parallel/__init__.py": ""}),
                       wheel("2.1.0", {"tt/__init__.py": init, "tt/distributed/tensor/__init__.py":
                                       "from tt.distributed.tensor._api import DTensor\n",
                                       "tt/distributed/tensor/_api.py": "class DTensor:\n    pass\n"})]))
    callee = gen.Project("tt", "", "tt", "https://github.com/pytorch/pytorch", archive="pypi", since="2.0.0",
                         extended=True, top_import=False)
    caller = gen.Project("vl", "", "vl", "https://github.com/x/vl", ("vl",), archive="sdist")
    _sdist(tmp_path, "1.0", {"vl/__init__.py": "import tt\nimport tt.distributed\nfrom tt import Tensor, float8\n"
                                               "from tt._C._dist import ProcessGroup\nfrom tt.npu import npu_op\n"
                                               "from tt.distributed.tensor import DTensor\n"})
    gen.CALLEE_MODULES["tt"] = "tt"

    def run(http: object) -> dict[str, object]:
        got = gen.pypi_releases(callee, str(tmp_path / "cache"), http)
        try:
            return gen.read({}, {}, (caller,), (callee,), date="2026-12-06", wheels={"tt": list(got)},
                            caller_wheels={"vl": list(gen.sdist_releases(str(tmp_path), caller))})
        finally:
            for _, w in got:
                w.close()

    class Offline:
        def get(self, url: str) -> bytes:
            return pypi.get(url)

        def get_range(self, url: str, start: int, end: int) -> tuple[bytes, int]:
            raise AssertionError("a cached wheel is read again")

    try:
        t = run(pypi)
        assert run(Offline()) == t  # the re-run reads the cache only
    finally:
        del gen.CALLEE_MODULES["tt"]
    assert pypi.ranges < 12  # the zip's directory and the files needed, not the 200 kB member
    tt = t["callees"]["tt"]  # type: ignore[index]
    assert [(r["version"], r["ref"]) for r in tt["releases"]] == [
        ("2.0.0", "tt-2.0.0-cp311-none-macosx_11_0_arm64.whl"), ("2.1.0", "tt-2.1.0-cp311-none-macosx_11_0_arm64.whl")]
    assert t["callers"]["vl"]["releases"][0]["imports"]["tt"] == {  # type: ignore[index]
        "tt._C._dist:ProcessGroup": "vl/__init__.py:4", "tt.distributed:": "vl/__init__.py:2",
        "tt.distributed.tensor:DTensor": "vl/__init__.py:6", "tt.npu:npu_op": "vl/__init__.py:5",
        "tt:Tensor": "vl/__init__.py:3", "tt:float8": "vl/__init__.py:3"}
    assert tt["names"] == {
        "tt._C._dist:ProcessGroup": {"missing": [], "unknown": ["2.0.0", "2.1.0"]},
        "tt.distributed:": {"missing": [], "unknown": []},
        "tt.distributed.tensor:DTensor": {"missing": ["2.0.0"], "unknown": []},
        "tt.npu:npu_op": {"missing": [], "unknown": ["2.0.0", "2.1.0"]},
        "tt:Tensor": {"missing": [], "unknown": []}, "tt:float8": {"missing": [], "unknown": ["2.0.0", "2.1.0"]}}
    from doctor.knowledge.import_surface import unmet

    u = unmet(_load(t, tmp_path / "table"), "vl", "tt", caller_version="1.0", callee_version="2.0.0")
    assert u is not None and u.names == (("tt.distributed.tensor", "DTensor", "vl/__init__.py:6"),)
    assert u.fixed_in == ("2.1.0",) and u.source.endswith("https://github.com/pytorch/pytorch/tree/v2.0.0")


@pytest.mark.parametrize("stub", ["tt/_C.cpython-311-x86_64-linux-gnu.so", "tt/_C.cp311-win_amd64.pyd",
                                  "tt/_C/__init__.pyi"])
def test_a_star_import_of_a_compiled_module_makes_what_it_may_bind_unknown_not_missing(tmp_path, stub):
    """`from tt._C import *` of a compiled extension (or a module only a stub describes): the Python files do not
    say what it binds, so a name the package does not bind itself is unknown, and so is one imported from a module
    inside it; what the package's own files bind, and a name a module that is there lacks, are still judged."""
    import zipfile

    w = tmp_path / "tt-1.0-py3-none-any.whl"
    with zipfile.ZipFile(w, "w") as z:
        for f, text in {"tt/__init__.py": "from tt._C import *\nclass Tensor:\n    pass\n", stub: "",
                        "tt/nn.py": "Module = 1\n"}.items():
            z.writestr(f, text)
    wheel = gen.Wheel(str(w))
    tree = gen.Tree(wheel, "", set(wheel.files("", "tt")), "tt")
    assert [tree.defines(*k) for k in (("tt", "float8"), ("tt", "Tensor"), ("tt._C._nn", "gelu"), ("tt.nn", "Module"),
                                       ("tt.nn", "Gone"), ("tt.gone", ""))] == [
        "unknown", "has", "unknown", "has", "missing", "no_module"]
    wheel.close()


ATTRS = '''from __future__ import annotations
import tt
import tt.utils._pytree as _pytree
from .imp import is_tt_available, other
if is_tt_available():
    import tt.distributed as dist
    _pytree.register_node(1)
if other():
    _pytree.only_if_other(1)


@tt.compiler.disable
def f(x: tt.Annotated, y=tt.float8, *, z=dist.group.WORLD):
    return tt.in_body


class M(tt.nn.Module, metaclass=tt.Meta):
    size = tt.Size
    def g(self, w=tt.in_class_default):
        pass


lam = lambda a=tt.lambda_default: tt.lambda_body
first = tt.first_operand or tt.second_operand
pick = tt.if_true if tt.condition else tt.if_false
squares = [tt.element for _ in tt.iterable]
assert tt.asserted
try:
    tt.guarded
except AttributeError:
    pass
tt.written = 1
'''


def test_module_level_attribute_reads_of_a_callee_module_are_needs_and_where_they_do_not_count():
    """A callee module's attribute read where the module body runs it (a decorator, a default, a class's bases and
    body, an `installed_if` block, the first operand of `or`, a comprehension's iterable) is a need, one per step
    of the path; not in a def's or lambda's body, an annotation under `from __future__ import annotations`, an
    assert, a conditional expression's branches, another `if`, a `try` that catches AttributeError, nor an attribute
    written."""
    tree = __import__("ast").parse(ATTRS)
    got = {(i.module, i.name, i.line) for i in gen.attribute_reads(tree, "x.py", "tt", "is_tt_available")}
    assert got == {
        ("tt.utils._pytree", ".register_node", 7), ("tt", ".compiler", 12), ("tt", ".compiler.disable", 12),
        ("tt", ".float8", 13), ("tt.distributed", ".group", 13), ("tt.distributed", ".group.WORLD", 13),
        ("tt", ".nn", 17), ("tt", ".nn.Module", 17), ("tt", ".Meta", 17), ("tt", ".Size", 18),
        ("tt", ".in_class_default", 19), ("tt", ".lambda_default", 23), ("tt", ".first_operand", 24),
        ("tt", ".condition", 25), ("tt", ".iterable", 26)}
    # without the `installed_if` test, nothing under it counts (its import neither: `dist` is not bound there)
    plain = {(i.module, i.name) for i in gen.attribute_reads(tree, "x.py", "tt")}
    assert ("tt.utils._pytree", ".register_node") not in plain and ("tt.distributed", ".group") not in plain
    # annotations count without the __future__ import
    lazy = __import__("ast").parse(ATTRS.replace("from __future__ import annotations\n", ""))
    assert ("tt", ".Annotated") in {(i.module, i.name) for i in gen.attribute_reads(lazy, "x.py", "tt")}
    # a name bound otherwise anywhere in the module (or declared global) is not followed
    for rebind in ("tt = None\n", "def tt():\n    pass\n", "from other import tt\n",
                   "def h():\n    global tt\n    tt = 1\n", "try:\n    pass\nexcept Exception as tt:\n    pass\n"):
        assert not gen.attribute_reads(__import__("ast").parse("import tt\n" + rebind + "tt.x\n"), "x.py", "tt")
    # a read before the import ran, or of a module outside the callee, is not a need either
    assert not gen.attribute_reads(__import__("ast").parse("import os\nos.sep\n"), "x.py", "tt")
    assert not gen.attribute_reads(__import__("ast").parse("tt.early\nimport tt\n"), "x.py", "tt")
    assert [(i.module, i.name) for i in gen.attribute_reads(__import__("ast").parse(
        "import mc.core.utils\nmc.core.utils.x\nmc.other.y\n"), "x.py", "mc.core")] == [
        ("mc.core", ".utils"), ("mc.core", ".utils.x")]


def test_an_attribute_path_is_judged_step_by_step_through_submodules():
    """`.compiler.disable` of tt: each step a submodule continues; a step bound to a class leaves the rest unknown;
    a step the module lacks is missing (an attribute read raises AttributeError, not ModuleNotFoundError)."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for f, text in {"tt/__init__.py": "class Tensor:\n    pass\n", "tt/utils/__init__.py": "",
                        "tt/utils/_pytree.py": "def _register(x):\n    pass\n",
                        "tt/compiler/__init__.py": "def disable(f):\n    return f\n"}.items():
            z.writestr(f, text)
    path = Path(__import__("tempfile").mkdtemp()) / "tt-2.1-py3-none-any.whl"
    path.write_bytes(buf.getvalue())
    wheel = gen.Wheel(str(path))
    tree = gen.Tree(wheel, "", set(wheel.files("", "tt")), "tt")
    assert [tree.defines(*k) for k in (
        ("tt", ".compiler"), ("tt", ".compiler.disable"), ("tt", ".compiler.gone"), ("tt", ".gone.x"),
        ("tt", ".Tensor.anything"), ("tt.utils._pytree", ".register"), ("tt.utils._pytree", "._register"),
        ("tt.nope", ".x"))] == ["has", "has", "missing", "missing", "unknown", "missing", "has", "no_module"]
    wheel.close()
    names: dict[str, dict[str, list[str]]] = {"tt.nope:.x": {"missing": [], "unknown": []}}
    gen._judge(names, {("tt.nope", ".x")}, "2.1", ["no_module"])
    assert names == {"tt.nope:.x": {"missing": ["2.1"], "unknown": []}}


def test_a_caller_read_through_byte_ranges_reads_only_the_modules_its_entries_reach(tmp_path):
    """transformers as a caller of torch: each release's PyPI wheel through byte ranges, only the files its entries
    reach (never its models nobody imports), what it imports and the attributes it reads under `if
    is_tt_available():`; the finding names the attribute read and the AttributeError it raises."""
    import io
    import json
    import zipfile

    def wheel(name: str, version: str, files: dict[str, str]) -> tuple[str, bytes]:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for f, text in files.items():
                z.writestr(f, text)
        return f"{name}-{version}-py3-none-any.whl", buf.getvalue()

    tt = "tt/utils/__init__.py"
    pypi = _PyPI(dict([wheel("tt", "2.0.0", {"tt/__init__.py": "", tt: "", "tt/utils/_pytree.py": "def _reg():\n  pass\n"}),
                       wheel("tt", "2.2.0", {"tt/__init__.py": "", tt: "", "tt/utils/_pytree.py": "def reg():\n  pass\n"
                                                                                     "def _reg():\n  pass\n"})]))
    init = ("from .generic import Output\nfrom .imp import is_tt_available\n"
            "if is_tt_available():\n    import tt.utils._pytree as _p\n    _p.reg(Output)\n")
    tf = dict([wheel("tf", "4.38.0", {"tf/__init__.py": init, "tf/generic.py": "class Output:\n    pass\n",
                                      "tf/imp.py": "def is_tt_available():\n    return True\n",
                                      "tf/models/big.py": "import tt.never\n" + "x = 1\n" * 50_000})])
    pypi.wheels.update(tf)
    listing = {"info": {"name": "tf"}, "releases": {"4.38.0": [
        {"filename": n, "url": f"../../packages/{n}", "size": len(d),
         "digests": {"sha256": __import__("hashlib").sha256(d).hexdigest()}} for n, d in tf.items()]}}
    served = pypi.get

    def get(url: str) -> bytes:
        return json.dumps(listing).encode() if url == "https://pypi.org/pypi/tf/json" else served(url)

    pypi.get = get  # type: ignore[method-assign]
    callee = gen.Project("tt", "", "tt", "https://github.com/pytorch/pytorch", archive="pypi", since="2.0.0",
                         extended=True, top_import=False)
    caller = gen.Project("tf", "", "src/tf", "https://github.com/huggingface/transformers", ("tf",), archive="pypi",
                         since="4.0", callees=("tt",), installed_if=(("tt", "is_tt_available"),), attributes=True)
    gen.CALLEE_MODULES["tt"] = "tt"
    cache = tmp_path / "cache"
    try:
        got = gen.pypi_releases(callee, str(cache), pypi)
        mine = gen.pypi_releases(caller, str(cache), pypi)
        t = gen.read({}, {}, (caller,), (callee,), date="2026-12-06", wheels={"tt": got}, caller_wheels={"tf": mine})
        for _, w in got + mine:
            w.close()
    finally:
        del gen.CALLEE_MODULES["tt"]
    read = json.loads((cache / "tf-4.38.0-py3-none-any.whl.json").read_text())["files"]
    assert sorted(read) == ["tf/__init__.py", "tf/generic.py", "tf/imp.py"]  # not tf/models/big.py
    rel = t["callers"]["tf"]["releases"][0]  # type: ignore[index]
    assert rel["imports"] == {"tt": {"tt.utils._pytree:": "src/tf/__init__.py:4",
                                     "tt.utils._pytree:.reg": "src/tf/__init__.py:5"}}
    assert len(rel["sha256"]) == 64 and rel["ref"] == "tf-4.38.0-py3-none-any.whl"
    assert t["callees"]["tt"]["names"]["tt.utils._pytree:.reg"] == {"missing": ["2.0.0"], "unknown": []}  # type: ignore[index]
    from doctor.checks.packages import _import_finding
    from doctor.knowledge.import_surface import unmet

    s = _load(t, tmp_path / "table")
    u = unmet(s, "tf", "tt", caller_version="4.38.0", callee_version="2.0.0")
    assert u is not None and u.names == (("tt.utils._pytree", ".reg", "src/tf/__init__.py:5"),)
    assert u.source.startswith("https://github.com/huggingface/transformers/blob/v4.38.0/src/tf/__init__.py#L5")
    assert unmet(s, "tf", "tt", caller_version="4.38.0", callee_version="2.2.0") is None
    f = _import_finding(u, "tf", "tt", "4.38.0", None, "2.0.0", None, s.read)
    assert f.title == "tf 4.38.0 reads tt.utils._pytree.reg at load, which tt 2.0.0 does not have"
    assert "AttributeError: module 'tt.utils._pytree' has no attribute 'reg'" in f.detail
    assert "`tt.utils._pytree.reg` (src/tf/__init__.py:5)" in f.detail


LAZY_TOP = '''import sys
from typing import TYPE_CHECKING
from .import_utils import _LazyModule, is_opt_available

_import_structure = {"trainer": ["DPOTrainer", "SFTTrainer"], "core": ["set_seed"]}
_import_structure["extras"] = ["Sampler"]
if is_opt_available():
    _import_structure["trainer"].extend(["OptTrainer"])
if TYPE_CHECKING:
    from .trainer import DPOTrainer, SFTTrainer
else:
    sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure, module_spec=__spec__)
'''
LAZY_TRAINER = '''import sys
from ..import_utils import _LazyModule
_import_structure = {"dpo_trainer": ["DPOTrainer"], "sft_trainer": ["SFTTrainer"]}
_import_structure.update({"opt_trainer": ["OptTrainer"]})
sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure, module_spec=__spec__)
'''


def test_lazy_structure_reads_what_the_module_body_always_serves():
    assert gen.lazy_structure(LAZY_TOP) == {"trainer": ["DPOTrainer", "SFTTrainer"], "core": ["set_seed"],
                                            "extras": ["Sampler"]}  # not OptTrainer: only under `if`
    assert gen.lazy_structure(LAZY_TRAINER) == {"dpo_trainer": ["DPOTrainer"], "sft_trainer": ["SFTTrainer"],
                                                "opt_trainer": ["OptTrainer"]}
    assert gen.lazy_structure("from .a import b\n") == {} and gen.lazy_structure("def (:\n") == {}


def test_a_lazy_package_is_read_through_the_names_it_serves_and_they_are_recorded_apart(tmp_path, repos):
    """trl's __init__ is a lazy module: `import trl` runs almost nothing, `from trl import DPOTrainer` imports
    trl.trainer (lazy too), then trl.trainer.dpo_trainer, whose module-level imports must succeed. A caller read
    `lazy` follows each name its entry package serves (and `from ..models import Helper` into a lazy package, as
    Python does), and records the imports only those modules make apart (`lazy`: the name that loads them), so a
    callee release lacking one is a warning naming `from pkg import DPOTrainer`, never a failure of `import pkg`; of
    those, only the names some callee release read lacks or may lack are kept (the table's size)."""
    from doctor.checks.packages import _import_finding
    from doctor.knowledge.import_surface import unmet

    repos["mc"].commit({"megatron/core/models/__init__.py": ""}, tag="core_v0.3.0")  # no GPT: `import pkg` fails
    lz = Repo(tmp_path / "lz")
    lz.commit({"pkg/__init__.py": LAZY_TOP, "pkg/import_utils.py": "from megatron.core.models import GPT\n",
               "pkg/trainer/__init__.py": LAZY_TRAINER,
               "pkg/trainer/dpo_trainer.py": "from megatron.core.utils import old\nfrom ..models import Helper\n",
               "pkg/trainer/sft_trainer.py": "from megatron.core.utils import keep\n",
               "pkg/trainer/opt_trainer.py": "from megatron.core.utils import optional_only\n",
               "pkg/models/__init__.py": "_import_structure = {'helper': ['Helper']}\n",
               "pkg/models/helper.py": "from megatron.core.utils import starred\n",
               "pkg/core.py": "from megatron.core.utils import old\n",
               "pkg/extras.py": "def f():\n    from megatron.core.utils import in_function\n"}, tag="v1.0")
    gits = {"megatron-core": gen.Git(str(repos["mc"].path)), "lz": gen.Git(str(lz.path))}
    callee = gen.Project("megatron-core", "Megatron-LM", "megatron/core", "https://github.com/NVIDIA/Megatron-LM")
    releases = {"megatron-core": gen.tag_releases(gits["megatron-core"], r"core_v(\d+\.\d+\.\d+)"),
                "lz": gen.tag_releases(gits["lz"], r"v(\d+\.\d+)")}
    try:
        plain = gen.read(gits, releases, (gen.Project("lz", "lz", "pkg", "https://github.com/x/lz", ("pkg",)),),
                         (callee,), date="2026-12-06")
        t = gen.read(gits, releases, (gen.Project("lz", "lz", "pkg", "https://github.com/x/lz", ("pkg",),
                                                  lazy=True),), (callee,), date="2026-12-06")
    finally:
        for g in gits.values():
            g.close()
    # not followed, only `import pkg`'s own imports are read (what the table held for trl)
    assert plain["callers"]["lz"]["releases"][0]["imports"] == {  # type: ignore[index]
        "megatron-core": {"megatron.core.models:GPT": "pkg/import_utils.py:1"}}
    rel = t["callers"]["lz"]["releases"][0]  # type: ignore[index]
    # SFTTrainer's `keep`, which every callee release read defines, is not kept (it can never be missing)
    assert rel["entries"] == ["pkg"] and rel["imports"] == {"megatron-core": {
        "megatron.core.models:GPT": "pkg/import_utils.py:1", "megatron.core.utils:old": "pkg/trainer/dpo_trainer.py:1",
        "megatron.core.utils:starred": "pkg/models/helper.py:1"}}
    assert "megatron.core.utils:keep" not in t["callees"]["megatron-core"]["names"]  # type: ignore[index]
    # the first name (in the maps' order) whose import runs each; not OptTrainer (served only under `if`), not a
    # function's import
    assert rel["lazy"] == {"megatron-core": {"megatron.core.utils:old": "pkg.trainer.dpo_trainer:DPOTrainer",
                                             "megatron.core.utils:starred": "pkg.trainer.dpo_trainer:DPOTrainer"}}
    s = _load(t, tmp_path / "table")
    assert s.callers["lz"].releases[0].lazy == rel["lazy"]
    assert gen.read_layout(str(tmp_path / "table"))["callers"]["lz"]["releases"][0]["lazy"] == rel["lazy"]
    u = unmet(s, "lz", "megatron-core", caller_version="1.0", callee_version="0.2.0")  # 0.2.0 has no `old`
    assert u is not None and u.names == (("megatron.core.utils", "old", "pkg/trainer/dpo_trainer.py:1"),)
    assert dict(u.lazy) == {"megatron.core.utils:old": "pkg.trainer.dpo_trainer:DPOTrainer"}
    f = _import_finding(u, "lz", "megatron-core", "1.0", None, "0.2.0", None, s.read)
    assert f.severity == "warning" and "when `from lz import DPOTrainer` (pkg.trainer.dpo_trainer) loads it" in f.title
    assert "`import pkg` alone loads" in f.detail and "ImportError: cannot import name 'old'" in f.detail
    assert f.evidence["lazy"] == {"megatron.core.utils:old": "pkg.trainer.dpo_trainer:DPOTrainer"}
    # 0.1.0 lacks `starred` (lazy) and so GPT is fine: a warning too; with an `import pkg` name unmet, that error
    # alone is reported (what a lazily served name loads is moot when the package does not import)
    u = unmet(s, "lz", "megatron-core", caller_version="1.0", callee_version="0.1.0")
    assert u is not None and [n for _, n, _ in u.names] == ["starred"] and u.lazy
    u = unmet(s, "lz", "megatron-core", caller_version="1.0", callee_version="0.3.0")
    assert u is not None and [n for _, n, _ in u.names] == ["GPT"] and not u.lazy
    assert _import_finding(u, "lz", "megatron-core", "1.0", None, "0.3.0", None, s.read).severity == "error"
