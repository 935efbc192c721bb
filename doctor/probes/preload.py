"""What the dynamic loader is asked to preload into every process: `LD_PRELOAD` and `/etc/ld.so.preload`.

An entry the loader cannot open, or one built for another architecture, is not an error to ld.so: it prints
`ERROR: ld.so: object '...' from LD_PRELOAD cannot be preloaded (...): ignored.` in every process it starts and runs
the program without it (ld.so(8), https://man7.org/linux/man-pages/man8/ld.so.8.html). Ascend images preload jemalloc
from a path that depends on the distribution (vllm-ascend's Dockerfiles: Ubuntu's libjemalloc2 under
/usr/lib/<arch>-linux-gnu, openEuler's jemalloc under /usr/lib64), so a script written for one image silently runs
without it on the other. This reads the facts a check needs (checks are pure): for each entry with a slash, whether
the file is there (under the root prefix), the machine its ELF header names, and, for a missing file, the files of
the same name in the distributions' library directories. An entry without a slash is looked up along the loader's
search path and a relative one from each process's directory: both stay unjudged, as does one with a `$LIB` /
`$PLATFORM` token (ld.so expands it).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from doctor.probes._fs import FsError, RootFS

ETC_PRELOAD = "/etc/ld.so.preload"
# ld.so: "The items of the list can be separated by spaces or colons"; ld.so.preload: whitespace-separated
_SPLIT_ENV = re.compile(r"[:\s]+")
# e_machine values of the ELF header (the System V ABI's registry) for the machines Ascend hosts and their
# containers run, with the uname -m each is; others are reported as EM_<n>
_MACHINES = {(2, 62): "x86_64", (2, 183): "aarch64", (1, 3): "i386", (1, 40): "arm", (2, 243): "riscv64",
             (1, 243): "riscv32", (2, 21): "ppc64", (2, 22): "s390x"}


def _lib_dirs(arch: str) -> tuple[str, ...]:
    """Where the distributions install shared libraries: Debian/Ubuntu's multiarch directory, the RPM
    distributions' lib64 (openEuler, EulerOS, CentOS, Kylin), and the prefix a source build uses."""
    return (f"/usr/lib/{arch}-linux-gnu", f"/lib/{arch}-linux-gnu", "/usr/lib64", "/lib64", "/usr/local/lib",
            "/usr/local/lib64", "/usr/lib")


def elf_machine(head: bytes) -> str | None:
    """The machine an ELF file is built for (as uname -m names it), from its first 20 bytes; None: not ELF."""
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    number = int.from_bytes(head[18:20], "little" if head[5:6] == b"\x01" else "big")
    return _MACHINES.get((head[4], number), f"EM_{number}")


def entries(environ: Mapping[str, str], etc_text: str | None) -> list[tuple[str, str]]:
    """(entry, source) in the order the loader reads them: LD_PRELOAD first, then /etc/ld.so.preload."""
    out = [(e, "LD_PRELOAD") for e in _SPLIT_ENV.split(environ.get("LD_PRELOAD", "")) if e]
    for line in (etc_text or "").splitlines():
        out += [(e, ETC_PRELOAD) for e in line.split("#", 1)[0].split()]
    return out


def probe_preload(fs: RootFS, environ: Mapping[str, str], arch: str) -> tuple[list[dict[str, Any]], list[str]]:
    """`host.preload`: one entry per item, with `exists`, `machine` and `alternatives` where they can be known. Under a
    root prefix (`collect --root /mnt/image`) only /etc/ld.so.preload's entries are the machine's to judge."""
    errors: list[str] = []
    try:
        etc = fs.read_text(ETC_PRELOAD)
    except FsError as e:
        etc = None
        errors.append(str(e))
    out: list[dict[str, Any]] = []
    for entry, source in entries(environ, etc):
        item: dict[str, Any] = {"entry": entry, "source": source}
        if source == "LD_PRELOAD" and fs.root != "/":
            out.append(item)  # the collecting shell's variable: under a root prefix the files are another machine's
            continue
        if entry.startswith("/") and "$" not in entry:  # a relative path is opened from each process's cwd
            try:
                head = fs.read_bytes(entry, limit=20) if fs.is_file(entry) else None
            except FsError as e:
                errors.append(str(e))
                out.append(item)
                continue
            item["exists"] = head is not None
            if head is not None:
                item["machine"] = elf_machine(head)
            else:
                item["alternatives"] = _alternatives(fs, entry, arch)
        out.append(item)
    return out, errors


def _alternatives(fs: RootFS, entry: str, arch: str) -> list[str]:
    """The files named like `entry` in the library directories, one path per file (/lib64 is often /usr/lib64)."""
    name, seen, out = posixpath.basename(entry), set(), []
    for d in _lib_dirs(arch):
        p = posixpath.join(d, name)
        try:
            real = fs.resolve(p)
        except FsError:
            continue
        if real not in seen and fs.is_file(p):
            seen.add(real)
            out.append(p)
    return out
