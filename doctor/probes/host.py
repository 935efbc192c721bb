"""Run every probe concurrently, each bounded in time, and assemble one `doctor.snapshot/1`.

Each probe is a function of the options returning a *part* of the snapshot (plain JSON data), the
problems it met, and the raw inputs behind it (for `doctor collect --bundle`). Probes run in daemon
threads: the slow ones (npu-smi, the target interpreter) wait on subprocesses that `run_bounded` kills
at their deadline; a file probe stuck on a dead network mount is abandoned at its bound and its part is
left *unknown* (missing key), never guessed. The result is marked `complete: true` (snapshot.md rule 6):
`packages` lists every installed distribution when the Python probe succeeded, and is absent otherwise.
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

import datetime as _dt
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from doctor import __version__
from doctor.errors import InputError
from doctor.snapshot.model import SNAPSHOT_SCHEMA, Snapshot, snapshot_from_dict

TOOL = {"name": "verl-ascend-doctor", "version": __version__}
# Bounds for probes that only read files or ask the kernel (seconds).
FILE_PROBE_BOUND = 5.0
_GRACE = 2.0  # on top of a subprocess probe's own timeout: interpreter start-up, parsing


class CollectOptions(NamedTuple):
    """Everything a collection depends on, so tests can point every probe at a fake machine."""

    root: str = "/"
    python: str | None = None  # target interpreter; None = the doctor's own
    npu_smi_timeout: float = 10.0  # one budget for all npu-smi calls
    hccn_timeout: float = 10.0  # one budget for all hccn_tool calls (every device's RoCE port)
    python_timeout: float = 60.0
    environ: Mapping[str, str] | None = None  # None = os.environ
    path: str | None = None  # PATH used to find npu-smi; None = environ["PATH"]
    cwd: str | None = None  # where the target interpreter runs; None = os.getcwd()
    # a target probe the caller already started (pyenv.start_target_probe) to overlap it with its start-up
    started_python: Any = None

    @property
    def env(self) -> Mapping[str, str]:
        return self.environ if self.environ is not None else os.environ

    @property
    def search_path(self) -> str:
        return self.path if self.path is not None else self.env.get("PATH", os.defpath)

    @property
    def workdir(self) -> str:
        """"" when the current directory was deleted: the target probe then says so (pyenv.start_target_probe)."""
        try:
            return self.cwd or os.getcwd()
        except FileNotFoundError:
            return ""


@dataclass
class ProbeOutcome:
    """What one probe returns: its part of the snapshot, its problems and the raw inputs behind it."""

    part: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    raw: dict[str, bytes | str] = field(default_factory=dict)
    failed: str | None = None  # why the probe produced nothing (its part is then unknown)


@dataclass
class ProbeStatus:
    """How one probe fared (ok, error, timeout) and how long it took; shown by `collect` and `-v`."""

    status: str  # ok | error | timeout
    seconds: float
    errors: list[str]

    def __post_init__(self) -> None:
        # An error can quote what a probe read: a pip.conf line configparser refused (`[line 4]: 'token hf_…'`), a
        # crash's message. Errors go into the snapshot's `collect` and the report, so they are redacted like a log line.
        if self.errors:
            from doctor.snapshot.redact import redact_line

            self.errors = [redact_line(e) for e in self.errors]

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "seconds": round(self.seconds, 3), "errors": self.errors}


@dataclass
class Collection:
    """A snapshot plus what it was built from (for the bundle) and how each probe fared."""

    snapshot: Snapshot
    probes: dict[str, ProbeStatus]
    raw: dict[str, bytes | str]
    seconds: float
    freeze: list[str] | None = None


# -- the probes ---------------------------------------------------------------------------------------


def _files_raw(files: Mapping[str, bytes]) -> dict[str, bytes | str]:
    return {f"files/{p.lstrip('/')}": data for p, data in files.items()}


def probe_ascend(opts: CollectOptions) -> ProbeOutcome:
    from doctor.probes._fs import RootFS
    from doctor.probes.ascend_files import probe_ascend_files

    fs = RootFS(opts.root)
    facts, errors = probe_ascend_files(fs, opts.env)
    return ProbeOutcome({"ascend": facts}, errors, _files_raw(fs.files_read))


def _runs_raw(folder: str, runs: list[Any]) -> dict[str, bytes | str]:
    """The bundle members for external commands: each run's stdout/stderr and a commands.txt index."""
    raw: dict[str, bytes | str] = {}
    lines = []
    for i, r in enumerate(runs):
        stem = f"{folder}/{i}-" + "_".join(a.lstrip("-") for a in r.argv[1:]).replace("/", "_")
        raw[f"{stem}.stdout.txt"] = r.stdout
        if r.stderr:
            raw[f"{stem}.stderr.txt"] = r.stderr
        lines.append(f"{' '.join(r.argv)}\tstatus={r.status}\texit={r.returncode}\tseconds={r.seconds:.3f}"
                     + (f"\terror={r.error}" if r.error else ""))
    if lines:
        raw[f"{folder}/commands.txt"] = "\n".join(lines) + "\n"
    return raw


def probe_npu(opts: CollectOptions) -> ProbeOutcome:
    from doctor.probes.npu_smi import probe_npu_smi

    facts, runs = probe_npu_smi(opts.npu_smi_timeout, path=opts.search_path, root=opts.root,
                                environ=dict(opts.env))
    raw = _runs_raw("npu-smi", runs)
    smi = facts["npu_smi"]
    # `missing` is a fact about the machine (no NPU driver), not a problem of the probe.
    errors = [smi["error"]] if smi.get("error") and smi.get("status") != "missing" else []
    return ProbeOutcome({"ascend": facts}, errors, raw)


def probe_roce(opts: CollectOptions) -> ProbeOutcome:
    from doctor.probes.hccn import probe_hccn

    facts, runs, fs = probe_hccn(opts.hccn_timeout, root=opts.root, path=opts.search_path,
                                 environ=dict(opts.env))
    raw = {**_runs_raw("hccn", runs), **_files_raw(fs.files_read)}
    errors = [facts["error"]] if facts.get("error") and facts.get("status") != "missing" else []
    return ProbeOutcome({"ascend": {"hccn": facts}}, errors, raw)


def probe_pci_devices(opts: CollectOptions) -> ProbeOutcome:
    from doctor.probes._fs import RootFS
    from doctor.probes.pci import probe_pci

    found, errors = probe_pci(RootFS(opts.root))
    if found is None:
        return ProbeOutcome({}, errors)
    return ProbeOutcome({"ascend": {"pci": found}}, errors)


def probe_python(opts: CollectOptions) -> ProbeOutcome:
    import json
    import sys

    from doctor.probes.gitrepo import add_git_facts
    from doctor.probes.pyenv import document_text, freeze_lines, run_target_probe, to_snapshot_parts

    exe = opts.python or sys.executable
    doc, err, run = run_target_probe(exe, timeout=opts.python_timeout, environ=opts.env, cwd=opts.workdir,
                                     started=opts.started_python)
    raw: dict[str, bytes | str] = {}
    if run is not None and run.stderr:
        raw["python/stderr.txt"] = run.stderr
    if doc is None:
        return ProbeOutcome({"python": {"executable": exe}}, [err or "no result"], raw, failed=err)
    # the answer as the probe printed it: re-encoding it (indented, so by json's pure-Python encoder) was ~8 ms of
    # every check, for a file only `collect --bundle` writes
    raw["python/probe.json"] = (document_text(run.out) if run is not None else None) or json.dumps(doc)
    raw["python/pip-freeze.txt"] = "\n".join(freeze_lines(doc)) + "\n"
    errors = [str(e) for e in doc.get("errors") or []]
    if err:
        errors.insert(0, err)
    errors.extend(add_git_facts(doc, opts.env))
    parts = to_snapshot_parts(doc)
    if isinstance(parts.get("python"), dict):  # a fix for a snapshot then says "name another", not "name one"
        parts["python"]["named"] = bool(opts.python)
    return ProbeOutcome(parts, errors, raw, failed=err if "packages" not in parts else None)


def probe_env(opts: CollectOptions) -> ProbeOutcome:
    from doctor.probes.envvars import collect_env

    env = collect_env(opts.env)
    return ProbeOutcome({"env": env}, [], {"env.txt": "".join(f"{k}={v}\n" for k, v in env.items())})


def probe_host(opts: CollectOptions) -> ProbeOutcome:
    from doctor.probes._fs import RootFS
    from doctor.probes.system import probe_system

    fs = RootFS(opts.root)
    host, errors = probe_system(fs, opts.env, opts.workdir)
    # /etc/hosts stays out of the bundle: it can list a site's every machine; the snapshot keeps the hostname's lines
    kept = {p: d for p, d in fs.files_read.items() if p.startswith("/etc") and p != "/etc/hosts"}
    return ProbeOutcome({"host": host}, errors, _files_raw(kept))


def probe_net(opts: CollectOptions) -> ProbeOutcome:
    from doctor.probes._fs import RootFS
    from doctor.probes.network import probe_network, probe_ray_files

    fs = RootFS(opts.root)
    net, errors = probe_network(fs)
    ray, ray_errors = probe_ray_files(fs, opts.env)
    return ProbeOutcome({"network": net, "ray": ray}, errors + ray_errors)


Probe = Callable[[CollectOptions], ProbeOutcome]


def probe_table(opts: CollectOptions) -> dict[str, tuple[Probe, float]]:
    """name -> (probe, bound in seconds). The subprocess-bound probes start first: their children run on
    other cores while the in-process probes take turns on the GIL."""
    return {
        "python": (probe_python, opts.python_timeout + _GRACE),
        "npu_smi": (probe_npu, opts.npu_smi_timeout + _GRACE),
        "hccn": (probe_roce, opts.hccn_timeout + _GRACE),
        "ascend_files": (probe_ascend, FILE_PROBE_BOUND),
        "pci": (probe_pci_devices, FILE_PROBE_BOUND),
        "env": (probe_env, FILE_PROBE_BOUND),
        "system": (probe_host, FILE_PROBE_BOUND),
        "network": (probe_net, FILE_PROBE_BOUND),
    }


# -- running and assembling ---------------------------------------------------------------------------


def _run_all(opts: CollectOptions, table: dict[str, tuple[Probe, float]]) -> dict[str, tuple[ProbeOutcome | None, ProbeStatus]]:
    results: dict[str, ProbeOutcome | BaseException] = {}
    finished: dict[str, float] = {}
    t0 = time.monotonic()

    def runner(name: str, fn: Probe) -> None:
        try:
            results[name] = fn(opts)
        except Exception as e:  # a crashing probe is a recorded error, not a crashed doctor
            results[name] = e
        finished[name] = time.monotonic() - t0

    threads = {}
    for name, (fn, _) in table.items():
        th = threading.Thread(target=runner, args=(name, fn), name=f"doctor-probe-{name}", daemon=True)
        th.start()
        threads[name] = th
    out: dict[str, tuple[ProbeOutcome | None, ProbeStatus]] = {}
    for name, (_, bound) in table.items():
        threads[name].join(max(0.0, t0 + bound - time.monotonic()))
        res = results.get(name)
        if threads[name].is_alive() or name not in results:
            out[name] = (None, ProbeStatus("timeout", time.monotonic() - t0, [f"no answer within {bound:.1f} s"]))
        elif isinstance(res, BaseException):
            out[name] = (None, ProbeStatus("error", finished[name], [f"probe crashed: {type(res).__name__}: {res}"]))
        else:
            assert res is not None
            status = "error" if res.failed else "ok"
            out[name] = (res, ProbeStatus(status, finished[name], list(res.errors)))
    return out


_ORDER = ("schema", "collected_at", "tool", "complete", "host", "python", "packages", "modules", "ascend", "env",
          "network", "ray")


def assemble(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Merge probe parts: top-level keys are owned by one probe, except `ascend`, which three share."""
    data: dict[str, Any] = {}
    for part in parts:
        for k, v in part.items():
            if k == "ascend" and isinstance(data.get("ascend"), dict) and isinstance(v, dict):
                data["ascend"].update(v)
            elif k == "python" and isinstance(data.get("python"), dict) and isinstance(v, dict):
                data["python"].update(v)
            else:
                data[k] = v
    return data


def collect(opts: CollectOptions | None = None) -> Collection:
    opts = opts or CollectOptions()
    t0 = time.monotonic()
    started = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    results = _run_all(opts, probe_table(opts))
    parts = []
    raw: dict[str, bytes | str] = {}
    statuses: dict[str, ProbeStatus] = {}
    for name, (res, status) in results.items():
        statuses[name] = status
        if res is not None:
            parts.append(res.part)
            raw.update(res.raw)
    data = assemble(parts)
    if "ascend" in data:
        asc = data["ascend"]
        data["ascend"] = {k: asc[k] for k in ("root", "toolkit", "kernels", "nnal", "driver", "firmware", "npu_smi",
                                               "devices", "pci", "device_files", "device_access", "driver_mounts", "toolkits",
                                               "hccn") if k in asc}
    doc: dict[str, Any] = {"schema": SNAPSHOT_SCHEMA, "collected_at": started, "tool": dict(TOOL), "complete": True}
    for k in _ORDER:
        if k in data and k not in doc:
            doc[k] = data[k]
    seconds = time.monotonic() - t0
    doc["collect"] = {
        "root": os.path.abspath(opts.root),
        "seconds": round(seconds, 3),
        "probes": {n: s.to_dict() for n, s in statuses.items()},
    }
    snap = _to_snapshot(doc, statuses)
    freeze = None
    if "python/pip-freeze.txt" in raw:
        f = raw["python/pip-freeze.txt"]
        freeze = (f.decode() if isinstance(f, bytes) else f).splitlines()
    return Collection(snap, statuses, raw, seconds, freeze)


def _to_snapshot(doc: dict[str, Any], statuses: dict[str, ProbeStatus]) -> Snapshot:
    """Validate through the same loader `--from` uses; a section a probe got wrong is dropped (unknown)
    and recorded rather than failing the whole collection."""
    for _ in range(len(_ORDER)):
        try:
            return snapshot_from_dict(doc, "<collect>")
        except InputError as e:
            key = (e.path or "").split(".")[0].split("[")[0]
            if not key or key not in doc or key == "schema":
                raise
            doc.pop(key)
            doc["collect"]["probes"].setdefault("assemble", {"status": "error", "seconds": 0.0, "errors": []})
            doc["collect"]["probes"]["assemble"]["errors"].append(f"dropped {key}: {e}")
    return snapshot_from_dict(doc, "<collect>")

