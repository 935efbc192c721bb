"""`doctor check --deep`: the imports the normal probe path must never do, each in its own subprocess of
the target interpreter with a timeout, so a hang or a segfault in torch_npu is a finding, not a hung doctor.

Results go to `snapshot.imports` (`{"torch_npu": {"ok": false, "error": "...", "seconds": 2.1}}`).
`TORCH_DEVICE_BACKEND_AUTOLOAD=0` keeps a broken torch_npu from being loaded by `import torch` itself
(torch >= 2.5 autoloads backends) in the probes that are not about torch_npu.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# name -> (python code, environment overrides). The code prints one JSON line prefixed by a marker.
_MARK = "@@doctor-deep@@"
PROBES: dict[str, tuple[str, dict[str, str]]] = {
    "torch_npu": (
        "import json, torch, torch_npu\n"
        "d = {'device_count': int(torch.npu.device_count())}\n"
        "try:\n    d['soc'] = str(torch_npu.npu.get_soc_version())\nexcept Exception:\n    pass\n"
        f"print({_MARK!r} + json.dumps(d))\n",
        {},
    ),
    "mindspeed.megatron_adaptor": (
        "import json, mindspeed.megatron_adaptor as m\n"
        f"print({_MARK!r} + json.dumps({{'repatch': hasattr(m, 'repatch')}}))\n",
        {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"},
    ),
    "vllm_ascend": (
        "import json, vllm_ascend\n"
        f"print({_MARK!r} + json.dumps({{'file': getattr(vllm_ascend, '__file__', None)}}))\n",
        {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"},
    ),
}


def imports_worth_saying(has_package: Callable[[str], bool | None]) -> list[str]:
    """The probes' modules whose distribution (the ownership table's) is installed, or may be (the snapshot cannot
    tell), in PROBES order: where it is not installed the probe's import fails at once, and "importing torch_npu…"
    while none of them is installed was a claim that was not so."""
    from doctor.knowledge.ownership import distribution_of_module

    return [m for m in PROBES if (d := distribution_of_module(m)) is None or has_package(d) is not False]


def deep_status(modules: Sequence[str], compared: int) -> str | None:
    """What `--deep` says it is doing: the imports that can happen and the distributions whose files it compares;
    None when it does neither (none of the stack installed: nothing worth a line)."""
    said = [f"importing {', '.join(modules)}"] if modules else []
    if compared:
        said.append(f"comparing the files of {compared} distribution{'' if compared == 1 else 's'} with their RECORD")
    return "; ".join(said) + "…" if said else None


def _last_error(stderr: str) -> str:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    # the exception line is the last line that looks like "SomeError: ..." (torch_npu appends [ERROR] lines)
    for ln in reversed(lines):
        head = ln.split(":", 1)[0].strip()
        if head.endswith(("Error", "Exception")) or head in ("KeyboardInterrupt", "SystemExit"):
            return "\n".join(lines[max(0, lines.index(ln) - 0):])[-4000:]
    return "\n".join(lines[-5:])[-4000:]


def run_probe(name: str, python: str, timeout: float, environ: Mapping[str, str] | None = None,
              cwd: str | None = None) -> dict[str, Any]:
    """Run one import probe; never raises for what happens inside the target."""
    code, overrides = PROBES[name]
    env = dict(os.environ if environ is None else environ)
    env.update(overrides)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    t0 = time.perf_counter()
    try:
        cp = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout, env=env,
                            cwd=cwd, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:g} s", "seconds": round(time.perf_counter() - t0, 3)}
    except OSError as e:
        return {"ok": False, "error": f"cannot run {python}: {e.strerror or e}", "seconds": 0.0}
    dt = round(time.perf_counter() - t0, 3)
    detail: dict[str, Any] = {}
    for line in cp.stdout.splitlines():
        if line.startswith(_MARK):
            try:
                detail = json.loads(line[len(_MARK):])
            except ValueError:
                pass
    if cp.returncode == 0 and detail is not None:
        return {"ok": True, "error": None, "seconds": dt, "detail": detail}
    err = _last_error(cp.stderr) or f"exited with status {cp.returncode}"
    if cp.returncode < 0:
        err = f"killed by signal {-cp.returncode}" + (f": {err}" if err else "")
    return {"ok": False, "error": err, "seconds": dt}


def run_deep_probes(python: str | None = None, timeout: float = 120.0, environ: Mapping[str, str] | None = None,
                    cwd: str | None = None, only: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """All import probes in parallel (each bounded by `timeout`), keyed like `snapshot.imports`."""
    py = python or sys.executable
    names = [n for n in PROBES if only is None or n in only]
    with ThreadPoolExecutor(max_workers=len(names) or 1) as pool:
        futs = {n: pool.submit(run_probe, n, py, timeout, environ, cwd) for n in names}
        return {n: f.result() for n, f in futs.items()}


# Seconds kept between the probe's own bound on hashing and the subprocess's timeout: it stops hashing, counts
# what is left as unverified and prints its answer, instead of being killed with nothing said.
VERIFY_MARGIN = 5.0


def run_verify_files(names: Sequence[str], python: str | None = None, timeout: float = 120.0,
                     environ: Mapping[str, str] | None = None, cwd: str | None = None) -> dict[str, Any]:
    """`verify_files` of doctor/probes/_target_probe.py in a subprocess of the target interpreter: each file the
    RECORD of the named distributions lists, its size and digest compared with RECORD's. Bounded by `timeout`
    (the probe stops hashing `VERIFY_MARGIN` seconds before and reports what it did not verify). The answer in
    snapshot shape (`python.verified_files`, rule 14), or {"error": ...} when the probe gave none."""
    from doctor.probes.pyenv import run_target_probe, verified_files

    budget = max(1.0, timeout - VERIFY_MARGIN) if timeout > 2 * VERIFY_MARGIN else max(0.5, timeout / 2)
    doc, err, _ = run_target_probe(python, timeout=timeout, environ=environ, cwd=cwd,
                                   args=("--verify-files", f"{budget:g}", *sorted(names)))
    got = verified_files(doc.get("verify_files")) if doc is not None else None
    if got is None:
        return {"error": err or "the probe gave no answer"}
    return got


def add_deep_facts(snap: Any, python: str | None, timeout: float, environ: Mapping[str, str] | None = None,
                   on_start: Callable[[int], None] | None = None) -> None:
    """The `--deep` facts into `snap`: the imports (`imports`) and, at the same time, every installed file of the
    stack's distributions against its RECORD (`python.verified_files`), each bounded by `timeout`, so the whole
    takes at most about `timeout`. `environ`: the target's environment (a Ray worker's, on a node); `on_start`
    hears how many distributions are compared. The one path for `check --deep`, `collect --deep` and each node of
    `check --ray --deep`."""
    import threading

    from doctor.checks.installed_files import verify_names
    from doctor.snapshot.loader import section_from_dict
    from doctor.snapshot.model import ImportResult, VerifiedFiles, known

    names = verify_names(snap)
    verified: dict[str, Any] = {}

    def verify() -> None:
        try:
            verified.update(run_verify_files(names, python=python, timeout=timeout, environ=environ))
        except Exception as e:  # noqa: BLE001 - said as the comparison's error, never an empty "all compared"
            verified["error"] = f"{type(e).__name__}: {e}"

    worker = threading.Thread(target=verify, name="doctor-verify-files", daemon=True)
    worker.start()
    if on_start is not None:
        on_start(len(names))
    res = run_deep_probes(python=python, timeout=timeout, environ=environ)
    imports = dict(snap.imports) if known(snap.imports) else {}
    for name, r in res.items():
        imports[name] = ImportResult(ok=r["ok"], error=r.get("error"), seconds=r.get("seconds"),
                                     detail=r.get("detail") or {})
    snap.imports = imports
    worker.join()
    if known(snap.python):
        snap.python.verified_files = section_from_dict(VerifiedFiles, verified, "python.verified_files")
