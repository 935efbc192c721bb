"""The target Python environment: run `_target_probe.py` inside the target interpreter and turn its
JSON into snapshot `python`, `packages` and `modules`.

Principle 3 of docs/design.md: the target is an interpreter, not the doctor's own. The script runs as
`__main__` under `<python> -c` (see `_BOOT`), so sys.path[0] is the user's cwd exactly as for `python -c` /
`python -m` — no `-I`, no `-S`: a source tree in the cwd that shadows an installed package must show. The run is
bounded in time; a missing or failing interpreter is a recorded error, never an exception.

The probe must stay under 60 KiB (tests/probes/test_run.py), so the longer reasons behind its file checks are kept
here, where its docstrings point:

- `missing_files` (every `doctor check`) looks at what a cluster operator needs on every run: the file an import needs
  first. For each top-level name, whether the package's `__init__.py` is there (one os.access call, nearly every
  name); else whether it is a directory (a namespace portion) or a module file (`six.py`, an extension module), and
  whether bytecode or an extension module stands in for the source (`__init__.pyc` of a bytecode-only deployment, a
  compiled `__init__`: importable, nothing gone; a `.py` whose `.pyc` is there is not counted). Only a name with
  neither, or a directory without the `__init__.py` its RECORD lists, has its RECORD rows under that name stat-ed
  (how many are gone, and a few of them). A directory without `__init__.py` reads its RECORD text once to see
  whether it lists one (google/, nvidia/: no), unless shared_files already parsed it. Measured on this project's
  machine (3 us per stat; median of 15 cold runs, load average ~2.7): 0.87 ms for a verl 0.9.1 + torch venv of 125
  distributions (137 top-level names, 2 RECORDs read), 0.5 ms for a venv whose opencv-python-headless lost all 41
  cv2/ files. Stat-ing every RECORD-listed file of every distribution would also find an extension module deleted
  deep inside a package whose `__init__.py` is there (torch/_C.*.so), but costs ~35 ms for three stack
  distributions, too much for every check; such a package fails at its import, which `check --deep` runs for
  torch_npu, mindspeed and vllm_ascend.
- `modules` (`module_facts`, `_copies_on_path`, `_cwd_only`) is where `import <name>` resolves in a process of the
  target started from the directory of the run, with one exception: a directory of that working directory that is not
  a package (no `__init__.py`) when only `python -c`'s '' entry puts the directory on sys.path (not PYTHONPATH). Such a
  directory is a namespace portion, and a regular package or module anywhere on the path wins over every portion; so
  where the name is installed it never loads, and where it is not, it makes a namespace package only of the cwd, which
  the training job (started from its own directory, a Ray worker from its session's) does not see. Ray's session
  directory /tmp/ray (the probe run from /tmp on a Ray node) and the root of a `verl/` git checkout in $HOME are the
  usual ones: left out, the module is null (nothing installed) or keeps its installed origins only. A portion in the
  cwd that joins portions elsewhere (Megatron-LM's `megatron/` beside megatron-core's) is kept, and so is one that
  hides a copy served by an editable install's meta-path finder (the path finder runs first, so an import from the cwd
  gets the empty namespace: `cwd-shadows-package`). A package directory in the cwd (with `__init__.py`) is what a
  `python` run from there imports: kept, `cwd-shadows-package` says so.
- `verify_files` (`check --deep`) leaves out: editable installs (their code is meant to change); egg-info installs
  (installed-files.txt has no digests); distributions not installed from a wheel by a tool that writes RECORD from
  what it put on disk (INSTALLER other than pip, uv, ...: conda replaces its build prefix inside files, Debian's
  dist-packages keep the build's RECORD with stripped .so files and no INSTALLER); a distribution whose metadata is
  not in the directory it installs into; copies shadowed later on sys.path (the first copy is what imports load);
  rows without a digest (RECORD, INSTALLER, the .pyc pip compiles) and compiled files (the interpreter rewrites
  those); files outside the site directory (console scripts, headers: a relocated venv rewrites the scripts'
  shebangs, and no import loads them).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from doctor.probes._run import RunResult, Started, finish, run_bounded, start
from doctor.snapshot.redact import redact_url_credentials

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_target_probe.py")
BEGIN = "@@DOCTOR-TARGET-PROBE-BEGIN@@"
END = "@@DOCTOR-TARGET-PROBE-END@@"
PACKAGE_KEYS = ("version", "location", "editable", "url", "commit", "installer")


def document_text(stdout: str) -> str | None:
    """The text between the marker lines (a noisy .pth file may print around it): the probe's JSON answer as it
    printed it, or None when it printed no result."""
    if not isinstance(stdout, str):
        return None
    start = stdout.rfind(BEGIN)
    end = stdout.rfind(END)
    if start < 0 or end < start:
        return None
    return stdout[start + len(BEGIN):end].strip()


def extract_document(stdout: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON between the marker lines (a noisy .pth file may print around it); (doc, error)."""
    if not isinstance(stdout, str):
        return None, "no output"
    body = document_text(stdout)
    if body is None:
        return None, "the probe printed no result"
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as e:
        return None, f"the probe's result is not JSON: {e}"
    if not isinstance(doc, dict):
        return None, "the probe's result is not a JSON object"
    return doc, None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


_ABSENT = object()
_CXX_KEYS = ("path", "glibcxx", "cxxabi")


def _libstdcxx(v: Any) -> Any:
    """The probe's `libstdcxx` in snapshot shape: null (the loader found none), or path / glibcxx / cxxabi strings
    and `system` (the same, or null); anything else (an old or hand-edited probe document) is left out: unknown."""
    if v is None:
        return None
    if not isinstance(v, dict):
        return _ABSENT

    def file_facts(d: dict[str, Any]) -> dict[str, Any]:
        return {k: d[k] for k in _CXX_KEYS if k in d and (d[k] is None or isinstance(d[k], str))}

    out = file_facts(v)
    system = v.get("system", _ABSENT)
    if system is None or isinstance(system, dict):
        out["system"] = None if system is None else file_facts(system)
    return out


def _shared(v: Any) -> dict[str, Any] | None:
    """One `shared_files` item in snapshot shape (rule 11), None when it is not one (an old or hand-edited probe
    document): two names, counts, example paths and the name whose copy is on disk."""
    if not (isinstance(v, dict) and isinstance(v.get("dists"), list) and len(v["dists"]) == 2
            and all(isinstance(d, str) for d in v["dists"])):
        return None
    out: dict[str, Any] = {"dists": list(v["dists"])}
    for k in ("top_level", "location"):
        if isinstance(v.get(k), str):
            out[k] = v[k]
    for k in ("files", "differ"):
        if isinstance(v.get(k), int) and not isinstance(v.get(k), bool):
            out[k] = v[k]
    if isinstance(v.get("examples"), list):
        out["examples"] = [p for p in v["examples"] if isinstance(p, str)]
    if "on_disk" in v and (v["on_disk"] is None or isinstance(v["on_disk"], str)):
        out["on_disk"] = v["on_disk"]
    return out


def _missing(v: Any) -> dict[str, Any] | None:
    """One `missing_files` item in snapshot shape (rule 12), None when it is not one: the distribution, where, and
    how many of the files its RECORD lists under the name are gone."""
    if not (isinstance(v, dict) and isinstance(v.get("dist"), str)):
        return None
    out: dict[str, Any] = {"dist": v["dist"]}
    for k in ("top_level", "location", "imports_from"):
        if isinstance(v.get(k), str):
            out[k] = v[k]
    if "version" in v and (v["version"] is None or isinstance(v["version"], str)):
        out["version"] = v["version"]
    for k in ("files", "missing"):
        if isinstance(v.get(k), int) and not isinstance(v.get(k), bool):
            out[k] = v[k]
    if isinstance(v.get("examples"), list):
        out["examples"] = [p for p in v["examples"] if isinstance(p, str)]
    return out


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v >= 0


_VERIFIED_COUNTS = ("files", "bytes", "modified", "shared", "binary", "missing", "unverified", "unverified_bytes",
                    "unreadable", "outside")


def _verified_dist(v: Any) -> dict[str, Any] | None:
    """One `verified_files.dists` item in snapshot shape (rule 14), None when it is not one."""
    if not (isinstance(v, dict) and isinstance(v.get("dist"), str)):
        return None
    out: dict[str, Any] = {"dist": v["dist"]}
    if "version" in v and (v["version"] is None or isinstance(v["version"], str)):
        out["version"] = v["version"]
    if isinstance(v.get("location"), str):
        out["location"] = v["location"]
    for k in _VERIFIED_COUNTS:
        if _int(v.get(k)):
            out[k] = v[k]
    if isinstance(v.get("examples"), list):
        examples = []
        for m in v["examples"]:
            if not (isinstance(m, dict) and isinstance(m.get("path"), str)):
                continue
            ex: dict[str, Any] = {"path": m["path"]}
            if _int(m.get("size")):
                ex["size"] = m["size"]
            if "expected_size" in m and (m["expected_size"] is None or _int(m["expected_size"])):
                ex["expected_size"] = m["expected_size"]
            if m.get("kind") in ("binary", "source", "file"):
                ex["kind"] = m["kind"]
            if isinstance(m.get("also"), list):
                ex["also"] = [a for a in m["also"] if isinstance(a, str)]
            examples.append(ex)
        out["examples"] = examples
    if isinstance(v.get("missing_examples"), list):
        out["missing_examples"] = [p for p in v["missing_examples"] if isinstance(p, str)]
    return out


def verified_files(v: Any) -> dict[str, Any] | None:
    """The probe's `verify_files` answer in snapshot shape (`python.verified_files`, rule 14), None when it is not
    one (an old or hand-edited probe document)."""
    if not isinstance(v, dict) or not isinstance(v.get("dists"), list):
        return None
    out: dict[str, Any] = {"dists": [x for d in v["dists"] if (x := _verified_dist(d)) is not None]}
    for k in ("seconds", "budget"):
        if _num(v.get(k)):
            out[k] = float(v[k])
    if isinstance(v.get("skipped"), list):
        out["skipped"] = [{k: s[k] for k in ("dist", "version", "why") if k in s
                           and (isinstance(s[k], str) or (k == "version" and s[k] is None))}
                          for s in v["skipped"] if isinstance(s, dict) and isinstance(s.get("dist"), str)]
    return out


def to_snapshot_parts(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Probe document -> {"python", "packages", "modules"} in snapshot shape; tolerant of missing or
    wrongly typed fields (an old copy of the probe, a hand-edited file)."""
    from doctor.snapshot.model import normalize_name

    parts: dict[str, Any] = {}
    py = doc.get("python")
    if isinstance(py, dict):
        pyo: dict[str, Any] = {}
        for k in ("version", "executable", "implementation", "prefix"):
            if isinstance(py.get(k), str):
                pyo[k] = py[k]
        sp = py.get("site_packages")
        if isinstance(sp, list):
            pyo["site_packages"] = [s for s in sp if isinstance(s, str)]
        for k in ("base_prefix", "cwd"):
            if isinstance(py.get(k), str):
                pyo[k] = py[k]
        for k in ("pip", "ensurepip", "externally_managed"):  # rule 13
            if isinstance(py.get(k), bool):
                pyo[k] = py[k]
        if "uv_venv" in py and (py["uv_venv"] is None or isinstance(py["uv_venv"], str)):
            pyo["uv_venv"] = py["uv_venv"]
        bsp = py.get("break_system_packages")  # rule 15
        if isinstance(bsp, dict):
            pyo["break_system_packages"] = {k: v for k, v in bsp.items() if k in ("install", "uninstall")
                                            and isinstance(v, str)}
        if isinstance(py.get("sys_path"), list):
            pyo["sys_path"] = [s for s in py["sys_path"] if isinstance(s, str)]
        if "libstdcxx" in py:
            cxx = _libstdcxx(py["libstdcxx"])
            if cxx is not _ABSENT:
                pyo["libstdcxx"] = cxx
        if isinstance(py.get("shared_files"), list):
            pyo["shared_files"] = [x for v in py["shared_files"] if (x := _shared(v)) is not None]
        if isinstance(py.get("missing_files"), list):
            pyo["missing_files"] = [x for v in py["missing_files"] if (x := _missing(v)) is not None]
        parts["python"] = pyo
    dists = doc.get("distributions")
    if isinstance(dists, list):
        packages: dict[str, Any] = {}
        for d in dists:
            if not isinstance(d, dict) or not isinstance(d.get("name"), str):
                continue
            key = normalize_name(d["name"])
            entry: dict[str, Any] = {"version": _str(d.get("version"))}
            for k in PACKAGE_KEYS[1:]:
                if k == "editable":
                    if _bool(d.get(k)) is not None:
                        entry[k] = d[k]
                elif k == "url" and isinstance(d.get(k), str):
                    # direct_url.json keeps what pip was given: `git+https://user:TOKEN@host/...` (rule 3)
                    entry[k] = redact_url_credentials(d[k])
                elif k in d and (d[k] is None or isinstance(d[k], str)):
                    entry[k] = d[k]
            if d.get("requires_python") is None or isinstance(d.get("requires_python"), str):
                if "requires_python" in d:
                    entry["requires_python"] = d["requires_python"]
            for k in ("requires_dist", "top_level", "wheel_tags"):
                if isinstance(d.get(k), list):
                    entry[k] = [r for r in d[k] if isinstance(r, str)]
            if isinstance(d.get("metadata"), str):
                entry["metadata"] = d["metadata"]
            if isinstance(d.get("shadowed"), list):
                entry["shadowed"] = [s for s in d["shadowed"] if isinstance(s, dict)]
            if key in packages:  # first on sys.path wins, as importlib.metadata.version() does
                packages[key].setdefault("shadowed", []).append({"version": entry["version"], "location": entry.get("location")})
                continue
            packages[key] = entry
        parts["packages"] = dict(sorted(packages.items()))
    mods = doc.get("modules")
    if isinstance(mods, dict):
        modules: dict[str, Any] = {}
        for name, m in mods.items():
            if m is None:
                modules[name] = None
                continue
            if not isinstance(m, dict):
                continue
            mo: dict[str, Any] = {}
            if isinstance(m.get("origins"), list):
                mo["origins"] = [o for o in m["origins"] if isinstance(o, str)]
            if m.get("version") is None or isinstance(m.get("version"), str):
                mo["version"] = m.get("version")
            g = m.get("git")
            if isinstance(g, dict):
                mo["git"] = {"commit": _str(g.get("commit")), "branch": _str(g.get("branch")),
                             "tag": _str(g.get("tag")), "dirty": _bool(g.get("dirty"))}
                for k in ("root", "vllm_release_tag", "vllm_main_verified"):
                    if isinstance(g.get(k), str):
                        mo["git"][k] = g[k]
            if isinstance(m.get("features"), dict):
                mo["features"] = {k: v for k, v in m["features"].items() if isinstance(v, bool)}
            if isinstance(m.get("build"), dict):
                mo["build"] = m["build"]
            for k in ("kind", "resolved", "copies", "preimported"):
                if k in m:
                    mo[k] = m[k]
            modules[name] = mo
        parts["modules"] = modules
    return parts


def freeze_lines(doc: Mapping[str, Any]) -> list[str]:
    """`pip freeze`-style lines from the probe (no pip run): `name==ver`, `name @ url`, `-e url`."""
    lines = []
    dists = doc.get("distributions")
    for d in dists if isinstance(dists, list) else []:
        if not isinstance(d, dict) or not isinstance(d.get("name"), str):
            continue
        url = d.get("url") if isinstance(d.get("url"), str) else None
        if d.get("editable") and url:
            lines.append(f"-e {url}")
        elif url and url.startswith(("file:", "git+", "http")) and d.get("vcs"):
            commit = d.get("commit")
            lines.append(f"{d['name']} @ {d.get('vcs')}+{url}" + (f"@{commit}" if commit else ""))
        elif url:
            lines.append(f"{d['name']} @ {url}")
        else:
            lines.append(f"{d['name']}=={d.get('version')}")
    return sorted(lines, key=lambda s: s.lower().lstrip("-e "))


_VERSION_RE = re.compile(r"Python (\d+)\.(\d+)(?:\.\d+)?\S*")


def _too_old(exe: str, env: Mapping[str, str], cwd: str) -> str | None:
    """After a failed probe, ask the interpreter its version (`-V`, which Python 2 prints to stderr):
    "Python 2.7.18" when it is older than the probe script supports, else None."""
    r = run_bounded([exe, "-V"], 5.0, env=dict(env), cwd=cwd)
    m = _VERSION_RE.search((r.out or "") + (r.err or ""))
    if m and (int(m[1]), int(m[2])) < (3, 8):
        return m[0]
    return None


@dataclass
class TargetProbe:
    """A target probe already running (see `start_target_probe`), or the reason it could not start."""

    exe: str
    env: dict[str, str]
    cwd: str
    started: Started | None = None
    error: str | None = None


def start_target_probe(python: str | None, *, environ: Mapping[str, str] | None = None,
                       cwd: str | None = None, isolated: bool = False,
                       args: Sequence[str] = ()) -> TargetProbe:
    """Start the probe in the target interpreter now; `run_target_probe(..., started=...)` collects it.
    Lets a caller overlap the child's work (~0.1 s) with its own start-up. `isolated` runs it under `-I`
    (the installer wants the installed set, not what the user's cwd shadows); `args` are the probe's own
    options (`--dists-only`, `--files`)."""
    exe = python or sys.executable
    env = dict(environ) if environ is not None else dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONINSPECT", None)
    try:
        work = cwd or os.getcwd()
    except FileNotFoundError:  # the shell's directory was removed under it
        return TargetProbe(exe, env, "", error="the current working directory no longer exists (it was deleted): "
                                               "cd to an existing directory and run again")
    if not os.path.exists(exe):
        return TargetProbe(exe, env, work, error=f"target Python {exe}: no such file")
    if not os.access(exe, os.X_OK) or os.path.isdir(exe):
        return TargetProbe(exe, env, work, error=f"target Python {exe}: not an executable file")
    try:
        with open(SCRIPT, "rb"):
            pass
    except OSError as e:
        return TargetProbe(exe, env, work, error=f"cannot read the probe script {SCRIPT}: {e.strerror}")
    if not os.path.isdir(work):
        return TargetProbe(exe, env, work, error=f"working directory {work} does not exist")
    argv = [exe, "-B", *(["-I"] if isolated else []), "-c", _BOOT, SCRIPT, *args]
    while _EARLY:
        early = _EARLY.pop()
        if early.started is not None and (early.started.argv, early.env, early.cwd) == (argv, env, work):
            return early  # the same run, already under way
        _reap(early)
    _warm_bytecode()
    return TargetProbe(exe, env, work, started=start(argv, env=env, cwd=work))


_EARLY: list[TargetProbe] = []  # started by start_early, not yet taken over


def start_early() -> None:
    """Start the default probe (`start_target_probe(None)`) before the command line is parsed: `doctor check`
    with no option that changes what is probed (doctor/cli) gains the ~35 ms of importing click and the commands.
    The next `start_target_probe` call takes it over when it would run exactly the same command (interpreter,
    arguments, environment, working directory); else it is killed then, and one never asked for at process exit.
    A start that fails here (a deleted working directory) is left to the command, which meets and reports it."""
    try:
        tp = start_target_probe(None)
    except Exception:  # noqa: BLE001 - speculative: the check's own start reports the failure
        return
    if tp.started is not None and tp.started.proc is not None:
        import atexit

        _EARLY.append(tp)
        atexit.register(_reap_early)


def _reap(tp: TargetProbe) -> None:
    proc = tp.started.proc if tp.started is not None else None
    if tp.started is not None and proc is not None:
        finish(tp.started, 0)  # kills its process group and waits for it
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _reap_early() -> None:
    while _EARLY:
        _reap(_EARLY.pop())


# `<python> -B -c _BOOT SCRIPT args...`: the probe runs as `__main__` with sys.argv ['-', args...], as `python -`
# would run it, but its code comes from the interpreter's own source loader, which reads a valid __pycache__ entry
# of the target's version instead of compiling the ~600 lines on every run (~4.5 ms). Only `sys` and the frozen
# loader module are touched first, so nothing in the user's cwd can shadow them; -B: the child writes no bytecode
# (also under -I, which ignores PYTHONDONTWRITEBYTECODE).
_BOOT = ("import sys; sys.argv[0] = '-'; exec(sys.modules['_frozen_importlib_external']"
         ".SourceFileLoader('__main__', sys.argv.pop(1)).get_code('__main__'))")


def _warm_bytecode() -> None:
    """Have the bytecode of the probe in __pycache__ for this interpreter's version (what `doctor check` runs by
    default), as importing it would: pip writes it at install; a source checkout gets it on the first run. Nothing
    is written where Python would write nothing (PYTHONDONTWRITEBYTECODE, -B, a read-only directory)."""
    if sys.dont_write_bytecode:
        return
    try:
        sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", SCRIPT).get_code("__main__")
    except (ImportError, OSError, SyntaxError, KeyError):
        pass


def run_target_probe(
    python: str | None, *, timeout: float = 60.0, environ: Mapping[str, str] | None = None, cwd: str | None = None,
    started: TargetProbe | None = None, isolated: bool = False, args: Sequence[str] = (),
) -> tuple[dict[str, Any] | None, str | None, RunResult | None]:
    """(document, error, run). `error` is set when the interpreter is missing, hangs, crashes or prints
    no result; the document may still be partial (then its own `errors` list says why)."""
    tp = started if started is not None else start_target_probe(python, environ=environ, cwd=cwd,
                                                                 isolated=isolated, args=args)
    exe, env, work = tp.exe, tp.env, tp.cwd
    if tp.error is not None or tp.started is None:
        return None, tp.error, None
    r = finish(tp.started, timeout)
    if r.status != "ok":
        return None, f"target Python {exe}: {r.error}", r
    doc, err = extract_document(r.out)
    if doc is None:
        said = [x.strip() for x in r.err.splitlines() if x.strip()]
        # a traceback ends with its exception; anything else (a pyenv or conda shim, a fatal start-up error) says
        # what went wrong first and explains after it
        tail = said[-1:] if any(x.startswith("Traceback (most recent call last)") for x in said) else said[:1]
        reason = f"exit code {r.returncode}" + (f": {tail[0][:300]}" if tail else "")
        too_old = _too_old(exe, env, work)
        if too_old:
            return None, f"target Python {exe} is {too_old}: the probe needs Python >= 3.8 (verl itself needs >= 3.10)", r
        return None, f"target Python {exe}: {err} ({reason})", r
    if doc.get("fatal"):
        return doc, f"target Python {exe}: probe failed: {doc['fatal']}", r
    if isinstance(doc.get("python"), dict) and doc["python"].get("externally_managed") is True:  # rule 15
        from doctor.probes.pipconf import add_override

        add_override(doc, env)
    return doc, None, r
