"""The real upstream world, made local: git repositories for every source the plan clones, and the one index this
machine cannot reach replaced by stand-ins, said exactly.

- Sources with a mirror in $DOCTOR_REALWORLD_MIRRORS (what `git clone --mirror URL DIR/<owner>+<name>` makes, for
  verl-project/verl, vllm-project/vllm-ascend, NVIDIA/Megatron-LM, Ascend/MindSpeed, hicann/catlass,
  Ascend/TransferQueue, google/googletest) are served from a bare clone of that mirror: the real history, tags, submodule gitlinks and commits, so the profile's pinned commits are verified as
  they are for a user.
- Sources without one (vllm: its repository is larger than a snapshot may be) come from their real PyPI sdist, made
  into a local repository with one commit tagged with the profile's ref; its commit cannot be upstream's, so the
  run chooses that ref with `--git-ref` (listed in `Upstream.git_refs`).
- Stand-ins (`Upstream.substituted`): wheels the profile needs from an index that does not answer here (the PyTorch
  CPU index: torch/torchvision/torchaudio `+cpu`; the triton-ascend index where PyPI lacks the version), served
  from a local PEP 503 index. Each carries the real wheel's name, version and Requires-Dist (PEP 658 metadata of
  the PyPI wheel of the same release, CUDA-only requirements dropped as in the CPU index's wheels) and no binaries.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.installers import wheelkit

# A directory of `git clone --mirror URL <dir>/<owner>+<name>` copies (one per MIRRORED entry; `<owner>+<name>/repo`
# is read too). No default: a path that exists on one machine names nothing on another.
MIRRORS_ENV = "DOCTOR_REALWORLD_MIRRORS"


def mirrors_dir() -> Path | None:
    d = os.environ.get(MIRRORS_ENV)
    return Path(d) if d else None


def mirror_git_dir(name: str) -> Path | None:
    """The git directory of the mirror `name` (owner+repo) under $DOCTOR_REALWORLD_MIRRORS (`<name>/repo`, as `fetch`
    lays it out, or `<name>` itself), or None where there is none (CI)."""
    d = mirrors_dir()
    if d is None:
        return None
    return next((c for c in (d / name / "repo", d / name) if (c / "HEAD").is_file()), None)
PYPI = "https://pypi.org/simple"
# upstream URL -> mirror directory name (owner+repo, as `fetch` names them)
MIRRORED = {
    "https://github.com/verl-project/verl.git": "verl-project+verl",
    "https://github.com/vllm-project/vllm-ascend.git": "vllm-project+vllm-ascend",
    "https://github.com/NVIDIA/Megatron-LM.git": "NVIDIA+Megatron-LM",
    "https://gitcode.com/Ascend/MindSpeed.git": "Ascend+MindSpeed",
    "https://gitcode.com/cann/catlass.git": "hicann+catlass",
    "https://github.com/Ascend/TransferQueue.git": "Ascend+TransferQueue",
    "https://gitcode.com/GitHub_Trending/go/googletest.git": "google+googletest",  # catlass's own submodule
}
SDIST = {"vllm": "vllm"}  # clone dir -> PyPI project whose sdist stands for the repository
CUDA_ONLY = re.compile(r"^(nvidia-|cuda-|triton\b)", re.I)


@dataclass
class Upstream:
    root: Path
    mirrors: list[str] = field(default_factory=list)  # --git-mirror flags
    git_refs: list[str] = field(default_factory=list)  # --git-ref flags (sdist-made repos)
    index: str = ""  # file:// URL of the stand-in index
    substituted: list[str] = field(default_factory=list)  # what is not the real artifact, said exactly
    sources: dict[str, str] = field(default_factory=dict)  # clone dir -> "mirror <dir>" | "sdist <file>"
    repos: dict[str, Path] = field(default_factory=dict)  # clone dir -> the local bare repository serving it


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=1800).stdout.strip()


def simple_files(project: str) -> list[dict]:
    req = urllib.request.Request(f"{PYPI}/{project}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)["files"]


def _fetch(url: str, dest: Path) -> Path:
    if not dest.exists():
        tmp = dest.with_suffix(dest.suffix + ".part")
        with urllib.request.urlopen(url, timeout=600) as r, open(tmp, "wb") as fh:
            shutil.copyfileobj(r, fh)
        tmp.rename(dest)
    return dest


def sdist(project: str, version: str, cache: Path) -> Path:
    for f in simple_files(project):
        if f["filename"].lower().replace("_", "-") == f"{project}-{version}.tar.gz".lower():
            return _fetch(f["url"], cache / f["filename"])
    raise LookupError(f"PyPI has no sdist of {project} {version}")


def wheel_metadata(project: str, version: str, tag_hint: str = "x86_64") -> str | None:
    """The METADATA of a PyPI wheel of that release (PEP 658 `.metadata`), None when PyPI has no such wheel."""
    files = [f for f in simple_files(project) if f["filename"].endswith(".whl")
             and f["filename"].split("-")[1] == version and (tag_hint in f["filename"] or "none-any" in f["filename"])]
    for f in files:
        if f.get("core-metadata") or f.get("data-dist-info-metadata"):
            with urllib.request.urlopen(f["url"] + ".metadata", timeout=120) as r:
                return r.read().decode("utf-8", "replace")
    return None


def mirror_repo(url: str, dest: Path) -> Path | None:
    """A bare clone of the fetched mirror (objects shared, so it is quick), or None without a mirror."""
    name = MIRRORED.get(url)
    root = mirrors_dir()
    if name is None or root is None:
        return None
    src = next((c for c in (root / name, root / name / "repo") if (c / "HEAD").is_file()), None)
    if src is None:
        return None
    if not dest.exists():
        _git("clone", "-q", "--bare", "--shared", str(src), str(dest))
    return dest


def sdist_repo(project: str, version: str, ref: str, dest: Path, cache: Path) -> Path:
    """The sdist's tree as a repository with one commit, tagged `ref` (setuptools-scm then reads `version`)."""
    if dest.exists():
        return dest
    work = dest.with_name(dest.name + ".work")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with tarfile.open(sdist(project, version, cache)) as t:
        t.extractall(work, filter="data")
    top = next(work.iterdir())
    # what `sdist` generated is not in upstream's repository: PKG-INFO, the egg-info, and (through the sdist's own
    # .gitignore) setuptools-scm's version file, which would otherwise make every build "dirty"
    (top / "PKG-INFO").unlink(missing_ok=True)
    for egg in top.glob("*.egg-info"):
        shutil.rmtree(egg)
    _git("init", "-q", "-b", "main", cwd=top)
    _git("add", "-A", cwd=top)
    _git("-c", "user.email=rw@example.invalid", "-c", "user.name=realworld", "commit", "-q", "-m", f"{project} {version} sdist",
         cwd=top)
    _git("tag", ref, cwd=top)
    _git("clone", "-q", "--bare", str(top), str(dest))
    return dest


def step_pins(plan, up: Upstream, projects: tuple[str, ...]) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Every exact pin (`name==version`) of `projects` that the plan installs: the profile's pins, each step's own
    requirements, and what a step reads only from a clone at its pinned commit (installers.clonereqs.after_clone, the
    offline pre-flight's reader: a build step's requirement files, an editable source's build requirements and own
    dependencies). A source's requirements.txt may pin another triton-ascend than the profile: vllm-ascend
    releases/v0.23.0 pins 3.2.2 where verl v0.9.0 installs 3.2.1, and pip needs both from the index that serves them."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from doctor.installers.clonereqs import after_clone

    at = {s.name: s.commit or s.ref for s in plan.sources()}

    def read(source: str, path: str) -> str | None:
        if source not in up.repos or source not in at:
            return None
        cp = subprocess.run(["git", "--git-dir", str(up.repos[source]), "cat-file", "blob", f"{at[source]}:{path}"],
                            capture_output=True, timeout=120)
        return cp.stdout.decode("utf-8", "replace") if cp.returncode == 0 else None

    lines = [f"{n}{v}" for n, v in plan.pins] + [r for st in plan.steps for r in st.requirements]
    lines += [r for got in after_clone(plan, read).values() for r in got]
    out: set[tuple[str, str]] = set()
    for ln in lines:
        try:
            r = Requirement(ln)
        except InvalidRequirement:
            continue  # pip options (-r FILE)
        name = canonicalize_name(r.name)
        exact = [s.version for s in r.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if name in projects and len(exact) == 1:
            out.add((name, exact[0]))
    return out


def standin_index(root: Path, wanted: set[tuple[str, str]], reachable: set[tuple[str, str]]) -> tuple[str, list[str]]:
    """Stand-in wheels for the (project, version) pairs that no reachable index serves, and a PEP 503 index of them."""
    wheels = root / "standin-wheels"
    said: list[str] = []
    for project, version in sorted(wanted):
        if (project, version) in reachable:
            continue
        public = version.split("+")[0]
        meta = wheel_metadata(project, public) or ""
        requires = [ln.split(":", 1)[1].strip() for ln in meta.splitlines() if ln.startswith("Requires-Dist:")]
        requires = [r for r in requires if not CUDA_ONLY.match(r)]
        mod = project.replace("-", "_")
        files = {f"{mod}/__init__.py": f"__version__ = {version!r}\n"}
        if project == "torch":
            files["torch/version.py"] = f"__version__ = {version!r}\ncuda = None\ngit_version = 'stand-in'\n"
        wheelkit.make_wheel(wheels, project, version, requires=requires, files=files)
        origin = (f"Requires-Dist of the PyPI {project} {public} wheel"
                  + (", CUDA-only requirements dropped" if project in ("torch", "torchvision", "torchaudio") else "")
                  if meta else f"the PEP 658 metadata of a PyPI {project} {public} wheel could not be read: no Requires-Dist")
        said.append(f"{project}=={version}: metadata-only stand-in ({origin}; no binaries)")
    return wheelkit.make_simple_index(wheels, root / "standin-simple"), said


def build(plan, root: Path) -> Upstream:  # type: ignore[no-untyped-def]
    """Local repositories for every source `plan` clones (plus submodules and requirement-file git URLs)."""
    from doctor.installers.plan import CLONE

    root.mkdir(parents=True, exist_ok=True)
    cache = root / "sdists"
    cache.mkdir(exist_ok=True)
    up = Upstream(root=root)
    for s in (st.source for st in plan.steps if st.kind == CLONE and st.source is not None):
        dest = root / "repos" / f"{s.name}.git"
        if mirror_repo(s.url, dest) is not None:
            up.sources[s.name] = f"mirror {MIRRORED[s.url]}"
            up.repos[s.name] = dest
        else:
            project = SDIST.get(s.name, s.name)
            version = next(v for n, v in plan.pins if n == project).lstrip("=").rstrip(".*")
            # one repository per release: profiles share `root`, and another profile's vllm lacks this tag
            dest = root / "repos" / f"{s.name}-{version}.git"
            sdist_repo(project, version, s.ref, dest, cache)
            up.repos[s.name] = dest
            up.sources[s.name] = f"PyPI sdist {project}-{version}.tar.gz as a repository tagged {s.ref}"
            up.git_refs.append(f"{s.name}={s.ref}")
        up.mirrors.append(f"{s.url}={dest}")
    for url in ("https://gitcode.com/cann/catlass.git", "https://github.com/Ascend/TransferQueue.git",
                "https://gitcode.com/GitHub_Trending/go/googletest.git"):
        dest = root / "repos" / (url.rsplit("/", 1)[1])
        if mirror_repo(url, dest) is not None:
            up.mirrors.append(f"{url.removesuffix('.git')}={dest}")
    return up
