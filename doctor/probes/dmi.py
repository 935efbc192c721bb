"""The machine's product identity: the DMI (SMBIOS) strings Linux exposes world-readable under /sys/class/dmi/id.

Why: CANN supports some behaviour on some Atlas server models and not others (HCCL_HOST_SOCKET_PORT_RANGE, of the
A2 series, only on the training servers), and the chip family alone does not tell an 800T A2 from an 800I A2. A bug
report that names the server model is also simply easier to read. No root and no process: four small sysfs reads
through the root prefix, in the system probe.

Only `sys_vendor`, `product_name`, `board_name` and `product_version` are read. `product_serial`, `product_uuid`,
`board_serial` and `chassis_serial` are never opened: the kernel makes them root-only (mode 0400) because they
identify one machine, and the doctor has no use for them.
"""

from __future__ import annotations

from doctor.probes._fs import FsError, RootFS

DMI_DIR = "/sys/class/dmi/id"
DMI_FIELDS = ("sys_vendor", "product_name", "board_name", "product_version")
_MAX = 128  # SMBIOS strings are short; a longer read is not a DMI string


def dmi_value(raw: bytes | None) -> str | None:
    """One attribute as the kernel prints it (`Huawei\\n`, `Inspiron 1210   \\n`) -> the string, None when empty.

    Control characters (a firmware's stray NUL or escape) are dropped, so the value is safe to print and to diff."""
    if not raw:
        return None
    text = raw[:_MAX].decode("utf-8", errors="replace")
    text = "".join(c for c in text if c.isprintable())
    return text.strip() or None


def probe_dmi(fs: RootFS) -> dict[str, str] | None:
    """{field: value} for each of DMI_FIELDS that reads as a non-empty string; None when the machine has no DMI
    directory (no SMBIOS: some ARM boards, some VMs); {} when it has one but nothing could be read (unknown)."""
    if not fs.is_dir(DMI_DIR):
        return None
    out: dict[str, str] = {}
    for name in DMI_FIELDS:
        try:
            value = dmi_value(fs.read_bytes(f"{DMI_DIR}/{name}", limit=_MAX))
        except FsError:
            continue  # unreadable here (a hardened container's sysfs): that field stays unknown
        if value is not None:
            out[name] = value
    return out
