"""installers.gitsrc: real clones from local bare repositories that carry the upstream ref names."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor.errors import InputError
from doctor.installers import gitsrc
from doctor.installers.plan import GitSource
from tests.installers.wheelkit import git, make_source_repo

MEGATRON_URL = "https://github.com/NVIDIA/Megatron-LM.git"
MINDSPEED_URL = "https://gitcode.com/Ascend/MindSpeed.git"


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("repos")
    meg = make_source_repo(root / "Megatron-LM.git", dist="megatron-core",
                           packages={"megatron/core/__init__.py": ""},
                           refs=[("tag", "core_v0.12.1", "0.12.1"), ("branch", "core_r0.16.0", "0.16.0"),
                                 ("branch", "core_r0.16.0", "0.16.2")])  # core_r0.16.0 is a moving branch
    moved_from = git("rev-list", "core_r0.16.0", cwd=root / "Megatron-LM.git").split()[1]
    ms = make_source_repo(root / "MindSpeed.git", dist="mindspeed", packages={"mindspeed/__init__.py": ""},
                          refs=[("branch", "master", "0.12.1"), ("branch", "2.3.0_core_r0.12.1", "0.12.1")])
    return {"root": root, "meg": meg, "meg_old": moved_from, "ms": ms}


def test_clone_tag_and_verify_commit(repos, tmp_path: Path) -> None:
    root = repos["root"]
    src = GitSource("Megatron-LM", MEGATRON_URL, "core_v0.12.1", commit=repos["meg"]["core_v0.12.1"][:10])
    mirrors = gitsrc.parse_mirrors([f"{MEGATRON_URL}={root}/Megatron-LM.git"])
    got = gitsrc.clone(src, tmp_path / "Megatron-LM", mirrors=mirrors)
    assert got == repos["meg"]["core_v0.12.1"]
    assert gitsrc.satisfied(src, tmp_path / "Megatron-LM")
    assert (tmp_path / "Megatron-LM" / "megatron" / "core" / "__init__.py").exists()


def test_moving_branch_checks_out_the_pinned_commit(repos, tmp_path: Path) -> None:
    root = repos["root"]
    src = GitSource("Megatron-LM", MEGATRON_URL, "core_r0.16.0", commit=repos["meg_old"])
    mirrors = {gitsrc._strip(MEGATRON_URL): f"file://{root}/Megatron-LM.git"}  # file:// makes --depth 1 real
    assert gitsrc.clone(src, tmp_path / "m", mirrors=mirrors) == repos["meg_old"]


def test_commit_that_is_not_on_the_ref_fails(repos, tmp_path: Path) -> None:
    root = repos["root"]
    src = GitSource("MindSpeed", MINDSPEED_URL, "2.3.0_core_r0.12.1", commit="f2b0977e")
    with pytest.raises(gitsrc.GitError, match="f2b0977e"):
        gitsrc.clone(src, tmp_path / "MindSpeed", mirrors={gitsrc._strip(MINDSPEED_URL): f"{root}/MindSpeed.git"})


def test_commit_as_ref(repos, tmp_path: Path) -> None:
    root = repos["root"]
    sha = repos["ms"]["master"][:8]
    src = GitSource("MindSpeed", MINDSPEED_URL, sha)  # verl <= 0.7.0 documents `git checkout f2b0977e`
    got = gitsrc.clone(src, tmp_path / "MindSpeed", mirrors={gitsrc._strip(MINDSPEED_URL): f"{root}/MindSpeed.git"})
    assert got.startswith(sha)


def test_existing_non_clone_is_refused(repos, tmp_path: Path) -> None:
    (tmp_path / "MindSpeed").mkdir()
    (tmp_path / "MindSpeed" / "precious.txt").write_text("mine")
    src = GitSource("MindSpeed", MINDSPEED_URL, "master")
    with pytest.raises(gitsrc.GitError, match="not a git clone"):
        gitsrc.clone(src, tmp_path / "MindSpeed", mirrors={gitsrc._strip(MINDSPEED_URL): f"{repos['root']}/MindSpeed.git"})
    assert (tmp_path / "MindSpeed" / "precious.txt").read_text() == "mine"


def test_existing_clone_is_moved_to_the_new_ref(repos, tmp_path: Path) -> None:
    m = {gitsrc._strip(MEGATRON_URL): f"{repos['root']}/Megatron-LM.git"}
    gitsrc.clone(GitSource("Megatron-LM", MEGATRON_URL, "core_v0.12.1"), tmp_path / "M", mirrors=m)
    got = gitsrc.clone(GitSource("Megatron-LM", MEGATRON_URL, "core_r0.16.0"), tmp_path / "M", mirrors=m)
    assert got == repos["meg"]["core_r0.16.0"]


def test_bundle_round_trip(repos, tmp_path: Path) -> None:
    m = {gitsrc._strip(MINDSPEED_URL): f"{repos['root']}/MindSpeed.git"}
    src = GitSource("MindSpeed", MINDSPEED_URL, "2.3.0_core_r0.12.1")
    commit = gitsrc.make_bundle(src, tmp_path / "ms.bundle", tmp_path / "work", mirrors=m)
    assert commit == repos["ms"]["2.3.0_core_r0.12.1"]
    pinned = GitSource("MindSpeed", "https://unreachable.invalid/x.git", "2.3.0_core_r0.12.1", commit=commit)
    assert gitsrc.clone(pinned, tmp_path / "from-bundle", bundle=str(tmp_path / "ms.bundle")) == commit


def test_mirror_mapping() -> None:
    m = gitsrc.parse_mirrors(["https://github.com/NVIDIA=/srv/nvidia", "https://github.com/NVIDIA/Megatron-LM.git=/srv/meg.git"])
    assert gitsrc.map_url("https://github.com/NVIDIA/Megatron-LM.git", m) == "/srv/meg.git"
    assert gitsrc.map_url("https://github.com/NVIDIA/apex.git", m) == "/srv/nvidia/apex.git"
    assert gitsrc.map_url("https://gitcode.com/Ascend/MindSpeed.git", m) == "https://gitcode.com/Ascend/MindSpeed.git"
    assert gitsrc.map_url("https://github.com/NVIDIAX/y.git", m) == "https://github.com/NVIDIAX/y.git"
    with pytest.raises(InputError):
        gitsrc.parse_mirrors(["no-equals-sign"])


def test_existing_clone_follows_a_moved_branch(tmp_path: Path) -> None:
    bare = tmp_path / "MindSpeed.git"
    make_source_repo(bare, dist="mindspeed", packages={"mindspeed/__init__.py": ""}, refs=[("branch", "core_r0.16.0", "0.16.0")])
    m = {gitsrc._strip(MINDSPEED_URL): str(bare)}
    src = GitSource("MindSpeed", MINDSPEED_URL, "core_r0.16.0")
    first = gitsrc.clone(src, tmp_path / "MindSpeed", mirrors=m)
    work = bare.with_name(bare.name + ".work")  # upstream moves the branch
    git("checkout", "-q", "core_r0.16.0", cwd=work)
    git("commit", "-q", "--allow-empty", "-m", "moved", cwd=work)
    git("push", "-q", str(bare), "core_r0.16.0", cwd=work)
    assert gitsrc.satisfied(src, tmp_path / "MindSpeed")  # the local view has not fetched yet
    second = gitsrc.clone(src, tmp_path / "MindSpeed", mirrors=m)
    assert second != first and second == git("rev-parse", "core_r0.16.0", cwd=bare)
    assert gitsrc.satisfied(src, tmp_path / "MindSpeed")


# --- submodules: through mirrors online, from bundles offline ----------------------------------------------

SUB_HOST = "https://submodules.invalid"  # .invalid never resolves: reaching for it fails like an air gap


def _repo_with_submodule(work: Path, bare: Path, files: dict[str, str], sub: tuple[str, Path, str] | None) -> str:
    """A repository (pushed to `bare`) with `files` and optionally one submodule (path, bare repo to add it
    from, URL to record in .gitmodules); returns the commit."""
    work.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=work)
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    if sub is not None:
        path, source, recorded_url = sub
        git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), path, cwd=work)
        git("config", "-f", ".gitmodules", f"submodule.{path}.url", recorded_url, cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "init", cwd=work)
    git("clone", "-q", "--bare", str(work), str(bare))
    return git("rev-parse", "HEAD", cwd=work)


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """top -> outer (submodule) -> inner (nested submodule), recorded with unreachable https URLs."""
    root = tmp_path_factory.mktemp("nested")
    served = root / "served"
    inner = _repo_with_submodule(root / "w-inner", served / "inner.git", {"kernels/inner.txt": "inner v1\n"}, None)
    outer = _repo_with_submodule(root / "w-outer", served / "outer.git", {"outer.txt": "outer v1\n"},
                                 ("third_party/inner", served / "inner.git", f"{SUB_HOST}/inner.git"))
    top = _repo_with_submodule(root / "w-top", served / "top.git", {"setup.py": "# top\n"},
                               ("csrc/third_party/outer", served / "outer.git", f"{SUB_HOST}/outer.git"))
    return {"root": root, "served": served, "inner": inner, "outer": outer, "top": top}


def _check_tree(dest: Path, nested: dict[str, object]) -> None:
    assert (dest / "csrc/third_party/outer/outer.txt").read_text() == "outer v1\n"
    assert (dest / "csrc/third_party/outer/third_party/inner/kernels/inner.txt").read_text() == "inner v1\n"
    assert dict(gitsrc.submodule_commits(dest)) == {"csrc/third_party/outer": nested["outer"],
                                                     "csrc/third_party/outer/third_party/inner": nested["inner"]}


def test_submodules_follow_the_mirrors(nested, tmp_path: Path) -> None:
    mirrors = {SUB_HOST: str(nested["served"])}
    src = GitSource("top", f"{SUB_HOST}/top.git", "main", commit=str(nested["top"]), submodules=True)
    assert gitsrc.clone(src, tmp_path / "top", mirrors=mirrors) == nested["top"]
    _check_tree(tmp_path / "top", nested)
    # without a mirror the recorded https URL is used, and it is unreachable: a clear git error
    unmapped = GitSource("top2", str(nested["served"] / "top.git"), "main", submodules=True)
    with pytest.raises(gitsrc.GitError):
        gitsrc.clone(unmapped, tmp_path / "top2")


def test_offline_install_takes_every_submodule_from_its_bundle(nested, tmp_path: Path) -> None:
    mirrors = {SUB_HOST: str(nested["served"])}
    src = GitSource("top", f"{SUB_HOST}/top.git", "main", submodules=True)
    commit = gitsrc.make_bundle(src, tmp_path / "top.bundle", tmp_path / "work", mirrors=mirrors, keep=True)
    made = gitsrc.bundle_submodules(tmp_path / "work" / "top", tmp_path / "subs")
    assert [m["path"] for m in made] == ["csrc/third_party/outer", "csrc/third_party/outer/third_party/inner"]
    # the air gap: the served repositories are gone and the recorded URLs never resolve
    hidden = nested["root"] / "hidden"
    nested["served"].rename(hidden)
    try:
        bundles = {m["path"]: str(tmp_path / "subs" / m["bundle"]) for m in made}
        pinned = GitSource("top", f"{SUB_HOST}/top.git", "main", commit=commit, submodules=True)
        assert gitsrc.clone(pinned, tmp_path / "offline", bundle=str(tmp_path / "top.bundle"),
                            submodule_bundles=bundles) == commit
        _check_tree(tmp_path / "offline", nested)
        missing = {k: v for k, v in bundles.items() if not k.endswith("inner")}
        with pytest.raises(gitsrc.GitError, match="no bundle for submodule csrc/third_party/outer/third_party/inner"):
            gitsrc.clone(pinned, tmp_path / "offline2", bundle=str(tmp_path / "top.bundle"), submodule_bundles=missing)
    finally:
        hidden.rename(nested["served"])
