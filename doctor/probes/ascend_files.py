"""Ascend software on disk: CANN toolkits (old and new layout), the chip's kernels/ops package, NNAL/ATB,
driver, firmware and the device nodes a container needs.

The layouts, file formats and probe order are described, with their upstream sources, in
docs/ascend-install-layouts.md:
- old layout: `ascend-toolkit/<ver>/`, `ascend-toolkit/latest/` (a directory of symlinks plus
  `version.cfg`), `<arch>-linux/ascend_toolkit_install.info`, component `version.info` with `version_dir=`.
- new layout (8.5+/9.x): `cann-<ver>/`, `cann -> cann-<ver>`, `share/info/runtime/version.info`
  (what ACL's aclsysGetCANNVersion reads), `<arch>-linux/ascend_ops_install.info`.
- probe order: $ASCEND_HOME_PATH, $ASCEND_TOOLKIT_HOME, $ASCEND_TOOLKIT_LATEST_HOME, then `cann`,
  `ascend-toolkit/latest`, the versioned directories, under /usr/local/Ascend and $HOME/Ascend.
- driver: `/etc/ascend_install.info` -> `Driver_Install_Path_Param` -> `<p>/driver/version.info` (the
  same path ACL uses for DRIVER).
- pasted files carry `cat -n` prefixes and junk; parse `key=value` leniently, anywhere on a line.

The layout is recognised from the files present, never from the version number (8.5 pre-releases use the
old layout). The parsers at the top are pure (text in, value out) so a stdlib-only runner can reuse them.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from typing import Any

from doctor.probes._fs import FsError, RootFS

ARCHES = ("aarch64", "x86_64", "arm64")
COMPONENT_DIRS = ("runtime", "compiler", "toolkit", "opp")
DEVICE_NODES = ("davinci_manager", "devmm_svm", "hisi_hdc")


def _groups() -> list[int]:
    """This process's effective group and supplementary groups: the groups the kernel checks a node's mode for."""
    return [os.getegid(), *os.getgroups()]

# -- pure parsers ---------------------------------------------------------------------------------------

# The patterns of this module are compiled on first use (re's own cache), not at import: a host with no CANN files
# and no npu-smi never needs them, and compiling them all took ~1.3 ms of every `doctor check` there.
_KV = r"^\s*(?:\d+\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)\s*=\s*(?P<value>.*?)\s*$"
_COLON_KV = r"^\s*(?P<key>[^:=\n]*?[A-Za-z][^:=\n]*?)\s*:\s*(?P<value>.*?)\s*$"


def parse_kv(text: str) -> dict[str, str]:
    """`key=value` lines (the first occurrence of a key wins, as ACL reads the first `Version=`).

    Tolerates `cat -n` prefixes, CRLF, blank and junk lines; values keep their quotes."""
    out: dict[str, str] = {}
    if not isinstance(text, str):
        return out
    for line in text.splitlines():
        m = re.match(_KV, line.replace("\t", " "))
        if m and m["key"] not in out:
            out[m["key"]] = m["value"]
    return out


def parse_colon_kv(text: str) -> dict[str, str]:
    """`Key : value` lines (NNAL version.info, `npu-smi info -t board`)."""
    out: dict[str, str] = {}
    if not isinstance(text, str):
        return out
    for line in text.splitlines():
        m = re.match(_COLON_KV, line)
        if m and m["key"] not in out:
            out[m["key"].strip()] = m["value"]
    return out


def get_ci(kv: Mapping[str, str], *keys: str) -> str | None:
    """First non-empty value among `keys`, matched case-insensitively."""
    lower = {k.lower(): v for k, v in kv.items()}
    for key in keys:
        v = lower.get(key.lower())
        if v is not None and v.strip().strip("\"'"):
            return v.strip().strip("\"'")
    return None


_CFG = r"(?m)^\s*(?P<comp>[a-z_]+?)_(?P<what>running|installed|upgrade)_version\s*=\s*(?P<val>.*)$"
_CFG_PAIR = r"\[([^\]:]*):([^\]]*)\]"


def parse_version_cfg(text: str) -> str | None:
    """`latest/version.cfg` (old layout): `runtime_running_version=[7.7.T20.0.B210:8.1.RC1]` -> '8.1.RC1'.

    Several `[internal:marketing]` pairs may be concatenated; the last one is the current one."""
    if not isinstance(text, str):
        return None
    found: dict[tuple[str, str], str] = {}
    for m in re.finditer(_CFG, text):
        pairs = re.findall(_CFG_PAIR, m["val"])
        if pairs and pairs[-1][1].strip():
            found.setdefault((m["comp"], m["what"]), pairs[-1][1].strip())
    for key in (("runtime", "running"), ("toolkit", "running"), ("compiler", "running")):
        if key in found:
            return found[key]
    for what in ("running", "installed", "upgrade"):
        for (_, w), v in found.items():
            if w == what:
                return v
    return None


def component_version(kv: Mapping[str, str]) -> str | None:
    """Component `version.info`: the marketing version is `version_dir=` (old layout); in 9.x it reads
    `cann`, so `Version=` is used instead (docs/ascend-install-layouts.md, "Component version.info")."""
    vdir = get_ci(kv, "version_dir")
    if vdir and vdir.lower() != "cann":
        return vdir
    return get_ci(kv, "Version")


def nnal_version(text: str) -> str | None:
    """NNAL/ATB `version.info`: `    Ascend-cann-atb : 8.2.RC1` (then `... Version : 8.2.RC1.B150`)."""
    kv = parse_colon_kv(text)
    return get_ci(kv, "Ascend-cann-atb", "Ascend-cann-nnal", "Ascend-cann-atb Version", "version") or get_ci(
        parse_kv(text), "version"
    )


def parse_version_file(kind: str, text: str) -> str | None:
    """Version from one file of a known kind: toolkit | ops (install.info), runtime | component (version.info),
    driver, firmware, cfg (version.cfg), nnal."""
    if kind == "cfg":
        return parse_version_cfg(text)
    if kind == "nnal":
        return nnal_version(text)
    kv = parse_kv(text)
    if kind in ("toolkit", "ops"):
        return get_ci(kv, "version")
    if kind in ("runtime", "component"):
        return component_version(kv)
    if kind == "driver":
        return get_ci(kv, "Version", "package_version", "DriverVersion")
    if kind == "firmware":
        return get_ci(kv, "Version", "firmware_version")
    return get_ci(kv, "Version", "version")


# Ops/kernels package name -> SOC directory name used by the op binaries (docs/ascend-install-layouts.md,
# "Package names, by era").
_OPS_SOC = [
    (r"910b", "ascend910b"),
    (r"(?:^|-)a3(?:-|$)|910_?93|910c", "ascend910_93"),
    (r"310p", "ascend310p"),
    (r"310b", "ascend310b"),
    (r"950", "ascend950"),
    (r"910(?!b)", "ascend910"),
]  # searched case-insensitively


def soc_from_ops_package(package_name: str | None) -> str | None:
    """'Ascend-cann-910b-ops' -> 'ascend910b'; 'Ascend-cann-A3-ops' / 'Atlas-A3-cann-kernels' -> 'ascend910_93'."""
    if not package_name:
        return None
    for pat, soc in _OPS_SOC:
        if re.search(pat, package_name, re.I):
            return soc
    return None


def version_key(text: str | None) -> Any:
    """Sort key for toolkit versions found on disk (unparseable ones sort first)."""
    from doctor.knowledge.versions import CannVersion

    v = CannVersion.try_parse(text) if text else None
    return (1, v) if v is not None else (0, None)


# -- probing --------------------------------------------------------------------------------------------


class _Probe:
    def __init__(self, fs: RootFS, environ: Mapping[str, str], euid: int) -> None:
        self.fs = fs
        self.environ = environ
        self.euid = euid
        self.errors: list[str] = []
        self._facts_cache: dict[str, dict[str, Any]] = {}

    def note(self, msg: str) -> None:
        if msg not in self.errors:
            self.errors.append(msg)

    def read(self, path: str) -> str | None:
        try:
            return self.fs.read_text(path)
        except FsError as e:
            self.note(str(e))
            return None

    def listdir(self, path: str) -> list[str]:
        try:
            return self.fs.listdir(path)
        except FsError as e:
            self.note(str(e))
            return []

    def resolve(self, path: str) -> str | None:
        try:
            return self.fs.resolve(path)
        except FsError as e:
            self.note(str(e))
            return None

    # -- toolkits ---------------------------------------------------------------------------------------

    def bases(self) -> list[str]:
        home = self.environ.get("HOME")
        system = "/usr/local/Ascend"
        user = os.path.join(home, "Ascend") if home and home != "/" else None
        order = [system, user] if self.euid == 0 else [user, system]
        return list(dict.fromkeys(b for b in order if b))

    def canonical_toolkit(self, path: str) -> str | None:
        """The real versioned directory behind `path` (`latest` is a *directory of symlinks* in the old
        layout: follow its runtime/compiler link to find the version it points at)."""
        real = self.resolve(path)
        if real is None or not self.fs.is_dir(real):
            return None
        for comp in (*COMPONENT_DIRS, "share", *(f"{a}-linux" for a in ARCHES)):
            p = f"{real}/{comp}"
            if self.fs.is_link(p):
                target = self.resolve(p)
                if target and self.fs.is_dir(target):
                    return os.path.dirname(target)
        return real

    def enumerate_toolkits(self) -> list[str]:
        found: list[str] = []
        for base in self.bases():
            for name in self.listdir(base):
                if name.startswith("cann-"):
                    c = self.canonical_toolkit(f"{base}/{name}")
                    if c:
                        found.append(c)
            tk = f"{base}/ascend-toolkit"
            for name in self.listdir(tk):
                if name in ("latest",) or not self.fs.is_dir(f"{tk}/{name}") or self.fs.is_link(f"{tk}/{name}"):
                    continue
                c = self.canonical_toolkit(f"{tk}/{name}")
                if c and self.looks_like_toolkit(c):
                    found.append(c)
        return list(dict.fromkeys(found))

    def looks_like_toolkit(self, path: str) -> bool:
        if self.fs.exists(f"{path}/share/info") or self.fs.exists(f"{path}/version.cfg"):
            return True
        if any(self.fs.exists(f"{path}/{a}-linux") for a in ARCHES):
            return True
        return any(self.fs.exists(f"{path}/{c}/version.info") for c in COMPONENT_DIRS)

    def select_active(self, toolkits: list[str]) -> tuple[str | None, str | None]:
        for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_TOOLKIT_LATEST_HOME"):
            val = self.environ.get(var)
            if not val:
                continue
            c = self.canonical_toolkit(val)
            if c:
                return c, f"${var}"
            self.note(f"${var}={val}: no CANN toolkit there")
        for base in self.bases():
            for link in (f"{base}/cann", f"{base}/ascend-toolkit/latest"):
                if self.fs.is_link(link) or self.fs.exists(link):
                    c = self.canonical_toolkit(link)
                    if c:
                        return c, link
        if toolkits:
            return max(toolkits, key=lambda p: version_key(self.toolkit_facts(p).get("version"))), "highest installed"
        return None, None

    def arch_dirs(self, path: str) -> list[str]:
        return [a for a in ARCHES if self.fs.is_dir(f"{path}/{a}-linux")]

    def toolkit_facts(self, path: str) -> dict[str, Any]:
        """Version, arch and layout of one toolkit directory, in the order of docs/ascend-install-layouts.md."""
        if path in self._facts_cache:
            return self._facts_cache[path]
        facts: dict[str, Any] = {"version": None, "path": path}
        arches = self.arch_dirs(path)
        new_layout = self.fs.is_dir(f"{path}/share/info")
        old_layout = bool(arches) or any(self.fs.exists(f"{path}/{c}/version.info") for c in COMPONENT_DIRS)
        facts["layout"] = "new" if new_layout else ("old" if old_layout else None)
        version = source = None
        rt = self.read(f"{path}/share/info/runtime/version.info")
        if rt is not None:
            version = get_ci(parse_kv(rt), "Version")
            source = f"{path}/share/info/runtime/version.info"
            if not version:
                self.note(f"{source}: no Version= line")
        install: dict[str, str] = {}
        for a in arches:
            p = f"{path}/{a}-linux/ascend_toolkit_install.info"
            text = self.read(p)
            if text is not None:
                install = parse_kv(text)
                if not get_ci(install, "version"):
                    self.note(f"{p}: no version= line")
                elif not version:
                    version, source = get_ci(install, "version"), p
                break
        if not install:
            for p in (f"{path}/ascend_toolkit_install.info", f"{path}/share/info/ascend_toolkit_install.info"):
                text = self.read(p)
                if text is not None:
                    install = parse_kv(text)
                    if not version and get_ci(install, "version"):
                        version, source = get_ci(install, "version"), p
                    break
        if not version:
            for comp in COMPONENT_DIRS:
                p = f"{path}/{comp}/version.info"
                text = self.read(p)
                if text is not None:
                    v = component_version(parse_kv(text))
                    if v:
                        version, source = v, p
                        break
        if not version:
            for p in (f"{path}/version.cfg", f"{os.path.dirname(path)}/latest/version.cfg"):
                text = self.read(p)
                if text is not None and parse_version_cfg(text):
                    version, source = parse_version_cfg(text), p
                    break
        if not version:
            name = os.path.basename(path)
            guess = name[len("cann-"):] if name.startswith("cann-") else name
            if version_key(guess)[0]:
                version, source = guess, "directory name"
        facts["version"] = version
        facts["version_source"] = source
        arch = get_ci(install, "arch") or (arches[0] if arches else None)
        facts["arch"] = "aarch64" if arch == "arm64" else arch
        if get_ci(install, "innerversion"):
            facts["innerversion"] = get_ci(install, "innerversion")
        if get_ci(install, "compatible_version"):
            facts["compatible_version"] = get_ci(install, "compatible_version")
        if version is None:
            facts["error"] = f"no CANN version found under {path}"
        self._facts_cache[path] = facts
        return facts

    # -- kernels / ops ---------------------------------------------------------------------------------

    def kernels(self, tk: dict[str, Any]) -> dict[str, Any] | None:
        path = tk["path"]
        for arch in self.arch_dirs(path):
            p = f"{path}/{arch}-linux/ascend_ops_install.info"
            text = self.read(p)
            if text is not None:
                kv = parse_kv(text)
                pkg = get_ci(kv, "package_name")
                return {"version": get_ci(kv, "version"), "path": path, "soc": soc_from_ops_package(pkg),
                        "package_name": pkg}
        socs = self.kernel_soc_dirs(path)
        text = self.read(f"{path}/opp_kernel/version.info")
        if text is not None:
            kv = parse_kv(text)
            return {"version": component_version(kv), "path": f"{path}/opp_kernel",
                    "soc": socs[0] if len(socs) == 1 else (",".join(socs) or None)}
        if socs:
            return {"version": None, "path": f"{path}/opp", "soc": ",".join(socs)}
        return None

    def kernel_soc_dirs(self, path: str) -> list[str]:
        """Old layout: the kernels package installs op binaries under
        opp/built-in/op_impl/ai_core/tbe/kernel/<soc>/ (e.g. ascend910b, ascend910_93, ascend310p) [I]."""
        base = f"{path}/opp/built-in/op_impl/ai_core/tbe/kernel"
        return [n for n in self.listdir(base) if n.startswith("ascend") and self.fs.is_dir(f"{base}/{n}")]

    # -- NNAL / ATB -------------------------------------------------------------------------------------

    def nnal(self, bases: list[str]) -> dict[str, Any] | None:
        atb_home = self.environ.get("ATB_HOME_PATH")
        candidates: list[tuple[str, str]] = []
        if atb_home:
            # ATB_HOME_PATH=<nnal>/atb/latest/atb/cxx_abi_<0|1>, as NNAL's set_env.sh exports it
            ver_dir = os.path.dirname(os.path.dirname(atb_home.rstrip("/")))
            candidates.append((os.path.dirname(ver_dir), f"{ver_dir}/version.info"))
        for base in bases:
            atb = f"{base}/nnal/atb"
            candidates.append((atb, f"{atb}/latest/version.info"))
            versions = [n for n in self.listdir(atb) if n != "latest" and version_key(n)[0]]
            for n in sorted(versions, key=version_key, reverse=True):
                candidates.append((atb, f"{atb}/{n}/version.info"))
        for atb, info in candidates:
            text = self.read(info)
            if text is None:
                continue
            v = nnal_version(text)
            if not v:
                self.note(f"{info}: no 'Ascend-cann-atb : <version>' line")
            return {"version": v, "path": atb}
        for base in bases:
            if self.fs.is_dir(f"{base}/nnal/atb"):
                return {"version": None, "path": f"{base}/nnal/atb", "error": "no version.info found"}
        return None

    # -- driver / firmware ------------------------------------------------------------------------------

    def install_info(self) -> dict[str, str]:
        text = self.read("/etc/ascend_install.info")
        return parse_kv(text) if text is not None else {}

    def driver(self, info: dict[str, str]) -> dict[str, Any] | None:
        base = get_ci(info, "Driver_Install_Path_Param") or "/usr/local/Ascend"
        d = f"{base.rstrip('/')}/driver"
        text = self.read(f"{d}/version.info")
        out: dict[str, Any]
        if text is None:
            if not self.fs.exists(d):
                return None
            out = {"version": None, "path": d, "error": f"{d}/version.info missing or unreadable"}
        else:
            kv = parse_kv(text)
            v = get_ci(kv, "Version", "package_version", "DriverVersion")
            out = {"version": v, "path": d}
            if not v:
                out["error"] = f"{d}/version.info: no Version= line"
            for k in ("Innerversion", "compatible_version", "compatible_version_fw", "package_version"):
                if get_ci(kv, k):
                    out[k.lower()] = get_ci(kv, k)
        if get_ci(info, "Driver_Install_Type"):
            out["install_type"] = get_ci(info, "Driver_Install_Type")
        return out

    def firmware(self, info: dict[str, str]) -> dict[str, Any] | None:
        base = get_ci(info, "Firmware_Install_Path_Param", "Driver_Install_Path_Param") or "/usr/local/Ascend"
        d = f"{base.rstrip('/')}/firmware"
        text = self.read(f"{d}/version.info")
        if text is None:
            return None
        kv = parse_kv(text)
        v = get_ci(kv, "Version", "firmware_version")
        out: dict[str, Any] = {"version": v, "path": d}
        if not v:
            out["error"] = f"{d}/version.info: no Version= line"
        if get_ci(kv, "compatible_version_drv"):
            out["compatible_version_drv"] = get_ci(kv, "compatible_version_drv")
        return out

    def driver_mounts(self, info: dict[str, str]) -> dict[str, bool]:
        """What a container needs mounted besides the device nodes (Ascend Docker Runtime mounts these):
        the install record, the driver tree and its libraries, DCMI and npu-smi (docs/ascend-install-layouts.md,
        "What a container needs")."""
        base = (get_ci(info, "Driver_Install_Path_Param") or "/usr/local/Ascend").rstrip("/")
        paths = ("/etc/ascend_install.info", f"{base}/driver", f"{base}/driver/lib64", "/usr/local/dcmi",
                 "/usr/local/bin/npu-smi", "/usr/local/sbin/npu-smi")
        return {path: self.fs.exists(path) for path in dict.fromkeys(paths)}

    def device_files(self) -> list[str] | None:
        try:
            names = self.fs.listdir("/dev")
        except FsError as e:
            self.note(str(e))
            return None
        if not names and not self.fs.is_dir("/dev"):
            return None
        dav = sorted((n for n in names if re.fullmatch(r"davinci\d+", n)), key=lambda n: int(n[7:]))
        return [f"/dev/{n}" for n in dav] + [f"/dev/{n}" for n in DEVICE_NODES if n in names]

    def device_access(self, files: list[str], groups: list[int] | None) -> dict[str, Any] | None:
        """Who may open the device nodes: each node's mode, owner and group (with the group's name, which the
        fix names), and the user collect ran as. The driver installs the nodes for its running user and group
        (HwHiAiUser unless --install-for-all), so another user is refused by plain file permissions. On the live
        host (no root prefix) `rw` is the kernel's own answer (os.access: ACLs and capabilities included);
        under a root prefix it would be the test runner's, so only the facts are kept. None without nodes."""
        import grp

        nodes: dict[str, dict[str, Any]] = {}
        names: dict[int, str | None] = {}
        live = self.fs.root == "/"
        for path in files:
            st = self.fs.stat(path)
            if st is None:
                continue
            if st.st_gid not in names:
                try:
                    names[st.st_gid] = grp.getgrgid(st.st_gid).gr_name
                except (KeyError, OSError):
                    names[st.st_gid] = None
            node: dict[str, Any] = {"mode": f"{stat.S_IMODE(st.st_mode):04o}", "uid": st.st_uid, "gid": st.st_gid,
                                    "group": names[st.st_gid]}
            if live:  # checked with the effective ids, as open() is, where the platform can
                node["rw"] = os.access(path, os.R_OK | os.W_OK, effective_ids=os.access in os.supports_effective_ids)
            nodes[path] = node
        if not nodes:
            return None
        return {"uid": self.euid, "gids": sorted(set(groups if groups is not None else _groups())), "nodes": nodes}


def probe_ascend_files(fs: RootFS, environ: Mapping[str, str], euid: int | None = None,
                       groups: list[int] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Facts for snapshot `ascend` (toolkit, toolkits, kernels, nnal, driver, firmware, device_files,
    device_access, root) and the list of problems met on the way. Never raises for file problems. `euid` and
    `groups` are the user's (this process's by default)."""
    p = _Probe(fs, environ, os.geteuid() if euid is None else euid)
    toolkits = p.enumerate_toolkits()
    active, selected_by = p.select_active(toolkits)
    if active and active not in toolkits:
        toolkits.insert(0, active)
    out: dict[str, Any] = {}
    entries = []
    for t in toolkits:
        f = p.toolkit_facts(t)
        entries.append({"version": f["version"], "path": t, "active": t == active})
    out["toolkits"] = entries
    bases = p.bases()
    if active:
        tk = dict(p.toolkit_facts(active))
        tk["selected_by"] = selected_by
        parent = os.path.dirname(active)
        root = os.path.dirname(parent) if os.path.basename(parent) == "ascend-toolkit" else parent
        out["root"] = root
        out["toolkit"] = tk
        out["kernels"] = p.kernels(tk)
        bases = list(dict.fromkeys([root, *bases]))
    else:
        out["root"] = next((b for b in bases if p.fs.is_dir(b)), None)
        out["toolkit"] = None
        out["kernels"] = None
    out["nnal"] = p.nnal(bases)
    info = p.install_info()
    out["driver"] = p.driver(info)
    out["firmware"] = p.firmware(info)
    files = p.device_files()
    if files is not None:
        out["device_files"] = files
        access = p.device_access(files, groups)
        if access is not None:
            out["device_access"] = access
    out["driver_mounts"] = p.driver_mounts(info)
    return out, p.errors
