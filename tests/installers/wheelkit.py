"""Build real installable artifacts quickly, without a build backend: wheels (a zip with dist-info METADATA,
WHEEL and RECORD), git source repositories with an in-tree PEP 517/660 backend (no build requirements, so
pip/uv build isolation needs no index), bare repositories with the real upstream ref names, and cheap venvs.

Used by tests/installers/*, tests/cli/test_install.py and bench/install_speed.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def _norm(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "_", name).lower()


def _record_line(arc: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def make_wheel(dest: Path | str, name: str, version: str, *, requires: Iterable[str] = (),
               files: Mapping[str, str | bytes] | None = None, tag: str = "py3-none-any",
               requires_python: str | None = None, broken: bool = False, extras: Iterable[str] = ()) -> Path:
    """Write `<name>-<version>-<tag>.whl` into dest and return its path.

    `files` maps archive paths to contents (default: one top-level module named after the project).
    `broken=True` adds a file and a directory of the same name, so installing fails midway with ENOTDIR
    after some files were already written (what a disk-full or a bad wheel does in real life). `extras`: its
    Provides-Extra lines (pip installs a requested extra's requirements only when the wheel provides it)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    dist = _norm(name)
    di = f"{dist}-{version}.dist-info"
    if files is None:
        files = {f"{dist}/__init__.py": f"__version__ = {version!r}\n"}
    entries: list[tuple[str, bytes]] = [(k, v.encode() if isinstance(v, str) else v) for k, v in files.items()]
    if broken:
        entries += [(f"{dist}/clash", b"file\n"), (f"{dist}/clash/inner.py", b"x = 1\n")]
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        meta.append(f"Requires-Python: {requires_python}")
    meta += [f"Provides-Extra: {e}" for e in extras]
    meta += [f"Requires-Dist: {r}" for r in requires]
    entries.append((f"{di}/METADATA", ("\n".join(meta) + "\n").encode()))
    entries.append((f"{di}/WHEEL", f"Wheel-Version: 1.0\nGenerator: wheelkit\nRoot-Is-Purelib: true\nTag: {tag}\n".encode()))
    record = [_record_line(a, d) for a, d in entries] + [f"{di}/RECORD,,"]
    entries.append((f"{di}/RECORD", ("\n".join(record) + "\n").encode()))
    path = dest / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, data in entries:
            zf.writestr(arc, data)
    return path


# -- source repositories with an in-tree backend ------------------------------------------------------------

BACKEND = r'''
"""In-tree PEP 517/660 backend for test repositories: reads fake.json, needs no build requirements."""
import base64, hashlib, json, os, pathlib, re, zipfile

ROOT = pathlib.Path(__file__).resolve().parent


def _conf():
    c = json.loads((ROOT / "fake.json").read_text())
    v = c["version"]
    dev = os.environ.get(c.get("device_env", ""), "") if c.get("device_env") else ""
    if dev:
        v = v + "+" + dev  # what vLLM's setup.py does with VLLM_TARGET_DEVICE=empty
    return c, v


def _rec(arc, data):
    d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, d, len(data))


def _write(wheel_directory, entries, c, v):
    dist = re.sub(r"[-_.]+", "_", c["name"]).lower()
    di = "%s-%s.dist-info" % (dist, v)
    meta = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (c["name"], v)
    meta += "".join("Requires-Dist: %s\n" % r for r in c.get("requires", []))
    entries = list(entries) + [(di + "/METADATA", meta.encode()),
                               (di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: fake\nRoot-Is-Purelib: true\nTag: py3-none-any\n")]
    rec = "\n".join([_rec(a, d) for a, d in entries] + [di + "/RECORD,,"]) + "\n"
    entries.append((di + "/RECORD", rec.encode()))
    name = "%s-%s-py3-none-any.whl" % (dist, v)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for a, d in entries:
            zf.writestr(a, d)
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    c, v = _conf()
    dist = re.sub(r"[-_.]+", "_", c["name"]).lower()
    if c.get("egg_info"):  # what setuptools leaves in the source tree it builds from
        info = ROOT / (dist + ".egg-info")
        info.mkdir(exist_ok=True)
        (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (c["name"], v))
    return _write(wheel_directory, [("__editable__.%s.pth" % dist, (str(ROOT) + "\n").encode())], c, v)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    c, v = _conf()
    entries = []
    for pkg in c["packages"]:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            entries.append((p.relative_to(ROOT).as_posix(), p.read_bytes()))
    return _write(wheel_directory, entries, c, v)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []
'''


def git(*args: str, cwd: Path | str | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    cp = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if cp.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {cp.stderr}")
    return cp.stdout.strip()


def make_source_repo(bare: Path | str, *, dist: str, packages: Mapping[str, str], refs: Iterable[tuple[str, str, str]],
                     requires: Iterable[str] = (), device_env: str | None = None,
                     egg_info: bool = False) -> dict[str, str]:
    """Create a bare repository at `bare` with one commit per ref.

    `packages` maps a file path (e.g. "megatron/core/__init__.py") to its content; `refs` is a list of
    (kind, name, version) with kind "tag" or "branch"; each gets its own commit whose fake.json says that
    version. Returns {ref name: full commit sha}. The default branch is "main". `egg_info`: an editable build
    writes `<dist>.egg-info/` into the work tree, as setuptools does."""
    bare = Path(bare)
    work = bare.with_name(bare.name + ".work")
    work.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=work)
    (work / "_fake_backend.py").write_text(BACKEND)
    build = '[build-system]\nrequires = []\nbuild-backend = "_fake_backend"\nbackend-path = ["."]\n'
    (work / "pyproject.toml").write_text(build)
    for path, content in packages.items():
        p = work / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    tops = sorted({Path(p).parts[0] for p in packages})
    shas: dict[str, str] = {}
    for kind, name, version in refs:
        conf = {"name": dist, "version": version, "packages": tops, "requires": list(requires)}
        if device_env:
            conf["device_env"] = device_env
        if egg_info:
            conf["egg_info"] = True
        (work / "fake.json").write_text(json.dumps(conf))
        # the static metadata a real project declares its dependencies in, as the backend builds them
        (work / "pyproject.toml").write_text(build + f"\n[project]\nname = {json.dumps(dist)}\nversion = "
                                             f"{json.dumps(version)}\ndependencies = {json.dumps(list(requires))}\n")
        git("add", "-A", cwd=work)
        git("commit", "-q", "--allow-empty", "-m", f"{name}", cwd=work)
        sha = git("rev-parse", "HEAD", cwd=work)
        if kind == "tag":
            git("tag", name, cwd=work)
        elif name != "main":
            git("branch", "-f", name, cwd=work)
        shas[name] = sha
    git("clone", "-q", "--bare", str(work), str(bare))
    return shas


def make_sdist(dest: Path | str, name: str, version: str, *, build_requires: Iterable[str] = (),
               requires: Iterable[str] = ()) -> Path:
    """`<name>-<version>.tar.gz`: an sdist with the in-tree backend and these [build-system].requires (the shape
    of arctic-inference 0.1.1, which PyPI has only as an sdist)."""
    import io
    import tarfile

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    dist = _norm(name)
    top = f"{dist}-{version}"
    reqs = ", ".join(json.dumps(r) for r in build_requires)
    files = {
        "_fake_backend.py": BACKEND,
        "pyproject.toml": f'[build-system]\nrequires = [{reqs}]\nbuild-backend = "_fake_backend"\nbackend-path = ["."]\n',
        "fake.json": json.dumps({"name": name, "version": version, "packages": [dist], "requires": list(requires)}),
        f"{dist}/__init__.py": f"__version__ = {version!r}\n",
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    }
    path = dest / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def make_venv(path: Path | str) -> Path:
    """A venv without pip (fast: ~50 ms); returns its python. pip runs with --python, uv with --python."""
    path = Path(path)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=60)
    return path / "bin" / "python"


def freeze(python: Path | str) -> list[str]:
    """What `pip freeze` shows, computed in the target with importlib.metadata (the target has no pip)."""
    code = ("import importlib.metadata as m, json, sys;"
            "print(json.dumps(sorted(d.metadata['Name'].lower() + '==' + d.version for d in m.distributions())))")
    cp = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(cp.stdout)


def hermetic_env(tmp: Path | str, **extra: str) -> dict[str, str]:
    """Environment for running pip/uv/doctor in tests: no host pip/uv configuration, private uv cache,
    no proxy to the (unreachable) network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update({"PIP_CONFIG_FILE": os.devnull, "UV_NO_CONFIG": "1", "UV_CACHE_DIR": str(Path(tmp) / "uv-cache"),
                "PIP_NO_CACHE_DIR": "1", "UV_PYTHON_DOWNLOADS": "never", **extra})
    return env


def make_simple_index(wheels: Path | str, out: Path | str) -> str:
    """A PEP 503 'simple' index over a directory of wheels; returns its file:// URL (pip and uv read it)."""
    import re as _re
    from collections import defaultdict

    wheels, out = Path(wheels), Path(out)
    by: dict[str, list[Path]] = defaultdict(list)
    for w in sorted([*wheels.glob("*.whl"), *wheels.glob("*.tar.gz")]):
        by[_re.sub(r"[-_.]+", "-", w.name.split("-")[0]).lower()].append(w)
    out.mkdir(parents=True, exist_ok=True)
    links = []
    for name, files in by.items():
        (out / name).mkdir(exist_ok=True)
        body = "".join(f'<a href="{f.resolve().as_uri()}">{f.name}</a>\n' for f in files)
        (out / name / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{body}</body></html>\n")
        links.append(f'<a href="{name}/">{name}</a>')
    (out / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    return out.resolve().as_uri()


class Hang:
    """A TCP server that accepts and never answers: an index that hangs mid-step."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/simple"
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.sock.close()


def wheel_of_installed(name: str, dest: Path | str | None = None, *, path: Sequence[str] | None = None) -> Path:
    """Repack a distribution installed in the doctor's own environment (or in `path`, e.g. setuptools' vendored
    `wheel`) into a wheel (its RECORD lists every file with its hash), so a test's isolated build environment gets
    a real build backend offline; returns the folder."""
    import importlib.metadata
    import tempfile
    import zipfile

    found = [d for d in importlib.metadata.distributions(**({"path": list(path)} if path else {}))
             if _norm(d.metadata["Name"]) == _norm(name)]
    if not found:
        raise LookupError(f"{name} is not installed" + (f" in {path}" if path else ""))
    dist = found[0]
    out = Path(dest or tempfile.mkdtemp(prefix="wheel-of-installed-"))
    out.mkdir(parents=True, exist_ok=True)
    whl = out / f"{_norm(name).replace('-', '_')}-{dist.version}-py3-none-any.whl"
    if not whl.exists():
        with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
            for f in dist.files or ():
                p = Path(str(f.locate()))
                if "__pycache__" in f.parts or ".." in f.parts or not p.is_file():
                    continue
                z.write(p, str(f))
    return out
