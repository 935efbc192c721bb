"""Files an installed distribution's RECORD lists that are gone from disk (`python.missing_files`, snapshot rule 12).

What `pip uninstall` of one of two distributions that both install one directory leaves (`jwt` and `PyJWT` both
ship `jwt/`; `opencv-python` and `opencv-python-headless` both ship `cv2/`): pip deletes every path the uninstalled
one's RECORD lists, the survivor's too. The survivor stays installed and `pip check` (Requires-Dist only) is
silent, while `import cv2` fails and `import jwt` finds a namespace package without `jwt.encode`. The probe looks
at the file an import needs first (a package's `__init__.py`, a module file) and, only when it is gone, counts
every file the RECORD lists under that name (the docstring of doctor/probes/pyenv.py says why not more).

Severity: an error for a package a verl job imports on Ascend (the stack set of doctor/checks/declared.py) or one
verl requires for the target (its Requires-Dist whose marker holds); a warning otherwise. The fix reinstalls that
exact release without touching its dependencies, with the target's own pip.

Under `check --deep` (and `collect --deep`) only, `installed-files-verified` reads `python.verified_files` (rule 14):
every file the RECORD of a distribution a verl job imports lists, compared with its size and sha256 in the target
interpreter. A file that differs is a hand edit in site-packages (guides and threads tell users to patch vllm,
transformers or megatron there), an image that ships patched files, a .so truncated by a full disk or an interrupted
copy: the code that runs is not the release the version names, and nothing else shows it. One finding per fact: a
file another distribution's RECORD lists with other content is files-overwritten-by-another-package's, files gone
that installed-files-missing reports are its (said here when this run's waivers drop those findings). Severity: an
error when a shared library or extension module changed or a listed file is gone (a crash, undefined symbols, an ImportError deep in a code path), a warning when only .py
or data files changed (often a deliberate workaround; the stack may run, but a report from it misleads). The fix is
installed-files-missing's reinstall; hand edits are lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from doctor.checks.declared import STACK
from doctor.checks.facts import checkout_commit
from doctor.checks.runner import CheckContext, check, reported, skip
from doctor.knowledge.ownership import component_of_distribution
from doctor.knowledge.profiles import PYTORCH_CPU_INDEX
from doctor.report import Finding, finding
from doctor.snapshot.model import known, normalize_name

RECORD_DOC = "https://packaging.python.org/en/latest/specifications/recording-installed-packages/"


@check("installed-files", "packages", findings=("installed-files-missing",))
def installed_files(ctx: CheckContext) -> Iterator[Finding]:
    """Every installed distribution still has the files its RECORD lists under its top-level names."""
    py = ctx.snapshot.python
    items = py.missing_files if known(py) and known(py.missing_files) else None
    if items is None:
        skip("the snapshot does not say whether installed files are missing (older snapshot, or not collected)")
    on_path: set[str] | None = None
    through: dict[str, tuple[str, ...]] | None = None  # what those need in turn, read only when one is off the set
    for it in items:
        if not (known(it.dist) and it.dist and known(it.missing) and it.missing):
            continue
        if on_path is None:  # verl's requirements are read only when something is missing
            on_path = stack_and_verl_requirements(ctx.snapshot)
        name = normalize_name(it.dist)
        version = it.version if known(it.version) and it.version else None
        named = f"{name} {version}" if version else name
        top = it.top_level if known(it.top_level) and it.top_level else "?"
        examples = list(it.examples) if known(it.examples) else []
        if it.missing == 1 and examples == [f"{top}/__init__.py"] and name.startswith(normalize_name(top) + "-"):
            # `backports.weakref`, `nvidia-cublas-cu12`, `megatron-core`: code below <top>/, whose __init__.py is
            # the pkgutil / pkg_resources namespace declaration each portion ships; uninstalling one portion deletes
            # it, and the others import on as a PEP 420 namespace
            continue
        where = it.location if known(it.location) and it.location else "its site directory"
        total = it.files if known(it.files) else it.missing
        whole = it.missing == total
        other = it.imports_from if known(it.imports_from) and it.imports_from else None
        fix, commands = _reinstall(ctx.snapshot, name, named, version,
                                   it.location if known(it.location) and it.location else None)
        chain: tuple[str, ...] = ()
        if name not in on_path:
            if through is None:
                from doctor.knowledge.pipcheck import needs_through, required_through

                through = required_through(ctx.snapshot, on_path | {"verl"},
                                           verl_commit=checkout_commit(ctx.snapshot, "verl"))
            chain = through.get(name, ())
        yield finding(
            "installed-files-missing", "error" if name in on_path or chain else "warning",
            (component_of_distribution(name) or "python",),
            f"{named} is installed but "
            + ("the 1 file" if total == 1 and whole else f"all {total} files" if whole
               else f"{it.missing} of the {total} files")
            + f" its RECORD lists under {top} " + ("is" if it.missing == 1 else "are") + " gone",
            detail=f"{named}'s RECORD lists {total} file(s) under {top} in {where}; "
                   + ("none of them is on disk" if whole
                      else f"{it.missing} {'is' if it.missing == 1 else 'are'} not on disk")
                   + (f" (e.g. {', '.join(examples)})" if examples else "")
                   + (f", and `import {top}` finds another copy instead: {other} (code of another release runs "
                      f"where {named} is installed)" if other
                      else f", so `import {top}` " + ("fails" if whole else "fails or gives an incomplete package (a "
                                                      "directory left without its __init__.py imports as an empty "
                                                      "namespace)"))
                   + ". This is what `pip uninstall` of another distribution that installed the same files leaves "
                   "(jwt and PyJWT both own jwt/, opencv-python and opencv-python-headless both own cv2/): pip "
                   "deletes every path the uninstalled one's RECORD lists. pip check reads Requires-Dist only and "
                   "says nothing."
                   + (f" {needs_through(ctx.snapshot, chain, name)}." if chain
                      else ""),
            evidence={"dist": name, "version": version, "top_level": top, "files": total, "missing": it.missing,
                      "examples": examples, **({"imports_from": other} if other else {}),
                      **({"required_through": list(chain)} if chain else {})},
            key=name,
            fix=fix, commands=commands, source=RECORD_DOC)


def stack_and_verl_requirements(snap: Any) -> set[str]:
    """The distributions a verl job on Ascend imports: the stack set of doctor/checks/declared.py, and what verl
    requires for the target (its Requires-Dist whose marker holds)."""
    from doctor.knowledge.pipcheck import requirement_names

    return set(STACK) | requirement_names(snap, "verl")


def verify_names(snap: Any) -> list[str]:
    """The distributions whose installed files `check --deep` compares with their RECORD: the ones a verl job
    imports (`stack_and_verl_requirements`) that are installed. Not every distribution: torch alone is ~0.7 GB
    to hash, and a changed file of a package the job does not import does not make its bug report mislead. All
    the stack set when the snapshot does not list the installed packages."""
    names = stack_and_verl_requirements(snap)
    pkgs = snap.packages if known(snap.packages) else None
    return sorted(names if pkgs is None else {n for n in names if n in pkgs})


def _said(e: Any) -> str:
    """One modified file as the detail names it: the path, what kind of file, and the sizes."""
    path = e.path if known(e.path) else "?"
    size = e.size if known(e.size) else None
    want = e.expected_size if known(e.expected_size) else None
    kind = {"binary": "shared library", "source": "source"}.get(e.kind if known(e.kind) else "", "file")
    also = list(e.also) if known(e.also) and e.also else []
    if size is not None and want is not None and size != want:
        sizes = f"{size} bytes on disk, RECORD says {want}" + (" (truncated)" if size < want and not also else "")
    else:
        sizes = "same size, other content"
    return f"{path} ({kind}: {sizes}" + (f"; {', '.join(also)}'s copy, installed over it" if also else "") + ")"


@check("installed-files-verified", "deep", findings=("installed-files-modified", "installed-files-unverified"))
def installed_files_verified(ctx: CheckContext) -> Iterator[Finding]:
    """`check --deep`: every installed file of the distributions a verl job imports is what its RECORD says."""
    py = ctx.snapshot.python
    vf = py.verified_files if known(py) and known(py.verified_files) else None
    if vf is None:
        skip("no --deep comparison of installed files with their RECORD in the snapshot (run `doctor check --deep`)")
    if known(vf.error) and vf.error:
        yield finding(
            "installed-files-unverified", "info", ("python",),
            "the installed files were not compared with their RECORD",
            detail=f"The comparison gave no answer: {vf.error}.", evidence={"error": vf.error},
            fix="Run `doctor check --deep` again (with a larger --deep-timeout if it timed out).", source=RECORD_DOC)
        return
    # installed-files-missing already reports the files gone from these (one finding per fact), unless this run's
    # waivers drop it (`--only installed-files-verified`, `--ignore installed-files-missing`): then they are said here
    gone_said = set()
    for m in py.missing_files if known(py.missing_files) else []:
        if known(m.dist) and m.dist and known(m.missing) and m.missing:
            n = normalize_name(m.dist)
            if reported(ctx, "installed-files", "installed-files-missing", component_of_distribution(n) or "python"):
                gone_said.add(n)
    late: list[tuple[str, int, int]] = []  # (distribution, files, bytes) the bound left uncompared
    denied: list[tuple[str, int]] = []  # (distribution, files) this user may not read or stat
    for d in vf.dists if known(vf.dists) else []:
        if not (known(d.dist) and d.dist):
            continue
        name = normalize_name(d.dist)
        version = d.version if known(d.version) and d.version else None
        named = f"{name} {version}" if version else name
        if known(d.unverified) and d.unverified:
            # files this user may not read are said apart: no larger --deep-timeout compares them
            locked = min(d.unreadable if known(d.unreadable) else 0, d.unverified)
            if locked:
                denied.append((named, locked))
            if d.unverified > locked:
                late.append((named, d.unverified - locked, d.unverified_bytes if known(d.unverified_bytes) else 0))
        modified = d.modified if known(d.modified) else 0
        shared = d.shared if known(d.shared) else 0
        # another's copy is files-overwritten-by-another-package's fact (its finding's first component is the
        # distribution whose files were written over: this one), unless this run's waivers drop it
        theirs_said = reported(ctx, "shared-files", "files-overwritten-by-another-package",
                               component_of_distribution(name) or "python")
        if not theirs_said:
            shared = 0
        own = max(0, modified - shared)
        gone = d.missing if known(d.missing) and name not in gone_said else 0
        lost = list(d.missing_examples) if known(d.missing_examples) else []
        if gone == 1 and len(lost) == 1 and lost[0].count("/") == 1 and lost[0].endswith("/__init__.py") \
                and name.startswith(normalize_name(lost[0].partition("/")[0]) + "-"):
            gone = 0  # a namespace portion's <top>/__init__.py another portion's uninstall deleted (as above)
        if not own and not gone:
            continue
        examples = [e for e in (d.examples if known(d.examples) else []) if not (theirs_said and known(e.also) and e.also)]
        binary = (d.binary if known(d.binary) else 0) + (0 if theirs_said else sum(
            1 for e in examples if known(e.also) and e.also and known(e.kind) and e.kind == "binary"))
        total = d.files if known(d.files) else None
        where = d.location if known(d.location) and d.location else None
        parts = []
        if own:
            parts.append(f"{own} {'differs' if own == 1 else 'differ'} from it")
        if gone:
            parts.append(f"{gone} {'is' if gone == 1 else 'are'} gone")
        counted = f"{own or gone} of the {total} files its RECORD lists" if total is not None \
            else f"{own or gone} of the files its RECORD lists"
        title = f"{named}: {counted} " + (f"{parts[0].partition(' ')[2]}, {parts[1]}" if len(parts) == 2
                                          else parts[0].partition(" ")[2])
        why = []
        if binary:
            why.append(f"{binary} shared librar{'y' if binary == 1 else 'ies'} or extension module"
                       f"{'' if binary == 1 else 's'} changed: a file truncated by a full disk or an interrupted "
                       "copy, or written over by another install or an image layer; code that loads it crashes or "
                       "fails with undefined symbols")
        if own - binary > 0:
            why.append(f"{own - binary} other file{'' if own - binary == 1 else 's'} changed (a .py or data file edited "
                       "in site-packages, as guides and threads tell users to patch vllm, transformers or megatron, "
                       "or an image that ships patched files)")
        if gone:
            missing = lost
            why.append(f"{gone} file{'' if gone == 1 else 's'} the RECORD lists {'is' if gone == 1 else 'are'} not on "
                       "disk" + (f" (e.g. {', '.join(missing)})" if missing else "")
                       + ": the code that needs them fails")
        fix, commands = _reinstall(ctx.snapshot, name, named, version, where)
        yield finding(
            "installed-files-modified", "error" if binary or gone else "warning",
            (component_of_distribution(name) or "python",),
            title,
            detail=f"The installed files of {named}" + (f" in {where}" if where else "")
                   + " were compared with its RECORD (size and sha256); " + "; ".join(why)
                   + (f". E.g. {'; '.join(_said(e) for e in examples)}" if examples else "")
                   + (f". {shared} more {'is' if shared == 1 else 'are'} another distribution's copy (said by "
                      "files-overwritten-by-another-package)" if shared else "")
                   + ". The code that runs is not the release the version names, so a bug report from this "
                   "environment misleads; pip check reads Requires-Dist only and says nothing.",
            evidence={"dist": name, "version": version, "location": where, "files": total, "modified": own,
                      "binary": binary, "missing": gone,
                      "examples": [{"path": e.path, "size": e.size if known(e.size) else None,
                                    "expected_size": e.expected_size if known(e.expected_size) else None}
                                   for e in examples]},
            key=name, fix=fix + " Edits made to its files by hand are lost: keep a copy of what you changed first.",
            commands=commands, source=RECORD_DOC)
    if late:
        budget = vf.budget if known(vf.budget) else None
        yield finding(
            "installed-files-unverified", "info", ("python",),
            f"{sum(n for _, n, _ in late)} installed file(s) were not compared with their RECORD"
            + (f" within {budget:g} s" if budget else ""),
            detail="Not compared (the time bound hit first, or the RECORD names a hash this Python lacks): "
                   + ", ".join(f"{named}: {n} file{'' if n == 1 else 's'}" + (f" ({b / 1e6:.0f} MB)" if b else "")
                               for named, n, b in late)
                   + ". Nothing is said about them.",
            evidence={"unverified": [{"dist": named, "files": n, "bytes": b} for named, n, b in late],
                      "budget": budget},
            fix="Run `doctor check --deep --deep-timeout N` with a larger N (the largest files are compared last).",
            source=RECORD_DOC)
    if denied:
        yield finding(
            "installed-files-unverified", "info", ("python",),
            f"{sum(n for _, n in denied)} installed file(s) could not be read by this user and were not compared with "
            "their RECORD",
            detail="Permission denied (a package directory installed by another user whose umask lets only that user "
                   "read it): " + ", ".join(f"{named}: {n} file{'' if n == 1 else 's'}" for named, n in denied)
                   + ". Nothing is said about them; a larger --deep-timeout does not help.",
            evidence={"unreadable": [{"dist": named, "files": n} for named, n in denied]},
            fix="Run `doctor check --deep` as the user that installed the environment (or as root).",
            key="unreadable", source=RECORD_DOC)


TORCH_CPU_BUILDS = frozenset({"torch", "torchvision", "torchaudio"})


def _scheme(snap: Any, loc: str | None) -> str | None:
    """How pip reaches the site directory `loc`: "" (the interpreter's own: plain `pip install`), "--user" (its
    user site: a site directory outside its prefixes), None (no site directory of it: PYTHONPATH, `--target`; a
    plain install would go elsewhere). "" when the snapshot does not say."""
    py = snap.python if known(snap.python) else None
    sites = py.site_packages if py is not None and known(py.site_packages) else None
    if not loc or not sites:
        return ""
    norm = loc.rstrip("/")
    if norm not in {s.rstrip("/") for s in sites if isinstance(s, str)}:
        return None
    prefixes = {p.rstrip("/") for p in (getattr(py, "prefix", None), getattr(py, "base_prefix", None))
                if known(p) and isinstance(p, str) and p}
    return "" if not prefixes or any(norm.startswith(p + "/") for p in prefixes) else "--user"


def _reinstall(snap: Any, name: str, named: str, version: str | None,
               loc: str | None = None) -> tuple[str, tuple[str, ...]]:
    """The fix sentence and commands: that release reinstalled without its dependencies, from where it can come
    from, into the directory that holds the broken copy. PyPI serves no local version (`+cpu`, `+git...`) and not
    a VCS checkout's commit: a pip command pinning those against PyPI answers "No matching distribution", so only
    the torch CPU builds (PyTorch's CPU index) get one; the others are named with where they came from, when the
    snapshot says. A copy in the user site is reinstalled with --user; one outside every site directory of the
    interpreter (PYTHONPATH, `pip install --target`) gets no command (a plain one installs elsewhere and leaves
    the broken copy first on sys.path), only the directory."""
    again = f"Reinstall {named} over what is left, without touching its dependencies"
    scheme = _scheme(snap, loc)
    if scheme is None:
        pin = f"'{name}=={version}'" if version else f"'{name}'"
        return (again + f", into {loc}, which is not a site directory of this interpreter (PYTHONPATH or `pip "
                f"install --target`): a plain pip install goes elsewhere and leaves this copy first on sys.path; e.g. "
                f"`pip install --no-deps --upgrade --target {loc} {pin}`.", ())
    pip = "pip install --user" if scheme else "pip install"
    if not version:
        return (again + " (the snapshot does not say its version: pin the one you had).",
                (f"{pip} --force-reinstall --no-deps '{name}'",))
    pkg = snap.packages.get(name) if known(snap.packages) else None
    url = pkg.url if pkg is not None and known(pkg.url) and isinstance(pkg.url, str) and pkg.url else None
    commit = pkg.commit if pkg is not None and known(pkg.commit) and isinstance(pkg.commit, str) and pkg.commit else None
    local = version.partition("+")[2]
    if commit:
        return (again + f", from the checkout it was built from ({url or 'its repository'} at {commit}), e.g. "
                f"`pip install --force-reinstall --no-deps '{name} @ git+{url}@{commit}'` for a git URL."
                if url else again + f", from the checkout it was built from (commit {commit}).", ())
    if local and name in TORCH_CPU_BUILDS and local == "cpu":
        return (again + ", from PyTorch's CPU index (PyPI has no +cpu builds).",
                (f"{pip} --force-reinstall --no-deps --index-url {PYTORCH_CPU_INDEX} '{name}=={version}'",))
    if local:
        return (again + f", from the index or file it came from{f' ({url})' if url else ''}: {version} is a local "
                "version, which PyPI does not serve.", ())
    return again + ".", (f"{pip} --force-reinstall --no-deps '{name}=={version}'",)
