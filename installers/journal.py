"""The install journal: what the environment held before the first change, and how to put it back.

Before the first change the journal records every installed distribution (name, version, dist-info, RECORD
paths and a hash of RECORD) and keeps a copy of each distribution's installed files (hard links when the
journal is on the same file system, else copies). Restoring therefore needs no index, no wheel cache and no
build: it removes what the plan added, and puts the kept files of what it replaced or removed back, byte for
byte (pip's own RECORD is the list). After a successful run the copies of untouched distributions are pruned,
so the journal keeps exactly the distributions the plan replaced (`--rollback` uses them later, offline).

Only distributions whose state differs from the recorded one are touched: a package the plan did not touch
is never uninstalled. The journal lives in `<target prefix>/.doctor/journal/<id>/`; a journal left in state
`running` means a run died without restoring (SIGKILL, power loss) and is detected at the next start.

Every removal goes through one guard (`Guard.may_touch`): a path is removed or written only when it lies inside
the target's prefix, outside every source tree (the clone directory, the project directory of an editable or
legacy `setup.py develop` install) and outside every git work tree. A legacy develop install registers an egg-info
that lives in the user's source tree, and its "files" (SOURCES.txt) are that tree's sources: undoing it removes
the link (`<name>.egg-link`, its line in `easy-install.pth`), never the files the metadata lists. The `.pth` files
of the site directories are kept by content, so a line a failed step added is gone after the restore. An existing
clone a clone step checked another commit out in (a user's checkout named with --src) is recorded first and
checked out again on its branch by the restore, when it is still where the run left it: the one git operation a
restore runs inside a source tree.

Why not pipx's `preserve_venv` (copy the whole venv): a training venv is tens of GB (torch, torch_npu);
keeping one copy of each RECORD file is what the restore really needs.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from doctor.errors import RefusedError
from doctor.installers.restoreline import Line, records
from doctor.installers.target import Dist, TargetEnv, freeze, probe

SCHEMA = "doctor.journal/1"
RUNNING, DONE, ROLLED_BACK, RESTORE_FAILED, UNDONE = "running", "done", "rolled-back", "restore-failed", "undone"
KEEP_JOURNALS = 5  # `--rollback` needs only the newest; a few more help a post-mortem

Log = Callable[[str], None]


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or SIGINT) arrived during a run; raised in the main thread so the journal can restore."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def state_root(prefix: str) -> Path:
    return Path(os.environ.get("DOCTOR_STATE_DIR") or Path(prefix) / ".doctor")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _record_sha(dist_info: str) -> str | None:
    try:
        return hashlib.sha256(Path(dist_info, "RECORD").read_bytes()).hexdigest()
    except OSError:
        return None


def _abs(site: str, rel: str) -> str:
    return os.path.normpath(os.path.join(site, rel))


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(os.path.commonpath([path, r]) == r for r in roots)


class Guard:
    """What a restore may remove or write: inside the target's prefix (`roots`), outside every protected
    directory (source trees: the clone directory, project directories of editable and develop installs) and
    outside every git work tree under the prefix (`<prefix>/src/MindSpeed`). Failure, interrupt and
    `--rollback` all restore through it."""

    def __init__(self, roots: tuple[str, ...], protected: tuple[str, ...] = ()) -> None:
        self.roots = tuple(os.path.normpath(os.path.abspath(r)) for r in roots)
        self.protected = tuple(sorted({os.path.normpath(os.path.abspath(p)) for p in protected if p}))
        self._git: dict[str, bool] = {}

    def may_touch(self, path: str) -> bool:
        path = os.path.normpath(os.path.abspath(path))
        if not _inside(path, self.roots) or _inside(path, self.protected):
            return False
        return not self._in_work_tree(os.path.dirname(path) if not os.path.isdir(path) or os.path.islink(path)
                                      else path)

    def _in_work_tree(self, d: str) -> bool:
        """Is `d` (or a directory above it, up to the prefix) a git work tree?"""
        if d in self._git:
            return self._git[d]
        if not _inside(d, self.roots):
            return False
        here = os.path.lexists(os.path.join(d, ".git"))
        parent = os.path.dirname(d)
        res = here or (parent != d and d not in self.roots and self._in_work_tree(parent))
        self._git[d] = res
        return res


def site_dirs(env: TargetEnv) -> tuple[str, ...]:
    return tuple(sorted({os.path.normpath(p) for p in (env.purelib, env.platlib or env.purelib) if p}))


def linked(dist: Dist | dict[str, Any], sites: tuple[str, ...]) -> bool:
    """A distribution whose metadata is not in a site directory: a legacy `setup.py develop` install (egg-info in
    the project's source tree, found through an egg-link / easy-install.pth). Its file list is the source tree."""
    info = dist.dist_info if isinstance(dist, Dist) else dist.get("dist_info")
    return bool(info) and os.path.dirname(os.path.normpath(str(info))) not in sites


def source_dirs(env: TargetEnv) -> set[str]:
    """Project directories the target points at: develop installs' locations and editable installs' file:// URLs."""
    from urllib.parse import unquote, urlparse

    sites = site_dirs(env)
    out = set()
    for d in env.dists.values():
        if linked(d, sites) and d.site:
            out.add(os.path.normpath(d.site))
        if d.editable and d.url and d.url.startswith("file://"):
            out.add(os.path.normpath(unquote(urlparse(d.url).path)))
    return out


def _pth_files(env: TargetEnv) -> list[str]:
    out = []
    for d in site_dirs(env):
        with contextlib.suppress(OSError):
            out += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith((".pth", ".egg-link"))]
    return out


def _link_or_copy(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.lexists(dst):
        os.unlink(dst)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


# uv takes a lock on the environment it installs into by creating `<prefix>/.lock` (uv 0.13); kept by content like
# doctor-env.sh, so a restore removes it when the run made it
UV_LOCK = ".lock"


@dataclass
class Journal:
    dir: Path
    data: dict[str, Any] = field(default_factory=dict)

    # -- creation and bookkeeping -------------------------------------------------------------------------

    @classmethod
    def start(cls, env: TargetEnv, *, profile: str, files: tuple[str, ...] = (), log: Log | None = None,
              protect: tuple[str, ...] = (), clones: tuple[str, ...] = ()) -> Journal:
        """Record `env` (probed with files=True) and keep its files; `files` are other paths the run may write
        (doctor-env.sh), kept by content, as are the site directories' .pth and .egg-link files. `protect`:
        directories a restore never touches (the clone directory), besides every source tree it finds. `clones`:
        where the plan's git sources live (installers.clonestate records each as it is)."""
        root = state_root(env.prefix) / "journal"
        jid = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        d = root / jid
        (d / "kept").mkdir(parents=True)
        try:
            return cls._record(d, jid, env, profile=profile, files=files, log=log, protect=protect, clones=clones)
        except BaseException:  # a full disk, a file size limit, Ctrl-C: nothing changed yet, so no journal either
            shutil.rmtree(d, ignore_errors=True)
            raise

    @classmethod
    def _record(cls, d: Path, jid: str, env: TargetEnv, *, profile: str, files: tuple[str, ...], log: Log | None,
                protect: tuple[str, ...], clones: tuple[str, ...]) -> Journal:
        root = d.parent
        roots = _roots(env)
        protected = tuple(sorted({os.path.normpath(os.path.abspath(p)) for p in protect} | source_dirs(env)))
        guard = Guard(roots, protected)
        sites = site_dirs(env)
        before: dict[str, Any] = {}
        for name, dist in sorted(env.dists.items()):
            kept = d / "kept" / name
            entries = []
            for i, rel in enumerate(() if linked(dist, sites) else dist.files):
                src = _abs(dist.site or env.purelib, rel)
                if not guard.may_touch(src) or not (os.path.isfile(src) or os.path.islink(src)):
                    continue
                _link_or_copy(src, str(kept / str(i)))
                entries.append([i, rel])
            before[name] = {"version": dist.version, "dist_info": dist.dist_info, "site": dist.site,
                            "record_sha": _record_sha(dist.dist_info), "files": entries, "editable": dist.editable,
                            "url": dist.url}
        other: dict[str, str | None] = {}
        for p in (*files, *_pth_files(env), os.path.join(env.prefix, UV_LOCK)):
            try:
                other[p] = Path(p).read_text(encoding="utf-8")
            except FileNotFoundError:
                other[p] = None
            except OSError:
                continue
        j = cls(d, {"schema": SCHEMA, "id": jid, "state": RUNNING, "started": _now(), "profile": profile,
                    "python": env.python, "prefix": env.prefix, "roots": list(roots), "protect": list(protected),
                    "before": before,
                    "listing": _listing(env),
                    "prefix_listing": sorted(os.listdir(env.prefix)) if os.path.isdir(env.prefix) else [],
                    "freeze_before": freeze(env), "files_before": other, "steps": [], "changed": []})
        from doctor.installers import clonestate

        j.data["clones"] = [clonestate.record(p) for p in clones]
        j.save()
        _prune(root, keep=KEEP_JOURNALS, current=d)
        if log:
            log(f"journal {d}: recorded {len(before)} distributions before the first change")
        return j

    @classmethod
    def load(cls, d: Path) -> Journal:
        return cls(d, json.loads((d / "journal.json").read_text(encoding="utf-8")))

    def save(self) -> None:
        from doctor.atomic import write_text_atomic

        write_text_atomic(str(self.dir / "journal.json"), json.dumps(self.data, indent=1))

    @property
    def state(self) -> str:
        return str(self.data.get("state"))

    def set_state(self, state: str, **extra: Any) -> None:
        self.data["state"] = state
        self.data[f"{state}_at"] = _now()
        self.data.update(extra)
        self.save()

    def step_done(self, step_id: str, clones: tuple[str, ...] | None = None) -> None:
        """`clones`: the clones the step may have written (its own source's: a clone or a build in it); None: all."""
        self.data["steps"].append(step_id)
        self.clones_seen(clones)

    def _clone(self, path: str) -> dict[str, Any]:
        from doctor.installers import clonestate

        path = os.path.abspath(path)
        recs = self.data.setdefault("clones", [])
        for c in recs:
            if c["path"] == path and "before" in c:
                return dict(c)
        rec = clonestate.record(path)
        recs.append(rec)
        return rec

    def clone_moving(self, path: str) -> None:
        """The next step clones into `path` or checks another commit out in the clone there: a clone it makes is
        recorded with the directories it creates above it (a restore removes them), an existing one (a user's
        checkout named with --src) with its state before (a restore puts it back)."""
        from doctor.installers import clonestate

        path = os.path.abspath(path)
        self._clone(path)
        self.touching(path)
        for c in self.data["clones"]:
            if c["path"] != path or c.get("before") is not None:
                continue
            if os.path.lexists(path) and not c.get("was_empty"):  # someone's, made since the run started: theirs
                c.update(clonestate.record(path))
            elif "made_dirs" not in c:
                c["made_dirs"] = clonestate.missing_parents(path)
        self.save()

    def touching(self, path: str) -> None:
        """The next step clones into `path` or builds from the clone there: only such clones are restored (one the
        run never used may hold the user's work of the last hours, none of it the run's)."""
        path = os.path.abspath(path)
        self._clone(path)
        for c in self.data["clones"]:
            if c["path"] == path and not c.get("touched"):
                c["touched"] = True
                self.save()

    def clone_moved(self, path: str, commit: str) -> None:
        """Where the run left a clone: a restore moves back only a clone still there."""
        path = os.path.abspath(path)
        for c in self.data.get("clones") or ():
            if c["path"] == path:
                c["moved_to"] = commit
        self.clones_seen((path,))

    def clones_seen(self, paths: tuple[str, ...] | None = None) -> None:
        """Record clones as the run has left them so far (after each step that clones or builds in one, and all of
        them when the run finishes), so a later `--rollback` tells the run's own writes from someone's later work.
        `paths`: only these (a snapshot is ~0.1 s of git per clone)."""
        from doctor.installers import clonestate

        want = None if paths is None else {os.path.abspath(p) for p in paths}
        for c in self.data.get("clones") or ():
            if "before" not in c or not c.get("touched") or (c.get("before") or {}).get("not_clone") or \
                    want is not None and c["path"] not in want:
                continue
            c["after"] = clonestate.snapshot(c["path"])
        self.save()

    def _put_back_clones(self, say: Log, *, live: bool) -> list[Line]:
        from doctor.installers import clonestate, gitsrc
        from doctor.installers.restoreline import left

        done: list[Line] = []
        for c in reversed(self.data.get("clones") or ()):
            try:
                if "before" in c:
                    lines = clonestate.restore(c, live=live, log=say) if c.get("touched") else []
                else:  # a journal written before clones were recorded in full: its branch only
                    lines = [gitsrc.put_back(c, moved_to=c.get("moved_to"), log=say)]
            except (gitsrc.GitError, OSError) as e:  # the restore of this clone stopped midway: what is left is unknown
                lines = [left(c["path"], f"{getattr(e, 'message', None) or e}")]
            for what in lines:
                say(f"restore: clone {what}")
            done += lines
        return done

    # -- what changed ---------------------------------------------------------------------------------------

    def diff(self, env: TargetEnv) -> dict[str, list[str]]:
        """added / changed / removed distribution names between the recorded set and `env`."""
        before = self.data["before"]
        added = sorted(n for n in env.dists if n not in before)
        removed = sorted(n for n in before if n not in env.dists)
        changed = sorted(n for n, d in env.dists.items() if n in before and _differs(before[n], d))
        return {"added": added, "changed": changed, "removed": removed}

    def finish(self, env: TargetEnv) -> dict[str, list[str]]:
        """Mark done; keep only the copies of distributions the run replaced or removed."""
        diff = self.diff(env)
        touched = set(diff["changed"]) | set(diff["removed"])
        for name in self.data["before"]:
            if name not in touched:
                shutil.rmtree(self.dir / "kept" / name, ignore_errors=True)
        self.clones_seen()
        self.set_state(DONE, changed=sorted(touched | set(diff["added"])), diff=diff, freeze_after=freeze(env))
        return diff

    # -- restore ----------------------------------------------------------------------------------------------

    def restore(self, python: str, *, log: Log | None = None, only: set[str] | None = None,
                live: bool = False) -> dict[str, Any]:
        """Put the recorded set back: remove what was added, put back what was replaced or removed. `only`
        limits the work to those names (a finished journal restores just what its run touched). `live`: the
        run that wrote the journal is restoring right after its failed step (installers.clonestate)."""
        say = log or (lambda _m: None)
        env = probe(python, files=True)
        guard = self.guard(env)
        before = self.data["before"]
        diff = self.diff(env)
        if only is not None:
            diff = {k: [n for n in v if n in only] for k, v in diff.items()}
        for name in diff["added"] + diff["changed"]:
            say(f"restore: removing {name} {env.dists[name].version}")
            _remove(env.dists[name], env, guard)
        for name in diff["changed"] + diff["removed"]:
            say(f"restore: putting back {name} {before[name]['version']}")
            self._put_back(name, guard)
        # a file shared with a removed distribution may have gone with it: re-link anything missing
        for name, b in before.items():
            if only is not None and name not in only:
                continue
            for i, rel in b["files"]:
                dst = _abs(b["site"], rel)
                if not os.path.lexists(dst) and (self.dir / "kept" / name / str(i)).exists() and guard.may_touch(dst):
                    _link_or_copy(str(self.dir / "kept" / name / str(i)), dst)
        if only is None:
            self._sweep(python, guard)
        self._sweep_empty(guard)  # after a failure too: _sweep reads site-packages and bin only, not the prefix
        clones = self._put_back_clones(say, live=live)
        for p, content in (self.data.get("files_before") or {}).items():
            if p.endswith((".pth", ".egg-link")) and (only is not None or not guard.may_touch(p)):
                continue  # `--rollback` of one install: its distributions' links went with them
            if content is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(p)
            else:
                Path(p).write_text(content, encoding="utf-8")
        after = probe(python)
        now = freeze(after)
        if only is None:
            ok = now == self.data["freeze_before"]
        else:
            want = {n: before[n]["version"] for n in only if n in before}
            ok = all(after.dists.get(n) is not None and after.dists[n].version == v for n, v in want.items()) and \
                not any(n in after.dists for n in only if n not in before)
        # "clones": the lines, for the log and the report; "clones_left": the records of the lines that left
        # something (restoreline), which `--rollback` turns into its warning
        left = records(clones)
        return {"ok": ok, "diff": diff, "freeze": now, **({"clones": [str(ln) for ln in clones]} if clones else {}),
                **({"clones_left": left} if left else {})}

    def guard(self, env: TargetEnv) -> Guard:
        """The one guard of this restore: the recorded prefix and protected directories, plus every source tree
        the target points at now (a develop install the failed step made)."""
        roots = tuple(self.data.get("roots") or _roots(env))
        return Guard(roots, (*(self.data.get("protect") or ()), *source_dirs(env)))

    def _sweep(self, python: str, guard: Guard) -> None:
        """Remove what a failed install left behind outside any RECORD (pip leaves the package directory of a
        wheel that failed midway): entries of site-packages and bin that are new since the journal started
        and that no installed distribution owns."""
        listing = self.data.get("listing") or {}
        env = probe(python, files=True)
        owned: set[str] = set()
        sites = site_dirs(env)
        for d in env.dists.values():
            if linked(d, sites):
                continue  # its "files" are a source tree; what links it into the site dir is not owned by it
            site = d.site or env.purelib
            for rel in d.files:
                p = _abs(site, rel)
                parent = os.path.dirname(p)
                owned.add(p if parent in listing else _top(p, listing))
            owned.add(os.path.normpath(d.dist_info))
        for dir_, before in listing.items():
            if not os.path.isdir(dir_):
                continue
            for name in set(os.listdir(dir_)) - set(before):
                p = os.path.join(dir_, name)
                if p in owned or name == "__pycache__" or not guard.may_touch(p):
                    continue
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(p)

    def _sweep_empty(self, guard: Guard) -> None:
        """Remove the directory trees the run left holding no file at all: entries of site-packages and bin that
        are new since the journal started. pip uninstalls mainline triton file by file when triton-ascend shares
        its `triton/` directory, and leaves triton's own subdirectories empty (triton/include/python after the
        plan's remove-triton step); removing triton-ascend then leaves that empty tree. The prefix's own new entries
        too: pip removes sympy's share/man/man1 (isympy.1, a wheel data file) and leaves share/man, as the real-world
        tier's rollback of verl-0.6.1-cann8.2.rc1-a2 did. Unlike `_sweep`, this runs for the `--rollback` of a
        finished install too: an empty tree holds nothing of anyone's."""
        dirs = dict(self.data.get("listing") or {})
        if self.data.get("prefix") and "prefix_listing" in self.data:  # a journal written before it has none
            dirs[os.path.normpath(self.data["prefix"])] = self.data["prefix_listing"]
        for dir_, before in dirs.items():
            if not os.path.isdir(dir_):
                continue
            for name in set(os.listdir(dir_)) - set(before):
                p = os.path.join(dir_, name)
                if os.path.isdir(p) and not os.path.islink(p) and guard.may_touch(p) and _holds_nothing(p):
                    shutil.rmtree(p, ignore_errors=True)

    def _put_back(self, name: str, guard: Guard) -> None:
        b = self.data["before"][name]
        kept = self.dir / "kept" / name
        for i, rel in b["files"]:
            dst = _abs(b["site"], rel)
            if guard.may_touch(dst) and (kept / str(i)).exists():
                _link_or_copy(str(kept / str(i)), dst)


def _holds_nothing(path: str) -> bool:
    """A directory tree with no file and no symlink anywhere in it."""
    for root, dirs, files in os.walk(path):
        if files or any(os.path.islink(os.path.join(root, d)) for d in dirs):
            return False
    return True


def _prune(root: Path, *, keep: int, current: Path) -> None:
    """Drop the oldest finished journals beyond `keep` (never a running or failed-restore one)."""
    old = [j for j in journals_in(root) if j.dir != current]
    for j in old[: max(0, len(old) - (keep - 1))]:
        if j.state in (DONE, ROLLED_BACK, UNDONE):
            shutil.rmtree(j.dir, ignore_errors=True)


def _listing(env: TargetEnv) -> dict[str, list[str]]:
    dirs = {os.path.normpath(p) for p in (env.purelib, env.platlib or env.purelib, os.path.join(env.prefix, "bin"))}
    return {d: sorted(os.listdir(d)) if os.path.isdir(d) else [] for d in sorted(dirs)}


def _top(path: str, listing: dict[str, list[str]]) -> str:
    """The entry directly under one of the listed directories that contains `path` (or path itself)."""
    for d in listing:
        if os.path.commonpath([path, d]) == d and path != d:
            return os.path.join(d, os.path.relpath(path, d).split(os.sep)[0])
    return path


def _roots(env: TargetEnv) -> tuple[str, ...]:
    return tuple(sorted({os.path.normpath(env.prefix)}))


def _differs(b: dict[str, Any], d: Dist) -> bool:
    return b["version"] != d.version or os.path.normpath(b["dist_info"]) != os.path.normpath(d.dist_info) \
        or b.get("record_sha") != _record_sha(d.dist_info)


def _remove(dist: Dist, env: TargetEnv, guard: Guard) -> None:
    """Uninstall by RECORD, as pip does, without needing pip in the target; a legacy develop install by its link
    only. Nothing outside what `guard` allows is touched."""
    sites = site_dirs(env)
    if linked(dist, sites):
        _unlink_develop(dist, sites, guard)
        return
    site = dist.site or env.purelib
    dirs = set()
    for rel in dist.files:
        p = _abs(site, rel)
        if not guard.may_touch(p):
            continue
        if os.path.isfile(p) or os.path.islink(p):
            os.unlink(p)
            dirs.add(os.path.dirname(p))
        pyc_dir = os.path.join(os.path.dirname(p), "__pycache__")
        if p.endswith(".py") and os.path.isdir(pyc_dir):
            stem = os.path.basename(p)[:-3] + "."
            for f in os.listdir(pyc_dir):
                if f.startswith(stem) and f.endswith(".pyc"):
                    os.unlink(os.path.join(pyc_dir, f))
            dirs.add(pyc_dir)
    if os.path.isdir(dist.dist_info) and guard.may_touch(dist.dist_info):
        shutil.rmtree(dist.dist_info, ignore_errors=True)
    stop = {os.path.normpath(site), os.path.normpath(env.prefix)}
    for d in sorted(dirs, key=len, reverse=True):
        while d not in stop and guard.may_touch(d):
            try:
                os.rmdir(d)
            except OSError:
                break
            d = os.path.dirname(d)


def _unlink_develop(dist: Dist, sites: tuple[str, ...], guard: Guard) -> None:
    """Undo `setup.py develop` as `pip uninstall` does: the `<name>.egg-link` pointing at the project and the
    project's line in easy-install.pth. The project directory and its egg-info are the user's source tree."""
    project = os.path.normpath(dist.site or os.path.dirname(dist.dist_info))
    for site in sites:
        for n in os.listdir(site) if os.path.isdir(site) else ():
            p = os.path.join(site, n)
            if n.endswith(".egg-link") and guard.may_touch(p):
                try:
                    first = Path(p).read_text(encoding="utf-8").splitlines()[:1]
                except OSError:
                    continue
                if first and os.path.normpath(first[0].strip()) == project:
                    os.unlink(p)
        pth = os.path.join(site, "easy-install.pth")
        if os.path.isfile(pth) and guard.may_touch(pth):
            lines = Path(pth).read_text(encoding="utf-8").splitlines()
            keep = [ln for ln in lines if os.path.normpath(ln.strip() or ".") != project or not ln.strip()]
            if len(keep) != len(lines):
                if any(ln.strip() for ln in keep):
                    Path(pth).write_text("\n".join(keep) + "\n", encoding="utf-8")
                else:
                    os.unlink(pth)


# -- finding journals ---------------------------------------------------------------------------------------


def journals(prefix: str) -> list[Journal]:
    return journals_in(state_root(prefix) / "journal")


def journals_in(root: Path) -> list[Journal]:
    out = []
    if root.is_dir():
        for d in sorted(root.iterdir()):
            if (d / "journal.json").is_file():
                try:
                    out.append(Journal.load(d))
                except (OSError, json.JSONDecodeError):
                    continue
    return out


def interrupted(prefix: str) -> Journal | None:
    """The newest journal of a run that died without finishing or restoring, if any."""
    for j in reversed(journals(prefix)):
        if j.state in (RUNNING, RESTORE_FAILED):
            return j
        break
    return None


def latest(prefix: str) -> Journal | None:
    js = journals(prefix)
    return js[-1] if js else None


def locked(prefix: str) -> bool:
    """Whether a live `doctor install` or `--rollback` holds this environment's lock (`lock` below). Its journal
    reads `running` for as long as it works, which is not a run that died: told so, a second install advised
    `--rollback` of the first one while it ran. A shared lock tried and let go at once: nothing waits."""
    import fcntl

    try:
        fd = os.open(state_root(prefix) / "lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


@contextlib.contextmanager
def lock(prefix: str) -> Iterator[None]:
    """One install at a time per environment (flock on <state>/lock)."""
    import fcntl

    root = state_root(prefix)
    root.mkdir(parents=True, exist_ok=True)
    fh = open(root / "lock", "w")  # noqa: SIM115 - held for the whole block
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RefusedError("another `doctor install` is running on this environment", source=str(root / "lock")) from None
        yield
    finally:
        fh.close()


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """SIGTERM/SIGINT raise Interrupted in the main thread while the block runs (so `finally`/`except`
    handlers restore), then the previous handlers come back."""
    if sys.platform == "win32":  # pragma: no cover
        yield
        return

    def handler(signum: int, _frame: Any) -> None:
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_deferred() -> Iterator[list[int]]:
    """While restoring, a second Ctrl-C must not leave a half-restored environment: record, don't raise."""
    got: list[int] = []

    def handler(signum: int, _frame: Any) -> None:
        got.append(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield got
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class Transaction:
    """Rollback as a context manager. `begin()` starts the journal (call it right before the first change);
    leaving the block with an exception — a failed step, Ctrl-C, SIGTERM — restores the recorded set and
    re-raises; leaving it normally finishes the journal."""

    def __init__(self, python: str, *, profile: str, files: tuple[str, ...] = (), log: Log | None = None,
                 protect: tuple[str, ...] = (), clones: tuple[str, ...] = ()) -> None:
        self.python = python
        self.clones = clones
        self.profile = profile
        self.files = files
        self.protect = protect
        self.log = log
        self.journal: Journal | None = None
        self.restored: dict[str, Any] | None = None
        self.diff: dict[str, list[str]] | None = None

    def begin(self) -> Journal:
        if self.journal is None:
            self.journal = Journal.start(probe(self.python, files=True), profile=self.profile, files=self.files,
                                         log=self.log, protect=self.protect, clones=self.clones)
        return self.journal

    def __enter__(self) -> Transaction:
        self._signals = signals_raise()
        self._signals.__enter__()
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if self.journal is None:
                return
            if exc is None:
                self.diff = self.journal.finish(probe(self.python))
                return
            with signals_deferred():
                if self.log:
                    self.log(f"restoring the environment recorded in {self.journal.dir} ({exc_type.__name__}: {exc})")
                try:
                    self.restored = self.journal.restore(self.python, log=self.log, live=True)
                except Exception as e:  # the restore itself failed: say so, keep the journal for --rollback
                    self.restored = {"ok": False, "error": f"{type(e).__name__}: {e}"}
                ok = bool(self.restored.get("ok"))
                try:
                    self.journal.set_state(ROLLED_BACK if ok else RESTORE_FAILED, error=f"{exc_type.__name__}: {exc}")
                except OSError as e:  # a full disk: the restore happened; the journal still says `running`, so the
                    # next run asks for --rollback, which finds nothing left to undo and records it
                    self.restored["journal_error"] = f"{self.journal.dir}: {e.strerror or e}"
        finally:
            self._signals.__exit__(None, None, None)
