"""A fake `hccn_tool` that prints recorded outputs, and fake `/etc/hccn.conf` files.

The outputs are the real ones in tests/fixtures/hccn/ (SOURCES.md there says where each came from), with
the address and device id of the fake port filled in the same places the real tool prints them:

    port = roce_port("10.0.0.11")                          # link UP, addressed, healthy, 200G
    install_hccn_tool(root, {0: port, 1: roce_port(None)})  # device 1 has no address
    install_hccn_tool(root, "hang")                          # every call sleeps (and records its pids)

The tool is installed as the driver's `usr/local/Ascend/driver/tools/hccn_tool` under the root prefix (or
at `path=`). `-ping -g address X` answers with the real ping output when X is in `reachable`, else with a
receive timeout and exit 1, as hccn_tool does.
"""

from __future__ import annotations

import shlex
import stat
from pathlib import Path
from typing import Any

from tests.fakes import write

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hccn"
DRIVER_TOOL = "usr/local/Ascend/driver/tools/hccn_tool"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def roce_port(address: str | None, *, netmask: str = "255.255.255.0", link: str = "UP", health: str | None = None,
              speed: int | None = 200000, up_count: int = 2, down_count: int | None = None, optical: bool = True,
              gateway: str | None = None) -> dict[str, tuple[str, str, int]]:
    """command -> (stdout, stderr, exit code) of one NPU port, from the recorded outputs."""
    up = link == "UP"
    health = health or ("Success" if up else "Fault")
    ip = (fixture("ip-10.10.0.10.txt").replace("10.10.0.10", address).replace("255.255.255.0", netmask), "", 0) \
        if address else ("", fixture("ip-none.txt"), 13)
    stat_lines = fixture("link-stat-devid.txt").replace("link up count       : 2", f"link up count       : {up_count}")
    if down_count is not None:
        stat_lines = stat_lines.replace("[devid 0]link change", f"[devid 0]link down count     : {down_count}\n"
                                                               "[devid 0]link change")
    gw = (fixture("gateway.txt").replace("29.1.0.1", gateway), "", 0) if gateway else ("", fixture("gateway-none.txt"), 1)
    return {
        "link": (fixture("link-up.txt" if up else "link-down.txt"), "", 0),
        "ip": ip,
        "net_health": (fixture("net-health-success.txt").replace("Success", health), "", 0),
        "speed": (fixture("speed-100000.txt").replace("100000", str(speed)) if speed and up
                  else fixture("speed-unknown.txt"), "", 0),
        "link_stat": (stat_lines, "", 0),
        "optical": (fixture("optical-present.txt" if optical else "optical-not-present.txt"), "", 0),
        "gateway": gw,
    }


def eight_ports(subnet: str = "10.0.{i}", host: int = 11, **overrides: Any) -> dict[int, dict[str, tuple[str, str, int]]]:
    """An 8-NPU host in the usual A2 layout: device i in its own /24 (`subnet` formatted with i)."""
    return {i: roce_port(f"{subnet.format(i=i)}.{host}", **overrides) for i in range(8)}


_SCRIPT = """#!/bin/sh
D={data}
dev=$2; cmd=${{3#-}}
if [ -e "$D/hang" ]; then echo $$ >> "$D/pids"; sleep 600 & echo $! >> "$D/pids"; wait; fi
if [ "$cmd" = ping ]; then
  addr=$6
  if [ -e "$D/reach/$addr" ]; then sed "s/^device 3 PING 29.1.137.205/device $dev PING $addr/" "$D/ping-ok.txt"; exit 0; fi
  printf 'device %s PING %s\\nrecv time out seq=0\\n' "$dev" "$addr"; exit 1
fi
f="$D/$dev/$cmd"
if [ ! -e "$f.rc" ]; then echo "The device is not exist!" >&2; exit 1; fi
cat "$f.out"; cat "$f.err" >&2; exit "$(cat "$f.rc")"
"""


def install_hccn_tool(root: Path, devices: dict[int, dict[str, tuple[str, str, int]]] | str, *,
                      reachable: set[str] | frozenset[str] = frozenset(), path: Path | None = None) -> Path:
    """Write the fake tool. `devices`: {phy id: roce_port(...)}, or "hang" (sleeps, pids in <data>/pids),
    "exit1" (the tool fails for every device), "garbage" (prints noise for every command)."""
    exe = Path(path) if path else Path(root) / DRIVER_TOOL
    data = exe.parent / ".hccn-fake"
    data.mkdir(parents=True, exist_ok=True)
    if devices == "hang":
        write(data / "hang", "")
        devices = {}
    elif devices in ("exit1", "garbage"):
        mode = devices
        devices = {i: {q: (("\x00\x1b[31m?? %%% random noise\n", "", 0) if mode == "garbage" else
                           ("", "dsmi get device info failed, ret:-8005\n", 1))
                       for q in ("link", "ip", "net_health", "speed", "link_stat", "optical", "gateway")}
                   for i in range(8)}
    assert isinstance(devices, dict)
    for dev, outputs in devices.items():
        for cmd, (out, err, rc) in outputs.items():
            write(data / str(dev) / f"{cmd}.out", out)
            write(data / str(dev) / f"{cmd}.err", err)
            write(data / str(dev) / f"{cmd}.rc", str(rc))
    write(data / "ping-ok.txt", fixture("ping-ok.txt"))
    for addr in reachable:
        write(data / "reach" / addr, "")
    write(exe, _SCRIPT.format(data=shlex.quote(str(data))))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


def hccn_conf(ports: dict[int, str | None], *, netmask: str = "255.255.255.0", gateway: str | None = None,
              extra: str = "") -> str:
    """An /etc/hccn.conf in hccn_tool's own layout (the real A2 file in fixtures/hccn/hccn-a2.conf)."""
    lines = []
    for dev, addr in sorted(ports.items()):
        if addr is None:
            continue
        lines += [f"address_{dev}={addr}", f"netmask_{dev}={netmask}"]
        if gateway:
            lines += [f"netdetect_{dev}={gateway}", f"gateway_{dev}={gateway}"]
        lines.append(f"send_arp_status_{dev}=1")
    return "\n".join(lines) + "\n" + extra


def install_hccn_conf(root: Path, text: str) -> Path:
    return write(Path(root) / "etc" / "hccn.conf", text)
