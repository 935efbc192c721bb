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


def test_an_unreachable_submodule_is_named_with_the_mirror_that_serves_it(nested, tmp_path: Path) -> None:
    """vllm-ascend's releases/v0.23.0 (2026-12) fetches csrc/third_party/catlass from gitcode.com: with only the
    superproject mirrored (the real-world tier's run, no route to gitcode) the install said "git submodule failed:
    Failed to clone 'csrc/third_party/catlass' a second time, aborting" and "fix the cause (network, index, disk)".
    The error names the submodule, where it was fetched from and why; the fix, the --git-mirror for that URL."""
    top_only = gitsrc.parse_mirrors([f"{SUB_HOST}/top.git={nested['served'] / 'top.git'}"])
    src = GitSource("top", f"{SUB_HOST}/top.git", "main", submodules=True)
    with pytest.raises(gitsrc.GitError) as e:
        gitsrc.clone(src, tmp_path / "a", mirrors=top_only)
    assert str(e.value).startswith(f"submodule csrc/third_party/outer could not be fetched from {SUB_HOST}/outer.git: ")
    assert "Could not resolve host" in str(e.value) or "unable to access" in str(e.value)
    assert f"`--git-mirror {SUB_HOST}/outer.git=URL`" in e.value.fix
    # one level down: the nested submodule's own URL, its path from the top
    with_outer = {**top_only, **gitsrc.parse_mirrors([f"{SUB_HOST}/outer.git={nested['served'] / 'outer.git'}"])}
    with pytest.raises(gitsrc.GitError) as e:
        gitsrc.clone(src, tmp_path / "b", mirrors=with_outer)
    assert "submodule csrc/third_party/outer/third_party/inner could not be fetched" in str(e.value)
    assert f"`--git-mirror {SUB_HOST}/inner.git=URL`" in e.value.fix


def test_a_submodule_mirror_that_is_missing_or_lacks_the_commit_is_said_so(nested, tmp_path: Path) -> None:
    top = f"{SUB_HOST}/top.git={nested['served'] / 'top.git'}"
    src = GitSource("top", f"{SUB_HOST}/top.git", "main", submodules=True)
    nowhere = tmp_path / "nowhere.git"
    with pytest.raises(gitsrc.GitError) as e:
        gitsrc.clone(src, tmp_path / "a", mirrors=gitsrc.parse_mirrors([top, f"{SUB_HOST}/outer.git={nowhere}"]))
    assert f"from {nowhere} (--git-mirror for {SUB_HOST}/outer.git)" in str(e.value)
    assert e.value.fix.startswith(f"The --git-mirror for {SUB_HOST}/outer.git ({nowhere}) did not answer")
    other = tmp_path / "other.git"  # a repository, but not the one the superproject pins a commit of
    _repo_with_submodule(tmp_path / "w-other", other, {"x.txt": "x\n"}, None)
    with pytest.raises(gitsrc.GitError) as e:
        gitsrc.clone(src, tmp_path / "b", mirrors=gitsrc.parse_mirrors([top, f"{SUB_HOST}/outer.git={other}"]))
    assert "submodule csrc/third_party/outer could not be fetched" in str(e.value)
    assert e.value.fix.startswith(f"The copy at {other} lacks the commit the superproject pins for "
                                  "csrc/third_party/outer")


def test_the_text_output_prints_a_git_errors_fix_under_it() -> None:
    """`doctor install --download-only` ends on the GitError itself (exit 1): --json carried its fix, the text showed
    only the message, so the --git-mirror line was lost on a terminal."""
    import io

    from doctor.cli.options import fail
    from doctor.console import Console

    err = io.StringIO()
    console = Console(out=io.StringIO(), err=err)
    with pytest.raises(SystemExit):
        fail(console, "install", gitsrc.GitError("submodule x could not be fetched", fix="Use `--git-mirror U=URL`."))
    assert err.getvalue().splitlines() == ["error: submodule x could not be fetched", "  fix: Use `--git-mirror U=URL`."]


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


# -- issue 15 ----------------------------------------------------------------------------------------------------


def _scm_repo(root: Path) -> tuple[Path, str]:
    """vllm-ascend's shape: a release branch whose tip is commits past the last tag (setuptools-scm versioning)."""
    work = root / "va.work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / "setup.py").write_text("# setuptools-scm\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "rc1", cwd=work)
    git("tag", "v0.23.0rc1", cwd=work)
    for i in range(3):
        (work / "f.txt").write_text(str(i))
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", f"fix {i}", cwd=work)
    git("branch", "releases/v0.23.0", cwd=work)
    bare = root / "va.git"
    git("clone", "-q", "--bare", str(work), str(bare))
    return bare, git("rev-parse", "HEAD", cwd=work)


def test_scm_source_is_cloned_with_its_tags_and_bundled_with_them(tmp_path: Path) -> None:
    """Item 2: a shallow clone drops the tags, and setuptools-scm then calls vllm-ascend 0.1.devN."""
    from doctor.installers import versionfile

    bare, tip = _scm_repo(tmp_path)
    url = "https://github.com/vllm-project/vllm-ascend.git"
    mirrors = {gitsrc._strip(url): f"file://{bare}"}  # file:// so that --depth would really be shallow
    src = GitSource("vllm-ascend", url, "releases/v0.23.0", commit=tip, version_from=versionfile.SCM, tags=True)
    gitsrc.clone(src, tmp_path / "clone", mirrors=mirrors)
    assert versionfile.read(versionfile.SCM, tmp_path / "clone") == "0.23.0rc2.dev3"
    # what the old shallow clone computed: no tag reachable, so no version to expect
    shallow = GitSource("vllm-ascend", url, "releases/v0.23.0", commit=tip)
    gitsrc.clone(shallow, tmp_path / "shallow", mirrors=mirrors)
    assert versionfile.read(versionfile.SCM, tmp_path / "shallow") is None
    # --download-only bundles: the offline clone computes the same version
    gitsrc.make_bundle(src, tmp_path / "va.bundle", tmp_path / "work", mirrors=mirrors)
    gitsrc.clone(src, tmp_path / "offline", bundle=str(tmp_path / "va.bundle"))
    assert versionfile.read(versionfile.SCM, tmp_path / "offline") == "0.23.0rc2.dev3"


def test_existing_clone_at_the_pinned_commit_is_left_alone_and_a_dirty_one_is_refused(repos, tmp_path: Path) -> None:
    """Item 1: an existing clone counts only at the pinned commit; elsewhere it is fetched and checked out, but
    local changes are an error naming them, never a silent reset."""
    root = repos["root"]
    mirrors = gitsrc.parse_mirrors([f"{MEGATRON_URL}={root}/Megatron-LM.git"])
    old = GitSource("Megatron-LM", MEGATRON_URL, "core_r0.16.0", commit=repos["meg_old"])
    dest = tmp_path / "Megatron-LM"
    gitsrc.clone(old, dest, mirrors=mirrors)
    # pinned there: nothing to do, even with the origin gone
    assert gitsrc.clone(old, dest, mirrors={gitsrc._strip(MEGATRON_URL): str(tmp_path / "gone.git")}) == repos["meg_old"]
    new = GitSource("Megatron-LM", MEGATRON_URL, "core_r0.16.0", commit=repos["meg"]["core_r0.16.0"])
    assert not gitsrc.satisfied(new, dest)
    (dest / "fake.json").write_text("{}")  # a local change to a tracked file
    with pytest.raises(gitsrc.GitError, match="local changes.*fake.json") as e:
        gitsrc.clone(new, dest, mirrors=mirrors)
    assert "stash" in e.value.fix and gitsrc.head(dest) == repos["meg_old"]
    assert (dest / "fake.json").read_text() == "{}"
    git("checkout", "--", "fake.json", cwd=dest)
    assert gitsrc.clone(new, dest, mirrors=mirrors) == repos["meg"]["core_r0.16.0"]


def test_git_errors_read_cleanly_and_point_at_git_mirror(tmp_path: Path) -> None:
    """Item 7: no `git -c protocol.file.allow=always: …`; the fix names --git-mirror for a source out of reach."""
    src = GitSource("MindSpeed", MINDSPEED_URL, "core_r0.16.0", commit="e4772499f7eb9fa9a68919dd1eaddef00e915b2d")
    with pytest.raises(gitsrc.GitError) as e:
        gitsrc.clone(src, tmp_path / "MindSpeed", mirrors={gitsrc._strip(MINDSPEED_URL): str(tmp_path / "nowhere.git")})
    msg = str(e.value)
    assert msg.startswith("MindSpeed: cannot clone ") and "-c " not in msg and "protocol.file" not in msg
    assert f"--git-mirror {MINDSPEED_URL}=URL" in e.value.fix
    assert gitsrc._subcommand(["-c", "protocol.file.allow=always", "submodule", "update"]) == "submodule"


@pytest.mark.parametrize("ref", ["no-such-branch", "0123456789abcdef0123456789abcdef01234567"])
def test_a_ref_the_reached_repository_lacks_is_named_not_called_unreachable(repos, ref, tmp_path: Path) -> None:
    """`--git-ref MindSpeed=no-such-branch` through a mirror that answers: the repository was reached, so the fix
    is the ref (what the repository has), not "clone it from a mirror" (the run already does)."""
    mirror = f"{repos['root']}/MindSpeed.git"
    src = GitSource("MindSpeed", MINDSPEED_URL, ref)
    with pytest.raises(gitsrc.GitError) as e:
        gitsrc.clone(src, tmp_path / "MindSpeed", mirrors=gitsrc.parse_mirrors([f"{MINDSPEED_URL}={mirror}"]))
    assert "cannot be reached" not in e.value.fix and "--git-mirror" not in e.value.fix.split(";")[0], e.value.fix
    assert f"{mirror} has no branch, tag or commit {ref}" in e.value.fix
    assert f"git ls-remote --heads --tags {mirror}" in e.value.fix and "--git-ref MindSpeed=REF" in e.value.fix


def test_a_tag_a_full_clone_lacks_is_named_not_fetch_head(tmp_path: Path) -> None:
    """A source cloned with its history and tags (vllm with `--git-ref vllm=v0.18.0`, no commit pinned) from a
    mirror that has other tags only: git clones it fine, the tag then resolves to nothing. The run said `has no
    commit FETCH_HEAD` with git's `--detach does not take a path argument 'FETCH_HEAD'` (no fetch ever ran);
    it names the missing ref and what to change."""
    bare, _tip = _scm_repo(tmp_path)
    url = "https://github.com/vllm-project/vllm.git"
    src = GitSource("vllm", url, "v0.18.0", tags=True)
    with pytest.raises(gitsrc.GitError) as e:
        gitsrc.clone(src, tmp_path / "vllm", mirrors={gitsrc._strip(url): str(bare)})
    assert "FETCH_HEAD" not in str(e.value) and "v0.18.0" in str(e.value), str(e.value)
    assert f"{bare} has no branch, tag or commit v0.18.0" in e.value.fix and "--git-ref vllm=REF" in e.value.fix


def _gut(dest: Path) -> list[str]:
    """What the restore of issue 21 left: every tracked file deleted, `.git` kept."""
    tracked = git("ls-files", cwd=dest).split()
    for f in tracked:
        (dest / f).unlink()
    return tracked


def test_a_gutted_clone_at_the_pinned_commit_is_not_satisfied_and_is_checked_out_again(repos, tmp_path: Path) -> None:
    """Issue 21 item 3: HEAD at the pinned commit is not enough; the work tree must be that commit's."""
    from doctor.installers.plan import CLONE, Step
    from doctor.installers.satisfy import live_view, satisfied

    root = repos["root"]
    mirrors = gitsrc.parse_mirrors([f"{MINDSPEED_URL}={root}/MindSpeed.git"])
    src = GitSource("MindSpeed", MINDSPEED_URL, "master", commit=repos["ms"]["master"], module="mindspeed")
    dest = tmp_path / "src" / "MindSpeed"
    gitsrc.clone(src, dest, mirrors=mirrors)
    step = Step("clone-mindspeed", CLONE, "c", source=src)

    class Env:
        dists: dict = {}

    def view():
        return live_view(Env(), src_dir=str(tmp_path / "src"), sources=[src], env_ok=True)

    assert satisfied(step, view())
    tracked = _gut(dest)
    assert gitsrc.head(dest) == repos["ms"]["master"]  # what the old check read
    assert not satisfied(step, view())
    from doctor.installers.execute import clone_detail

    assert clone_detail(step, view()).startswith(f"{len(tracked)} tracked file(s) missing")
    # the run restores it, offline (the origin is gone): checkout, not a fetch
    gitsrc.clone(src, dest, mirrors={gitsrc._strip(MINDSPEED_URL): str(tmp_path / "gone.git")})
    assert sorted(git("ls-files", cwd=dest).split()) == sorted(tracked) and all((dest / f).is_file() for f in tracked)
    assert git("status", "--porcelain", cwd=dest) == ""
    assert satisfied(step, view())


def test_an_edited_clone_at_the_pinned_commit_is_refused_naming_the_files(repos, tmp_path: Path) -> None:
    root = repos["root"]
    mirrors = gitsrc.parse_mirrors([f"{MINDSPEED_URL}={root}/MindSpeed.git"])
    src = GitSource("MindSpeed", MINDSPEED_URL, "master", commit=repos["ms"]["master"], module="mindspeed")
    dest = tmp_path / "MindSpeed"
    gitsrc.clone(src, dest, mirrors=mirrors)
    (dest / "mindspeed" / "__init__.py").write_text("patched = True\n")
    with pytest.raises(gitsrc.GitError, match=r"local changes \(mindspeed/__init__.py\).*pinned commit") as e:
        gitsrc.clone(src, dest, mirrors=mirrors)
    assert "stash" in e.value.fix
    assert (dest / "mindspeed" / "__init__.py").read_text() == "patched = True\n"  # never reset


def test_checkout_lines_fetch_only_the_pinned_commit(repos, tmp_path: Path) -> None:
    """The lines megatron-missing prints, run as a shell would against a bare repository that serves commits by sha
    as GitHub does: the work tree is at the pinned commit (not the branch's newer tip) and holds that one commit,
    not the history. Without a full commit pinned, the ref is fetched."""
    import subprocess

    bare = repos["root"] / "Megatron-LM.git"
    git("config", "uploadpack.allowReachableSHA1InWant", "true", cwd=bare)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=bare)
    old, tip = repos["meg_old"], repos["meg"]["core_r0.16.0"]
    assert old != tip
    for dest, commit, at in (("pinned", old, old), ("by-ref", old[:10], tip)):
        lines = gitsrc.checkout_lines(f"file://{bare}", "core_r0.16.0", commit, dest)
        for line in lines:
            subprocess.run(line, shell=True, cwd=tmp_path, check=True, capture_output=True)
        assert git("rev-parse", "HEAD", cwd=tmp_path / dest).strip() == at, dest
        assert git("rev-list", "--count", "HEAD", cwd=tmp_path / dest).strip() == "1", dest  # no history
        assert (tmp_path / dest / "megatron" / "core" / "__init__.py").is_file(), dest


def test_a_checkout_that_cannot_write_says_so_not_that_the_commit_is_missing(tmp_path) -> None:
    """git 2.39 on a full tmpfs (a real verl v0.7.1 checkout, 40 MB): 534 'unable to write file' lines, then
    'sha1 file ... write error. Out of diskspace' or just 'Aborting'; on a read-only tree 'unable to create file'."""
    import subprocess

    from doctor.installers.gitsrc import write_failure

    full = subprocess.CompletedProcess([], 128, "", "error: unable to write file tests/a.py\n"
                                       "fatal: sha1 file '/v/src/verl/.git/index.lock' write error. Out of diskspace\n")
    e = write_failure(full, "/v/src/verl")
    assert e is not None and "Out of diskspace" in e.message and "df -h /v/src/verl" in e.fix
    aborting = subprocess.CompletedProcess([], 1, "", "error: unable to write file docs/x.md\nAborting\n")
    e = write_failure(aborting, "/v/src/verl")
    assert e is not None and "is full" in e.fix
    ro = subprocess.CompletedProcess([], 1, "", "error: unable to create file setup.py: Read-only file system\n")
    e = write_failure(ro, tmp_path)
    assert e is not None and f"findmnt -T {tmp_path}`" in e.fix
    # `chattr +i` on a user's --src: the first clone cannot make its directory (not "cannot be reached")
    imm = subprocess.CompletedProcess([], 128, "", "fatal: could not create work tree dir '/u/vllm': Operation not "
                                      "permitted\n")
    e = write_failure(imm, tmp_path / "vllm")  # not made: the directory that refused it is named
    assert e is not None and f"lsattr -d {tmp_path}`" in e.fix
    assert write_failure(subprocess.CompletedProcess([], 128, "", "fatal: reference is not a tree: 0000\n"), "/x") is None
