"""`doctor install --download-only DIR`: everything the plan installs, for the target's platform, in one folder.

The plan's requirements are resolved step by step in plan order (the steps really do install different versions
of a few packages: vllm-ascend's requirements move torch-npu, the final pins move it back), but as *one*
resolution: every step is constrained to the versions the steps before it already chose, so an unpinned
dependency (numpy, triton, a build backend) lands in the wheelhouse once. Never with the host's pip configuration
(pip `--isolated`, no PIP_* variables). Packages that have no wheel are carried as sdists together with their
build requirements (`[build-system].requires` of the sdist), and so are the build requirements of every source
the plan builds, so the offline install can build them with isolation, as online. The work trees of the git
sources are read for their requirement files and build requirements, then bundled (with the tags their version
needs). The report gives the wheelhouse's size.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from typing import IO, Any

from packaging.requirements import InvalidRequirement, Requirement

from doctor.console import Console
from doctor.errors import DoctorError, InputError
from doctor.installers import wheelhouse as wh
from doctor.installers.backends import PIP_FLOOR, PipBackend, Source, shown
from doctor.installers.execute import (
    DONE,
    FAILED,
    StepResult,
    build_requirements,
    build_system_requires,
    map_requirement_file,
    map_requirement_line,
    read_build_system_requires,
)
from doctor.installers.gitsrc import bundle_submodules, make_bundle, parse_mirrors
from doctor.installers.plan import CLONE, EDITABLE, INSTALL, IndexOptions, Plan, Step
from doctor.report import Report, finding
from doctor.snapshot.model import normalize_name


def _requirement(line: str) -> Requirement | None:
    """A PEP 508 requirement line, parsed by `packaging`; None for what is not one (paths, options)."""
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


def _req_name(line: str) -> str | None:
    r = _requirement(line)
    return normalize_name(r.name) if r else None


def _exact_pin(line: str) -> tuple[str, str] | None:
    """(name, version) of a requirement that pins one version exactly (`torch==2.10.0+cpu`), else None."""
    r = _requirement(line)
    if r is None or r.url:
        return None
    specs = list(r.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "==="):
        return normalize_name(r.name), specs[0].version
    return None




def constraints_to_drop(output: str, cons: dict[str, str], held: set[str], *, last: bool) -> set[str]:
    """Which constraints a failed `pip download` blames: those pip lists as `requested (constraint)` and those
    whose constrained version stands in its "The conflict is caused by" lines (`scipy 1.17.1 depends on
    numpy>=1.26.4`) — a held pin too, when pip names it (a step that moves torch-npu on purpose: the final pins
    restore it). When pip names none, or on the last round, every constraint goes except the held pins: a blanket
    drop must not let a step pull in another torch."""
    named = {normalize_name(m) for m in re.findall(r"requested \(constraint\) ([A-Za-z0-9][A-Za-z0-9._-]*)==", output)}
    for name, ver in re.findall(r"(?m)^\s+([A-Za-z0-9][A-Za-z0-9._-]*) (\S+) depends on ", output):
        if cons.get(normalize_name(name)) == ver:
            named.add(normalize_name(name))
    named &= set(cons)
    if named and not last:
        return named
    return set(cons) - held


def native(plan: Plan) -> bool:
    """The target is this machine's kind (arch and Python): pip may build sdists' metadata here."""
    return plan.target.arch == os.uname().machine and plan.target.python_version == f"{sys.version_info[0]}.{sys.version_info[1]}"


def dist_of(filename: str) -> tuple[str, str] | None:
    """(name, version) of a wheel or sdist file name, as packaging reads them (`arctic_inference-0.1.1.tar.gz`
    and `arctic-inference-0.1.1.tar.gz` alike); None for anything else."""
    from packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        parse_sdist_filename,
        parse_wheel_filename,
    )

    try:
        if filename.endswith(".whl"):
            name, version, _build, _tags = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return normalize_name(name), str(version)


def _expand(reqs: list[str]) -> list[str]:
    """Requirement strings with every `-r FILE` replaced by the file's requirement lines."""
    out: list[str] = []
    it = iter(reqs)
    for r in it:
        if r != "-r":
            out.append(r)
            continue
        try:
            lines = Path(next(it)).read_text(encoding="utf-8").splitlines()
        except (OSError, StopIteration):
            continue
        out += [ln.split(" #")[0].strip() for ln in lines if ln.strip() and not ln.lstrip().startswith(("#", "-"))]
    return out


def _names(reqs: list[str]) -> set[str]:
    """Distribution names a requirement list pins exactly itself (`==`, also inside -r files): those may differ
    from what an earlier step chose (the plan moves them on purpose), so they are not constrained."""
    return {pin[0] for r in _expand(reqs) if (pin := _exact_pin(r))}


class Downloader:
    """One wheelhouse build: runs pip download per requirement group under the accumulated constraints."""

    def __init__(self, o: Any, plan: Plan, root: Path, log: IO[str]) -> None:
        self.o, self.plan, self.root, self.log = o, plan, root, log
        self.wheels = root / wh.WHEELS
        self.work = root / ".work"
        self.pip = PipBackend(isolated=True)
        self.platforms = wh.manylinux_platforms(plan.target.arch, plan.target.glibc)
        self.user_index = IndexOptions(o.index_url, tuple(o.extra_index_urls))
        self.native = native(plan)
        self.preferred: dict[str, str] = {}
        # the profile's exact torch-stack pins are never dropped, so no step brings a second (CUDA) torch along
        # build requirements come from the torch stack's index: on x86 the PyTorch CPU index, so a build-time
        # `torch == 2.11.0` (vLLM's, arctic-inference's) is a CPU wheel, not PyPI's CUDA one with its nvidia-* wheels
        self.build_index = next((st.index for st in plan.steps if st.id == "torch-stack"), IndexOptions())
        self.held = {pin[0] for st in plan.steps if st.id == "torch-stack" for r in st.requirements
                     if (pin := _exact_pin(r))}

    def say(self, m: str) -> None:
        self.log.write(m.rstrip("\n") + "\n")
        self.log.flush()

    def chosen(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for p in self.wheels.iterdir():
            d = dist_of(p.name)
            if d:
                out.setdefault(d[0], d[1])
        return out

    def constraints(self, own: set[str]) -> dict[str, str]:
        """What earlier steps chose, overlaid by the whole plan's resolution, minus what this step pins itself."""
        picked = {**self.chosen(), **self.preferred}
        return {n: v for n, v in picked.items() if n not in own}

    def fetch(self, reqs: list[str], index: IndexOptions, *, no_deps: bool = False, env: tuple[tuple[str, str], ...] = ()) -> None:
        """pip download under the constraints; a constraint pip names as the conflict is dropped and the download
        retried (a few rounds), so one conflicting package does not free every other one."""
        cons = self.constraints(_names(reqs))
        idx = self.user_index if (self.user_index.index_url or self.user_index.extra_index_urls) else index
        before = {p.name for p in self.wheels.iterdir()} if self.wheels.is_dir() else set()
        for _round in range(8):
            path = self.work / "constraints.txt"
            path.write_text("".join(f"{n}=={v}\n" for n, v in sorted(cons.items())))
            cmd = self.pip.download(["-c", str(path), *reqs], str(self.wheels), python_version=self.plan.target.python_version,
                                    platforms=() if self.native else self.platforms, source=Source(index=idx),
                                    no_deps=no_deps, binary_only=not self.native)
            self.say("$ " + shown(cmd.argv))
            cp = subprocess.run(cmd.argv, env={**cmd.environ(), **dict(env)}, capture_output=True, text=True, timeout=7200)
            self.say(cp.stdout + cp.stderr)
            if cp.returncode == 0:
                named = {n for r in _expand(reqs) if (n := _req_name(r))}
                if set(cons) - self.held and self._went_back(named, before):
                    self._replaceable(reqs, idx, no_deps=no_deps, env=env)
                return
            drop = constraints_to_drop(cp.stdout + cp.stderr, cons, self.held, last=_round >= 5)
            kept = sorted(self.held & (set(cons) - drop))
            self.say(f"-- pip download failed; dropping the constraints on {', '.join(sorted(drop)) or 'nothing'}"
                     + (f" (the profile's pins stay: {', '.join(kept)})" if kept else ""))
            if not drop:
                break
            cons = {n: v for n, v in cons.items() if n not in drop}
        said = [ln.strip() for ln in (cp.stdout + cp.stderr).splitlines() if ln.startswith("ERROR:")]
        where = getattr(self.log, "name", None)
        raise InputError(f"pip download failed for {' '.join(reqs)[:200]}: "
                         + (" ".join(said[-2:])[:400] or f"pip exited with {cp.returncode}")
                         + (f" (the whole output: {where})" if isinstance(where, str) else ""), source=str(self.root))

    def _went_back(self, own: set[str], before: set[str]) -> bool:
        """Did this step pick, for a package it names itself, a version older than one an earlier step chose? (Where
        a constraint may have pushed pip to an ancient release: `_replaceable`.)"""
        from packaging.version import InvalidVersion, Version

        old: dict[str, list[Version]] = {}
        new: dict[str, list[Version]] = {}
        for name in {p.name for p in self.wheels.iterdir()}:
            d = dist_of(name)
            if d is None or d[0] not in own:
                continue
            try:
                (old if name in before else new).setdefault(d[0], []).append(Version(d[1]))
            except InvalidVersion:
                continue
        return any(n in old and min(vs) < max(old[n]) for n, vs in new.items())

    def _replaceable(self, reqs: list[str], idx: IndexOptions, *, no_deps: bool,
                     env: tuple[tuple[str, str], ...]) -> None:
        """The versions the online install would move to. Online, what earlier steps installed is only preferred:
        pip replaces it when this step needs another version (vllm-ascend's fastapi<0.124.0 takes starlette back
        below 0.51). Under hard constraints pip may instead satisfy both with an ancient release (fastapi 0.1.17)
        and blame nothing. So a step that went back on a package it names is downloaded once more with only the
        profile's held pins: the wheelhouse then also holds what the online install picks. Best effort: a failure
        here leaves the constrained set."""
        held = {n: v for n, v in self.constraints(_names(reqs)).items() if n in self.held}
        path = self.work / "constraints-held.txt"
        path.write_text("".join(f"{n}=={v}\n" for n, v in sorted(held.items())))
        cmd = self.pip.download(["-c", str(path), *reqs], str(self.wheels), python_version=self.plan.target.python_version,
                                platforms=() if self.native else self.platforms, source=Source(index=idx),
                                no_deps=no_deps, binary_only=not self.native)
        self.say("$ " + shown(cmd.argv) + "   (the versions this step may move to, as online)")
        cp = subprocess.run(cmd.argv, env={**cmd.environ(), **dict(env)}, capture_output=True, text=True, timeout=7200)
        self.say(cp.stdout + cp.stderr)
        if cp.returncode != 0:
            self.say("-- that resolution failed: the constrained download above stands")

    def resolve_plan(self, groups: list[list[str]]) -> None:
        """One resolution of everything the plan installs (`pip install --dry-run --report`), leaving out the packages
        the steps pin to different versions on purpose; its versions are preferred by every step's download."""
        exact: dict[str, set[str]] = {}
        flat: list[str] = []
        for g in groups:
            for r in _expand(g):
                pin = _exact_pin(r)
                if pin:
                    exact.setdefault(pin[0], set()).add(pin[1])
                flat.append(r)
        moved = {n for n, vs in exact.items() if len(vs) > 1}
        union = [r for r in dict.fromkeys(flat) if _req_name(r) not in moved]
        report = self.work / "plan-resolution.json"
        idx = self.user_index
        if not (idx.index_url or idx.extra_index_urls):
            for st in self.plan.steps:
                idx = idx.merged(st.index)
        cmd = self.pip.resolve_report(union, str(report), python_version=self.plan.target.python_version,
                                      foreign=not self.native, platforms=self.platforms, target=str(self.work / "target"),
                                      source=Source(index=idx))
        argv = list(cmd.argv)
        self.say("$ " + shown(argv))
        step_env = {k: v for st in self.plan.steps for k, v in st.env}  # VLLM_TARGET_DEVICE=empty shapes vLLM's metadata
        cp = subprocess.run(argv, env={**cmd.environ(), **step_env}, capture_output=True, text=True, timeout=7200)
        self.say(cp.stdout + cp.stderr)
        if cp.returncode != 0:
            self.say("-- the plan does not resolve as one set (see the conflict above: its steps leave a requirement broken "
                     "on purpose); each step is constrained by the steps before it, a conflicting constraint dropped alone")
            return
        import json

        data = json.loads(report.read_text(encoding="utf-8"))
        for item in data.get("install") or []:
            meta = item.get("metadata") or {}
            if meta.get("name") and meta.get("version") and not item.get("is_direct"):
                self.preferred[normalize_name(meta["name"])] = str(meta["version"])
        self.say(f"-- one resolution of the plan: {len(self.preferred)} versions preferred ({len(moved)} moved on purpose: "
                 f"{', '.join(sorted(moved))})")

    def step_requirements(self, s: Step) -> list[str]:
        """What one plan step needs in the wheelhouse (requirement files read from the bundling work trees)."""
        if s.kind == INSTALL and s.build_for:
            served = self.plan.step(s.build_for)
            assert served.source is not None
            return list(build_requirements(self.work / served.source.name, s))
        reqs = list(s.requirements) if s.kind == INSTALL else []
        if s.kind == EDITABLE and s.source is not None and not s.no_deps:
            reqs.append(str(self.work / s.source.name))  # the tree's own dependencies, resolved for the target
        if "-r" in reqs:
            i = reqs.index("-r")
            reqs[i + 1] = str(self.work / Path(reqs[i + 1]).parent.name / Path(reqs[i + 1]).name)
        mirrors = parse_mirrors(self.o.git_mirrors)
        for i, a in enumerate(reqs):  # a git requirement given as a line (a profile's verl_requirements)
            if a in s.requirements and (i == 0 or reqs[i - 1] != "-r"):
                reqs[i] = map_requirement_line(a, mirrors, offline=False) or a
        for i, a in enumerate(reqs[:-1]):  # git requirements inside a file go through --git-mirror too
            out = self.work / f"{s.id}-{i}-requirements.txt"
            if a == "-r" and map_requirement_file(Path(reqs[i + 1]), out, parse_mirrors(self.o.git_mirrors), offline=False):
                reqs[i + 1] = str(out)
        return reqs

    def build_requires_of_sources(self) -> list[list[str]]:
        """[build-system].requires of each source the plan builds, one list per source (the offline build is
        isolated too). Each source builds in its own environment, so their union is no one resolve: vLLM v0.13.0
        builds with torch == 2.9.0 and vllm-ascend's releases/v0.13.0 with torch==2.8.0."""
        out: list[list[str]] = []
        for s in self.plan.steps:
            if s.kind == EDITABLE and s.source is not None and not s.no_build_isolation:
                reqs = read_build_system_requires(self.work / s.source.name / "pyproject.toml")
                if reqs and reqs not in out:
                    out.append(reqs)
        return out

    def sdist_build_requires(self) -> None:
        """For every sdist in the wheelhouse, its build requirements too (a few rounds: they may be sdists)."""
        seen: set[str] = set()
        for _round in range(3):
            new = [p for p in self.wheels.iterdir() if p.name.endswith((".tar.gz", ".zip")) and p.name not in seen]
            if not new:
                return
            reqs: list[str] = []
            for p in new:
                seen.add(p.name)
                reqs += [r for r in _sdist_requires(p) if r not in reqs]
            if reqs:
                self.say(f"-- build requirements of {', '.join(p.name for p in new)}")
                self.fetch(reqs, self.build_index)


def _sdist_requires(path: Path) -> list[str]:
    """The [build-system].requires inside an sdist (its top-level pyproject.toml)."""
    raw: bytes | None = None
    try:
        if path.name.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                name = next((n for n in z.namelist() if n.count("/") == 1 and n.endswith("/pyproject.toml")), None)
                raw = z.read(name) if name else None
        else:
            with tarfile.open(path) as t:
                m = next((m for m in t.getmembers() if m.name.count("/") == 1 and m.name.endswith("/pyproject.toml")), None)
                f = t.extractfile(m) if m is not None else None
                raw = f.read() if f is not None else None
    except (OSError, tarfile.TarError, zipfile.BadZipFile):
        raw = None
    return build_system_requires(raw, str(path))


def download(o: Any, plan: Plan, report: Report, console: Console) -> Report:
    assert o.download_only
    root = Path(o.download_only).resolve()
    (root / wh.WHEELS).mkdir(parents=True, exist_ok=True)
    (root / wh.GIT).mkdir(parents=True, exist_ok=True)
    (root / ".work").mkdir(exist_ok=True)
    log_path = o.log or str(root / "download.log")
    manifest = wh.Manifest(profile=plan.profile, target={**plan.target.to_dict(),
                                                         "platforms": wh.manylinux_platforms(plan.target.arch, plan.target.glibc)},
                           created=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    steps: list[StepResult] = []
    t_all = time.monotonic()
    try:
        _download_all(o, plan, root, log_path, manifest, steps, report, console)
    except DoctorError as e:  # the failure names the half-made wheelhouse and what to do with it
        e.message = f"{e.message}. {partial(root, log_path)}"
        raise
    except OSError as e:  # a full disk, an unwritable directory
        raise InputError(f"{e}. {partial(root, log_path)}", source=str(root)) from e
    wh.scan(root, manifest)
    wh.write(root, manifest)
    size = sum(a.size for a in manifest.artifacts)
    sdists = sorted(a.path for a in manifest.artifacts if a.kind == "sdist")
    report.extra["steps"] = [r.to_dict() for r in steps]
    report.extra["wheelhouse"] = {"dir": str(root), "artifacts": len(manifest.artifacts), "bytes": size, "sdists": sdists,
                                  "platforms": manifest.target["platforms"], "log": log_path,
                                  "seconds": round(time.monotonic() - t_all, 1)}
    report.findings.append(finding("install-wheelhouse-written", "info", "system",
                                   f"wheelhouse {root}: {len(manifest.artifacts)} artifacts, {size / 1e9:.2f} GB, sha256 in "
                                   "manifest.json", evidence={"dir": str(root), "git": sorted(manifest.git), "bytes": size,
                                                              "sdists": sdists}))
    install = install_command(plan.profile, str(root), tuple(o.sets or ()))
    report.extra["wheelhouse"]["install"] = install
    console.print(f"wheelhouse {root}: {len(manifest.artifacts)} artifact(s), {size / 1e9:.2f} GB"
                  + (f" ({len(sdists)} sdist(s), built offline)" if sdists else "")
                  + f"; install on the target with\n  {install}")
    return report


def _download_all(o: Any, plan: Plan, root: Path, log_path: str, manifest: wh.Manifest, steps: list[StepResult],
                  report: Report, console: Console) -> None:
    with open(log_path, "a", encoding="utf-8") as log:
        d = Downloader(o, plan, root, log)
        try:
            # the git sources first: the plan's requirement files and build requirements are read from them
            order = [s for s in plan.steps if s.kind == CLONE] + [s for s in plan.steps if s.kind != CLONE]
            resolved = False
            for s in order:
                if s.kind != CLONE and not resolved:
                    console.status("resolving the whole plan once")
                    d.resolve_plan([d.step_requirements(x) for x in plan.steps if x.kind in (INSTALL, EDITABLE)])
                    resolved = True
                t0 = time.monotonic()
                try:
                    if not _download_step(d, s, manifest, console):
                        continue
                except Exception as e:
                    steps.append(StepResult(s.id, s.kind, s.title, FAILED, time.monotonic() - t0, detail=str(e)))
                    report.extra["steps"] = [r.to_dict() for r in steps]
                    raise
                steps.append(StepResult(s.id, s.kind, s.title, DONE, time.monotonic() - t0))
            for extra in d.build_requires_of_sources():
                console.status("downloading the build requirements of the git sources")
                d.fetch(extra, d.build_index)
            d.sdist_build_requires()
            # the target's own pip runs an offline plan, and a target older than PIP_FLOOR gets the plan's first
            # step "bring pip to >= PIP_FLOOR" (installers.execute.pip_step): that needs a pip wheel here too
            console.status(f"downloading pip>={PIP_FLOOR} (the plan's pip step on an older target)")
            d.fetch([f"pip>={PIP_FLOOR}"], IndexOptions(), no_deps=True)
        finally:
            shutil.rmtree(root / ".work", ignore_errors=True)


def partial(root: Path, log_path: str) -> str:
    """What a failed --download-only leaves in `root`, and that it is safe: kept rather than removed, since its files
    are what a re-run needs again (pip download reuses a file already in wheels/ instead of fetching it: GBs over a
    slow link), and the folder may be an earlier wheelhouse named again. No manifest is written for it, so
    `--offline` refuses it (or, where an earlier download's manifest.json is there, refuses the files it does not
    list): it cannot be installed from by mistake."""
    files = [p for sub in (wh.WHEELS, wh.GIT) if (root / sub).is_dir() for p in (root / sub).rglob("*") if p.is_file()]
    pkgs = sum(1 for p in files if p.parent.name == wh.WHEELS)
    bundles = sum(1 for p in files if p.suffix == ".bundle")
    size = sum(p.stat().st_size for p in files)
    guard = ("its manifest.json is an earlier download's and does not list what this one added, so `--offline` "
             "refuses it" if (root / wh.MANIFEST).exists() else "it has no manifest.json, so `--offline` refuses it")
    return (f"The wheelhouse {root} is left as it is, unfinished: {pkgs} wheel(s)/sdist(s) and {bundles} git bundle(s) "
            f"({size / 1e6:.1f} MB) in {wh.WHEELS}/ and {wh.GIT}/, and the log {log_path}; {guard}. Run the same "
            f"`--download-only` again once the cause is fixed (pip reuses the files already there), or delete "
            f"{shlex.quote(str(root))}: nothing outside it was changed")


def install_command(profile: str, house: str, sets: tuple[str, ...] = ()) -> str:
    """The offline install of what this wheelhouse holds: with the download's --set pins, or the plan re-pins the
    profile's release, which the wheelhouse does not hold, and its last resolve stops offline after every source
    was cloned and built (seen: --set xgrammar=0.1.32, 'No matching distribution found for xgrammar==0.1.33').
    --git-ref needs no repeating: offline, each source is the commit its bundle holds."""
    q = shlex.quote
    pins = "".join(f" --set {q(s)}" for s in sets)
    return f"doctor install --profile {q(profile)} --wheelhouse {q(house)} --offline{pins} --venv DIR"


def _download_step(d: Downloader, s: Step, manifest: wh.Manifest, console: Console) -> bool:
    if s.kind == CLONE and s.source is not None:
        console.status(f"bundling {s.source.name} at {s.source.commit or s.source.ref}")
        bundle = d.root / wh.GIT / f"{s.source.name}.bundle"
        commit = make_bundle(s.source, bundle, d.work, mirrors=parse_mirrors(d.o.git_mirrors), log=d.say, keep=True)
        manifest.git[s.source.name] = {"url": s.source.url, "ref": s.source.ref, "commit": commit,
                                       "bundle": f"{wh.GIT}/{bundle.name}"}
        if s.source.submodules:
            sub_dir = f"{wh.GIT}/{s.source.name}.submodules"
            subs = bundle_submodules(d.work / s.source.name, d.root / sub_dir, log=d.say)
            manifest.git[s.source.name]["submodules"] = [
                {"path": m["path"], "commit": m["commit"], "bundle": f"{sub_dir}/{m['bundle']}"} for m in subs]
        return True
    if s.kind not in (INSTALL, EDITABLE):
        return False
    reqs = d.step_requirements(s)
    if not reqs:
        return False
    console.status(f"downloading for {s.id}: {' '.join(reqs)[:120]}")
    d.fetch(reqs, s.index, no_deps=s.no_deps and s.kind == INSTALL, env=s.env)
    return True
