"""Facts about a Python environment, gathered *inside* that environment's interpreter.

Run as `<target python> -` with this file on stdin, from the user's working directory and WITHOUT -I, so
sys.path is exactly what the user's `python` sees (a source tree in the cwd that shadows an installed
package is a real failure the doctor must see). Prints one JSON document between two marker lines.

Rules this script keeps (DESIGN principle 2; shared/schemas/snapshot.md "modules"):
- standard library only, and valid Python 3.8 syntax (a 3.9 training env can be diagnosed) — the test
  suite checks this with ast.parse(feature_version=(3, 8));
- never imports torch, torch_npu, vllm, megatron, mindspeed or any probed package: only top-level
  importlib.util.find_spec (which imports no parent for a top-level name), file reads and `git`;
- self-contained: the Ray cluster collector ships it to nodes as is.
"""

import sys

BEGIN = "@@DOCTOR-TARGET-PROBE-BEGIN@@"
END = "@@DOCTOR-TARGET-PROBE-END@@"

MODULES = [
    "torch", "torch_npu", "torchvision", "vllm", "vllm_ascend", "megatron", "mindspeed", "mbridge",
    "transformer_engine", "triton", "triton_ascend", "verl", "transformers", "ray", "numpy",
]
VERSION_FILES = ["version.py", "_version.py", "__init__.py"]
BUILD_FILES = {"torch": "version.py", "torch_npu": "version.py", "vllm_ascend": "_build_info.py"}
MAX_READ = 256 * 1024
GIT_TIMEOUT = 5.0

# Import the stdlib with the cwd off sys.path: a `json.py` or `re.py` in the user's directory must not
# break the probe (it would break the user's own imports, but the probe has to report, not crash).
_saved_path = list(sys.path)
try:
    import os

    _cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != _cwd]
    import importlib.machinery
    import importlib.util
    import json
    import re
finally:
    sys.path[:] = _saved_path


def _stdlib(name):
    """Import a standard-library module the first time it is needed, with the cwd off sys.path as above.
    `importlib.metadata` (~60 ms with email, zipfile, csv...), `subprocess`, `ast` and `zlib` are only
    needed on some machines; importing them up front was most of this probe's time."""
    saved = list(sys.path)
    try:
        sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != _cwd]
        return importlib.import_module(name)
    finally:
        sys.path[:] = saved


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


def python_facts():
    """What `platform.python_version()` / `python_implementation()` say, without importing `platform`."""
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
    return {
        "version": sys.version.split()[0],
        "executable": sys.executable,
        "implementation": _IMPLEMENTATIONS.get(sys.implementation.name, sys.implementation.name),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "site_packages": site_dirs,
        "sys_path": [os.path.abspath(p) if p else os.getcwd() for p in sys.path],
        "cwd": os.getcwd(),
    }


# -- distributions ----------------------------------------------------------------------------------------


def _dist_location(dist):
    try:
        return os.path.abspath(str(dist.locate_file("")))
    except Exception:
        return None


class _DistDir(object):
    """One `*.dist-info` / `*.egg-info` (a directory, or an old egg-info file) found by `_scan_dists`, read
    with plain file reads. It answers what `distributions()` asks of an importlib.metadata distribution,
    from the same files: `read_text` (None when unreadable) and `locate_file("")` (the directory holding it)."""

    def __init__(self, path):
        self.path = path

    def read_text(self, fname):
        target = os.path.join(self.path, fname) if fname else self.path
        try:
            with open(target, "rb") as fh:
                return fh.read(MAX_READ).decode("utf-8", "replace")
        except OSError:
            return None

    def read_header(self, fname):
        """The header block of METADATA / PKG-INFO only (up to the first blank line): a wheel's METADATA
        carries its whole README after it, often 100 KB that nothing here needs."""
        target = os.path.join(self.path, fname) if fname else self.path
        try:
            with open(target, "rb") as fh:
                data = fh.read(8192)
                while b"\n\n" not in data and b"\n\r\n" not in data and len(data) < MAX_READ:
                    more = fh.read(65536)
                    if not more:
                        break
                    data += more
        except OSError:
            return None
        return data.decode("utf-8", "replace")

    def locate_file(self, path):
        return os.path.join(os.path.dirname(self.path), path)

    def _parsed(self):  # only for a header without a Name: the real parser decides
        return _stdlib("importlib.metadata").PathDistribution(_stdlib("pathlib").Path(self.path))

    @property
    def metadata(self):
        return self._parsed().metadata

    @property
    def version(self):
        return self._parsed().version


def _scan_dists(path_entries, meta_path):
    """Every `*.dist-info` / `*.egg-info` along `path_entries`, in the order importlib.metadata finds them
    (path entry by path entry, `os.listdir` order inside one), or None when only importlib.metadata
    itself can answer: a zip or an `.egg` on sys.path, or a finder on sys.meta_path other than the
    standard PathFinder that can find distributions. Skipping the import of importlib.metadata (~60 ms)
    is most of this probe's speed; tests check both ways give the same answer."""
    for finder in meta_path:
        if getattr(finder, "find_distributions", None) is not None and finder is not importlib.machinery.PathFinder:
            return None
    found = []
    for entry in path_entries:
        root = entry or "."
        if os.path.basename(root.rstrip("/\\")).lower().endswith(".egg"):
            return None
        try:
            names = os.listdir(root)
        except NotADirectoryError:
            return None  # a zip file: importlib.metadata reads inside it
        except OSError:
            continue  # missing or unreadable: importlib.metadata finds nothing there either
        for fname in names:
            if fname.lower().endswith((".dist-info", ".egg-info")):
                found.append(_DistDir(os.path.join(root, fname)))
    return found


def _all_dists():
    """(distributions, error): the fast scan, or importlib.metadata when the scan cannot be sure."""
    dists = _scan_dists(list(sys.path), list(sys.meta_path))
    if dists is not None:
        return dists, None
    try:
        md = _stdlib("importlib.metadata")
    except ImportError:  # Python < 3.8: report, do not crash
        return [], "importlib.metadata is not available (Python < 3.8)"
    try:
        return list(md.distributions()), None
    except Exception as e:
        return [], "importlib.metadata.distributions: %s: %s" % (type(e).__name__, e)


def _name_version(dist):
    """Name and Version from the METADATA header, read as text: the email parser behind
    `dist.metadata` costs ~0.5 ms per distribution, a quarter of the probe's time on a big env."""
    text = None
    read = getattr(dist, "read_header", None) or dist.read_text
    for fname in ("METADATA", "PKG-INFO"):
        try:
            text = read(fname)
        except Exception:
            text = None
        if text:
            break
    name = version = None
    text = text or ""
    ends = [i for i in (text.find("\n\n"), text.find("\n\r\n")) if i >= 0]
    for line in (text[:min(ends)] if ends else text).splitlines():
        if not line.strip():
            break
        if name is None and line[:5].lower() == "name:":
            name = line[5:].strip()
        elif version is None and line[:8].lower() == "version:":
            version = line[8:].strip()
    if name is None:
        try:
            name = dist.metadata["Name"]
            version = dist.version
        except Exception:
            pass
    return name, version


def distributions():
    """Every installed distribution, in sys.path order; a later copy of the same name is 'shadowed'."""
    out = []
    by_key = {}
    dists, error = _all_dists()
    if error:
        _err(error)
    for dist in dists:
        name, version = _name_version(dist)
        location = _dist_location(dist)
        if not name:
            _err("a distribution without a Name in %s" % location)
            continue
        entry = {"name": name, "version": version, "location": location}
        raw = None
        try:
            raw = dist.read_text("direct_url.json")
        except Exception:
            raw = None
        if raw:
            try:
                du = json.loads(raw)
                entry["url"] = du.get("url")
                entry["editable"] = bool((du.get("dir_info") or {}).get("editable", False))
                vcs = du.get("vcs_info") or {}
                if vcs.get("commit_id"):
                    entry["commit"] = vcs.get("commit_id")
                if vcs.get("requested_revision"):
                    entry["requested_revision"] = vcs.get("requested_revision")
                if vcs.get("vcs"):
                    entry["vcs"] = vcs.get("vcs")
            except (ValueError, AttributeError) as e:
                _err("%s: direct_url.json is not valid: %s" % (name, e))
        else:
            entry["editable"] = False
        try:
            installer = dist.read_text("INSTALLER")
            if installer:
                entry["installer"] = installer.strip()
        except Exception:
            pass
        key = _normalize(name)
        if key in by_key:
            by_key[key].setdefault("shadowed", []).append({"version": version, "location": location})
            continue
        by_key[key] = entry
        out.append(entry)
    return out


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
            mapping = _literal_assignment(text, "MAPPING")
            if isinstance(mapping, dict):
                for mod, src in mapping.items():
                    if isinstance(mod, str) and isinstance(src, str):
                        found.setdefault(mod, []).append({"path": src, "finder": path})
    return found


def _literal_assignment(text, name):
    ast = _stdlib("ast")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and t.id == name:
                try:
                    return ast.literal_eval(node.value)
                except (ValueError, SyntaxError, TypeError):
                    return None
    return None


def simple_assignments(text):
    """Top-level `NAME = <literal>` / `NAME: T = <literal>` of a generated file (torch/version.py,
    vllm_ascend/_build_info.py), read as text."""
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
        if not isinstance(lit, (str, int, float, bool, type(None))):
            continue
        for t in targets:
            if isinstance(t, ast.Name):
                out[t.id] = lit
    return out


# -- modules ----------------------------------------------------------------------------------------------


def _copies_on_path(name, path_entries):
    """Every place `name` could come from along sys.path: package dirs, namespace portions, modules."""
    found = []
    suffixes = list(importlib.machinery.all_suffixes())
    for entry in path_entries:
        cand = os.path.join(entry, name)
        try:
            if os.path.isdir(cand):
                if os.path.isfile(os.path.join(cand, "__init__.py")) or _nonempty(cand):
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


def module_facts(name, path_entries, finders):
    preimported = name in sys.modules
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError) as e:
        _err("find_spec(%r): %s: %s" % (name, type(e).__name__, e))
        spec = None
    except Exception as e:  # a broken meta-path finder must not stop the probe
        _err("find_spec(%r): %s: %s" % (name, type(e).__name__, e))
        spec = None
    if spec is None:
        return None
    origins, kind = _spec_origins(spec)
    seen = set(_real(o) for o in origins)
    others = []
    for cand in _copies_on_path(name, path_entries) + [f["path"] for f in finders.get(name, [])]:
        r = _real(cand)
        if r not in seen:
            seen.add(r)
            others.append(os.path.abspath(cand))
    facts = {"origins": origins + others, "kind": kind}
    if others:
        facts["resolved"] = origins
    if preimported:
        facts["preimported"] = True
    pkg_dir = origins[0] if origins and kind in ("package", "namespace") else None
    if name == "megatron":
        copies = []
        for o in facts["origins"]:
            if os.path.isdir(o):
                copies.append({"path": o, "version": megatron_version(o)})
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
    if pkg_dir:
        git = git_facts(pkg_dir)
        if git is not None:
            facts["git"] = git
    return facts


# -- git --------------------------------------------------------------------------------------------------


def _find_repo(pkg_dir):
    parts = os.path.abspath(pkg_dir).split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return None
    d = os.path.abspath(pkg_dir)
    for _ in range(4):
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def _git_dir(repo):
    dot = os.path.join(repo, ".git")
    if os.path.isdir(dot):
        return dot
    text = _read(dot) or ""
    m = re.match(r"gitdir:\s*(.+)", text.strip())
    if m:
        g = m.group(1).strip()
        return g if os.path.isabs(g) else os.path.normpath(os.path.join(repo, g))
    return None


def _packed_refs(common):
    refs, peeled, last = {}, {}, None
    text = _read(os.path.join(common, "packed-refs")) or ""
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("^") and last:
            peeled[last] = line[1:].strip()
            continue
        parts = line.split()
        if len(parts) == 2:
            refs[parts[1]] = parts[0]
            last = parts[1]
    return refs, peeled


def _peel_loose(common, sha):
    """An annotated tag's ref points at a tag object: read the loose object to find the commit."""
    raw = None
    zlib = _stdlib("zlib")
    try:
        with open(os.path.join(common, "objects", sha[:2], sha[2:]), "rb") as fh:
            raw = zlib.decompress(fh.read(1 << 16))
    except (OSError, zlib.error):
        return sha
    if raw.startswith(b"tag "):
        m = re.search(rb"\x00object ([0-9a-f]{40})", raw)
        if m:
            return m.group(1).decode()
    return sha


_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def git_facts(pkg_dir):
    repo = _find_repo(pkg_dir)
    if repo is None:
        return None
    gd = _git_dir(repo)
    if gd is None:
        return None
    common = gd
    cd = _read(os.path.join(gd, "commondir"))
    if cd:
        common = os.path.normpath(os.path.join(gd, cd.strip()))
    head = (_read(os.path.join(gd, "HEAD")) or "").strip()
    refs, peeled = _packed_refs(common)
    branch = commit = None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        if ref.startswith("refs/heads/"):
            branch = ref[len("refs/heads/"):]
        loose = _read(os.path.join(gd, ref)) or _read(os.path.join(common, ref))
        commit = loose.strip() if loose else refs.get(ref)
    elif _SHA.match(head):
        commit = head
    if commit and not _SHA.match(commit):
        commit = None
    tag = None
    if commit:
        tags_dir = os.path.join(common, "refs", "tags")
        for dirpath, _dirs, files in os.walk(tags_dir):
            for fname in sorted(files):
                sha = (_read(os.path.join(dirpath, fname)) or "").strip()
                if sha and (sha == commit or _peel_loose(common, sha) == commit):
                    tag = os.path.relpath(os.path.join(dirpath, fname), tags_dir)
                    break
            if tag:
                break
        if tag is None:
            for ref, sha in sorted(refs.items()):
                if ref.startswith("refs/tags/") and (sha == commit or peeled.get(ref) == commit):
                    tag = ref[len("refs/tags/"):]
                    break
    return {"commit": commit, "branch": branch, "tag": tag, "dirty": _git_dirty(repo), "root": repo}


def _git_dirty(repo):
    subprocess = _stdlib("subprocess")
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["LC_ALL"] = "C"
    try:
        proc = subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT, env=env,
        )
    except (OSError, subprocess.SubprocessError) as e:
        _err("git status in %s: %s" % (repo, e))
        return None
    if proc.returncode != 0:
        _err("git status in %s: %s" % (repo, proc.stderr.decode("utf-8", "replace").strip()[:200]))
        return None
    return bool(proc.stdout.strip())


# -- main -------------------------------------------------------------------------------------------------


def collect(modules=None):
    py = python_facts()
    path_entries = []
    for p in py["sys_path"]:
        if p not in path_entries and os.path.isdir(p):
            path_entries.append(p)
    finders = editable_finders(path_entries)
    mods = {}
    for name in modules or MODULES:
        try:
            mods[name] = module_facts(name, path_entries, finders)
        except Exception as e:  # one odd module must not lose the others
            _err("module %s: %s: %s" % (name, type(e).__name__, e))
    return {
        "probe": "doctor.target-probe/1",
        "python": py,
        "distributions": distributions(),
        "modules": mods,
        "editable_finders": finders,
        "errors": _ERRORS,
    }


def main():
    try:
        result = collect()
    except Exception as e:
        result = {"probe": "doctor.target-probe/1", "fatal": "%s: %s" % (type(e).__name__, e), "errors": _ERRORS}
    sys.stdout.write("\n" + BEGIN + "\n" + json.dumps(result, default=str) + "\n" + END + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
