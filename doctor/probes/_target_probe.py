"""Facts about a Python environment, gathered *inside* that environment's interpreter.

Run as `__main__` of `<target python> -c` (doctor/probes/pyenv.py), from the user's working directory and
WITHOUT -I, so sys.path is exactly what the user's `python` sees (a source tree in the cwd that shadows an
installed package is a real failure the doctor must see). Prints one JSON document between two marker lines.

Rules this script keeps (the snapshot's "modules" contract, docs/schemas/snapshot.md):
- standard library only, and valid Python 3.8 syntax (a 3.9 training env can be diagnosed) — the test
  suite checks this with ast.parse(feature_version=(3, 8));
- never imports torch, torch_npu, vllm, megatron, mindspeed or any probed package: only top-level
  importlib.util.find_spec (which imports no parent for a top-level name) and file reads (git facts of
  source checkouts are asked from git by the doctor afterwards, doctor/probes/gitrepo.py);
- self-contained: the Ray cluster collector ships it to nodes as is.
"""

import os
import sys

if __name__ == "__main__":
    # One short process: the cyclic collector's passes (over importlib.metadata's imports and the dist-info texts)
    # were ~3.5 % of the probe's instructions and freed nothing it needed. Loaded as a module, it leaves gc alone.
    import gc

    gc.disable()

BEGIN = "@@DOCTOR-TARGET-PROBE-BEGIN@@"
END = "@@DOCTOR-TARGET-PROBE-END@@"

MODULES = [
    "torch", "torch_npu", "torchvision", "torchaudio", "vllm", "vllm_ascend", "megatron", "mindspeed", "mbridge",
    "transformer_engine", "triton", "triton_ascend", "verl", "transformers", "ray", "numpy", "megatron_adaptor",
]
VERSION_FILES = ["version.py", "_version.py", "__init__.py"]
BUILD_FILES = {"torch": "version.py", "torch_npu": "version.py", "vllm_ascend": "_build_info.py"}
MAX_READ = 256 * 1024

_cwd = os.getcwd()


def _stdlib(name):
    """Import a standard-library module with the cwd off sys.path: a `json.py` or `re.py` in the user's
    directory must not break the probe (it would break the user's own imports, but the probe has to report,
    not crash). Modules needed only on some machines (`ast`, `sysconfig`) are imported on first use."""
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != _cwd]
        __import__(name)
        return sys.modules[name]
    finally:
        sys.path[:] = saved


importlib = _stdlib("importlib")
_stdlib("importlib.machinery")
_stdlib("importlib.util")
json = _stdlib("json")
re = _stdlib("re")


_ERRORS = []  # type: ignore[var-annotated]


def _err(msg):
    if len(_ERRORS) < 200:
        _ERRORS.append(str(msg)[:500])


def _read(path, limit=MAX_READ):
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


# -- interpreter ------------------------------------------------------------------------------------------


_IMPLEMENTATIONS = {"cpython": "CPython", "pypy": "PyPy", "ironpython": "IronPython", "jython": "Jython"}


def python_facts(runtime=True):
    """What `platform.python_version()` / `python_implementation()` say, without importing `platform`; with
    `runtime`, the libstdc++ this process gets (`libstdcxx`)."""
    site = _stdlib("site")
    site_dirs = []
    try:
        site_dirs.extend(site.getsitepackages())
    except Exception as e:  # virtualenv's old site.py has no getsitepackages
        _err("site.getsitepackages: %s" % e)
    try:
        if site.ENABLE_USER_SITE:
            user = site.getusersitepackages()
            if user and os.path.isdir(user):
                site_dirs.append(user)
    except Exception as e:
        _err("site.getusersitepackages: %s" % e)
    facts = {
        "version": sys.version.split()[0],
        "executable": sys.executable,
        "implementation": _IMPLEMENTATIONS.get(sys.implementation.name, sys.implementation.name),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "site_packages": site_dirs,
        "sys_path": [os.path.abspath(p) if p else os.getcwd() for p in sys.path],
        "cwd": os.getcwd(),
        "arch": os.uname().machine,
        "libc": _libc(),
        "install_paths": _install_paths(),
    }
    if runtime:
        cxx = libstdcxx()
        if cxx is not _NOT_READ:
            facts["libstdcxx"] = cxx
    return facts


def _libc():
    """"glibc 2.35" as the C library reports it (what manylinux tags are chosen by), or None (musl, ...)."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        return None


def _install_paths():
    """Where pip installs into this interpreter (sysconfig's purelib/platlib), its stdlib directory (where
    PEP 668's EXTERNALLY-MANAGED file lies: installer_facts; and ensurepip's bundled wheels) and the build's
    WHEEL_PKG_DIR (where a distributor's ensurepip takes its wheels from instead: installers.venvpip)."""
    try:
        sc = _stdlib("sysconfig")
        paths = sc.get_paths()
        return {"purelib": paths.get("purelib"), "platlib": paths.get("platlib"), "stdlib": paths.get("stdlib"),
                "wheel_pkg_dir": sc.get_config_var("WHEEL_PKG_DIR") or None}
    except Exception as e:
        _err("sysconfig.get_paths: %s" % e)
        return None


# -- what a fix command needs (snapshot rule 13) ----------------------------------------------------------


def installer_facts(py, dists):
    """What decides how a fix's `pip ...` runs in this environment, set on `py` (the python facts): `pip`
    (a distribution named pip is installed: `-m pip` imports it; read off the installed set already listed,
    no import), `ensurepip` (only without pip: whether `-m ensurepip` can bring it back; Debian ships it
    apart, in python3-venv), `externally_managed` (PEP 668: EXTERNALLY-MANAGED in the stdlib directory of
    an interpreter that is not a venv; pip then refuses to install) and `uv_venv` (the `uv = X.Y.Z` line of
    the venv's pyvenv.cfg: `uv venv` made it, without pip; null: no such line or not a venv). One stat and
    one small read (the stdlib directory comes with install_paths, sysconfig already computed); a fact that fails
    is left out (unknown), never the probe."""
    py["pip"] = any((entry.get("name") or "").lower() == "pip" for entry, _ in dists)  # no other spelling
    if not py["pip"]:
        try:
            py["ensurepip"] = importlib.util.find_spec("ensurepip") is not None
        except Exception as e:
            _err("ensurepip: %s: %s" % (type(e).__name__, e))
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    try:
        stdlib = (py.get("install_paths") or {}).get("stdlib") or _stdlib("sysconfig").get_path("stdlib")
        py["externally_managed"] = not in_venv and bool(stdlib) and os.path.isfile(
            os.path.join(stdlib, "EXTERNALLY-MANAGED"))
    except Exception as e:
        _err("EXTERNALLY-MANAGED: %s: %s" % (type(e).__name__, e))
    uv = None
    if in_venv:
        cfg = _read(os.path.join(sys.prefix, "pyvenv.cfg"), 64 * 1024) or ""
        m = re.search(r"^\s*uv\s*=\s*(\S+)\s*$", cfg, re.M)
        uv = m.group(1) if m else None
    py["uv_venv"] = uv


# -- the C++ runtime ------------------------------------------------------------------------------------


def libstdcxx():
    """Which libstdc++.so.6 this interpreter's process gets, and the newest GLIBCXX_3.4.N / CXXABI_1.3.N it
    defines: {"path", "glibcxx", "cxxabi", "system"}; None when the dynamic loader finds none; absent (the
    _NOT_READ marker) where it cannot be asked (no _ctypes, no /proc).

    The loader answers, not a copy of its search: `_ctypes.dlopen` (the C half of ctypes.CDLL, without ctypes'
    ~1 ms of Python) asks it from inside _ctypes's extension module, so LD_LIBRARY_PATH, that module's RUNPATH
    (a conda interpreter's points at $CONDA_PREFIX/lib, the classic `GLIBCXX_3.4.30' not found`) and the ld.so
    cache all apply, as they do for the C++ extensions this interpreter imports; /proc/self/maps then names the
    file mapped. "system" is the libstdc++.so.6 the ld.so cache lists for this machine type, which native code
    built on the host with its compiler needs (see _cache_libstdcxx)."""
    try:
        _ctypes = _stdlib("_ctypes")
        maps_path = "/proc/self/maps"
        if not os.path.exists(maps_path):
            return _NOT_READ
    except ImportError:
        return _NOT_READ
    try:
        _ctypes.dlopen("libstdc++.so.6", os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError as e:
        if "cannot open shared object file" in str(e):  # the loader's "not found": a fact, not a failure
            return None
        _err("libstdc++.so.6: %s" % e)  # found but not loadable (another machine's build, a broken file)
        return _NOT_READ
    path = _mapped("/libstdc++.so")
    if path is None:
        _err("libstdc++.so.6 was loaded but /proc/self/maps does not list it")
        return _NOT_READ
    facts = _elf_versions(path)
    facts["path"] = path
    system = _cache_libstdcxx(facts.get("machine"))
    if system is not None and _real(system) != _real(path):
        sys_facts = _elf_versions(system)
        sys_facts["path"] = _real(system)
        sys_facts.pop("machine", None)
        facts["system"] = sys_facts
    else:
        facts["system"] = {"path": path, "glibcxx": facts.get("glibcxx"), "cxxabi": facts.get("cxxabi")} \
            if system is not None else None
    facts.pop("machine", None)
    return facts


_NOT_READ = object()


def _mapped(needle):
    """The path of the first file mapped into this process whose path contains `needle` (/proc/self/maps)."""
    try:
        with open("/proc/self/maps", "rb") as fh:
            maps = fh.read()
    except OSError:
        return None
    i = maps.find(needle.encode())
    if i < 0:
        return None
    start = maps.rfind(b" ", 0, i) + 1
    end = maps.find(b"\n", i)
    return maps[start:end if end >= 0 else len(maps)].decode("utf-8", "replace")


_SHT_GNU_VERDEF = 0x6FFFFFFD


def _elf_versions(path):
    """The newest GLIBCXX_3.4.N and CXXABI_1.3.N among the version definitions of an ELF shared library
    (its .gnu.version_d section; names in the string table it links to), as "3.4.30" / "1.3.13", with the
    ELF class and machine ("machine"); reads a few KB (headers, the section table, the definitions and the
    span of strings they name), not the ~2 MB file."""
    out = {"glibcxx": None, "cxxabi": None}
    try:
        with open(path, "rb") as fh:
            names = _verdef_names(fh, out)
    except (OSError, ValueError, IndexError) as e:
        _err("%s: version definitions unreadable: %s" % (path, e))
        return out
    best = {}
    for name in names:
        base, _, ver = name.partition("_")
        if base in ("GLIBCXX", "CXXABI") and all(x.isdigit() for x in ver.split(".")):  # not GLIBCXX_LDBL_3.4
            key = tuple(int(x) for x in ver.split("."))
            if key > best.get(base, ()):
                best[base] = key
    for base, key in best.items():
        out[base.lower()] = ".".join(str(x) for x in key)
    return out


def _verdef_names(fh, out):
    head = fh.read(64)
    if head[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    wide, order = head[4] == 2, ("little" if head[5] == 1 else "big")

    def num(buf, at, size):
        return int.from_bytes(buf[at:at + size], order)

    out["machine"] = (head[4], num(head, 18, 2))
    if wide:
        shoff, shentsize, shnum = num(head, 0x28, 8), num(head, 0x3A, 2), num(head, 0x3C, 2)
    else:
        shoff, shentsize, shnum = num(head, 0x20, 4), num(head, 0x2E, 2), num(head, 0x30, 2)
    if not shoff or not shnum or shnum > 4096:
        raise ValueError("no section table")
    fh.seek(shoff)
    table = fh.read(shentsize * shnum)

    def section(i):  # (type, offset, size, link, info)
        at = i * shentsize
        if wide:
            return (num(table, at + 4, 4), num(table, at + 24, 8), num(table, at + 32, 8), num(table, at + 40, 4),
                    num(table, at + 44, 4))
        return (num(table, at + 4, 4), num(table, at + 16, 4), num(table, at + 20, 4), num(table, at + 24, 4),
                num(table, at + 28, 4))

    verdef = next((s for s in map(section, range(shnum)) if s[0] == _SHT_GNU_VERDEF), None)
    if verdef is None:
        return []
    _, off, size, link, count = verdef
    strtab = section(link)[1]
    fh.seek(off)
    defs = fh.read(min(size, 1 << 20))
    offsets, at = [], 0
    for _ in range(min(count, 4096)):  # Elf_Verdef: ..., vd_aux at +12, vd_next at +16; Elf_Verdaux: vda_name
        offsets.append(num(defs, at + num(defs, at + 12, 4), 4))
        step = num(defs, at + 16, 4)
        if not step:
            break
        at += step
    lo, hi = min(offsets), max(offsets)
    if hi - lo > 1 << 20:
        raise ValueError("version names spread over more than 1 MB")
    fh.seek(strtab + lo)
    blob = fh.read(hi - lo + 256)
    return [blob[o - lo:blob.find(b"\0", o - lo)].decode("ascii", "replace") for o in offsets]


_LD_SO_CACHE = "/etc/ld.so.cache"


def _cache_libstdcxx(machine):
    """The first libstdc++.so.6 in the ld.so cache built for this process's ELF class and machine, or None.
    The cache's string table holds each library's full path (the soname is its tail), so the paths are found
    with a bytes search; the ELF header of each says which machine it is for (a multilib host lists /lib32's
    too). Absent cache (musl, a minimal image): None."""
    if machine is None:
        return None
    try:
        with open(_LD_SO_CACHE, "rb") as fh:
            cache = fh.read(1 << 22)
    except OSError:
        return None
    tail, at = b"/libstdc++.so.6\0", 0
    while True:
        i = cache.find(tail, at)
        if i < 0:
            return None
        at = i + len(tail)
        start = cache.rfind(b"\0", 0, i) + 1
        cand = cache[start:at - 1].decode("utf-8", "replace")
        if not cand.startswith("/"):
            continue
        try:
            with open(cand, "rb") as fh:
                head = fh.read(20)
        except OSError:
            continue
        order = "little" if head[5:6] == b"\x01" else "big"
        if head[:4] == b"\x7fELF" and (head[4], int.from_bytes(head[18:20], order)) == machine:
            return cand


# -- distributions ----------------------------------------------------------------------------------------


def _dist_location(dist):
    try:
        return os.path.abspath(str(dist.locate_file("")))
    except Exception:
        return None


def _read_dist_text(dist, fname):
    """`dist.read_text(fname)`; for a dist-info / egg-info directory on disk (nearly all) the file is opened
    directly: pathlib's joinpath per read was a tenth of the probe (~4 reads per distribution)."""
    base = getattr(dist, "_path", None)
    if fname and type(base).__module__ == "pathlib":
        try:
            with open(os.path.join(str(base), fname), "rb") as fh:  # bytes: no text-mode file object per read
                text = fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):  # what importlib.metadata's read_text suppresses
            return None
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text  # text mode's newlines
    try:
        return dist.read_text(fname)
    except Exception:
        return None


def _direct_url_facts(name, raw):
    """What direct_url.json (PEP 610) says: the URL, editable, and the VCS commit / requested revision."""
    facts = {"editable": False}
    if not raw:
        return facts
    try:
        du = json.loads(raw)
        facts["url"] = du.get("url")
        facts["editable"] = bool((du.get("dir_info") or {}).get("editable", False))
        vcs = du.get("vcs_info") or {}
        for key, out in (("commit_id", "commit"), ("requested_revision", "requested_revision"), ("vcs", "vcs")):
            if vcs.get(key):
                facts[out] = vcs.get(key)
    except (ValueError, AttributeError) as e:
        _err("%s: direct_url.json is not valid: %s" % (name, e))
    return facts


def _record_files(dist, name):
    """RECORD paths of a distribution (what the installer's journal keeps), relative to its site dir. Where
    importlib.metadata's `files` raises on a row it cannot take (a blank line in RECORD: csv gives an empty row,
    its make_file() misses 'name', 3.8 to 3.13; a size that is not a number) or, for an egg-info, on an
    installed-files.txt line outside the site dir (../../../bin/x: ValueError on 3.12 before cpython#120910's
    walk_up), the file it read is read here as it reads it: RECORD's first column, else installed-files.txt
    relative to the resolved site dir (the path 3.13 gives)."""
    try:
        return [str(f) for f in (dist.files or [])]
    except Exception as e:  # named by the distribution: the object's repr carries a memory address
        error = "%s: RECORD: %s: %s" % (name, type(e).__name__, e)
    text = _read_dist_text(dist, "RECORD")
    try:
        if text:
            paths = [row[0] for row in _stdlib("csv").reader(text.splitlines()) if row]
        else:
            base, top = getattr(dist, "_path", None), os.path.realpath(_dist_location(dist))
            text = _read_dist_text(dist, "installed-files.txt")
            paths = [os.path.relpath(os.path.realpath(os.path.join(base, f)), top) for f in text.splitlines()]
        return [str(_stdlib("importlib.metadata").PackagePath(f)) for f in paths]
    except Exception:  # neither file, or one that is not text rows
        _err(error)
        return []


def _declared(dist, meta, dist_info):
    """What the distribution declares about itself (snapshot rule 7): Requires-Python, the Requires-Dist lines
    as written (egg-info keeps them in requires.txt, which `dist.requires` reads), its importable top-level
    names and the METADATA file they were read from."""
    facts = {}
    try:
        facts["requires_python"] = meta.get("Requires-Python") if meta is not None else None
        reqs = meta.get_all("Requires-Dist") if meta is not None else None
        if reqs is None and dist_info and not dist_info.endswith(".dist-info"):
            reqs = dist.requires
        facts["requires_dist"] = [str(r) for r in (reqs or [])]
    except Exception as e:
        _err("%s: requirements: %s: %s" % (dist_info, type(e).__name__, e))
    if dist_info:
        facts["metadata"] = os.path.join(dist_info, "METADATA" if dist_info.endswith(".dist-info") else "PKG-INFO") \
            if os.path.isdir(dist_info) else dist_info
    facts["top_level"] = _top_level(dist)
    if dist_info and dist_info.endswith(".dist-info"):
        # the wheel's compatibility tags (WHEEL's Tag lines), which `pip check` holds against the interpreter's
        tags = _Headers(_read_dist_text(dist, "WHEEL") or "").get_all("Tag")
        if tags:
            facts["wheel_tags"] = [t.strip() for t in tags]
    return facts


class _Headers(object):
    """The header block of a METADATA / PKG-INFO file (core metadata is RFC 822 headers), read as
    email.message.Message (compat32) reads it: case-insensitive names, a value with its leading blanks stripped
    and continuation lines kept; `get` the first value, `get_all` every one (None when absent)."""

    def __init__(self, text):
        # by name: a stack's ~300 files are asked ~4 names each, so a value is stripped of its line end when asked
        self._by_name = {}
        last = None  # the values of the header the last name line started; a continuation line extends its last
        for line in text.splitlines(True):
            if line[:1] in (" ", "\t") and last is not None:
                last[-1] += line
                continue
            name, sep, value = line.partition(":")
            if sep:
                last = self._by_name.setdefault(name.strip().lower(), [])
                last.append(value.lstrip(" \t"))

    def get_all(self, name):
        got = self._by_name.get(name.lower())
        return [v.rstrip("\r\n") for v in got] if got else None

    def get(self, name, default=None):
        got = self.get_all(name)
        return got[0] if got else default

    def __getitem__(self, name):
        return self.get(name)


def _metadata_headers(dist):
    """What `dist.metadata` gives (METADATA, else PKG-INFO), parsed once and only up to the end of its headers:
    the long description after the first blank line is most of the file (transformers' is ~50 KB), and feeding
    it through the email parser was most of this probe's time on a stack's ~300 distributions."""
    text = _read_dist_text(dist, "METADATA") or _read_dist_text(dist, "PKG-INFO") or _read_dist_text(dist, "") or ""
    end = _header_end(text)
    return _Headers(text[:end] + "\n" if end >= 0 else text)


def _header_end(text):
    """Where the first blank line (`\\r?\\n\\r?\\n`) starts, or -1: found with str.find, which skips to it at
    memchr speed, where a regular expression that may start with `\\r` tries every character before it."""
    ends = [i for i in (text.find("\n\n"), text.find("\n\r\n")) if i >= 0]
    if not ends:
        return -1
    first = min(ends)
    return first - 1 if first > 0 and text[first - 1] == "\r" else first


# The first path segment of each RECORD row, and '/' when one follows it (a directory: a package). `.*` consumes the
# rest of the row, so the scan resumes at the next row instead of trying `^` at every character (half the time on a
# stack's ~4 MB of RECORDs); the rows after it that start with the same segment and separator are consumed with it
# (a quote taken when there is one, as the first row's), one match per run of a directory's rows: ~3x faster.
_RECORD_HEAD = re.compile(r'^"?([^/,\r\n"]*)(?:(/)|).*(?:\n(?:"|(?!"))\1(?(2)/|(?=[,\r\n"]|\Z)).*)*', re.M)


def _top_level(dist):
    """top_level.txt when the build wrote one, else the first path segments of RECORD that are importable
    (a package directory or a module file; not the .dist-info, .data, scripts or __pycache__). None when neither
    file is there (an egg-info with only PKG-INFO, a hand-made dist-info): what it installs is not known, which is
    not "nothing" (a RECORD listing only scripts, as py-spy's)."""
    text = _read_dist_text(dist, "top_level.txt")
    if text is not None:
        return sorted(set(t.strip().split("/")[0] for t in text.splitlines() if t.strip()))
    record = _read_dist_text(dist, "RECORD")
    if record is None:
        return None
    if not record:
        return []
    names = set()
    for first, sep in set(_RECORD_HEAD.findall(record[:MAX_READ * 32])):
        first = first.strip()
        if not first or first.startswith(".."):
            continue
        if sep:
            if first.endswith((".dist-info", ".data", ".egg-info")) or first == "__pycache__" or "." in first:
                continue
            names.add(first)
        elif first.endswith((".py", ".so", ".pyd")) and not first.startswith("__editable__"):
            names.add(first.split(".", 1)[0])
    return sorted(names)


def distributions(with_files=False):
    """Every installed distribution as importlib.metadata finds it, in sys.path order; a later copy of the
    same (PEP 503) name is recorded under the first as 'shadowed'. `with_files` adds RECORD paths."""
    return [entry for entry, _ in _distributions(with_files)]


def _distributions(with_files=False, shadowed=None):
    """(entry, importlib.metadata Distribution) of every distribution `distributions` reports. A list passed as
    `shadowed` receives ({"name", "location", "top_level"}, Distribution) of each later copy of a name, which
    `distributions` keeps only as a 'shadowed' note: its files are still on disk, in its own site directory."""
    try:
        md = _stdlib("importlib.metadata")
    except ImportError:  # Python < 3.8: report, do not crash
        _err("importlib.metadata is not available (Python < 3.8)")
        return []
    try:
        dists = list(md.distributions())
    except Exception as e:
        _err("importlib.metadata.distributions: %s: %s" % (type(e).__name__, e))
        return []
    out = []
    by_key = {}
    for dist in dists:
        meta = None
        try:
            meta = _metadata_headers(dist)  # parsed once: every `dist.metadata` access re-reads the whole file
            name, version = meta["Name"], meta["Version"]
        except Exception as e:
            name, version = None, None
            _err("unreadable metadata in %s: %s" % (_dist_location(dist), e))
        location = _dist_location(dist)
        if not name:
            _err("a distribution without a Name in %s" % location)
            continue
        key = _normalize(name)
        if key in by_key:
            by_key[key].setdefault("shadowed", []).append({"version": version, "location": location})
            if shadowed is not None:
                try:
                    shadowed.append(({"name": name, "location": location, "top_level": _top_level(dist)}, dist))
                except Exception as e:
                    _err("%s: top-level names: %s: %s" % (location, type(e).__name__, e))
            continue
        # absolute, as `location` is: a dist found through sys.path's '' entry (an egg-info in the cwd) has a
        # relative path, which means nothing to a snapshot read elsewhere
        dist_info = os.path.abspath(str(getattr(dist, "_path", "") or "")) if getattr(dist, "_path", None) else None
        entry = {"name": name, "version": version, "location": location, "dist_info": dist_info}
        entry.update(_declared(dist, meta, dist_info))
        entry.update(_direct_url_facts(name, _read_dist_text(dist, "direct_url.json")))
        installer = _read_dist_text(dist, "INSTALLER")
        if installer:
            entry["installer"] = installer.strip()
        if with_files:
            entry["files"] = _record_files(dist, name)
        by_key[key] = entry
        out.append((entry, dist))
    return out


# -- files two distributions both install (snapshot rule 11) ------------------------------------------------


def _relative(path, loc):
    """A RECORD path as pip and uv write it, relative to the site directory: a `./` prefix dropped, an absolute path
    inside `loc` made relative (older setuptools / distutils and some conda builds write those); None for an
    absolute path elsewhere."""
    while path.startswith("./"):
        path = path[2:]
    if path.startswith("/"):
        root = (loc or "").rstrip("/") + "/"
        if not loc or not path.startswith(root):
            return None
        path = path[len(root):]
    return path


def _under(path, top):
    return path.startswith(top + "/") or ("/" not in path and path.split(".", 1)[0] == top)


def _installed_text(dist):
    """The list of files `dist` installed: RECORD, else (an egg-info install by `setup.py install`)
    installed-files.txt."""
    text = _read_dist_text(dist, "RECORD")
    return text if text is not None else _read_dist_text(dist, "installed-files.txt")


def _installed_rows(dist, top, loc=None):
    """The files `dist` installed under the top-level name `top` (its package directory or module files): path
    relative to the site directory `loc` -> "algorithm=digest" from RECORD (rows without a hash, RECORD itself and
    compiled .pyc, are left out). An egg-info install has no RECORD: installed-files.txt lists its files relative
    to the .egg-info directory, without digests (None); its compiled __pycache__ files are left out too."""
    rows = {}
    text = _read_dist_text(dist, "RECORD")
    if text is not None:
        prefix = top + "/"
        for row in _stdlib("csv").reader(text.splitlines()):
            if len(row) < 2 or not row[1] or "__pycache__/" in row[0]:
                continue
            path = row[0]
            if not path.startswith(prefix):  # (namespace RECORDs have thousands of rows: the common case is this)
                if path[:1] in "./":
                    path = _relative(path, loc) or ""
                if not _under(path, top):
                    continue
            rows[path] = row[1]
        return rows
    base = getattr(dist, "_path", None)
    text = _read_dist_text(dist, "installed-files.txt")
    if text is None or base is None or not loc:
        return rows
    for line in text.splitlines():
        line = line.strip()
        if not line or "__pycache__/" in line:
            continue
        path = _relative(os.path.normpath(os.path.join(os.path.abspath(str(base)), line)), loc)
        if path and _under(path, top):
            rows[path] = None
    return rows


def _on_disk(path, digest):
    """Whether the file at `path` has the RECORD digest `digest` ("algorithm=value")."""
    algorithm, _, value = digest.partition("=")
    return _file_hash(path, algorithm) == value


def _size(path):
    """The file's size, infinite when it cannot be read (the last to choose)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return float("inf")


def _whose(path, a, da, b, db):
    """`a` or `b`, whichever's RECORD digest the file at `path` has now (hashed once per algorithm), else None (an
    egg-info install records no digest: its copy cannot be recognised)."""
    hashes = {}
    for name, digest in ((a, da), (b, db)):
        if digest is None:
            continue
        algorithm, _, value = digest.partition("=")
        if algorithm not in hashes:
            hashes[algorithm] = _file_hash(path, algorithm)
        if hashes[algorithm] == value:
            return name
    return None


def _differ(path, da, db):
    """Whether two RECORD digests of the same path say different content: compared as written when they use one
    algorithm (pip writes sha256: no file is read); else through the file on disk, hashed with each (another
    installer's sha384), which has been overwritten when it matches one and not the other. An egg-info install
    records no digest (None): against a RECORD digest the file differs when it is not that copy (the egg-info's
    or a hand edit overwrote it; the same content cannot be told from a copy never overwritten); two egg-info
    installs cannot be compared."""
    if da is None or db is None:
        return da is not db and not _on_disk(path, da or db)
    if da.partition("=")[0] == db.partition("=")[0]:
        return da != db
    return _on_disk(path, da) != _on_disk(path, db)


def shared_files(pairs, read=None):
    """Pairs of distributions in the same site directory whose RECORDs list some path with different content (the
    same path, different digests: whichever was installed last overwrote the other's copy): how many paths both
    list, how many differ, a few of those, and whose copy is on disk now (its digest recomputed). Only top-level
    names two distributions both claim are read, so a stack without such a clash costs nothing; namespace packages
    share a name and at most identical files (an empty __init__.py), and are not listed. `read` receives the rows
    parsed ((id(entry), top) -> rows) for missing_files.

    Compared: RECORD paths, with a `./` prefix or absolute inside the site directory (older setuptools /
    distutils, some conda builds) as the same relative path; an egg-info install's installed-files.txt, whose
    files have no digest, through the file on disk against the other's RECORD digest (hashing only the files the
    two share, which only clashing names have). Not compared: two egg-info installs (no digest on either side),
    and an egg-info file whose content equals the wheel's (nothing tells it from a copy never overwritten)."""
    claims = {}
    real = {}  # a location -> the path its directory was first found at (lib64 -> lib: one directory)
    first = {}
    seen = set()  # (directory, project): a project found again there (through a symlink, or a stale dist-info)
    for entry, dist in pairs:
        loc = entry.get("location")
        if loc:
            if loc not in real:
                real[loc] = first.setdefault(os.path.realpath(loc), loc)
            loc = real[loc]
            if (loc, _normalize(entry["name"])) in seen:
                continue
            seen.add((loc, _normalize(entry["name"])))
        for top in entry.get("top_level") or []:
            claims.setdefault((loc, top), []).append((entry, dist))
    out = []
    for (loc, top), owners in sorted(claims.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if not loc or len(owners) < 2:
            continue
        rows = []
        for entry, dist in owners:
            try:
                r = _installed_rows(dist, top, loc)
                rows.append((entry["name"], r))
                if read is not None:
                    read[(id(entry), top)] = r
            except Exception as e:  # an unreadable RECORD must not lose the rest
                _err("%s: RECORD: %s: %s" % (entry.get("name"), type(e).__name__, e))
        # the paths each pair lists, from one pass over every path (not a set intersection per pair: forty
        # namespace wheels of 200 files each are 780 pairs)
        by_path = {}
        for i, (_, r) in enumerate(rows):
            for path in r:
                by_path.setdefault(path, []).append(i)
        shared = {}
        for path, idx in by_path.items():
            for k, i in enumerate(idx):
                for j in idx[k + 1:]:
                    shared.setdefault((i, j), []).append(path)
        for (i, j), both in sorted(shared.items()):
            (a, ra), (b, rb) = rows[i], rows[j]
            both.sort()
            differ = [p for p in both if _differ(os.path.join(loc, p), ra[p], rb[p])]
            item = {"dists": [a, b], "top_level": top, "location": loc, "files": len(both),
                    "differ": len(differ), "examples": differ[:3]}
            if not differ:  # identical copies (a pkgutil namespace's empty __init__.py): nothing was overwritten
                continue
            # read from the smallest differing file: cv2/version.py, not the 80 MB cv2.abi3.so
            p = min(differ, key=lambda p: _size(os.path.join(loc, p)))
            item["on_disk"] = _whose(os.path.join(loc, p), a, ra[p], b, rb[p])
            out.append(item)
    return out


# -- files a distribution's RECORD lists that are gone (snapshot rule 12) ------------------------------------


def missing_files(pairs, read=None):
    """Distributions whose RECORD lists files under one of their top-level names that are gone from disk: what
    `pip uninstall` of one of two distributions that both installed `cv2/` (opencv-python, opencv-python-headless)
    or `jwt/` (jwt, PyJWT) leaves. pip deletes every path the uninstalled one's RECORD lists, the other's too; the
    survivor is still installed, `pip check` is silent, and `import jwt` finds a namespace package without
    `jwt.encode` (or `import cv2` fails).

    Per top-level name, only the file an import needs first is looked at (`__init__.py`, else a namespace directory
    or a module file, or bytecode / an extension module standing in for the source); only a name with neither, or a
    directory without the `__init__.py` its RECORD lists, has its RECORD rows stat-ed. Why no more, and what that
    costs: the docstring of doctor/probes/pyenv.py. An egg-info install is read from its installed-files.txt;
    editable installs and distributions whose metadata is not in the directory they install into are left out.
    `read` holds the rows shared_files already parsed ((id(entry), top) -> rows), not read twice."""
    # what an import loads a module or a package's __init__ from: source, sourceless bytecode (a deployment that
    # ships `compileall -b` output only), an extension module
    modules = tuple(importlib.machinery.all_suffixes())
    access, F_OK = os.access, os.F_OK
    out = []
    for entry, dist in pairs:
        loc, info = entry.get("location"), entry.get("dist_info") or ""
        if not loc or entry.get("editable") or info.rpartition("/")[0] != loc \
                or not info.endswith((".dist-info", ".egg-info")):
            continue
        for top in entry.get("top_level") or []:
            # os.access, not os.stat: no stat result built, no exception raised for a name that is not there (a
            # third cheaper per call); a trailing "/" finds only a directory
            base = loc + "/" + top
            if access(base + "/__init__.py", F_OK):
                continue  # a regular package, its first file in place (nearly every name: one call)
            isdir = access(base + "/", F_OK)
            if not isdir and any(access(base + suffix, F_OK) for suffix in modules):
                continue  # a module (six.py, six.pyc, _cffi_backend.cpython-311-x86_64-linux-gnu.so)
            rows = read.get((id(entry), top)) if read else None
            if rows is None:
                # `jwt/__init__.py` for a directory (a namespace portion lists none: nothing of its own to import
                # first); for a name not on disk, whether RECORD names it at all (top_level.txt can name an
                # extension module that lives inside a package: tree-sitter-bash's `_binding`)
                if (top + "/__init__.py" if isdir else top) not in (_installed_text(dist) or ""):
                    continue
                rows = _installed_rows(dist, top, loc)
            elif isdir and top + "/__init__.py" not in rows:
                continue
            if isdir and any(access(base + "/__init__" + suffix, F_OK) for suffix in modules[1:]):
                continue  # its __init__ as bytecode only or compiled: importable (asked only here, not per namespace)
            # the file an import needs first leads the examples
            gone = sorted((p for p in rows if not os.path.lexists(os.path.join(loc, p))
                           and not (p.endswith(".py") and os.path.lexists(os.path.join(loc, p + "c")))),
                          key=lambda p: (p != top + "/__init__.py", p))
            if gone:
                item = {"dist": entry["name"], "version": entry.get("version"), "top_level": top,
                        "location": loc, "files": len(rows), "missing": len(gone), "examples": gone[:3]}
                other = _imports_from(top, loc)
                if other:
                    item["imports_from"] = other
                out.append(item)
    return out


def _imports_from(top, loc):
    """Where `import top` finds a regular package or module outside `loc` (another copy later on sys.path: a
    --system-site-packages venv's broken copy leaves the import to the system's), None when it finds none, a
    namespace, or its own directory. Asked only for a name whose files are gone; a top-level find_spec imports no
    parent."""
    try:
        spec = importlib.util.find_spec(top)
    except Exception:  # a broken finder, a module that raises on lookup: nothing to say
        return None
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or not origin.startswith("/") or origin.startswith(loc.rstrip("/") + "/"):
        return None
    return origin


# -- every installed file against its RECORD digest and size (`check --deep`, snapshot rule 14) -------------

_COMPILED = (".pyc", ".pyo")
# INSTALLER of the tools that write RECORD from the bytes they put on disk (PEP 376 / 627)
WHEEL_INSTALLERS = frozenset({"pip", "uv", "poetry", "pdm", "pipenv", "hatch", "rye", "pixi", "installer",
                              "python-installer"})


def _record_rows(text, loc):
    """(path relative to `loc`, algorithm, digest, size or None) of every RECORD row with a digest whose file lies
    inside the site directory `loc`; the number of rows with a digest outside it (console scripts in bin/, headers,
    data: `../../../bin/torchrun`) is the second value. Rows without a digest (RECORD itself, INSTALLER, REQUESTED,
    direct_url.json, the .pyc pip compiles at install) and compiled files (`__pycache__`, any .pyc) are left out:
    the interpreter rewrites those."""
    rows, outside = [], 0
    for row in _stdlib("csv").reader(text.splitlines()):
        if len(row) < 2 or not row[1] or "=" not in row[1]:
            continue
        path = _relative(row[0], loc)
        if path is not None:
            path = os.path.normpath(path)  # `a/../../x` leaves the directory; `/site//` is no file in it
        if path is None or path.startswith(("../", "/")) or path in ("..", "."):
            outside += 1
            continue
        if "__pycache__/" in path or path.endswith(_COMPILED):
            continue
        algorithm, _, digest = row[1].partition("=")
        size = None
        if len(row) > 2 and row[2].strip().isdigit():
            size = int(row[2])
        rows.append((path, algorithm.lower(), digest, size))
    return rows, outside


def _binary(path):
    """Whether the path is native code: an extension module or a shared library (`_C.cpython-311-x86_64-linux-gnu.so`,
    `libtorch_cpu.so`, `libgomp-a34b3233.so.1`)."""
    name = path.rpartition("/")[2]
    return name.endswith((".so", ".pyd", ".dll", ".dylib")) or ".so." in name


def _file_hash(path, algorithm, size=None):
    """The file's digest as RECORD writes it (urlsafe base64, no padding); None when unreadable. One read for a
    file of a known `size` up to 4 MB, 1 MB chunks beyond (hashlib releases the GIL on buffers over 2 KB: threads
    overlap)."""
    hashlib, base64 = _stdlib("hashlib"), _stdlib("base64")
    try:
        h = hashlib.new(algorithm)
        with open(path, "rb") as fh:
            if size is not None and size <= (4 << 20):
                h.update(fh.read())
            else:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    except (OSError, ValueError):
        return None
    return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode("ascii")


def _also_listed(path, loc, entry, others, cache):
    """The other distributions in `loc` that list `path` among their installed files: [(name, "algorithm=digest")],
    the digest None for an egg-info install (installed-files.txt has none). Their lists are read only when a file
    differs (rare), each once."""
    out = []
    top = path.split("/", 1)[0] if "/" in path else path.split(".", 1)[0]
    for other, dist in others:
        if other is entry or other.get("location") != loc:
            continue
        key = id(other)
        if key not in cache:
            cache[key] = _installed_text(dist) or ""
        if path not in cache[key]:  # (an egg-info lists `../jwt/__init__.py`: the path is in it too)
            continue
        if (key, top) not in cache:
            cache[(key, top)] = _installed_rows(dist, top, loc)
        rows = cache[(key, top)]
        if path in rows:
            out.append((other["name"], rows[path]))
    return out


def verify_files(names, budget=60.0, workers=None):
    """Every file the RECORD of each distribution in `names` (PEP 503 names) lists inside its site directory,
    compared with what RECORD says: the size first (os.stat: a truncated or replaced file costs no read), then,
    when the size matches, the digest recomputed with RECORD's algorithm (PEP 376 / 627: urlsafe base64 without
    padding). What `pip check` (Requires-Dist only) and every import miss: a .py edited by hand in site-packages, a
    shared library truncated by a full disk or an interrupted copy, a file another install wrote over.

    Left out (why: the docstring of doctor/probes/pyenv.py): editable installs, egg-info installs (`no_digests`),
    distributions not installed from a wheel by a tool that writes RECORD from what it put on disk
    (`WHEEL_INSTALLERS`), metadata outside the directory it installs into, copies shadowed later on sys.path, rows
    without a digest, compiled files, and files outside the site directory.

    Bounded: the digests are computed by `workers` threads, smallest files first, until `budget` seconds after
    the start; what is left is counted per distribution as `unverified` (files and bytes), never guessed. A
    modified file that another distribution in the same directory also lists with other content is named with it
    (`also`): it is the other's copy (snapshot rule 11), not an edit. A missing .py whose sourceless .pyc is there
    (a bytecode-only deployment) is not missing."""
    time = _stdlib("time")
    threading = _stdlib("threading")
    start = time.monotonic()
    deadline = start + max(0.0, budget)
    wanted = set(_normalize(n) for n in names)
    pairs = _distributions()
    dists, jobs, skipped = [], [], []
    for entry, dist in pairs:
        key = _normalize(entry["name"])
        if key not in wanted:
            continue
        loc, info = entry.get("location"), entry.get("dist_info") or ""
        why = None
        if entry.get("editable"):
            why = "editable"
        elif not loc or info.rpartition("/")[0] != loc or not info.endswith((".dist-info", ".egg-info")):
            why = "metadata outside the directory it installs into"
        text = None if why else _read_dist_text(dist, "RECORD")
        installer = (entry.get("installer") or "").lower()
        if why is None and text is None:
            why = "no_digests" if info.endswith(".egg-info") else "no RECORD"
        elif why is None and installer not in WHEEL_INSTALLERS:
            # conda rewrites its build prefix inside installed files, Debian strips .so files and points certifi at
            # the system CA bundle, and leaves no INSTALLER: their RECORD is the build's, not what was installed
            why = "installed by " + installer if installer else "no INSTALLER (not installed from a wheel by pip / uv)"
        if why:
            skipped.append({"dist": entry["name"], "version": entry.get("version"), "why": why})
            continue
        rows, outside = _record_rows(text, loc)
        d = {"dist": entry["name"], "version": entry.get("version"), "location": loc, "files": len(rows),
             "outside": outside, "bytes": 0, "modified": [], "missing": [], "unverified": 0,
             "unverified_bytes": 0, "unreadable": 0, "_entry": entry}
        dists.append(d)
        for path, algorithm, digest, size in rows:
            full = loc + "/" + path
            try:
                st = os.stat(full)
            except (FileNotFoundError, NotADirectoryError):
                if not (path.endswith(".py") and os.path.lexists(full + "c")):
                    d["missing"].append(path)  # (a sourceless .pyc standing in: a bytecode-only deployment)
                continue
            except OSError:  # EACCES: a directory this user cannot search (root's umask 077): there, not compared
                d["unverified"] += 1
                d["unreadable"] += 1
                continue
            if size is not None and st.st_size != size:
                d["modified"].append({"path": path, "size": st.st_size, "expected_size": size,
                                      "_record": algorithm + "=" + digest})
                continue
            if algorithm not in _stdlib("hashlib").algorithms_available:
                d["unverified"] += 1
                continue
            jobs.append((st.st_size, full, path, algorithm, digest, size, d))
    jobs.sort(key=lambda j: j[0])
    lock = threading.Lock()
    it = iter(jobs)
    results = []

    def work():
        while True:
            with lock:
                job = next(it, None)
            if job is None:
                return
            if time.monotonic() > deadline:
                with lock:
                    results.append((job, False, None))
                continue
            got = _file_hash(job[1], job[3], job[0])
            with lock:
                results.append((job, True, got))

    n = workers or min(8, (os.cpu_count() or 1) + 2)
    threads = [threading.Thread(target=work) for _ in range(max(1, min(n, len(jobs))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (size, _full, path, algorithm, digest, expected, d), done, got in results:
        if not done:
            d["unverified"] += 1
            d["unverified_bytes"] += size
            continue
        if got is None:  # unreadable (EACCES): not hashed
            d["unverified"] += 1
            d["unreadable"] += 1
            continue
        d["bytes"] += size
        if got != digest:
            d["modified"].append({"path": path, "size": size, "expected_size": expected,
                                      "_record": algorithm + "=" + digest})
    cache = {}
    out = []
    for d in dists:
        entry = d.pop("_entry")
        mods = d.pop("modified")
        for m in mods:
            # another RECORD here listing the path with other content: that distribution's copy, written over this
            # one (rule 11 says so); with the same digest, the file is neither's
            own = m.pop("_record")
            m["also"] = [name for name, digest in _also_listed(m["path"], d["location"], entry, pairs, cache)
                         if digest != own]
        # the examples: the distribution's own changed files, shared libraries first, before another's copies
        for m in mods:
            m["kind"] = "binary" if _binary(m["path"]) else "source" if m["path"].endswith(".py") else "file"
        mods.sort(key=lambda m: (bool(m["also"]), m["kind"] != "binary", m["path"]))
        for m in mods:
            if not m["also"]:
                del m["also"]
        missing = sorted(d.pop("missing"))
        d["modified"] = len(mods)
        d["shared"] = sum(1 for m in mods if "also" in m)
        d["binary"] = sum(1 for m in mods if "also" not in m and m["kind"] == "binary")
        d["missing"] = len(missing)
        d["examples"] = mods[:5]
        d["missing_examples"] = missing[:3]
        out.append(d)
    return {"seconds": round(time.monotonic() - start, 3), "budget": budget, "dists": out, "skipped": skipped}


# -- editable finders (PEP 660, setuptools' __editable___<name>_finder.py) -------------------------------


def editable_finders(path_entries):
    found = {}
    for entry in path_entries:
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for fname in names:
            if not (fname.startswith("__editable__") and fname.endswith("_finder.py")):
                continue
            path = os.path.join(entry, fname)
            text = _read(path)
            if not text:
                continue
            mapping = literal_assignments(text).get("MAPPING")
            if isinstance(mapping, dict):
                for mod, src in mapping.items():
                    if isinstance(mod, str) and isinstance(src, str):
                        found.setdefault(mod, []).append({"path": src, "finder": path})
    return found


def literal_assignments(text):
    """Top-level `NAME = <literal>` / `NAME: T = <literal>` of a file, read as text, never imported."""
    ast = _stdlib("ast")
    out = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return out
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            lit = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError):
            continue
        for t in targets:
            if isinstance(t, ast.Name):
                out[t.id] = lit
    return out


def simple_assignments(text):
    """The scalar ones (str, number, bool, None) of a generated file such as torch/version.py or
    vllm_ascend/_build_info.py."""
    return {k: v for k, v in literal_assignments(text).items()
            if isinstance(v, (str, int, float, bool, type(None)))}


# -- modules ----------------------------------------------------------------------------------------------


def _copies_on_path(name, path_entries, cwd=None):
    """Every place `name` could come from along sys.path: package dirs, namespace portions, modules; in `cwd`
    (_cwd_only) a package dir only: no import loads a portion there (see doctor/probes/pyenv.py)."""
    found = []
    suffixes = list(importlib.machinery.all_suffixes())
    for entry in path_entries:
        cand = os.path.join(entry, name)
        try:
            if os.path.isdir(cand):
                if os.path.isfile(os.path.join(cand, "__init__.py")) or (entry != cwd and _nonempty(cand)):
                    found.append(cand)
                continue
            for suf in suffixes:  # includes the full extension-module suffixes (.cpython-311-...so)
                if os.path.isfile(cand + suf):
                    found.append(cand + suf)
                    break
        except OSError:
            continue
    return found


def _nonempty(d):
    try:
        for fname in os.listdir(d):
            if fname.endswith(".py") or os.path.isdir(os.path.join(d, fname)):
                return True
    except OSError:
        return False
    return False


def _spec_origins(spec):
    locs = spec.submodule_search_locations
    if locs is not None:
        return [os.path.abspath(p) for p in list(locs)], ("namespace" if spec.origin in (None, "namespace") else "package")
    if spec.origin and spec.origin not in ("built-in", "frozen"):
        return [os.path.abspath(spec.origin)], "module"
    return [], spec.origin or "unknown"


def _real(p):
    try:
        return os.path.realpath(p)
    except OSError:
        return p


_VERSION_RE = re.compile(
    r"""^(?:__version__|version|VERSION)\s*(?::\s*str\s*)?=\s*(?:(?:__version__|version)\s*=\s*)?['"]([^'"]+)['"]""",
    re.M,
)


def file_version(pkg_dir):
    for fname in VERSION_FILES:
        text = _read(os.path.join(pkg_dir, fname))
        if text:
            m = _VERSION_RE.search(text)
            if m:
                return m.group(1)
    text = _read(os.path.join(pkg_dir, "version", "version"))  # verl keeps its version in a data file
    if text and text.strip() and len(text.strip()) < 64:
        return text.strip()
    return None


def megatron_version(copy):
    """megatron/core/package_info.py: MAJOR, MINOR, PATCH, PRE_RELEASE as text, never imported."""
    text = _read(os.path.join(copy, "core", "package_info.py"))
    if not text:
        return None
    vals = simple_assignments(text)
    if all(k in vals for k in ("MAJOR", "MINOR", "PATCH")):
        v = "%s.%s.%s" % (vals["MAJOR"], vals["MINOR"], vals["PATCH"])
        pre = vals.get("PRE_RELEASE")
        return v + (str(pre) if pre else "")
    v = vals.get("__version__")
    return v if isinstance(v, str) else None


def _cwd_only():
    """The working directory when only `-c`'s '' entry puts it on sys.path, else None."""
    return _cwd if "" in sys.path and _cwd not in sys.path else None


def module_facts(name, path_entries, finders, cwd=None):
    preimported = name in sys.modules
    try:
        spec = importlib.util.find_spec(name)
    except Exception as e:  # ImportError, ValueError, a broken meta-path finder: must not stop the probe
        _err("find_spec(%r): %s: %s" % (name, type(e).__name__, e))
        spec = None
    if spec is None:
        return None
    origins, kind = _spec_origins(spec)
    if kind == "namespace":  # setuptools' editable finder: a placeholder portion for the dirs its MAPPING names
        origins = list(dict((_real(o), o) for o in [o for o in origins if not o.endswith("__path_hook__")] + [
            os.path.dirname(f["path"]) for k in finders if k.rpartition(".")[0] == name for f in finders[k]]).values())
    seen = set(_real(o) for o in origins)
    others = []
    for cand in _copies_on_path(name, path_entries, cwd) + [f["path"] for f in finders.get(name, [])]:
        r = _real(cand)
        if r not in seen:
            seen.add(r)
            others.append(os.path.abspath(cand))
    if kind == "namespace" and cwd and origins and not others and all(os.path.dirname(o) == cwd for o in origins):
        return None  # only directories of the cwd (/tmp/ray, a checkout's root): nothing installed
    facts = {"origins": origins + others, "kind": kind}
    if others:
        facts["resolved"] = origins
    if preimported:
        facts["preimported"] = True
    pkg_dir = origins[0] if origins and kind in ("package", "namespace") else None
    if name == "megatron":
        copies = [{"path": o, "version": megatron_version(o)} for o in facts["origins"] if os.path.isdir(o)]
        facts["copies"] = copies
        facts["version"] = next((c["version"] for c in copies if c["version"]), None)
    elif pkg_dir:
        facts["version"] = file_version(pkg_dir)
    else:
        facts["version"] = None
    if pkg_dir and name in BUILD_FILES:
        text = _read(os.path.join(pkg_dir, BUILD_FILES[name]))
        if text is not None:
            build = {}
            for k, v in simple_assignments(text).items():
                key = k.strip("_")
                if key and key != "version":
                    build[key] = v
            facts["build"] = build
    if name == "mindspeed" and pkg_dir:
        text = _read(os.path.join(pkg_dir, "megatron_adaptor.py"))
        if text is not None:
            facts["features"] = {"repatch": bool(re.search(r"^\s*def\s+repatch\s*\(", text, re.M))}
        text = _read(os.path.join(pkg_dir, "__init__.py"))  # core_r0.17+: `import megatron_adaptor` (MegatronAdaptor)
        if text is not None:
            facts.setdefault("features", {})["megatron_adaptor"] = bool(re.search(r"^import megatron_adaptor\b", text, re.M))
    return facts


# -- main -------------------------------------------------------------------------------------------------


def _guarded(out, key, what, fn, *args):
    """out[key] = fn(*args) (`out` None: a fact that writes its own keys); when it raises, the failure is recorded
    and the fact left out (unknown), never the whole probe."""
    try:
        got = fn(*args)
        if out is not None:
            out[key] = got
    except Exception as e:
        _err("%s: %s: %s" % (what, type(e).__name__, e))


def collect(modules=None, with_files=False):
    py = python_facts(runtime=modules != [])  # the installer (--dists-only) needs no C++ runtime facts
    path_entries = []
    for p in py["sys_path"]:
        if p not in path_entries and os.path.isdir(p):
            path_entries.append(p)
    finders = editable_finders(path_entries)
    mods = {}
    cwd = _cwd_only()
    for name in MODULES if modules is None else modules:  # one odd module must not lose the others
        _guarded(mods, name, "module " + name, module_facts, name, path_entries, finders, cwd)
    shadowed = []  # later copies of a name: their files can clash with another distribution's in their directory
    pairs = _distributions(with_files, shadowed)
    _guarded(None, None, "installer facts", installer_facts, py, pairs)
    if modules != []:  # the installer (--dists-only) needs only the installed set
        read = {}  # RECORD rows shared_files parsed, which missing_files need not read again
        _guarded(py, "shared_files", "shared files", shared_files, pairs + shadowed, read)
        _guarded(py, "missing_files", "missing files", missing_files, pairs, read)
    return {
        "probe": "doctor.target-probe/1",
        "python": py,
        "distributions": [entry for entry, _ in pairs],
        "modules": mods,
        "editable_finders": finders,
        "errors": _ERRORS,
    }


def main(argv=None):
    """`--dists-only` skips the module facts (the installer needs only the installed set); `--files` adds
    each distribution's RECORD paths (what the installer's journal keeps); `--verify-files BUDGET NAME...` does
    nothing but `verify_files` (`check --deep`)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if args[:1] == ["--verify-files"]:
            result = {"probe": "doctor.target-probe/1",
                      "verify_files": verify_files(args[2:], budget=float(args[1])), "errors": _ERRORS}
        else:
            result = collect(modules=[] if "--dists-only" in args else None, with_files="--files" in args)
    except Exception as e:
        result = {"probe": "doctor.target-probe/1", "fatal": "%s: %s" % (type(e).__name__, e), "errors": _ERRORS}
    sys.stdout.write("\n" + BEGIN + "\n" + json.dumps(result, default=str) + "\n" + END + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    # At exit CPython runs full collections over the heap (even with gc disabled), which find nothing here: ~5 % of
    # the probe's instructions. Frozen objects are left to the OS with the process (as `doctor` does on exit).
    if hasattr(gc, "freeze"):
        gc.freeze()
