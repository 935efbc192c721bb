"""What an install run changes in the git clones it uses, and how a restore undoes it without losing anyone's work.

A run changes clones in two ways. It *makes* clones (`<prefix>/src/MindSpeed`, or `DIR/MindSpeed` under a user's
`--src DIR`), and it *writes into* clones that were there: the clone step checks the pinned commit out (a user's
checkout on a branch), fetches the pinned tag or branch by URL (a new tag or `refs/remotes/origin/<ref>`),
`git submodule init` adds `submodule.<name>.url` keys to the clone's configuration, and the builds that follow
(`pip install -e`, an in-tree build of vLLM) write untracked or ignored files into the work tree
(`megatron_core.egg-info/`, `build/`).

`snapshot` reads that state (HEAD, branch, refs, `submodule.*` keys, the submodules' commits, and a fingerprint of
every untracked or ignored entry `git status --ignored` lists: path, size, mtime and mode of each file under it),
before the first change and again after each step. `restore` puts it back:

- a clone the run made is removed, with the directories the run created above it, when nothing in it is anyone's
  later work: HEAD, refs and untracked entries as the run last saw them, no tracked file changed. It holds nothing
  but what upstream serves and what the run built, so removing it loses nothing;
- in a clone that was there, the branch is checked out again (`gitsrc.put_back`), refs the run created or moved
  are deleted or set back, submodules it initialised are deinitialised (moved ones checked out at their old commit)
  and `submodule.*` keys the run added or rewrote are unset or set back, each only while it still has what the run
  gave it (`git update-ref` compares and swaps); untracked entries the run made are removed while unchanged;
- everything else is left and named in the log: a change made since the run, an untracked entry the run rewrote
  (one that was there before: the restore has no copy of its old content), submodules not at their old commits.
  What git keeps for itself is left too: objects the fetches brought (unreachable ones go with `git gc`), reflog
  entries that record the run's checkouts, and the index's stat data after the checkout back (`.git/FETCH_HEAD` is
  put back as it was).

`live`: the restore runs in the same process right after the failed step (Transaction), so what that step wrote
into a clone is the run's own even though no snapshot after it exists; a later `--rollback` (of a finished or a
killed run) compares with the last snapshot instead and leaves whatever differs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from doctor.installers import gitsrc
from doctor.installers.restoreline import Line, did, left

Log = Callable[[str], None]


def _git(dest: str | Path, *args: str, check: bool = False) -> tuple[int, str]:
    cp = gitsrc._git(list(args), cwd=dest, check=check, timeout=300)
    return cp.returncode, cp.stdout


def is_clone(dest: str | Path) -> bool:
    """`dest` is a git work tree of its own (a `.git` directory or file right there, not an enclosing repository)."""
    return os.path.lexists(os.path.join(dest, ".git"))


def snapshot(dest: str | Path) -> dict[str, Any] | None:
    """The state of the clone at `dest` (see the module docstring); None when there is no clone there."""
    if not is_clone(dest):
        return None
    rc, head = _git(dest, "rev-parse", "--verify", "--quiet", "HEAD")
    _rc, branch = _git(dest, "symbolic-ref", "-q", "HEAD")
    _rc, refs = _git(dest, "for-each-ref", "--format=%(objectname) %(refname)")
    _rc, conf = _git(dest, "config", "--local", "--get-regexp", r"^submodule\.")
    # `git submodule status` costs ~0.13 s even with no submodule (git 2.39): asked only where .gitmodules is
    subs = _git(dest, "submodule", "status", "--recursive")[1] if os.path.isfile(os.path.join(dest, ".gitmodules")) else ""
    tracked, untracked = status(dest)
    fh = _fetch_head(dest)
    return {"head": head.strip() if rc == 0 else "", "branch": branch.strip(),
            "fetch_head": hashlib.sha256(fh.encode()).hexdigest() if fh is not None else None,
            "refs": {ref: sha for sha, _s, ref in (ln.partition(" ") for ln in refs.splitlines()) if ref},
            "config": {key: val for key, _s, val in (ln.partition(" ") for ln in conf.splitlines()) if key},
            # `git submodule status`: "-" not initialised, "+" not at the recorded commit; the describe part dropped
            "submodules": [ln[:1] + " ".join(ln[1:].split()[:2]) for ln in subs.splitlines() if ln.strip()],
            "tracked": tracked, "untracked": {e: fingerprint(os.path.join(dest, e)) for e in untracked}}


def _git_dir(dest: str | Path) -> str | None:
    rc, out = _git(dest, "rev-parse", "--absolute-git-dir")
    return out.strip() if rc == 0 and out.strip() else None


def _fetch_head(dest: str | Path) -> str | None:
    """`.git/FETCH_HEAD` (what the last fetch got), None when there is none."""
    d = _git_dir(dest)
    try:
        return Path(d, "FETCH_HEAD").read_text(encoding="utf-8") if d else None
    except (OSError, UnicodeDecodeError):
        return None


def status(dest: str | Path) -> tuple[list[str], list[str]]:
    """(tracked paths that differ from HEAD, untracked and ignored entries as `git status --ignored` lists them:
    a directory none of whose files git tracks is one entry, `build/`)."""
    _rc, out = _git(dest, "status", "--porcelain", "-z", "--ignored", "--untracked-files=normal")
    tracked, untracked = [], []
    parts = out.split("\0")
    i = 0
    while i < len(parts):
        ln = parts[i]
        i += 1
        if len(ln) < 4:
            continue
        code, path = ln[:2], ln[3:]
        if code in ("??", "!!"):
            untracked.append(path.rstrip("/"))
        else:
            tracked.append(path)
            if "R" in code or "C" in code:
                i += 1  # -z gives a rename's source as the next field
    return sorted(tracked), sorted(untracked)


def fingerprint(path: str) -> str:
    """sha256 over (relative path, mode, size, mtime) of everything under `path` (or of `path` itself): any write,
    new file or removal changes it, without reading the files (a vllm-ascend `build/` is hundreds of MB)."""
    h = hashlib.sha256()

    def add(p: str, rel: str) -> None:
        try:
            st = os.lstat(p)
        except OSError:
            return
        h.update(f"{rel}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())

    add(path, ".")
    if os.path.isdir(path) and not os.path.islink(path):
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for n in sorted(files) + dirs:
                p = os.path.join(root, n)
                add(p, os.path.relpath(p, path))
    return h.hexdigest()


def missing_parents(dest: str | Path) -> list[str]:
    """The directories above `dest` that do not exist yet (a clone creates them), the top one first."""
    out: list[str] = []
    p = Path(dest).absolute().parent
    while not p.exists() and p != p.parent:
        out.insert(0, str(p))
        p = p.parent
    return out


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def since(now: Mapping[str, Any], after: Mapping[str, Any] | None, *, live: bool) -> list[str]:
    """What in a clone the run made is not as the run left it (someone's later work); empty when it may go. With no
    record after its clone step, a live restore follows that very step: a half-checked-out tree is the run's own."""
    if after is None:  # the clone step itself stopped (a ref it could not check out, a full disk mid-checkout)
        return [] if live else ["the run stopped before recording it"]
    why = []
    if now["tracked"]:
        why.append(f"tracked files changed: {gitsrc.named(now['tracked'], unit='')}")
    if now["head"] != after["head"]:
        why.append(f"HEAD at {now['head'][:12] or 'no commit'}, not the run's {after['head'][:12]}")
    refs = sorted(r for r in set(now["refs"]) | set(after["refs"]) if now["refs"].get(r) != after["refs"].get(r))
    if refs:
        why.append(f"refs changed: {gitsrc.named(refs, unit='')}")
    if not live:
        moved = sorted(e for e in set(now["untracked"]) | set(after["untracked"])
                       if now["untracked"].get(e) != after["untracked"].get(e))
        if moved:
            why.append(f"untracked files new or changed: {gitsrc.named(moved, unit='')}")
    return why


def restore(rec: Mapping[str, Any], *, live: bool, log: Log | None = None) -> list[Line]:
    """Undo what the run did to the clone `rec` describes ({path, before, after, moved_to, made_dirs}); returns one
    line per action or per thing left (marked `left`), for the log and the report."""
    path = str(rec["path"])
    before, after = rec.get("before"), rec.get("after")
    if before is None:
        return _unmake(path, after, list(rec.get("made_dirs") or ()), live=live, keep_dir=bool(rec.get("was_empty")))
    if before.get("not_clone"):
        return []  # a directory that is not a clone: the clone step refuses it, nothing was done there
    if not os.path.exists(path):
        return [did(path, "gone since the run; nothing to put back")]
    now = snapshot(path)
    if now is None:
        return [left(path, "not a git clone any more; left as it is")]
    # live: the failed step may have written here after the last record (a fetch that failed still writes
    # FETCH_HEAD), and nobody else did in between: what is there now is what the run left
    ran = now if live else after
    if ran is None and all(now[k] == before[k] for k in ("head", "branch", "refs", "config", "untracked")):
        return []  # the run never got to it
    if ran is None:
        return [left(path, "the run stopped before recording what it changed here; left as it is (compare "
                     f"`git -C {path} status --ignored` and `git -C {path} for-each-ref` with what you expect)")]
    # build outputs first, while the commit the run built from is checked out (its ignore rules listed them)
    out = _untracked_back(path, before["untracked"], ran["untracked"], now["untracked"], live=live)
    if (before["head"], before["branch"]) != (now["head"], now["branch"]):
        pos = {"path": path, "head": before["head"], "branch": before["branch"]}
        out.append(gitsrc.put_back(pos, moved_to=rec.get("moved_to"), log=log))
    out += _refs_back(path, before["refs"], ran["refs"], log)
    out += _submodules_back(path, before["submodules"], ran["submodules"], log)
    final = snapshot(path) or now  # `submodule deinit` removed the config keys of what it deinitialised
    out += _config_back(path, before["config"], ran["config"], final["config"], log)
    out += _fetch_head_back(path, before, ran.get("fetch_head"), now.get("fetch_head"))
    final = snapshot(path) or final
    if final["submodules"] != before["submodules"]:
        was, now_subs = gitsrc.named(before["submodules"], 3, unit=""), gitsrc.named(final["submodules"], 3, unit="")
        out.append(left(path, f"submodules not as they were (before: {was or 'none'}; now: {now_subs}); left as they "
                        f"are (`git -C {path} submodule update` or `submodule deinit` puts them where you want)"))
    return out


def _gone_from_branch(path: str, sub: str, ran: tuple[str, str], was: tuple[str, str] | None,
                      log: Log | None) -> list[Line]:
    """A submodule of the commit the run checked out that the branch put back does not have: `git checkout` leaves
    its work tree behind. Removed (with the directories that hold nothing else) when the run checked it out and it is
    still that commit, clean; its objects stay in .git/modules."""
    d = os.path.join(path, sub)
    if ran[0] == "-" or was is not None or not os.path.lexists(os.path.join(d, ".git")):
        return []
    rc, head = _git(d, "rev-parse", "HEAD")
    _rc, dirty = _git(d, "status", "--porcelain", "--ignored")
    if rc != 0 or head.strip() != ran[1] or dirty.strip():
        return [left(path, f"submodule {sub} (checked out by the run; the branch has none) changed since; left as it is")]
    shutil.rmtree(d)
    if log:
        log(f"removed {d}")
    parent = os.path.dirname(d)
    while parent != path and os.path.isdir(parent) and not os.listdir(parent):
        os.rmdir(parent)
        parent = os.path.dirname(parent)
    return [did(path, f"submodule {sub} the run checked out (the branch has none) removed; its objects stay in "
                       ".git/modules")]


def _subs(lines: list[str]) -> dict[str, tuple[str, str]]:
    """{path: (status prefix, checked-out commit)} of `snapshot`'s submodule lines."""
    out = {}
    for ln in lines:
        sha, _s, sub = ln[1:].partition(" ")
        out[sub] = (ln[:1], sha)
    return out


def _submodules_back(path: str, before: list[str], ran_subs: list[str], log: Log | None) -> list[Line]:
    """Top-level submodules the run initialised are deinitialised again (`git submodule deinit -f`: the work tree it
    checked out goes, its objects stay in .git/modules), and ones it moved are checked out at their old commit, each
    only while it is at the commit the run left and has no change or untracked file."""
    b, ran = _subs(before), _subs(ran_subs)
    now = {}
    _rc, st = _git(path, "submodule", "status") if os.path.isfile(os.path.join(path, ".gitmodules")) else (0, "")
    for ln in st.splitlines():
        if ln.strip():
            sha, _s, rest = ln[1:].partition(" ")
            now[rest.split(" (")[0].strip()] = (ln[:1], sha)
    out: list[Line] = []
    for sub in sorted(set(ran) - set(now)):
        out += _gone_from_branch(path, sub, ran[sub], b.get(sub), log)
    for sub, (pre, sha) in sorted(now.items()):
        was = b.get(sub)
        if was == (pre, sha) or pre == "-" and (was is None or was[0] == "-"):
            continue
        if ran.get(sub, ("", ""))[1] != sha:
            out.append(left(path, f"submodule {sub} moved since the run; left as it is"))
            continue
        _rc, dirty = _git(os.path.join(path, sub), "status", "--porcelain")
        if dirty.strip():
            out.append(left(path, f"submodule {sub} has changes or untracked files; left as it is"))
            continue
        if was is None or was[0] == "-":
            args = ["submodule", "deinit", "-f", "--", sub]
            rc, _o = _git(path, *args)
            what = "(the run initialised it) deinitialised; its objects stay in .git/modules"
        else:
            args = ["-C", sub, "checkout", "-q", "--detach", was[1]]
            rc, _o = _git(path, *args)
            what = f"back at {was[1][:12]}"
        if log:
            log(f"$ git {' '.join(args)}   (in {path})")
        out.append(did(path, f"submodule {sub} {what}") if rc == 0 else left(path, f"could not put submodule {sub} back"))
    return out


def _unmake(path: str, after: Mapping[str, Any] | None, made_dirs: list[str], *, live: bool,
            keep_dir: bool = False) -> list[Line]:
    """Remove a clone the run made (`keep_dir`: into an empty directory that was there, which stays, empty)."""
    if not os.path.lexists(path):
        return _rmdirs(made_dirs)
    now = snapshot(path)
    if now is None:
        if os.path.isdir(path) and not os.listdir(path):
            if not keep_dir:
                os.rmdir(path)
            return _rmdirs(made_dirs)
        return [left(path, "made by the run, but not a git clone now; left as it is")]
    why = since(now, after, live=live)
    if why:
        return [left(path, f"made by the run, but changed since ({'; '.join(why)}); left as it is: `rm -rf {path}` "
                           "if nothing in it is yours", made=True)]
    _remove(path)
    if keep_dir:
        os.mkdir(path)
        return [did(path, "the clone the run made in this empty directory removed")]
    return [did(path, "made by the run; removed"), *_rmdirs(made_dirs)]


def _rmdirs(made_dirs: list[str]) -> list[Line]:
    out = []
    for d in reversed(made_dirs):
        try:
            os.rmdir(d)
        except OSError:
            break  # not empty: something else lives there now
        out.append(did(d, "made by the run (empty); removed"))
    return out


def _refs_back(path: str, before: Mapping[str, str], ran_refs: Mapping[str, str], log: Log | None) -> list[Line]:
    """Refs the run created are deleted, refs it moved set back, each only while it is where the run left it."""
    out = []
    for ref in sorted(set(ran_refs) | set(before)):
        was, ran = before.get(ref), ran_refs.get(ref)
        if was == ran or ran is None:
            continue
        args = ["update-ref", "-d", ref, ran] if was is None else ["update-ref", ref, was, ran]
        rc, _o = _git(path, *args)
        if log:
            log(f"$ git {' '.join(args)}   (in {path})")
        what = "deleted" if was is None else f"set back to {was[:12]}"
        out.append(did(path, f"{ref} (the run's) {what}") if rc == 0 else
                   left(path, f"{ref} moved since the run; left as it is"))
    return out


def _fetch_head_back(path: str, before: Mapping[str, Any], ran: str | None, now: str | None) -> list[Line]:
    """`.git/FETCH_HEAD` as it was (gone when there was none), while it is what the run's fetch wrote."""
    if ran == before.get("fetch_head") or now != ran or "fetch_head_text" not in before:
        return []
    d = _git_dir(path)
    if d is None:
        return []
    f = Path(d, "FETCH_HEAD")
    text = before["fetch_head_text"]
    try:
        if text is None:
            f.unlink()
        else:
            f.write_text(text, encoding="utf-8")
    except OSError as e:
        return [left(path, f"could not put .git/FETCH_HEAD back ({e.strerror})")]
    return []  # git's own scratch record: put back quietly


def _config_back(path: str, before: Mapping[str, str], ran_conf: Mapping[str, str], now: Mapping[str, str],
                 log: Log | None) -> list[Line]:
    """`submodule.*` keys (`git submodule init`, a mirror's URL) the run added or rewrote, while they still hold the
    run's value."""
    out = []
    for key in sorted(set(ran_conf) | set(before)):
        was, ran = before.get(key), ran_conf.get(key)
        if was == ran or ran is None or now.get(key) == was:
            continue
        if now.get(key) != ran:
            out.append(left(path, f"config {key} changed since the run; left as it is"))
            continue
        args = ["config", "--local", "--unset", key] if was is None else ["config", "--local", key, was]
        rc, _o = _git(path, *args)
        if log:
            log(f"$ git {' '.join(args)}   (in {path})")
        out.append(did(path, f"config {key} " + ("(the run's) unset" if was is None else "set back")) if rc == 0 else
                   left(path, f"could not restore config {key}"))
    return out


def _untracked_back(path: str, before: Mapping[str, str], ran: Mapping[str, str], now: Mapping[str, str], *,
                    live: bool) -> list[Line]:
    """Untracked entries the run made (build outputs) go while unchanged; what it rewrote or what changed since is
    named."""
    gone, kept, rewritten = [], [], []
    for e in sorted(now):
        if e in before:
            if now[e] != before[e]:
                rewritten.append(e)
            continue
        if live or ran.get(e) == now[e]:
            _remove(os.path.join(path, e))
            gone.append(e)
        else:
            kept.append(e)
    out = []
    if gone:
        out.append(did(path, f"untracked files the run's builds wrote removed: {gitsrc.named(gone, unit='')}"))
    if kept:
        left_now = gitsrc.named(kept, unit="")
        out.append(left(path, f"untracked files new since the run or changed since it wrote them left: {left_now}"))
    if rewritten:
        out.append(left(path, "untracked files that were there before and were rewritten (by the run's builds, or since) "
                        f"left as they are now: {gitsrc.named(rewritten, unit='')}"))
    return out


def record(dest: str | Path) -> dict[str, Any]:
    """The journal's record of `dest` before the first change: `before` None means the run will make the clone."""
    dest = os.path.abspath(dest)
    if not os.path.lexists(dest):
        return {"path": dest, "before": None, "after": None}
    if os.path.isdir(dest) and not is_clone(dest) and not os.listdir(dest):
        return {"path": dest, "before": None, "after": None, "was_empty": True}
    before = snapshot(dest)
    if before is None:
        return {"path": dest, "before": {"not_clone": True}, "after": None}
    before["fetch_head_text"] = _fetch_head(dest)
    return {"path": dest, "before": before, "after": None}
