"""`npu-smi`: the device table, the board query for the SOC name, under one time budget.

Layouts (docs/npu-smi.md, with the public pastes each comes from):
A2 (98 columns, `Chip` header), A3 (two chips per NPU, `Chip  Phy-ID`), 310P (`Chip    Device`, no HBM
column), 950 (an extra `NPU ID` column, bus id on the second row only), the 116-column table of driver
26.0+, and first-generation 910 (`910ProB`: a non-zero Memory-Usage pair before the HBM pair). The parser
never relies on column widths: it splits on `|`, keys on the `+===`/`+---` separators and reads used/total
pairs with a regex, because real output prints both `41052/ 65536` and `18   / 32768`.

The parsers are pure (text in, dict out) and never raise; the probe runs `npu-smi` through
`run_bounded` so a hung card costs at most the budget and leaves no process behind.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from typing import Any

from doctor.probes._run import RunResult, run_bounded

FALLBACK_LOCATIONS = ("/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/tools/npu-smi")

# compiled on first use (re's own cache): a host without npu-smi has no output to parse
_PAIR = r"(\d+)\s*/\s*(\d+)"
_INT = r"^-?\d+$"
_VERSION = r"(?i)Version:\s*(\S+)"
_HEADER = r"(?i)npu-smi\s+(\S+)"
_BUS = r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$"


def _cells(line: str) -> list[str]:
    parts = line.strip().split("|")
    if parts and parts[0].strip() == "":
        parts = parts[1:]
    if parts and parts[-1].strip() == "":
        parts = parts[:-1]
    return [p.strip() for p in parts]


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    t = text.strip()
    return int(t) if re.match(_INT, t) and len(t) < 19 else None


def _merge_950(cells: list[str]) -> list[str]:
    """The 950 layout has a leading `NPU ID` cell: fold it into the name cell so every layout has
    [id+name | health | metrics]."""
    if len(cells) >= 4:
        return [f"{cells[0]} {cells[1]}".strip(), *cells[2:]]
    return cells


def parse_info(text: Any) -> dict[str, Any]:
    """`npu-smi info` -> {"version", "devices": [...], "processes": [...], "error"}.

    devices: id, chip_index, phy_id, chip (Name as printed), health, hbm_used_mb, hbm_total_mb, bus_id.
    processes: npu, chip_index, pid, name, hbm_mb. `error` is None when a table was recognised."""
    result: dict[str, Any] = {"version": None, "devices": [], "processes": [], "error": None}
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        result["error"] = "no output"
        return result
    lines = text.replace("\r", "").splitlines()
    header_seen = False
    has_hbm: bool | None = None
    second_is_phy = False
    second_is_device = False
    mode = "pre"  # pre | devhead | devices | prochead | procs
    block: list[list[str]] = []

    def flush() -> None:
        if block:
            dev = _device_from_block(block, has_hbm, second_is_phy, second_is_device)
            if dev is not None:
                result["devices"].append(dev)
        block.clear()

    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if result["version"] is None and "npu-smi" in line.lower():
            m = re.search(_VERSION, line) or re.search(_HEADER, line)
            if m and any(ch.isdigit() for ch in m.group(1)):
                result["version"] = m.group(1).strip("|").strip()
                header_seen = True
                continue
        if line.startswith("+"):
            if mode == "devices":
                flush()
            elif mode == "devhead" and "=" in line:
                mode = "devices"
            elif mode == "prochead" and "=" in line:
                mode = "procs"
            continue
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        low = line.lower()
        if "process id" in low or ("process name" in low and "process memory" in low):
            if mode == "devices":
                flush()
            mode = "prochead"
            continue
        if "health" in low and ("name" in low or "npu" in low):
            mode = "devhead"
            header_seen = True
            continue
        if mode == "devhead":
            if "hbm" in low:
                has_hbm = True
            elif "memory-usage" in low:
                has_hbm = False if has_hbm is None else has_hbm
            second_is_phy = "phy" in low
            second_is_device = "device" in low and not second_is_phy
            continue
        if mode == "devices":
            block.append(cells)
            if len(block) == 2:
                flush()
            continue
        if mode == "procs":
            proc = _process_from_cells(cells)
            if proc is not None:
                result["processes"].append(proc)
    if mode == "devices":
        flush()
    if not header_seen and not result["devices"]:
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        result["error"] = f"unrecognised npu-smi output: {first[:200]!r}" if first else "empty output"
    return result


def _device_from_block(block: list[list[str]], has_hbm: bool | None, phy: bool, device: bool) -> dict[str, Any] | None:
    row1 = _merge_950(block[0])
    if len(row1) < 2:
        return None
    head = row1[0].split()
    npu_id = _int(head[0]) if head else None
    if npu_id is None:
        return None
    dev: dict[str, Any] = {
        "id": npu_id,
        "chip_index": 0,
        "phy_id": None,
        "chip": " ".join(head[1:]) or None,
        "health": row1[1] or None,
        "hbm_used_mb": None,
        "hbm_total_mb": None,
        "bus_id": None,
    }
    if len(block) > 1:
        row2 = _merge_950(block[1])
        head2 = row2[0].split() if row2 else []
        if head2:
            c = _int(head2[0])
            dev["chip_index"] = c if c is not None else 0
            if len(head2) > 1:
                second = _int(head2[1])
                if phy:
                    dev["phy_id"] = second
                elif device:
                    dev["logic_id"] = second
        bus = row2[1] if len(row2) > 1 else ""
        if re.match(_BUS, bus):
            dev["bus_id"] = bus
        metrics = row2[2] if len(row2) > 2 else ""
        pairs = re.findall(_PAIR, metrics)
        if len(pairs) >= 2 and has_hbm is not False:
            # Memory-Usage comes first, HBM second (first-gen 910 has a non-zero Memory-Usage pair).
            dev["hbm_used_mb"], dev["hbm_total_mb"] = int(pairs[1][0]), int(pairs[1][1])
    return dev


def _process_from_cells(cells: list[str]) -> dict[str, Any] | None:
    if not cells or cells[0].lower().startswith("no running"):
        return None
    head = cells[0].split()
    rest = cells[1:]
    if len(head) == 1 and len(cells) >= 5 and _int(cells[1]) is not None and _int(cells[2]) is not None:
        head, rest = [cells[0], cells[1]], cells[2:]  # 950-style: NPU | Chip | pid | name | mem
    npu = _int(head[0]) if head else None
    if npu is None or len(rest) < 3:
        return None
    pid = _int(rest[0])
    if pid is None:
        return None
    return {
        "npu": npu,
        "chip_index": _int(head[1]) if len(head) > 1 else None,
        "pid": pid,
        "name": rest[1] or None,
        "hbm_mb": _int(rest[2]),
    }


def parse_board(text: Any) -> dict[str, Any]:
    """`npu-smi info -t board -i N [-c C]` -> {"fields": {...}, "soc", "firmware", "error"}.

    SOC as vllm-ascend's setup.py builds it (get_chip_type, docs/npu-smi.md): `Chip Type`+`Chip Name` (A2/310P: 'Ascend910B4'),
    otherwise `Chip Name`+'_'+`NPU Name` (A3: 'Ascend910_9392', 950: 'Ascend950PR_9579')."""
    out: dict[str, Any] = {"fields": {}, "soc": None, "firmware": None, "error": None}
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        out["error"] = "no output"
        return out
    fields: dict[str, str] = {}
    for line in text.replace("\r", "").splitlines():
        if ":" not in line:
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key and value and len(key) < 60 and key not in fields:
            fields[key] = value
    out["fields"] = fields
    if not fields:
        out["error"] = "no 'Key : value' lines"
        return out
    chip_name = _na(fields.get("Chip Name"))
    chip_type = _na(fields.get("Chip Type"))
    npu_name = _na(fields.get("NPU Name"))
    if chip_name:
        if chip_type:
            out["soc"] = f"{chip_type}{chip_name}"
        elif npu_name:
            out["soc"] = f"{chip_name}_{npu_name}"
        else:
            out["soc"] = chip_name
    out["firmware"] = _na(fields.get("Firmware Version"))
    return out


def _na(v: str | None) -> str | None:
    return None if v is None or v.strip().upper() in ("", "NA", "N/A", "-") else v.strip()


# -- probe ----------------------------------------------------------------------------------------------


def find_npu_smi(path: str | None, root: str = "/") -> str | None:
    """npu-smi on PATH, else where hosts (/usr/local/sbin) and containers (/usr/local/bin) keep it."""
    found = shutil.which("npu-smi", path=path if path is not None else os.environ.get("PATH", ""))
    if found:
        return found
    for loc in FALLBACK_LOCATIONS:
        cand = os.path.join(os.path.abspath(root), loc.lstrip("/"))
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def probe_npu_smi(
    timeout: float = 10.0, *, path: str | None = None, root: str = "/", environ: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[RunResult]]:
    """Run `npu-smi info` and one board query within `timeout` seconds in total.

    Returns ({"npu_smi": {...}, "devices": [...]?}, runs) — `devices` only when the table was read."""
    runs: list[RunResult] = []
    exe = find_npu_smi(path, root)
    if exe is None:
        return {"npu_smi": {"status": "missing", "version": None, "error": "npu-smi not found on PATH"}}, runs
    deadline = time.monotonic() + timeout
    env = dict(environ) if environ is not None else None
    r = run_bounded([exe, "info"], deadline - time.monotonic(), env=env)
    runs.append(r)
    if r.status != "ok":
        return {"npu_smi": {"status": "timeout" if r.status == "timeout" else "error", "version": None,
                            "error": r.error, "path": exe}}, runs
    parsed = parse_info(r.out)
    if r.returncode != 0 or parsed["error"]:
        # the first lines, not the first only: a non-root run prints the driver's log-level complaint before the
        # `dcmi module initialize failed. ret is -8005` that says why
        text = r.err.strip() or r.out.strip() or f"exit code {r.returncode}"
        msg = " ".join([ln.strip() for ln in text.splitlines() if ln.strip()][:3])[:300]
        if parsed["error"] and r.returncode == 0:
            msg = parsed["error"]
        return {"npu_smi": {"status": "error", "version": parsed["version"],
                            "error": f"npu-smi info (exit {r.returncode}): {msg}", "path": exe}}, runs
    npu: dict[str, Any] = {"status": "ok", "version": parsed["version"], "error": None, "path": exe}
    devices = [_snapshot_device(d) for d in parsed["devices"]]
    for p in parsed["processes"]:
        target = next((d for d in devices if d["id"] == p["npu"] and (p["chip_index"] is None or d["chip_index"] == p["chip_index"])),
                      next((d for d in devices if d["id"] == p["npu"]), None))
        if target is not None:
            target["processes"].append({"pid": p["pid"], "name": p["name"], "hbm_mb": p["hbm_mb"]})
    if devices:
        board, board_runs = _board_query(exe, devices[0]["id"], deadline, env)
        runs.extend(board_runs)
        if board.get("status") == "timeout":
            npu["status"] = "timeout"
            npu["error"] = board.get("error")
        if board.get("soc"):
            first_chip = devices[0]["chip"]
            for d in devices:
                if d["chip"] == first_chip:
                    d["soc"] = board["soc"]
        if board.get("firmware"):
            npu["firmware"] = board["firmware"]
    return {"npu_smi": npu, "devices": devices}, runs


def _snapshot_device(d: dict[str, Any]) -> dict[str, Any]:
    out = {k: d[k] for k in ("id", "chip_index", "phy_id", "chip", "health", "hbm_total_mb", "hbm_used_mb")}
    out["soc"] = None
    out["processes"] = []
    if d.get("bus_id"):
        out["bus_id"] = d["bus_id"]
    if d.get("logic_id") is not None:
        out["logic_id"] = d["logic_id"]
    return out


def _board_query(exe: str, npu_id: int, deadline: float, env: dict[str, str] | None) -> tuple[dict[str, Any], list[RunResult]]:
    """vllm-ascend's order (setup.py get_chip_type): `-t board -i N`, then `-c 0` when it has no Chip Name."""
    runs: list[RunResult] = []
    result: dict[str, Any] = {}
    for extra in ([], ["-c", "0"]):
        r = run_bounded([exe, "info", "-t", "board", "-i", str(npu_id), *extra], deadline - time.monotonic(), env=env)
        runs.append(r)
        if r.status == "timeout":
            return {"status": "timeout", "error": f"board query: {r.error}", **result}, runs
        if r.status != "ok" or r.returncode != 0:
            continue
        b = parse_board(r.out)
        if b["firmware"] and not result.get("firmware"):
            result["firmware"] = b["firmware"]
        if b["soc"]:
            result["soc"] = b["soc"]
            break
    return result, runs
