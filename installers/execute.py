"""Run a plan into the target interpreter: skip satisfied steps, run the rest under a journal, verify each.

Every step is checked before it runs (a second run does nothing: one probe of the target, a `git rev-parse`
per clone, one file compare) and again after it ran, so a step that "succeeded" without producing the pinned
versions (a CUDA torch instead of `+cpu`, a moving branch) fails right there. The first change starts the
journal; a failure, Ctrl-C or SIGTERM restores the recorded set (installers.journal.Transaction) and the
report names the failed step with the tail of its log. Children run in their own session so a terminal
Ctrl-C reaches only the doctor, which then stops its child and restores.
"""

from __future__ import annotations

import collections
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from doctor.errors import DoctorError, InputError
from doctor.installers import envfile, gitsrc
from doctor.installers.backends import PIP_FLOOR, Backend, Command, PipBackend, Source, shown
from doctor.installers.clonestate import missing_parents
from doctor.installers.journal import Interrupted, Journal, Transaction
from doctor.installers.plan import CLONE, EDITABLE, ENVFILE, INSTALL, PRUNE, UNINSTALL, Plan, Step
from doctor.installers.satisfy import expectations, live_view, requirement_file_lines, satisfied
from doctor.installers.target import TargetEnv, probe
from doctor.snapshot.model import normalize_name

STEP_TIMEOUT = 3 * 3600.0  # a vllm-ascend source build compiles kernels

SATISFIED, DONE, FAILED, PENDING, NOT_RUN = "satisfied", "done", "failed", "pending", "not-run"
DEFAULT_INDEX = "https://pypi.org/simple"  # pip's and uv's index when neither the step nor the user names one


class StepFailed(DoctorError):
    exit_code = 1

    def __init__(self, step: Step, message: str, tail: list[str] | None = None, *, fix: str = "") -> None:
        self.step = step
        self.tail = tail or []
        self.fix = fix  # what the cause calls for (a verification names it); empty: read the log
        super().__init__(message)


@dataclass
class StepResult:
    id: str
    kind: str
    title: str
    status: str
    seconds: float = 0.0
    command: str | None = None
    detail: str = ""
    log_tail: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "kind": self.kind, "title": self.title, "status": self.status,
                             "seconds": round(self.seconds, 3)}
        if self.command:
            d["command"] = self.command
        if self.detail:
            d["detail"] = self.detail
        if self.log_tail:
            d["log_tail"] = self.log_tail
        return d


@dataclass
class Outcome:
    results: list[StepResult]
    ok: bool
    changed: bool
    journal: str | None = None
    diff: dict[str, list[str]] | None = None
    restored: dict[str, Any] | None = None
    error: str | None = None
    interrupted: str | None = None
    fix: str = ""  # what the failure's own error says to do (e.g. --git-mirror for a source out of reach)


class Executor:
    def __init__(self, plan: Plan, backend: Backend, python: str, *, source: Source, log_path: str | Path,
                 mirrors: dict[str, str] | None = None, bundles: dict[str, dict[str, Any]] | None = None,
                 progress: Callable[[str], None] | None = None, step_timeout: float = STEP_TIMEOUT,
                 env_header: str = "", preflight: Callable[[], object] | None = None) -> None:
        self.bundles = bundles or {}  # offline: source name -> {bundle: abs path, commit}
        self.plan = _pin_bundled(plan, self.bundles)
        self.backend = backend
        self.python = python
        self.source = source
        self.log_path = Path(log_path)
        self.mirrors = mirrors or {}
        self.progress = progress or (lambda _m: None)
        self.step_timeout = step_timeout
        self.env_header = env_header
        self.preflight = preflight  # runs once, right before the first change (e.g. verify wheelhouse hashes)
        self.src_dir = plan.target.src_dir
        self._log: IO[str] | None = None
        self.log_lost = 0  # lines the log could not take
        self._pruning: list[str] = []  # what the remove-orphans step uninstalls, decided when it is reached

    # -- logging -------------------------------------------------------------------------------------------

    def log(self, text: str) -> None:
        """Append to the install log. A log that cannot be written (the disk the target is on is full: a clone or a
        build filled it) never stops the run, nor the restore that must follow, which frees the space."""
        if self._log is not None:
            try:
                self._log.write(text.rstrip("\n") + "\n")
                self._log.flush()
            except OSError:
                self.log_lost += 1

    # -- planning view ---------------------------------------------------------------------------------------

    def view(self, env: TargetEnv) -> Any:
        env_ok = envfile.is_current(self.plan.env, header=self.env_header) if self.plan.env else True
        return live_view(env, src_dir=self.src_dir, sources=self.plan.sources(), env_ok=env_ok)

    def with_pip(self, env: TargetEnv) -> None:
        """Put the pip step first when the target's own pip runs the plan (installers.backends, PIP_FLOOR)."""
        step = pip_step(self.backend, env)
        if step is not None and not any(s.id == step.id for s in self.plan.steps):
            self.plan = replace(self.plan, steps=(step, *self.plan.steps))

    def pip_note(self, env: TargetEnv) -> dict[str, Any] | None:
        """Which pip runs the plan, its version and the target's (what the dry run shows)."""
        if not isinstance(self.backend, PipBackend):
            return None
        target = env.dists["pip"].version if "pip" in env.dists else None
        who, version = self.backend.runs(target)
        return {"runs": who, "version": version, "target_pip": target, "floor": PIP_FLOOR}

    def statuses(self, env: TargetEnv) -> list[StepResult]:
        """Dry run: which steps would run."""
        self.with_pip(env)
        v = self.view(env)
        return [StepResult(s.id, s.kind, s.title, SATISFIED if satisfied(s, v, self.plan) else PENDING,
                           command=self.describe(s), detail=clone_detail(s, v)) for s in self.plan.steps]

    def downloads(self, steps: list[StepResult]) -> dict[str, list[str]]:
        """Where the steps that would run download from, as they will run them (after --index-url and --git-mirror):
        package indexes (pip's default index where a step names none) and git repositories, a git requirement line's
        URL with its ref. Nothing offline (the wheelhouse and its bundles). What an air-gapped site's firewall or
        mirror has to serve; a requirement file read only after its clone may add git URLs. Credentials in the URLs
        are `<redacted>`, as in the commands shown: this is for display."""
        todo = {r.id for r in steps if r.status != SATISFIED}
        indexes: list[str] = []
        git: list[str] = []
        user = self.source.index.index_url or self.source.index.extra_index_urls
        for s in self.plan.steps:
            if s.id not in todo:
                continue
            if s.kind == CLONE and s.source is not None:
                if not self.bundles.get(s.source.name, {}).get("bundle"):
                    git.append(gitsrc.map_url(s.source.url, self.mirrors))
                continue
            if s.kind not in (INSTALL, EDITABLE) or self.source.no_index:
                continue
            idx = self.source.index if user else s.index
            indexes += [idx.index_url or DEFAULT_INDEX, *idx.extra_index_urls]
            for r in s.requirements:
                m = _GIT_REQ.match(r)
                if m:
                    url, _, ref = m.group("url").partition("@")
                    git.append(gitsrc.map_url(url, self.mirrors) + (f"@{ref}" if ref else ""))
        return {"indexes": [shown([u]) for u in dict.fromkeys(indexes)], "git": [shown([u]) for u in dict.fromkeys(git)]}

    def describe(self, step: Step) -> str | None:
        served = self.plan.step(step.build_for).source if step.build_for else None
        if served is not None and not (Path(self.src_dir or ".") / served.name).is_dir():
            return (f"install [build-system].requires of {served.name}/pyproject.toml, {' '.join(step.requirements)}"
                    + "".join(f", -r {served.name}/{f}" for f in step.requirement_files) + " (read after the clone)")
        cmd = self._command(step)
        if cmd is not None:
            # the environment that neutralises the user's pip configuration (installers.pipsettings) is the step's too
            neutral = getattr(self.backend, "neutral_env", ()) if step.kind in (INSTALL, EDITABLE) else ()
            envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in (*neutral, *step.env))
            return (envs + " " if envs else "") + shown(cmd.argv)
        if step.kind == CLONE and step.source:
            return f"git clone {shown([gitsrc.map_url(step.source.url, self.mirrors)])} @ {step.source.ref}" + \
                (f" (commit {step.source.commit})" if step.source.commit else "")
        if step.kind == ENVFILE and self.plan.env:
            return f"write {self.plan.env.path}"
        if step.kind == PRUNE:
            return ("uninstall what this run installed that no installed distribution requires any more (decided after "
                    "the re-pins; never what was there before, nor what the plan names)")
        return None

    def _command(self, step: Step) -> Command | None:
        src = self.source
        if not src.no_index and not (src.index.index_url or src.index.extra_index_urls):
            # the user's --index-url/--extra-index-url are mirrors: they replace the plan's indexes entirely
            src = replace(src, index=step.index)
        if step.kind == UNINSTALL:
            return self.backend.uninstall(self.python, step.packages)
        if step.kind == PRUNE:
            return self.backend.uninstall(self.python, tuple(self._pruning)) if self._pruning else None
        if step.kind == INSTALL:
            reqs = self._build_requirements(step) if step.build_for else step.requirements
            return self.backend.install(self.python, reqs, source=src, no_deps=step.no_deps,
                                        no_build_isolation=step.no_build_isolation, env=self._env(step))
        if step.kind == EDITABLE and step.source is not None:
            path = os.path.join(self.src_dir or ".", step.source.name)
            return self.backend.install(self.python, (), editable=path, source=src, no_deps=step.no_deps,
                                        no_build_isolation=step.no_build_isolation, env=self._env(step))
        return None

    def _env(self, step: Step) -> tuple[tuple[str, str], ...]:
        """The step's environment, with the target's bin directory first on PATH, as in an activated environment:
        a build that looks for `python3`, `cmake` or `ninja` on PATH (arctic-inference's CMake FindPython) must
        find the target's, not whatever interpreter comes first on the doctor's PATH (a pyenv shim)."""
        bindir = os.path.dirname(os.path.abspath(self.python))
        path = os.environ.get("PATH", "")
        return (*step.env, ("PATH", bindir + (os.pathsep + path if path else "")))

    def _build_requirements(self, step: Step) -> tuple[str, ...]:
        """What a `build_for` step installs: the served clone's [build-system].requires (read now, from the commit
        that is checked out), the step's own requirements, and `-r` of its requirement files."""
        served = self.plan.step(str(step.build_for))
        assert served.source is not None
        clone = Path(self.src_dir or ".") / served.source.name
        return build_requirements(clone, step)

    # -- running ---------------------------------------------------------------------------------------------

    def run(self, env: TargetEnv | None = None) -> Outcome:
        """Run the plan; `env` is the target as just probed (saves one probe)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        results: list[StepResult] = []
        env_files = (self.plan.env.path,) if self.plan.env else ()
        with open(self.log_path, "a", encoding="utf-8") as fh:
            self._log = fh
            self.log(f"== doctor install: profile {self.plan.profile} into {self.python} ({self.backend.name})")
            tx = Transaction(self.python, profile=self.plan.profile, files=env_files, log=self.log,
                             protect=(self.src_dir,) if self.src_dir else (),
                             clones=tuple(os.path.join(self.src_dir, s.name) for s in self.plan.sources())
                             if self.src_dir else ())
            current: StepResult | None = None
            try:
                with tx:
                    env = env or probe(self.python)
                    self.with_pip(env)
                    view = self.view(env)
                    for step in self.plan.steps:
                        if step.kind == PRUNE:
                            self._pruning = self._orphans(env, tx.journal)
                            if not self._pruning:
                                results.append(StepResult(step.id, step.kind, step.title, SATISFIED))
                                self.log(f"-- {step.id}: nothing this run installed is left required by nothing")
                                continue
                        elif satisfied(step, view, self.plan):
                            results.append(StepResult(step.id, step.kind, step.title, SATISFIED))
                            self.log(f"-- {step.id}: already satisfied")
                            continue
                        if tx.journal is None and self.preflight is not None:
                            self.preflight()
                        if tx.journal is None:
                            refused = self._refused_clone()
                            if refused is not None:  # named as its clone step's failure, before any change
                                current = StepResult(refused[0].id, refused[0].kind, refused[0].title, FAILED,
                                                     command=self.describe(refused[0]))
                                results.append(current)
                                raise refused[1]
                        journal = tx.begin()
                        current = StepResult(step.id, step.kind, step.title, FAILED, command=self.describe(step))
                        results.append(current)
                        t0 = time.monotonic()
                        self.progress(f"[{len(results)}/{len(self.plan.steps)}] {step.title}")
                        self._do(step, journal)
                        was, env = env, probe(self.python)
                        view = self.view(env)
                        self._verify(step, env, view)
                        if step.kind == PRUNE:
                            current.detail = self._pruned(step, was, env)
                        current.status, current.seconds = DONE, time.monotonic() - t0
                        assert tx.journal is not None
                        tx.journal.step_done(step.id, (os.path.join(self.src_dir, step.source.name),)
                                             if step.source is not None and self.src_dir else ())
                        current = None
            except (StepFailed, gitsrc.GitError, Interrupted, KeyboardInterrupt, OSError) as e:
                interrupted = None
                if isinstance(e, KeyboardInterrupt):
                    interrupted = e.args[0] if e.args else "SIGINT"
                    msg = f"interrupted by {interrupted}"
                else:
                    msg = str(e)
                if current is not None:
                    current.detail = msg
                    current.log_tail = getattr(e, "tail", []) or self._tail()
                done_ids = {r.id for r in results}
                results += [StepResult(s.id, s.kind, s.title, NOT_RUN) for s in self.plan.steps if s.id not in done_ids]
                order = {s.id: i for i, s in enumerate(self.plan.steps)}  # a clone refused up front: in its place
                results.sort(key=lambda r: order.get(r.id, -1))
                self.log(f"== failed: {msg}")
                return Outcome(results, ok=False, changed=tx.journal is not None,
                               journal=str(tx.journal.dir) if tx.journal else None, restored=tx.restored,
                               error=msg, interrupted=interrupted, fix=str(getattr(e, "fix", "") or ""))
            finally:
                self._log = None
        return Outcome(results, ok=True, changed=tx.journal is not None,
                       journal=str(tx.journal.dir) if tx.journal else None, diff=tx.diff)

    def _mapped_requirement_files(self, step: Step, cmd: Command) -> Command:
        """A `-r FILE` whose lines install from git (`name @ git+URL@REF`, verl main's TransferQueue) is given as a
        copy with each URL through --git-mirror; offline, as the bare name the wheelhouse carries."""
        argv = list(cmd.argv)
        for i, a in enumerate(argv):  # a git requirement given as an argument (a profile's verl_requirements)
            if a in step.requirements and (i == 0 or argv[i - 1] != "-r"):
                mapped = map_requirement_line(a, self.mirrors, offline=self.source.no_index)
                if mapped is not None:
                    argv[i] = mapped
        for i, a in enumerate(argv[:-1]):
            if a != "-r":
                continue
            out = self.log_path.parent / f"{step.id}-{i}-requirements.txt"
            if map_requirement_file(Path(argv[i + 1]), out, self.mirrors, offline=self.source.no_index):
                self.log(f"{argv[i + 1]}: git requirements mapped -> {out}")
                argv[i + 1] = str(out)
        return replace(cmd, argv=tuple(argv))

    def _orphans(self, env: TargetEnv, journal: Journal | None) -> list[str]:
        """What the remove-orphans step uninstalls (installers.orphans): nothing when the run changed nothing (no
        journal: every earlier step was satisfied) or a requirement file of the plan cannot be read (then what the
        plan names is not known)."""
        from doctor.installers import orphans as orph

        if journal is None:
            return []
        keep = self._plan_names()
        if keep is None:
            self.log("-- remove-orphans: a requirement file of the plan cannot be read; nothing is removed")
            return []
        return orph.orphans({n: d.requires for n, d in env.dists.items()}, journal.data.get("before") or {}, keep,
                            orph.marker_env(env.version, env.arch))

    def _plan_names(self) -> dict[str, frozenset[str]] | None:
        """Every distribution the plan asks for by name, with the extras it asks for: the pins, each install step's
        requirements and `-r` files (as the steps ran them), the editable installs' distributions."""
        from doctor.installers.orphans import named

        lines = [n for n, _spec in self.plan.pins]
        for s in self.plan.steps:
            if s.kind == EDITABLE and s.editable_dist:
                lines.append(s.editable_dist)
            if s.kind != INSTALL:
                continue
            reqs = list(self._build_requirements(s) if s.build_for else s.requirements)
            lines += [w for i, w in enumerate(reqs) if w != "-r" and not (i and reqs[i - 1] == "-r")]
            got = requirement_file_lines(reqs)
            if got is None:
                return None
            lines += got
        out = named(lines)
        return out

    def _pruned(self, step: Step, was: TargetEnv, env: TargetEnv) -> str:
        """The step's result: what it removed (versions as they were); a name still installed fails the step."""
        left = [n for n in self._pruning if n in env.dists]
        if left:
            raise StepFailed(step, f"{step.id}: the step ran, but {', '.join(left)} is still installed", self._tail())
        gone = ", ".join(f"{n} {was.dists[n].version}" if n in was.dists else n for n in self._pruning)
        self.log(f"-- {step.id}: removed {gone} (installed by this run, required by no installed distribution)")
        return f"removed {gone}: installed by this run, required by no installed distribution after the re-pins"

    def _tail(self, n: int = 30) -> list[str]:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as fh:
                return [ln.rstrip("\n") for ln in collections.deque(fh, maxlen=n)]
        except OSError:
            return []

    def _refused_clone(self) -> tuple[Step, gitsrc.GitError] | None:
        """The first clone step whose existing checkout `gitsrc.clone` would refuse (a user's edits, a directory
        that is not a clone), asked before the first change."""
        for step in self.plan.steps:
            if step.kind == CLONE and step.source is not None and self.src_dir:
                err = gitsrc.refusal(step.source, os.path.join(self.src_dir, step.source.name))
                if err is not None:
                    return step, err
        return None

    def _do(self, step: Step, journal: Journal) -> None:
        self.log(f"-- {step.id}: {step.title}")
        if step.source is not None and self.src_dir and step.kind != CLONE:
            journal.touching(os.path.join(self.src_dir, step.source.name))  # a build writes into its clone
        if step.kind == CLONE:
            assert step.source is not None and self.src_dir is not None
            bundled = self.bundles.get(step.source.name, {})
            dest = os.path.join(self.src_dir, step.source.name)
            journal.clone_moving(dest)  # a clone it makes is removed by a restore, a user's is put back
            try:
                commit = gitsrc.clone(step.source, dest, mirrors=self.mirrors, bundle=bundled.get("bundle"),
                                      submodule_bundles=bundled.get("submodules"), log=self.log)
            except gitsrc.GitError as e:  # the tail is what git said, read before the restore writes its lines
                e.tail = self._tail()  # type: ignore[attr-defined]
                raise
            journal.clone_moved(dest, commit)
            return
        if step.kind == ENVFILE:
            assert self.plan.env is not None
            path = envfile.write(self.plan.env, header=self.env_header)
            self.log(f"wrote {path}")
            return
        cmd = self._command(step)
        assert cmd is not None
        self._run(step, self._mapped_requirement_files(step, cmd))

    def _run(self, step: Step, cmd: Command) -> None:
        self.log("$ " + shown(cmd.argv))
        tail: collections.deque[str] = collections.deque(maxlen=30)
        proc = subprocess.Popen(cmd.argv, env=cmd.environ(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True)

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                tail.append(line.rstrip("\n"))
                self.log(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        t0 = time.monotonic()
        try:
            while True:  # a heartbeat for long steps (source builds): elapsed time and the last log line
                try:
                    rc = proc.wait(timeout=min(15.0, max(0.1, t0 + self.step_timeout - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() - t0 >= self.step_timeout:
                        raise
                    last = tail[-1][:100] if tail else ""
                    self.progress(f"    … {step.id} still running ({time.monotonic() - t0:.0f} s) {last}")
        except subprocess.TimeoutExpired:
            _stop(proc)
            reader.join(5)
            raise StepFailed(step, f"{step.id}: no result after {self.step_timeout:.0f} s", list(tail)) from None
        except BaseException as e:  # Ctrl-C, SIGTERM: the tail is what the step was doing, read before the restore
            _stop(proc)
            reader.join(5)
            if not getattr(e, "tail", None):
                e.tail = self._tail()  # type: ignore[attr-defined]
            raise
        reader.join(30)
        if rc != 0:
            raise StepFailed(step, f"{step.id}: `{cmd.argv[0]} … {' '.join(cmd.argv[1:4])}` exited with {rc}", list(tail))

    def _verify(self, step: Step, env: TargetEnv, view: Any) -> None:
        if not step.verify or step.build_for or step.kind == PRUNE or satisfied(step, view, self.plan):
            return
        reading, fix = mismatch(step, env, view, self.src_dir)
        raise StepFailed(step, f"{step.id}: the step ran, but {reading}", self._tail(), fix=fix)


def mismatch(step: Step, env: TargetEnv, view: Any, src_dir: str | None) -> tuple[str, str]:
    """What a step that ran did not produce, read from the target: (expected / found / how it was read, the fix
    that follows from it). The first unmet expectation is the one explained."""
    from doctor.installers.journal import linked, site_dirs
    from doctor.installers.satisfy import _pin_ok

    for name, spec in expectations(step, view):
        d = env.dists.get(name)
        if spec is None:
            if d is not None:
                return (f"{name} {d.version} is still installed ({d.dist_info}); the step removes it",
                        f"Remove it by hand (`{env.python} -m pip uninstall {name}`) and look for what reinstalls it.")
            continue
        if d is None:
            return (f"{name} is not installed (expected {name}{spec}; importlib.metadata in the target finds no "
                    f"distribution of that name)", "Read the log: the installer said what it installed instead.")
        if not _pin_ok(view, name, spec):
            how = "its metadata in " + d.dist_info
            local = "" if "+" in d.version or "+" not in spec else " (no local label: not the build the pin names)"
            return (f"{name} is {d.version}{local}, expected {name}{spec}, read from {how}",
                    "An index served another build: check --index-url/--extra-index-url (the PyTorch CPU index on x86)."
                    if local else "Read the log for what moved it; a later pin or --set decides the version.")
    if step.kind == EDITABLE and step.source is not None:
        name = normalize_name(step.editable_dist or step.source.name)
        d = env.dists.get(name)
        clone = os.path.join(src_dir or ".", step.source.name)
        if d is not None and not d.editable:
            if linked(d, site_dirs(env)):
                return (f"{name} {d.version} is installed, but not as an editable install: no direct_url.json; its "
                        f"metadata is the egg-info {d.dist_info}, linked by an .egg-link (pip ran `setup.py develop`)",
                        f"Let a pip >= {PIP_FLOOR} build it through PEP 660 (`--use-pep517`, which the doctor passes; "
                        "or --backend uv): remove the develop install (`pip uninstall " + name + "`) and run again.")
            return (f"{name} {d.version} is installed, but not as an editable install: "
                    + ("no direct_url.json in " + d.dist_info if not d.url else f"direct_url.json says {d.url}, not "
                       "editable"), f"Uninstall it (`{env.python} -m pip uninstall {name}`) and run again.")
        if d is not None:
            return (f"{name} is installed editable from {view.locations.get(name) or d.url}, not from the clone {clone}",
                    f"Uninstall the other checkout's install (`{env.python} -m pip uninstall {name}`), or point --src "
                    "at that checkout, and run again.")
    return ("the target does not have what the step pins", "Read the log in full.")


def pip_step(backend: Backend, env: TargetEnv) -> Step | None:
    """The plan's editable installs need pip >= PIP_FLOOR (PEP 660). The doctor's own pip runs them when it has
    `--python`; otherwise the target's pip does, and a target made by `python3 -m venv` has the pip its Python
    bundles (21.2.x on early 3.10 releases): then the first step brings pip to the floor, as an ordinary journalled
    install, so a rollback puts the bundled pip back. No pip at all to run: refused before any change."""
    if not isinstance(backend, PipBackend) or backend.own:
        return None
    if "pip" not in env.dists:
        raise InputError(f"the pip backend needs pip >= 22.3 in the doctor's environment or a pip in the target "
                         f"({env.python} has none): run `{env.python} -m ensurepip`, or use --backend uv",
                         source="--backend")
    return Step("pip", INSTALL, f"Bring the target's pip to >= {PIP_FLOOR}", requirements=(f"pip>={PIP_FLOOR}",),
                reason=f"the target's pip runs the plan; editable installs of setup.py-only projects (MindSpeed) need "
                       f"PEP 660 (pip >= {PIP_FLOOR}), else pip runs `setup.py develop`",
                source_ref="https://pip.pypa.io/en/stable/news/#v21-3")


def new_clone_detail(step: Step, src_dir: str | None, prefix: str | None = None) -> str:
    """For a clone step whose directory is not there (or is empty): the run makes that clone, and a failed or
    interrupted run, or `--rollback`, removes it again (clonestate), with the directories the run creates above
    it (`prefix`: the target's, which a dry run may be about to make: not one of those). Said in the plan because a
    retry then clones again: where that costs, a local --git-mirror or a wheelhouse."""
    if step.kind != CLONE or step.source is None:
        return ""
    dest = os.path.abspath(os.path.join(src_dir or ".", step.source.name))
    if os.path.isdir(dest) and not os.path.islink(dest) and not os.listdir(dest):
        return (f"new clone in the empty directory {dest}: a failed or interrupted run, or --rollback, removes it "
                "(the directory stays) unless it changed since")
    if os.path.lexists(dest):
        return ""
    # the venv a dry run plans to make is no directory the clone creates (it stays after a failure)
    top = os.path.abspath(prefix) if prefix else None
    made = [d for d in missing_parents(dest) if top is None or not (top + os.sep).startswith(d + os.sep)]
    return (f"new clone {dest}: a failed or interrupted run, or --rollback, removes it"
            + (f" (and {', '.join(made)}, which the run creates)" if made else "") + " unless it changed since")


def clone_detail(step: Step, view: Any) -> str:
    """Why an existing clone does not count: tracked files deleted (the run checks them out again) or changed
    (the run refuses them: they are someone's work)."""
    if step.kind != CLONE or step.source is None:
        return ""
    fresh = new_clone_detail(step, view.src_dir)
    if fresh:
        return fresh
    changed = view.dirty.get(step.source.name) or []
    dest = os.path.join(view.src_dir or ".", step.source.name)
    if not changed:
        pos = gitsrc.position(dest) if view.heads.get(step.source.name) else None
        if pos is None or gitsrc.satisfied(step.source, dest, at=pos["head"]):
            return ""
        was = pos["branch"].removeprefix("refs/heads/") or pos["head"][:12]
        return (f"existing clone at {pos['head'][:12]}" + (f" (branch {was})" if pos["branch"] else "") +
                f": the run checks {(step.source.commit or step.source.ref)[:12]} out, detached; "
                f"a failed run or --rollback checks {was} out again")
    codes = gitsrc.changes(dest)
    if gitsrc.deleted_only(codes):
        return f"{len(codes)} tracked file(s) missing from the work tree ({gitsrc.named(changed)}): checked out again"
    return f"local changes ({gitsrc.named(changed)}): the run refuses them (commit or stash them first)"


_GIT_REQ = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*@\s*git\+(?P<url>[^\s@#;]+(?:@(?!\S*/)[^\s#;]*)?)"
                      r"(?P<tail>\s*[;#].*)?$")


def map_requirement_line(line: str, mirrors: dict[str, str], *, offline: bool) -> str | None:
    """`name @ git+URL@REF` through --git-mirror (offline: the bare name the wheelhouse carries); None when the line
    is not a git requirement or no mirror maps it."""
    m = _GIT_REQ.match(line)
    if not m:
        return None
    if offline:
        return m.group("name") + (m.group("tail") or "")
    url, _, ref = m.group("url").partition("@")
    mapped = gitsrc.map_url(url, mirrors)
    if mapped == url:
        return None
    # a local mirror directory as a URL with a host: the pip `python3 -m venv` bundles (23.2.1, packaging 21.3)
    # refuses `name @ git+file:///path` ("Invalid requirement": a URL without a netloc); git, uv and newer pip read
    # file://localhost/path as that path
    mapped = "file://localhost" + mapped if mapped.startswith("/") else mapped
    return f"{m.group('name')} @ git+{mapped}" + (f"@{ref}" if ref else "") + (m.group("tail") or "")


def map_requirement_file(src: Path, out: Path, mirrors: dict[str, str], *, offline: bool) -> bool:
    """Write `out` with the git requirements of `src` mapped (see Executor._mapped_requirement_files); False when
    nothing needed mapping (then `out` is not written)."""
    try:
        lines = src.read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    changed = False
    for i, ln in enumerate(lines):
        mapped = map_requirement_line(ln, mirrors, offline=offline)
        if mapped is not None:
            lines[i] = mapped
            changed = True
    if changed:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


DEFAULT_BUILD = ("setuptools>=40.8.0", "wheel")  # PEP 517's fallback for a source without [build-system]


def build_system_requires(raw: bytes | None, source: str) -> list[str]:
    """[build-system].requires of a pyproject.toml's bytes; PEP 517's default when there is no file, no table
    or the file does not parse (pip then builds it the same way)."""
    from doctor.tomlfile import load_toml

    if raw is None:
        return list(DEFAULT_BUILD)
    try:
        data = load_toml(raw, source)
    except DoctorError:
        return list(DEFAULT_BUILD)
    bs = data.get("build-system") if isinstance(data, dict) else None
    reqs = bs.get("requires") if isinstance(bs, dict) else None
    return [str(r) for r in reqs] if isinstance(reqs, list) else list(DEFAULT_BUILD)


def read_build_system_requires(pyproject: Path) -> list[str]:
    try:
        raw = pyproject.read_bytes()
    except OSError:
        raw = None
    return build_system_requires(raw, str(pyproject))


def build_requirements(clone: Path, step: Step) -> tuple[str, ...]:
    """[build-system].requires of clone/pyproject.toml + step.requirements + `-r clone/<file>` per existing file."""
    reqs = read_build_system_requires(clone / "pyproject.toml")
    reqs += [r for r in step.requirements if r not in reqs]
    for f in step.requirement_files:
        if (clone / f).is_file():
            reqs += ["-r", str(clone / f)]
    return tuple(reqs)


def _pin_bundled(plan: Plan, bundles: dict[str, dict[str, Any]]) -> Plan:
    """From a wheelhouse, a source is the commit its bundle holds (recorded in the manifest, hash-verified): the
    wheelhouse was made for this plan, with the profile's pins or with the --git-ref chosen then. Pin that commit,
    so the clone is verified against it and a second run recognises it; the version is read from the clone. A title
    that named the profile's commit ("Clone MindSpeed at f2b0977…") names the bundle's: the plan printed, the
    progress line and the log said the profile's commit while the clone checked out the one a --git-ref chose when
    the wheelhouse was made."""
    if not bundles:
        return plan
    steps = []
    for s in plan.steps:
        b = bundles.get(s.source.name) if s.source is not None else None
        if s.source is not None and b and b.get("commit") and not gitsrc.matches(str(b["commit"]), s.source.commit):
            old, new = s.source.commit, str(b["commit"])
            title = s.title.replace(old, f"{new} (the wheelhouse's bundle)") if old and old in s.title else s.title
            s = replace(s, title=title, source=replace(s.source, commit=new))
        steps.append(s)
    return replace(plan, steps=tuple(steps))


def _stop(proc: subprocess.Popen[str]) -> None:
    """Stop the child we started (its own process group), politely first."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)

