"""Parsers for `hccn_tool` outputs and `/etc/hccn.conf`: text in, dict out, never raising.

Every format below is read from a primary source, cited next to its parser; tests/fixtures/hccn/ holds
the real outputs they are tested against (SOURCES.md there says where each came from):

* hccn_tool's own source for Atlas A2/A3 (`src/custom/network/hccn/ascend910B/` of the CANN driver,
  GitHub mirror `verylucky01/driver` at commit e29d066): the exact printf formats (HCCN_SRC below).
* Huawei's parsers of the same outputs in Ascend/mind-cluster v26.1.0: npu-exporter's
  `component/ascend-common/devmanager/hccn/hccn_tool.go` and ascend-faultdiag's
  `toolkit_src/ascend_fd_tk/core/collect/parser/host_parser.py` and `src/ascend_fd/pkg/parse/
  knowledge_graph/parser/npu_info_parser.py`, whose test data are real `npu_info_before.txt` dumps.

Each parser takes stdout and stderr together (hccn_tool prints its "not preset" answers with
TOOL_PRINT_ERR, i.e. to stderr, and exits non-zero), because "no address configured" is a fact, not an
error. A value the output does not show is left out (unknown), never guessed.
"""

from __future__ import annotations

import re
from typing import Any

HCCN_SRC = ("https://github.com/verylucky01/driver/blob/e29d066fd6ee84cae705e2000a0387d721d3aaa0/"
            "src/custom/network/hccn/ascend910B/")
MIND_CLUSTER = "https://github.com/Ascend/mind-cluster/blob/v26.1.0/component/"

_IPV4 = r"\d{1,3}(?:\.\d{1,3}){3}"


def _text(out: Any) -> str:
    if isinstance(out, bytes):
        return out.decode("utf-8", errors="replace")
    return out if isinstance(out, str) else ""


def _unrecognised(text: str, what: str) -> dict[str, Any]:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return {"error": f"unrecognised {what} output: {first[:200]!r}" if first else f"no {what} output"}


# `hccn_tool -i N -link -g`: TOOL_PRINT_INFO("link status: UP") / ("link status: DOWN")
# (HCCN_SRC hccn_tool/tool_ops.c, tool_link_cmd_execute); npu-exporter splits the same line on spaces
# (MIND_CLUSTER ascend-common/devmanager/hccn/hccn_tool.go GetNPULinkStatus: "link status: DOWN").
_LINK = re.compile(r"^\s*link status\s*:\s*(\S+)", re.I | re.M)


def parse_link(out: Any) -> dict[str, Any]:
    text = _text(out)
    m = _LINK.search(text)
    return {"link": m.group(1).upper()} if m else _unrecognised(text, "-link")


# `-ip -g`: DSMI_PRINT_INFO("ipaddr:%s") then ("netmask:%s") (HCCN_SRC hccn_tool/tool_ops_ext.c); without
# an address: "Get ipconf failed, because no ip was preset there!" (HCCN_SRC hccn_tool/cmd.c, error list).
# ascend-faultdiag's IpInfoParser reads the same `ipaddr:`/`netmask:` pair.
_IPADDR = re.compile(rf"^\s*ipaddr\s*:\s*({_IPV4})\s*$", re.M)
_NETMASK = re.compile(rf"^\s*netmask\s*:\s*({_IPV4})\s*$", re.M)
_NO_IP = re.compile(r"no ip was preset", re.I)


def parse_ip(out: Any) -> dict[str, Any]:
    text = _text(out)
    a, m = _IPADDR.search(text), _NETMASK.search(text)
    if a:
        return {"address": a.group(1), "netmask": m.group(1) if m else None}
    if _NO_IP.search(text):
        return {"address": None, "netmask": None}
    return _unrecognised(text, "-ip")


# `-net_health -g`: TOOL_PRINT_INFO("net health status: %s") with a state from g_net_health_status:
# Success, Socket fail, Receive timeout, Unreachable, Time exceeded, Fault, Init, Thread error,
# Detect ip set, Unknown (HCCN_SRC hccn_tool/tool_ops.c). Older drivers print "Socket failed" (the real
# dump in ascend-faultdiag test/st_module_testcase/kg_parse/npu_info_before.txt).
_HEALTH = re.compile(r"^\s*net health status\s*:\s*(.+?)\s*$", re.I | re.M)


def parse_net_health(out: Any) -> dict[str, Any]:
    text = _text(out)
    m = _HEALTH.search(text)
    return {"health": m.group(1)} if m else _unrecognised(text, "-net_health")


# `-speed -g`: TOOL_PRINT_INFO("Speed: %d Mb/s") or ("Speed: Unknown!") (HCCN_SRC hccn_product_ext/
# tool_ext.c); npu-exporter's getSpeedFromOutStr treats "Unknown!" as no speed ("Speed: 100000 Mb/s").
_SPEED = re.compile(r"^\s*Speed\s*:\s*(\d{1,9})\s*Mb/s", re.I | re.M)
_SPEED_UNKNOWN = re.compile(r"^\s*Speed\s*:\s*Unknown", re.I | re.M)


def parse_speed(out: Any) -> dict[str, Any]:
    text = _text(out)
    m = _SPEED.search(text)
    if m:
        return {"speed_mbps": int(m.group(1))}
    if _SPEED_UNKNOWN.search(text):
        return {"speed_mbps": None}
    return _unrecognised(text, "-speed")


# `-link_stat -g`: "[devid N]current time        : <asctime>", "[devid N]link up count       : %llu",
# newer drivers also "[devid N]link down count     : %llu", then "[devid N]link change records :" and up to
# 10 records "[devid N]    <asctime>    LINK UP|LINK DOWN" (HCCN_SRC hccn_tool/tool.c
# tool_display_link_his_stat, LINK_STAT_MAX_IDX 10). Huawei's docs print "[device N]" instead of
# "[devid N]" (mind-cluster docs/en/faultdiag/user_guide/03_collecting_logs.md); both are accepted.
_UP_COUNT = re.compile(r"link up count\s*:\s*(\d{1,12})", re.I)
_DOWN_COUNT = re.compile(r"link down count\s*:\s*(\d{1,12})", re.I)
_RECORD = re.compile(r"\]\s+(\w{3} \w{3}\s+\d{1,2} \d\d:\d\d:\d\d \d{4})\s+LINK (UP|DOWN)\b")


def parse_link_stat(out: Any) -> dict[str, Any]:
    text = _text(out)
    up = _UP_COUNT.search(text)
    if not up:
        return _unrecognised(text, "-link_stat")
    down = _DOWN_COUNT.search(text)
    records = [{"time": t, "link": s} for t, s in _RECORD.findall(text)]
    return {"link_up_count": int(up.group(1)), "link_down_count": int(down.group(1)) if down else None,
            "records": records}


# `-optical -g`: TOOL_PRINT_INFO("present              : %s", present ? "present" : "not present")
# (HCCN_SRC hccn_tool/tool.c); ascend-faultdiag matches `present\s*: not present` and treats
# "Control link unreachable" as no answer from the module (host_parser.py parse_optical_info).
_PRESENT = re.compile(r"^\s*present\s*:\s*(not present|present)\b", re.I | re.M)


def parse_optical(out: Any) -> dict[str, Any]:
    text = _text(out)
    m = _PRESENT.search(text)
    if m:
        return {"optical_present": m.group(1).lower() == "present"}
    if "control link unreachable" in text.lower():
        return {"error": "optical module: control link unreachable"}
    return _unrecognised(text, "-optical")


# `-gateway -g`: DSMI_PRINT_INFO("default gateway:%s, Iface:eth%d"), or "Get gateway failed, because no
# gateway was preset there!" (HCCN_SRC hccn_tool/tool_ops_ext.c, hccn_tool/cmd.c).
_GATEWAY = re.compile(rf"default gateway\s*:\s*({_IPV4})", re.I)
_NO_GATEWAY = re.compile(r"no gateway was preset", re.I)


def parse_gateway(out: Any) -> dict[str, Any]:
    text = _text(out)
    m = _GATEWAY.search(text)
    if m:
        return {"gateway": m.group(1)}
    if _NO_GATEWAY.search(text):
        return {"gateway": None}
    return _unrecognised(text, "-gateway")


# `-ping -g address X`: "device %d PING %s" then the device's answer; hccn_tool exits with an error when
# that answer holds "recv time out seq", "Destination Host Unreachable" or "Message too long"
# (HCCN_SRC hccn_product_ext/ds_net_ext.c). The answer ends "3 packets transmitted, 3 received, 0.00%
# packet loss" (a real paste: github.com/ArthurChiao/arthurchiao.github.io/blob/1127364/_posts/
# 2023-09-16-gpu-advanced-notes-2-zh.md);
# msprechecker judges a ping by hccn_tool's exit status (Ascend/msit msprechecker/core/checker.py).
_PING_STATS = re.compile(r"(\d+) packets transmitted,\s*(\d+) received,\s*([\d.]+)\s*%")
_PING_FAIL = re.compile(r"recv time out seq|Destination Host Unreachable|Message too long", re.I)


def parse_ping(out: Any, returncode: int | None) -> dict[str, Any]:
    text = _text(out)
    stats = _PING_STATS.search(text)
    loss = float(stats.group(3)) if stats else None
    received = int(stats.group(2)) if stats else None
    failed = bool(_PING_FAIL.search(text)) or returncode not in (0, None) or received == 0
    if not stats and not failed:
        return {"ok": None, **_unrecognised(text, "-ping")}
    result: dict[str, Any] = {"ok": not failed, "loss_pct": loss}
    if failed:
        line = _PING_FAIL.search(text)
        result["error"] = line.group(0) if line else (f"exit {returncode}" if returncode else "no reply")
    return result


# /etc/hccn.conf: one `<name>_<phy_id>=<value>` per line, written by cfg_write_conf (sprintf "%s=%s" of
# "%s_%d", CFGFILE_NAME "/etc/hccn.conf" in HCCN_SRC hccn_tool/cfg.c and cfg.h): address, netmask,
# gateway, netdetect, ... and static routes `route_address_A_netmask_M_N=gateway_G` (hccn_tool/tool.c
# tool_route_trans_conf). Real files: Huawei's HCCL rank-table docs show `address_0=`, `netmask_0=`,
# `netdetect_0=`; tests/fixtures/hccn/ has the rest.
_CONF_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z_]*?)_(\d{1,4})\s*=\s*(.*?)\s*$")
_CONF_ROUTE = re.compile(rf"^\s*route_address_({_IPV4})_netmask_({_IPV4})_(\d{{1,4}})\s*=\s*gateway_({_IPV4})\s*$")


def parse_hccn_conf(out: Any) -> dict[str, Any]:
    """-> {"devices": {phy_id: {key: value, "routes": [...]}}, "ignored": n}."""
    devices: dict[int, dict[str, Any]] = {}
    ignored = 0
    for raw in _text(out).replace("\r", "").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        r = _CONF_ROUTE.match(line)
        if r:
            dev = devices.setdefault(int(r.group(3)), {})
            dev.setdefault("routes", []).append({"address": r.group(1), "netmask": r.group(2), "gateway": r.group(4)})
            continue
        m = _CONF_KEY.match(line)
        if not m:
            ignored += 1
            continue
        devices.setdefault(int(m.group(2)), {}).setdefault(m.group(1), m.group(3))
    return {"devices": devices, "ignored": ignored}
