"""`ascend.hccn`: the NPUs' own RoCE ports, as `hccn_tool` reports them and `/etc/hccn.conf` configures them.

Multi-node HCCL traffic (gradients, weight syncs) leaves each NPU through its own RoCE port, not the host's
network, so these facts decide whether a multi-node job can start. Same rules as the rest of the snapshot:
a missing key is unknown (the command was not run or gave no answer, see `errors`), null is probed and
absent (`"address": null` = hccn_tool says no address is configured; `"conf": null` = no /etc/hccn.conf).
Device ids are physical ids: the N of /dev/davinciN, of `hccn_tool -i N` and of `address_N` in hccn.conf.
"""

# annotations are evaluated as the classes are created: see the note in model.py
from dataclasses import dataclass

from doctor.snapshot._base import _Model, _uk


@dataclass
class HccnDevice(_Model):
    """One NPU's RoCE port: `hccn_tool -i <id>` -link, -ip, -net_health, -speed, -link_stat, -optical, -gateway."""

    id: int = _uk()
    link: str | None = _uk()  # UP | DOWN, as printed
    address: str | None = _uk()
    netmask: str | None = _uk()
    health: str | None = _uk()  # `net health status`: Success, Init, Fault, Socket fail, Receive timeout, ...
    speed_mbps: int | None = _uk()  # null: "Speed: Unknown!" (no link)
    link_up_count: int | None = _uk()  # link-up events since the driver started
    link_down_count: int | None = _uk()  # printed by newer drivers only
    optical_present: bool | None = _uk()
    gateway: str | None = _uk()  # null: no default gateway configured on the device
    errors: dict[str, str] = _uk()  # command (link, ip, ...) -> why it gave no usable answer


@dataclass
class HccnRoute(_Model):
    """A static route of one NPU port in /etc/hccn.conf (`route_address_A_netmask_M_N=gateway_G`)."""

    address: str = _uk()
    netmask: str = _uk()
    gateway: str = _uk()


@dataclass
class HccnConfDevice(_Model):
    """The `*_N` keys of /etc/hccn.conf for physical device N (other keys such as send_arp_status ride in extra)."""

    id: int = _uk()
    address: str | None = _uk()
    netmask: str | None = _uk()
    gateway: str | None = _uk()
    netdetect: str | None = _uk()
    routes: list[HccnRoute] = _uk()


@dataclass
class HccnConf(_Model):
    """/etc/hccn.conf, the file hccn_tool writes when an address is set and restores at boot."""

    path: str = _uk()
    devices: list[HccnConfDevice] = _uk()


@dataclass
class HccnPing(_Model):
    """One `--deep` RoCE ping from this node to one NPU address of another node (`hccn_tool -i D -ping -g
    address X`). `ok` null: the ping could not be run (no usable local port, no time left)."""

    node: str = _uk()
    device: int | None = _uk()
    target_device: int | None = _uk()
    address: str | None = _uk()
    ok: bool | None = _uk()
    loss_pct: float | None = _uk()
    seconds: float | None = _uk()
    error: str | None = _uk()


@dataclass
class Hccn(_Model):
    """How the hccn_tool run went (`missing` is a fact about the host, like npu-smi's), per-port facts,
    the configuration file, and (`--deep` over Ray) the pings to the other nodes."""

    status: str = _uk()  # ok | missing | timeout | error
    path: str | None = _uk()
    error: str | None = _uk()
    devices: list[HccnDevice] = _uk()
    conf: HccnConf | None = _uk()
    reach: list[HccnPing] = _uk()
    reach_error: str | None = _uk()
