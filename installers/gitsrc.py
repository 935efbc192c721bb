"""Git sources: clone a repository at an exact ref, verify the commit, map URLs to mirrors, make bundles.

MindSpeed is not installable from PyPI (the `mindspeed` there is a placeholder) and Megatron-LM refs are easy
to get wrong (`core_v0.12.1` is a tag, `core_r0.16.0` a moving branch that reported 0.16.2 by the time verl 0.8.0
used it). So every source carries its ref *and* the commit that ref had when the profile was verified; a clone whose
HEAD is not that commit is an error, not a warning. `--git-mirror ORIGINAL=URL` maps gitcode/github URLs to
internal mirrors; air-gapped hosts clone from git bundles made by `--download-only`.

Submodules (vllm-ascend's third-party kernels) follow the same rules: their URLs go through the mirrors, and
`--download-only` bundles each one at the commit the superproject records, so an offline install never
reaches for the network to fetch them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from doctor.errors import DoctorError, InputError
from doctor.installers.plan import GitSource
from doctor.installers.restoreline import Line, did, left

_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")  # git reads hex object names in either case
GIT_TIMEOUT = 1800.0  # a full Megatron-LM clone over a slow link


class GitError(DoctorError):
    """A clone/fetch/checkout failed or the checked-out commit is not the pinned one (exit 1 in a run).
    `fix` is the line a report shows for it."""

    exit_code = 1
    fix_apart = True

    def __init__(self, message: str, *, fix: str = "") -> None:
        super().__init__(message)
        self.fix = fix


def unreachable_fix(src: GitSource) -> str:
    return (f"If {src.url} cannot be reached from this host, clone it from a mirror: `--git-mirror {src.url}=URL` "
            "(a local path or an internal git server), or install from a wheelhouse made by `--download-only`.")


# what git says when the repository answered but has no such branch or tag (`clone --branch`)
_NO_REF = ("not found in upstream", "could not find remote branch", "couldn't find remote ref")


def missing_ref_fix(src: GitSource, url: str) -> str:
    """The repository was reached and lacks the ref: the ref is what to change (usually one chosen with --git-ref),
    not the way the repository is reached."""
    return (f"{url} has no branch, tag or commit {src.ref}: list its branches and tags with `git ls-remote --heads "
            f"--tags {url}` and choose one with --git-ref {src.name}=REF; if {src.ref} is the profile's own ref, point "
            "--git-mirror at a copy that has it.")


# what git says when it cannot write a clone's files (git 2.39: "unable to write file X", "sha1 file '...index.lock'
# write error. Out of diskspace", "unable to create file X: Permission denied", "could not create work tree dir 'X':
# Operation not permitted" (an immutable --src), "... Read-only file system")
_FULL = ("no space left on device", "out of diskspace", "disk quota exceeded")
_UNWRITABLE = ("permission denied", "read-only file system", "operation not permitted")


def write_failure(cp: subprocess.CompletedProcess[str], dest: str | Path) -> GitError | None:
    """The error for a clone or checkout that failed writing `dest` (a full or read-only disk), not reaching or
    finding the ref: the fix is on this host. None when git's output names no such cause."""
    lines = [ln.strip() for ln in (cp.stderr or "").splitlines() if ln.strip()]
    full = next((ln for ln in lines if any(m in ln.lower() for m in _FULL)), None) or \
        next((ln for ln in lines if "unable to write file" in ln.lower()), None)
    if full is not None:
        return GitError(f"git could not write {dest}: {full.removeprefix('fatal: ').removeprefix('error: ')}",
                        fix=f"The file system that holds {dest} is full: free space there (`df -h {dest}`), then run "
                            "`doctor install` again.")
    denied = next((ln for ln in lines if any(m in ln.lower() for m in ("unable to", "could not create", "cannot mkdir"))
                   and any(m in ln.lower() for m in _UNWRITABLE)), None)
    if denied is not None:
        at = Path(dest)
        while not at.exists() and at != at.parent:  # a clone not made yet: the directory that refused it
            at = at.parent
        return GitError(f"git could not write {dest}: {denied.removeprefix('fatal: ').removeprefix('error: ')}",
                        fix=f"{at} cannot be written: run `doctor install` as the user who owns it, or make it "
                            f"writable (`ls -ld {at}`; `lsattr -d {at}` shows an immutable flag, `findmnt -T {at}` "
                            "a read-only mount), then run it again.")
    return None


def checkout_lines(url: str, ref: str, commit: str | None, dest: str) -> tuple[str, str, str]:
    """The shell lines that put `dest` at the pinned commit by fetching that one commit (`--depth 1`), not the
    repository's history (a full Megatron-LM clone is hundreds of MB): GitHub serves any commit by its full sha
    (uploadpack.allowReachableSHA1InWant), and a branch or tag by name when no full commit is pinned. The
    directory is a work tree the user keeps: an editable install or PYTHONPATH reads its files."""
    want = commit if commit and len(commit) == 40 and is_sha(commit) else ref
    return (f"git init {dest}", f"git -C {dest} fetch --depth 1 {url} {want}", f"git -C {dest} checkout FETCH_HEAD")


def is_sha(ref: str) -> bool:
    return bool(_SHA.match(ref))


def parse_mirrors(specs: Sequence[str]) -> dict[str, str]:
    """`ORIGINAL=URL` strings -> mapping; InputError on a spec without '=' or with an empty side."""
    out: dict[str, str] = {}
    for spec in specs:
        orig, sep, url = spec.partition("=")
        if not sep or not orig.strip() or not url.strip():
            raise InputError(f"expected ORIGINAL=URL, got {spec!r}", source="--git-mirror")
        out[_strip(orig.strip())] = url.strip()
    return out


def _strip(url: str) -> str:
    url = url.rstrip("/")
    return url[:-4] if url.endswith(".git") else url


def map_url(url: str, mirrors: Mapping[str, str]) -> str:
    """Longest matching prefix wins: `https://github.com/NVIDIA=/srv/git/nvidia` maps every NVIDIA repo,
    `https://github.com/NVIDIA/Megatron-LM.git=/srv/megatron.git` maps just that one."""
    key = _strip(url)
    best = ""
    for orig in mirrors:
        if (key == orig or key.startswith(orig + "/")) and len(orig) > len(best):
            best = orig
    if not best:
        return url
    target = mirrors[best]
    if key == best:
        return target
    rest = key[len(best):]
    return target.rstrip("/") + rest + (".git" if url.rstrip("/").endswith(".git") else "")


Log = Callable[[str], None]


def _git(args: Sequence[str], *, cwd: str | Path | None = None, log: Log | None = None,
         timeout: float = GIT_TIMEOUT, check: bool = True) -> subprocess.CompletedProcess[str]:
    argv = ["git", "-c", "advice.detachedHead=false", *args]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    if log:
        log("$ " + " ".join(argv) + (f"   (in {cwd})" if cwd else ""))
    try:
        cp = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {timeout:.0f} s") from None
    if log and (cp.stdout or cp.stderr):
        log((cp.stdout + cp.stderr).rstrip())
    if check and cp.returncode != 0:
        raise GitError(f"git {_subcommand(args)} failed: {_last_line(cp)}")
    return cp


def _subcommand(args: Sequence[str]) -> str:
    """The git subcommand of an argument list, skipping `-c key=value` options (never shown to the user)."""
    rest = list(args)
    while rest and rest[0] == "-c":
        rest = rest[2:]
    return rest[0] if rest else "?"


def _last_line(cp: subprocess.CompletedProcess[str]) -> str:
    lines = [ln.strip() for ln in (cp.stderr or cp.stdout or "").splitlines() if ln.strip()]
    msg = lines[-1] if lines else f"exit status {cp.returncode}"
    return msg[len("fatal: "):] if msg.startswith("fatal: ") else msg


def describe(dest: str | Path) -> str | None:
    """`git describe --tags --long` of HEAD (what setuptools-scm reads), None without a reachable tag."""
    if not (Path(dest) / ".git").exists():  # not its own work tree: never describe an enclosing repository
        return None
    cp = _git(["describe", "--tags", "--long"], cwd=dest, check=False, timeout=60)
    return cp.stdout.strip() if cp.returncode == 0 and cp.stdout.strip() else None


def changes(dest: str | Path) -> list[tuple[str, str]]:
    """(`git status --porcelain` XY code, path) of every tracked file that differs from HEAD (untracked files
    are left alone by a checkout, and a build leaves some: they do not make a work tree incomplete)."""
    cp = _git(["status", "--porcelain", "--untracked-files=no"], cwd=dest, check=False, timeout=120)
    return [(ln[:2], ln[3:]) for ln in cp.stdout.splitlines() if ln.strip()]


def dirty(dest: str | Path) -> list[str]:
    """Tracked files with local changes in a clone (deleted ones included)."""
    return [path for _code, path in changes(dest)]


def deleted_only(changed: Sequence[tuple[str, str]]) -> bool:
    """Every change is a deleted tracked file: `git checkout` restores them and loses no one's work."""
    return bool(changed) and all(code.strip() == "D" for code, _p in changed)


def named(paths: Sequence[str], n: int = 5, unit: str = " files") -> str:
    """The first `n` of `paths`, and how many there are when that is not all of them."""
    return ", ".join(paths[:n]) + (f" … ({len(paths)}{unit})" if len(paths) > n else "")


def restore_deleted(dest: Path, changed: Sequence[tuple[str, str]], *, log: Log | None = None) -> None:
    """Check the deleted tracked files out again from HEAD (in chunks: a gutted tree has thousands)."""
    paths = [p for _c, p in changed]
    if log:
        log(f"{dest}: {len(paths)} tracked file(s) missing at HEAD ({named(paths)}): checking them out again")
    for i in range(0, len(paths), 500):
        _git(["checkout", "HEAD", "--", *paths[i:i + 500]], cwd=dest, log=None)


def head(dest: str | Path) -> str | None:
    """The checked-out commit of a clone, None when `dest` is not a git work tree."""
    if not (Path(dest) / ".git").exists():
        return None
    cp = _git(["rev-parse", "HEAD"], cwd=dest, check=False, timeout=30)
    return cp.stdout.strip() if cp.returncode == 0 else None


def position(dest: str | Path) -> dict[str, str] | None:
    """Where an existing clone is before a run moves it: its path, HEAD commit and the branch checked out ("" when
    detached). None when `dest` is not a clone (a fresh clone is the run's own: nothing to put back)."""
    h = head(dest)
    if h is None:
        return None
    cp = _git(["symbolic-ref", "-q", "HEAD"], cwd=dest, check=False, timeout=30)
    return {"path": str(dest), "head": h, "branch": cp.stdout.strip() if cp.returncode == 0 else ""}


def put_back(pos: Mapping[str, str], *, moved_to: str | None = None, log: Log | None = None) -> Line:
    """Check a clone the run moved back out where `position` found it (its branch, or its detached commit), so a
    failed run or a `--rollback` leaves a user's checkout as it was. Only a clone still where the run left it
    (`moved_to`; with none, the run stopped mid-checkout) and with no tracked file changed is moved: anything else is
    someone's later work, left as it is. Returns what was done, for the log (marked `left` when it left the clone
    elsewhere)."""
    dest = pos["path"]
    now = head(dest)
    if now is None:
        return left(dest, "not a git clone any more; left as it is")
    branch = _git(["symbolic-ref", "-q", "HEAD"], cwd=dest, check=False, timeout=30).stdout.strip()
    if now == pos["head"] and branch == pos["branch"]:
        return did(dest, f"already at {pos['branch'] or pos['head']}")
    if moved_to and not matches(now, moved_to):
        return left(dest, f"at {now[:12]} now, not at the {moved_to[:12]} the run checked out; left as it is")
    changed = changes(dest)
    if changed:
        return left(dest, f"tracked files changed since the run ({named([p for _c, p in changed])}); left as it is")
    name = pos["branch"].removeprefix("refs/heads/")
    cp = _git(["checkout", "-q", name] if name else ["checkout", "-q", "--detach", pos["head"]], cwd=dest, log=log,
              check=False)
    if cp.returncode != 0:
        return left(dest, f"could not check {name or pos['head']} out again: {_last_line(cp)}")
    return did(dest, f"back at {name or pos['head']}")


def _resolve(dest: str | Path, ref: str) -> str | None:
    for cand in (f"refs/tags/{ref}^{{commit}}", f"refs/remotes/origin/{ref}^{{commit}}", f"{ref}^{{commit}}"):
        cp = _git(["rev-parse", "--verify", "--quiet", cand], cwd=dest, check=False, timeout=30)
        if cp.returncode == 0 and cp.stdout.strip():
            return cp.stdout.strip()
    return None


def matches(commit: str | None, want: str | None) -> bool:
    return bool(commit and want and commit.lower().startswith(want.lower()))


def satisfied(src: GitSource, dest: str | Path, *, at: str | None = None) -> bool:
    """Already cloned at the pinned commit (or, with no commit pinned, at what the ref names locally).
    `at`: the clone's HEAD when the caller has just read it (one `git rev-parse` per source, not two)."""
    h = at or head(dest)
    if h is None:
        return False
    if src.commit:
        return matches(h, src.commit)
    if is_sha(src.ref):
        return matches(h, src.ref)
    return _resolve(dest, src.ref) == h


def refusal(src: GitSource, dest: str | Path) -> GitError | None:
    """Why `clone` refuses `dest` as it is (a directory that is not a clone; a clone with tracked files changed, not
    only deleted: the user's work, never reset), or None. The run asks this of every clone before its first change
    too, so a user's edited checkout stops it there, not after the steps before its clone step ran and were undone.
    Complete means HEAD at the pinned commit *and* every tracked file as that commit has it; deleted files are
    checked out again by `clone`."""
    dest = Path(dest)
    if not dest.exists():
        return None
    if head(dest) is None:
        return GitError(f"{dest} exists and is not a git clone; move it away or choose another --src") \
            if any(dest.iterdir()) else None
    changed = changes(dest)
    if not changed or deleted_only(changed):
        return None
    want = src.commit or (src.ref if is_sha(src.ref) else None)
    at_pin = bool(want and matches(head(dest), want))
    return GitError(f"{dest} has local changes ({named([p for _c, p in changed])})" +
                    (f"; it is at the pinned commit {want}, but its work tree is not that commit's" if at_pin
                     else f"; the profile needs {src.name} at {want or src.ref}"),
                    fix=f"Commit or stash them (git -C {dest} stash), or move the clone away, then run again; "
                        "or choose this checkout deliberately with --git-ref.")


def clone(src: GitSource, dest: str | Path, *, mirrors: Mapping[str, str] | None = None, bundle: str | None = None,
          log: Log | None = None, shallow: bool = True, submodule_bundles: Mapping[str, str] | None = None) -> str:
    """Make `dest` a clone of `src` checked out (detached) at the pinned commit; return that commit.

    A source whose version comes from its tags (`src.tags`, setuptools-scm) is cloned with its history and tags,
    so the project computes its real version. From a bundle, the bundle is the origin (air-gapped), and
    `submodule_bundles` ({path in the superproject: bundle file}) are the origins of its submodules. An existing
    clone already at the pinned commit is left as it is; one elsewhere is fetched and checked out, unless it has
    local changes (an error naming them: the doctor never resets a user's work). An existing directory that is
    not a clone is refused rather than overwritten."""
    dest = Path(dest)
    url = bundle or map_url(src.url, mirrors or {})
    want = src.commit or (src.ref if is_sha(src.ref) else None)
    refused = refusal(src, dest)
    if refused is not None:
        raise refused
    if head(dest) is None:
        target = _fresh_clone(src, dest, url, want, log=log, full=bool(bundle) or not shallow or src.tags)
    else:
        changed = changes(dest)
        if deleted_only(changed):
            restore_deleted(dest, changed, log=log)
            refused = refusal(src, dest)
            if refused is not None:
                raise refused
        if want and matches(head(dest), want):
            return _finish(src, dest, want, bundle, mirrors, submodule_bundles, log)
        target = _refetch(src, dest, url, want, log=log)
    _checkout(src, dest, url, target, want, log=log)
    return _finish(src, dest, want, bundle, mirrors, submodule_bundles, log)


def _fresh_clone(src: GitSource, dest: Path, url: str, want: str | None, *, log: Log | None, full: bool) -> str:
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        if full or is_sha(src.ref):
            _git(["clone", "--no-checkout", url, str(dest)], log=log)
        else:
            _git(["clone", "--depth", "1", "--no-checkout", "--branch", src.ref, url, str(dest)], log=log)
    except GitError as e:
        why = e.message.split(' failed: ', 1)[-1]
        wrote = write_failure(subprocess.CompletedProcess([], 1, "", why), dest)
        if wrote is not None:
            raise GitError(f"{src.name}: {wrote.message}", fix=wrote.fix) from None
        raise GitError(f"{src.name}: cannot clone {url}: {why}",
                       fix=missing_ref_fix(src, url) if any(m in why.lower() for m in _NO_REF) else unreachable_fix(src)
                       ) from None
    target = want or _resolve(dest, src.ref)
    if target is None:  # cloned whole, and the ref names no branch or tag in it (a shallow --branch clone fails above)
        raise GitError(f"{src.name}: {url} has no branch or tag {src.ref}", fix=missing_ref_fix(src, url))
    return target


def _refetch(src: GitSource, dest: Path, url: str, want: str | None, *, log: Log | None) -> str:
    """Fetch into an existing clone from `url` by URL: its `origin` stays what its owner set (a user's checkout
    named with --src keeps its remote; a mirror or a wheelhouse bundle is not written into its configuration)."""
    if is_sha(src.ref):
        _git(["fetch", url, src.ref], cwd=dest, log=log, check=False)
    else:
        # update the local tag / remote-tracking branch, so the ref resolves to what it names *now*
        for spec in (f"+refs/tags/{src.ref}:refs/tags/{src.ref}", f"+refs/heads/{src.ref}:refs/remotes/origin/{src.ref}"):
            if _git(["fetch", url, spec], cwd=dest, log=log, check=False).returncode == 0:
                break
    if src.tags:
        _git(["fetch", "--tags", url], cwd=dest, log=log, check=False)
    return want or _resolve(dest, src.ref) or src.ref


def _checkout(src: GitSource, dest: Path, url: str, target: str, want: str | None, *, log: Log | None) -> None:
    cp = first = _git(["checkout", "--detach", target], cwd=dest, log=log, check=False)
    if cp.returncode != 0 and want:
        # a shallow clone of a moving branch may not contain the pinned commit any more: fetch it
        _git(["fetch", url, want], cwd=dest, log=log, check=False)
        cp = _git(["checkout", "--detach", want], cwd=dest, log=log, check=False)
        if cp.returncode != 0 and (dest / ".git" / "shallow").exists():
            _git(["fetch", "--unshallow", "--tags", url], cwd=dest, log=log, check=False)
            cp = _git(["checkout", "--detach", want], cwd=dest, log=log, check=False)
    if cp.returncode != 0:
        wrote = write_failure(first, dest) or write_failure(cp, dest)
        if wrote is not None:
            raise GitError(f"{src.name}: {wrote.message}", fix=wrote.fix)
        raise GitError(f"{src.name}: {url} has no commit {target} (ref {src.ref}): {_last_line(cp)}",
                       fix=unreachable_fix(src) if not want else missing_ref_fix(src, url) if not src.commit else
                       f"The profile pins {src.name} to {want}; point --git-mirror at a copy that has it, or choose "
                       f"another ref deliberately with --git-ref {src.name}=REF.")


def _finish(src: GitSource, dest: Path, want: str | None, bundle: str | None, mirrors: Mapping[str, str] | None,
            submodule_bundles: Mapping[str, str] | None, log: Log | None) -> str:
    got = head(dest)
    if want and not matches(got, want):
        raise GitError(f"{src.name}: {src.ref} is at {got}, but the profile pins commit {want}",
                       fix=f"Point --git-mirror at a copy with commit {want}, or choose the checkout deliberately with "
                           f"--git-ref {src.name}=REF.")
    if src.submodules:
        if bundle is not None:
            subs = dict(submodule_bundles or {})

            def from_bundle(path: str, url: str) -> str:
                if path not in subs:
                    raise GitError(f"{src.name}: the wheelhouse has no bundle for submodule {path} "
                                   f"(make it again with `doctor install --download-only`)")
                return subs[path]

            update_submodules(dest, from_bundle, log=log, local=True)
        else:
            m = dict(mirrors or {})
            update_submodules(dest, lambda path, url: map_url(url, m), log=log, local=bool(m))
    assert got is not None
    return got


def update_submodules(repo: str | Path, url_for: Callable[[str, str], str], *, log: Log | None = None,
                      local: bool = False, prefix: str = "") -> None:
    """`git submodule update --init --recursive`, one level at a time so that every submodule's URL can be
    replaced first: `url_for(path from the top, url .gitmodules gives)` returns the URL to fetch from (a
    mirror, or a bundle file). `local` allows the file transport, which git refuses for submodules by
    default (CVE-2022-39253), for the mirrors and bundles the user named."""
    repo = Path(repo)
    if not (repo / ".gitmodules").is_file():
        return
    _git(["submodule", "init"], cwd=repo, log=log)
    listed = _git(["config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$"], cwd=repo, check=False)
    paths, urls = [], {}
    for line in listed.stdout.splitlines():
        key, _, path = line.partition(" ")
        name = key[len("submodule."):-len(".path")]
        url = _git(["config", "--get", f"submodule.{name}.url"], cwd=repo, check=False).stdout.strip()
        fetch_from = url_for(prefix + path, url)
        _git(["config", f"submodule.{name}.url", fetch_from], cwd=repo, log=log)
        paths.append(path)
        urls[fetch_from] = (path, prefix + path, url)
    cp = _git([*(["-c", "protocol.file.allow=always"] if local else []), "submodule", "update", "--checkout"],
              cwd=repo, log=log, check=False)
    if cp.returncode != 0:
        raise write_failure(cp, repo) or submodule_failure(cp, urls)
    for path in paths:
        update_submodules(repo / path, url_for, log=log, local=local, prefix=prefix + path + "/")


def submodule_failure(cp: subprocess.CompletedProcess[str], urls: Mapping[str, tuple[str, str, str]]) -> GitError:
    """The error for a `git submodule update` that failed: which submodule, from where, and, when git could not
    reach it, the --git-mirror that serves it (a superproject's mirror does not carry its submodules: vllm-ascend's
    releases/v0.23.0 fetches csrc/third_party/catlass from gitcode.com, which an air-gapped host cannot reach, and
    "fix the cause (network, index, disk)" named none of that). `urls`: {URL fetched from: (path in this repository,
    path from the top, URL .gitmodules gives)}."""
    said = cp.stderr or cp.stdout or ""
    # git 2.39: "clone of 'URL' into submodule path 'P' failed", "unable to access 'URL/'", "repository 'URL' does not
    # exist", "Fetched in submodule path 'P', but it did not contain SHA"
    failed = next((u for u, (here, _, _) in urls.items()
                   if f"'{u}'" in said or f"'{u}/'" in said or f"submodule path '{here}'" in said), None)
    if failed is None:
        return GitError(f"git submodule update failed: {_last_line(cp)}")
    _, path, declared = urls[failed]
    lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
    # the first thing git says went wrong; "clone of … failed" and "Failed to clone … a second time" only repeat it
    why = next((ln.removeprefix("fatal: ").removeprefix("error: ") for ln in lines
                if ln.startswith(("fatal: ", "error: ")) and "clone of '" not in ln), _last_line(cp))
    mirrored = failed != declared
    msg = (f"submodule {path} could not be fetched from {failed}"
           + (f" (--git-mirror for {declared})" if mirrored else "") + f": {why}")
    if "did not contain" in said or "not our ref" in said:
        fix = (f"The copy at {failed} lacks the commit the superproject pins for {path}: update it from {declared} "
               "(`git fetch` in a copy made with `git clone --mirror`)." if mirrored else
               f"{declared} does not serve the commit the superproject pins for {path}: point `--git-mirror "
               f"{declared}=URL` at a copy that has it.")
    elif mirrored:
        fix = (f"The --git-mirror for {declared} ({failed}) did not answer: check that it exists and is a git "
               "repository (`git ls-remote` on it), or install from a wheelhouse made by `--download-only`.")
    else:
        fix = (f"If {declared} cannot be reached from this host, serve submodule {path} from a mirror too: "
               f"`--git-mirror {declared}=URL` (a local path or an internal git server; a mirror of the superproject "
               "does not carry its submodules), or install from a wheelhouse made by `--download-only` on a host "
               "that reaches it (it bundles every submodule).")
    return GitError(msg, fix=fix)


def submodule_commits(repo: str | Path) -> list[tuple[str, str]]:
    """(path from the top, commit) of every checked-out submodule, recursively, parents before children."""
    cp = _git(["submodule", "status", "--recursive"], cwd=repo, check=False, timeout=120)
    out = []
    for line in cp.stdout.splitlines():
        parts = line[1:].split()
        if len(parts) >= 2 and is_sha(parts[0]):
            out.append((parts[1], parts[0]))
    return out


def bundle_submodules(repo: str | Path, out_dir: str | Path, *, log: Log | None = None) -> list[dict[str, str]]:
    """One bundle per submodule of a clone made by `clone(..., submodules)`, holding the commit the
    superproject records; [{path, commit, bundle file name}] in update order."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    made = []
    for i, (path, commit) in enumerate(submodule_commits(repo)):
        sub = Path(repo) / path
        fname = f"{i:02d}-{re.sub(r'[^A-Za-z0-9._-]+', '_', path)}.bundle"
        _git(["branch", "-f", "doctor-pinned", commit], cwd=sub, log=log)
        _git(["bundle", "create", str(out_dir / fname), "doctor-pinned"], cwd=sub, log=log)
        made.append({"path": path, "commit": commit, "bundle": fname})
    return made


def make_bundle(src: GitSource, out: str | Path, workdir: str | Path, *, mirrors: Mapping[str, str] | None = None,
                log: Log | None = None, keep: bool = False) -> str:
    """Clone `src` (full history of its ref) into workdir and write a bundle with HEAD; return the commit.
    The offline install clones the bundle and checks out that commit. `keep` leaves the work tree (the
    download reads requirement files from it)."""
    tmp = Path(workdir) / src.name
    if tmp.exists():
        shutil.rmtree(tmp)
    commit = clone(src, tmp, mirrors=mirrors, log=log, shallow=False)
    _git(["branch", "-f", "doctor-pinned", commit], cwd=tmp, log=log)
    # the tags the pinned commit contains travel too: setuptools-scm computes the version from them offline
    tags = _git(["tag", "--merged", "doctor-pinned"], cwd=tmp, check=False).stdout.split() if src.tags else []
    _git(["bundle", "create", str(out), "doctor-pinned", *tags], cwd=tmp, log=log)
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return commit
