"""`doctor collect`: the snapshot file, the bug-report bundle, and the report the command prints.

The bundle (`--bundle FILE.tar.gz`) holds the raw inputs behind the snapshot — npu-smi outputs, every
version/info file read, the target's `pip freeze` (built from the probe's distribution list, no pip run),
the collected env — so a maintainer sees exactly what the doctor saw. Every member goes through the same
redaction as the snapshot, member names are relative and cannot escape the extraction directory, and
the archive is written to a temp file and renamed into place.
"""

from __future__ import annotations

import json
import time
from typing import Any

from doctor.probes.host import Collection
from doctor.report import Report, finding
from doctor.snapshot.model import known
from doctor.snapshot.redact import redact_text

BUNDLE_DIR = "doctor-bundle"

# probe name -> component of the finding vocabulary (docs/schemas/report.md)
PROBE_COMPONENT = {"ascend_files": "cann", "npu_smi": "npu", "hccn": "network", "pci": "npu", "python": "python",
                   "env": "env", "system": "system", "network": "network", "assemble": "system"}

README = """This bundle was written by `doctor collect --bundle` (verl-ascend-doctor).

snapshot.json         the snapshot (doctor.snapshot/1) built from the files below
collect.json          how each probe fared (status, seconds, problems met)
files/...             every version/info file the probes read, at its path on the machine
npu-smi/...           the npu-smi commands run, their stdout/stderr and exit status
hccn/...              the hccn_tool commands run for each NPU's RoCE port (files/etc/hccn.conf: its config)
python/pip-freeze.txt the target interpreter's distributions, in pip freeze form (from the probe, no pip run)
python/probe.json     the raw answer of the probe script run inside the target interpreter
env.txt               the environment variables the doctor collects (secrets redacted)

Values of variables whose names contain TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, KEY, CREDENTIAL or AUTH (or
have PW, PWD, AK or SK as a part), credentials inside URLs, tokens of an issuer's shape (hf_, ghp_, glpat-, AKIA,
sk-, JWTs) and private key blocks were replaced by <redacted>.
"""


def safe_member_name(name: str) -> str | None:
    """A relative tar member name under BUNDLE_DIR with no '..', no absolute part, no empty parts."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    parts = [p.replace("\x00", "") for p in parts if p.replace("\x00", "")]
    if not parts:
        return None
    return "/".join([BUNDLE_DIR, *parts])


def bundle_members(collection: Collection, snapshot_json: str) -> dict[str, bytes]:
    """Member name -> redacted content."""
    members: dict[str, bytes] = {}

    def add(name: str, content: bytes | str) -> None:
        safe = safe_member_name(name)
        if safe is None:
            return
        text = content.decode("utf-8", errors="replace") if isinstance(content, bytes) else content
        members[safe] = redact_text(text).encode("utf-8")

    add("README.txt", README)
    add("snapshot.json", snapshot_json)
    add("collect.json", json.dumps({n: s.to_dict() for n, s in collection.probes.items()}, indent=2) + "\n")
    for name, content in sorted(collection.raw.items()):
        add(name, content)
    return members


def write_bundle(path: str, collection: Collection, snapshot_json: str) -> list[str]:
    """Write the .tar.gz atomically; returns the member names."""
    import io
    import tarfile

    from doctor.atomic import atomic_binary

    members = bundle_members(collection, snapshot_json)
    now = int(time.time())
    with atomic_binary(path) as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = now
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return list(members)


def collect_report(collection: Collection, *, output: str | None, bundle: str | None) -> Report:
    """The `collect` report: the snapshot (when not written to a file) and a warning per failed probe."""
    report = Report(command="collect")
    for name, st in collection.probes.items():
        # npu-smi that hung or failed is recorded inside a probe that itself finished: its devices are unknown too
        hung = name == "npu_smi" and st.status == "ok" and bool(st.errors)
        if st.status == "ok" and not hung:
            continue
        comp = PROBE_COMPONENT.get(name, "system")
        what = "failed" if st.status == "error" else "timed out" if st.status == "timeout" else "hung or failed"
        report.findings.append(finding(
            "collect-probe-failed",
            "warning",
            [comp],
            f"the {name} probe {what}; its facts are unknown",
            detail="\n".join(st.errors[:5]),
            evidence={"probe": name, "status": st.status, "seconds": round(st.seconds, 3)},
            fix=("Re-run with -v to see the probe's errors; for the python probe check that --python runs, "
                 "for npu-smi raise --npu-smi-timeout or check the card with `npu-smi info`."),
        ))
    extra: dict[str, Any] = {"seconds": round(collection.seconds, 3)}
    if output:
        extra["output"] = output
    else:
        extra["snapshot"] = collection.snapshot.to_dict()
    if bundle:
        extra["bundle"] = bundle
    report.extra.update(extra)
    return report


def summary_line(collection: Collection) -> str:
    s = collection.snapshot
    bits = []
    asc = s.ascend if known(s.ascend) else None
    tk = asc.toolkit if asc is not None and known(asc.toolkit) else None
    bits.append(f"CANN {tk.version}" if tk is not None and known(tk.version) and tk.version else "no CANN toolkit")
    smi = asc.npu_smi if asc is not None and known(asc.npu_smi) else None
    devices = asc.devices if asc is not None and known(asc.devices) else None
    if devices:
        bits.append(f"{len(devices)} NPU chip(s)")
    elif smi is not None:
        bits.append(f"npu-smi {smi.status}")
    bits.append(f"{len(s.packages)} packages" if known(s.packages) else "packages unknown")
    return f"collected in {collection.seconds:.2f} s: " + ", ".join(bits)
