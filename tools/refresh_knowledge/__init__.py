"""`python -m tools.refresh_knowledge`: read where releases are published — PyPI (every release of every tracked
project, its upload date, wheel tags and Requires-*) and the vendors' release notes at the newest commit of local
clones (or bare mirrors) of verl, vllm-ascend, Ascend/pytorch, MindSpeed and MindSpeed-LLM — re-read the install
docs, scripts, requirement files and compatibility tables at every tag and release branch, and print how all of
it differs from the doctor's tables.

Exit 0 when every difference is explained (by a profile's `[choices]`, a row's alternatives or notes, a fact read
from a source newer than the clone), 1 when some are not, 2 when the refresh cannot do its job (a missing
dependency, an unreadable clone, no answer from PyPI). README: "Updating the knowledge".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.refresh_knowledge.diff import KINDS, Findings
from tools.refresh_knowledge.gitdir import GitDir, GitError
from tools.refresh_knowledge.vllm_empty import SDISTS  # the vLLM sdists read from PyPI (--vllm-sdists)


@dataclass
class Knowledge:
    """The tables a refresh checks; main() loads the doctor's own, tests pass small ones."""

    releases: Any
    profiles: list[Any]
    vllm_ascend: tuple[Any, ...]
    torch_npu: tuple[Any, ...]
    mindspeed: tuple[Any, ...]
    date: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    requirements: Any = None  # doctor.knowledge.requirements.RequirementsTable; None: the packaged one

    @classmethod
    def installed(cls, profiles_dir: str | None = None, releases_file: str | None = None) -> Knowledge:
        from doctor.knowledge import matrix
        from doctor.knowledge.profiles import load_profiles
        from doctor.knowledge.releases import load_releases

        rel = load_releases(releases_file)
        return cls(rel, load_profiles(profiles_dir), matrix.VLLM_ASCEND, matrix.TORCH_NPU, matrix.MINDSPEED_MEGATRON,
                   rel.knowledge_date)


CLONES = (("verl", "verl-project/verl"), ("vllm-ascend", "vllm-project/vllm-ascend"), ("torch-npu", "Ascend/pytorch"),
          ("mindspeed", "Ascend/MindSpeed"), ("mindspeed-llm", "Ascend/MindSpeed-LLM"))


def refresh(k: Knowledge, repos: dict[str, GitDir], pypi: dict[str, Any] | None = None,
            sdists: dict[str, Any] | None = None) -> Findings:
    """Every check whose clone was given, PyPI's release lists when read, and the vLLM sdists' empty-target
    declarations when read (`sdists`: tools/refresh_knowledge/vllm_empty.py `read`); the differences found."""
    from tools.refresh_knowledge import mindspeed, pins, torch_npu, verl, vllm_ascend

    out = Findings()
    steps: dict[str, Callable[[GitDir], None]] = {
        "verl": lambda g: verl.check(g, k.releases, k.profiles, out),
        "vllm-ascend": lambda g: vllm_ascend.check(g, k.vllm_ascend, out),
        "torch-npu": lambda g: torch_npu.check(g, k.torch_npu, out),
        "mindspeed": lambda g: mindspeed.check(g, k.mindspeed, out, notes=True),
        "mindspeed-llm": lambda g: mindspeed.check_notes(g, k.mindspeed, out, "mindspeed-llm"),
    }
    for name, step in steps.items():
        if name in repos:
            step(repos[name])
    pins.check(repos, k.profiles, out)
    if "verl" in repos or "vllm-ascend" in repos:
        from doctor.knowledge.requirements_git import load
        from tools.refresh_knowledge import git_requirements

        git_requirements.check(repos, k.profiles, load(), out)
    if sdists is not None:
        from doctor.knowledge.requirements_git import load as load_git
        from tools.refresh_knowledge import vllm_empty

        vllm_empty.check(sdists, vllm_empty.releases(k.vllm_ascend, k.profiles), load_git(), out)
    if pypi is not None:
        from doctor.knowledge.requirements import load_requirements
        from tools.refresh_knowledge import published

        published.check(pypi, k, k.requirements or load_requirements(), out)
    return out


def render(found: Findings, repos: dict[str, GitDir], k: Knowledge, verbose: bool = False,
           pypi: dict[str, Any] | None = None, sdists: dict[str, Any] | None = None) -> str:
    lines = [f"knowledge from {k.date}; checked against:"]
    for name, g in repos.items():
        head = g.head_branch()
        lines.append(f"  {name}: {g.path} ({head or 'detached'} {g.commit(head)[:9] + ' ' + g.date(head) if head and g.has(head) else ''})")
    for name, _ in CLONES:
        if name not in repos:
            lines.append(f"  {name}: not given (--{name}); its tables were not checked")
    if pypi is not None:
        n = sum(len(v) for v in pypi.values())
        newest = max((r.uploaded for v in pypi.values() for r in v), default="-")
        lines.append(f"  pypi: {len(pypi)} projects, {n} releases (newest upload {newest})")
    else:
        lines.append("  pypi: not read (--no-pypi); published releases were not checked")
    if sdists is not None:
        lines.append(f"  {SDISTS}: {sum(isinstance(d, dict) for d in sdists.values())} of {len(sdists)} vLLM "
                     "releases' sdists read (their VLLM_TARGET_DEVICE=empty requirements)")
    for name in [*repos, *(["pypi"] if pypi is not None else []), *([SDISTS] if sdists is not None else [])]:
        diffs = sorted((d for d in found.diffs if d.repo == name), key=lambda d: (KINDS.index(d.kind), bool(d.explained)))
        lines.append(f"\n{name}: {found.checked.get(name, 0)} facts compared, {len(diffs)} differences, "
                     f"{sum(1 for d in diffs if not d.explained)} unexplained")
        lines.extend(d.line() for d in diffs)
        skipped = found.unchecked.get(name, [])
        if skipped:
            lines.append(f"  ({len(skipped)} facts cite sources outside this clone (PyPI, issues, prose, newer commits) "
                         "and were not re-read" + (": " + "; ".join(skipped) if verbose else "; -v lists them") + ")")
    n, u = len(found.diffs), len(found.unexplained)
    lines.append(f"\n{n} differences, {u} unexplained" + ("" if u else ": the tables are current for these sources"))
    return "\n".join(lines)


EXTRA = "refresh"  # pyproject extra with what the refresh needs beyond the doctor's own dependencies


def _missing_dependency() -> str | None:
    """The refresh reads verl's generated trainer yaml with PyYAML: without it, say so before reading anything."""
    try:
        import yaml  # noqa: F401
    except ImportError:
        return (f"PyYAML is not installed (the refresh reads verl's generated trainer yaml with it): "
                f"pip install 'verl-ascend-doctor[{EXTRA}]' or pip install pyyaml")
    return None


def main(argv: Sequence[str] | None = None, http: Any = None) -> int:
    """Exit 0: nothing unexplained; 1: unexplained differences; 2: the refresh could not do its job (a missing
    dependency, an unreadable clone or table, no answer from PyPI, an internal error). `http`: tests replay PyPI."""
    ap = argparse.ArgumentParser(prog="python -m tools.refresh_knowledge", description=__doc__.split("\n\n")[0])
    for name, repo in CLONES:
        ap.add_argument(f"--{name}", metavar="GIT_DIR", help=f"a clone or bare mirror of {repo}")
    ap.add_argument("--no-pypi", action="store_true", help="do not read PyPI (offline: only the clones)")
    ap.add_argument("--write-requirements", action="store_true",
                    help="rewrite profiles/requirements/ from what PyPI declares today before comparing")
    ap.add_argument("--write-git-requirements", action="store_true",
                    help="rewrite the vllm-ascend and verl entries of profiles/requirements-git.toml from the clones "
                         "(--verl, --vllm-ascend) at the commits the profiles pin, before comparing")
    ap.add_argument("--vllm-sdists", action="store_true",
                    help="read the sdist of every vLLM release the vllm-ascend matrix pairs with or a profile builds "
                         "(PyPI, 5-45 MB each) and compare what it declares when built with VLLM_TARGET_DEVICE=empty "
                         "with profiles/requirements-git.toml; with --write-git-requirements, rewrite those entries")
    ap.add_argument("--profiles", metavar="DIR", help="profiles to check (default: the doctor's profiles/stacks)")
    ap.add_argument("--releases", metavar="FILE", help="release table to check (default: profiles/releases.toml)")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list the facts that were not re-read")
    args = ap.parse_args(argv)
    if args.write_git_requirements and not (args.verl or args.vllm_ascend or args.vllm_sdists):
        print("refresh_knowledge: --write-git-requirements reads --verl / --vllm-ascend clones or --vllm-sdists: "
              "give at least one", file=sys.stderr)
        return 2
    repos: dict[str, GitDir] = {}
    try:
        if args.verl:
            missing = _missing_dependency()
            if missing:
                print(f"refresh_knowledge: {missing}", file=sys.stderr)
                return 2
        for name, _ in CLONES:
            path = getattr(args, name.replace("-", "_"))
            if path:
                repos[name] = GitDir.open(path)
        if not repos and args.no_pypi and not args.vllm_sdists:
            print("refresh_knowledge: nothing to read: give a clone (--verl, --vllm-ascend, --torch-npu, --mindspeed, "
                  "--mindspeed-llm) or let it read PyPI", file=sys.stderr)
            return 2
        k = Knowledge.installed(args.profiles, args.releases)
        sdists = _read_sdists(k, http) if args.vllm_sdists else None
        if args.write_git_requirements:
            _write_git_requirements(repos, k, sdists)
        found_pypi = None if args.no_pypi else _read_pypi(k, http, args.write_requirements)
        found = refresh(k, repos, found_pypi, sdists)
        print(render(found, repos, k, args.verbose, found_pypi, sdists))
    except GitError as e:
        print(f"refresh_knowledge: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - every failure to do the job is exit 2, never 1 (= differences)
        from doctor.errors import DoctorError
        from tools.refresh_knowledge.git_requirements import Unreadable
        from tools.refresh_knowledge.pypi import PyPIError

        if isinstance(e, (DoctorError, PyPIError, Unreadable)):  # a broken table (InputError) names its file; PyPI its URL
            print(f"refresh_knowledge: {e}", file=sys.stderr)
        else:
            import traceback

            traceback.print_exc()
            print(f"refresh_knowledge: could not finish ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    return 1 if found.unexplained else 0


def _read_sdists(k: Knowledge, http: Any) -> dict[str, Any]:
    from tools.refresh_knowledge import pypi, vllm_empty

    return vllm_empty.read(http or pypi.Http(), vllm_empty.releases(k.vllm_ascend, k.profiles))


def _write_git_requirements(repos: dict[str, GitDir], k: Knowledge, sdists: dict[str, Any] | None = None) -> None:
    import datetime

    from doctor.knowledge import requirements_git
    from doctor.knowledge.location import knowledge_file
    from tools.refresh_knowledge import git_requirements

    path = knowledge_file(requirements_git.FILE)
    given = sorted(p for p, (option, _) in git_requirements.PROJECTS.items() if option in repos)
    new = git_requirements.rows(repos, k.profiles)
    empty = None
    if sdists is not None:
        from tools.refresh_knowledge import vllm_empty

        empty = vllm_empty.rows(sdists)
    git_requirements.write(path, new, datetime.date.today().isoformat(), given, empty)
    counts = ", ".join([f"{n} {p} entr{'y' if n == 1 else 'ies'}" for p in given
                        for n in [sum(r["project"] == p for r in new)]]
                       + ([f"{len(empty)} vllm_empty_target entries"] if empty is not None else []))
    print(f"wrote {counts} into {path} (the other projects' entries kept as they were)")
    requirements_git._TABLES.clear()  # the check that follows reads the file just written


def _read_pypi(k: Knowledge, http: Any, write: bool) -> dict[str, Any]:
    """Every tracked project's release list; with `write`, the requirements directory rewritten from today's answers."""
    from tools.refresh_knowledge import pypi

    found = pypi.read_all(pypi.PROJECTS, http)
    if write:
        from doctor.knowledge.location import knowledge_file
        from doctor.knowledge.requirements import DIR, parse_requirements

        doc = pypi.requirements_table(found, http)
        path = knowledge_file(DIR)
        k.requirements = parse_requirements(doc, path)  # validated before it replaces the file
        pypi.write(path, doc)
        from doctor.knowledge.later_bounds import FILE
        from tools.refresh_knowledge import later_bounds

        later_bounds.write(path, knowledge_file(FILE))  # derived from the table just written
    return found
