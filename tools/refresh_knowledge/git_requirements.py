"""What the verified stacks' own source builds declare at the commits they pin: vllm-ascend and verl.

The stacks install both from a git checkout (profiles/stacks/*.toml `[git.vllm-ascend]`, `[git.verl]`), so what pip
records for them is what the checkout declares, not what PyPI's wheel of the same version declares (the wheel of a
later branch commit, or of the tag, can differ). The doctor judges a snapshot's source build by the entry of
profiles/requirements-git.toml at the profile's commit; this module reads those declarations from the clones, the
way each project's setup.py builds them, without running any upstream code:

- vllm-ascend: `setup(install_requires=get_requirements())`, which reads requirements.txt line by line (following
  `-r FILE`, skipping `--` options), and `python_requires=` (a literal);
- verl: `setup(install_requires=install_requires, extras_require=extras_require)`, module-level lists and a dict of
  those lists (read with ast); its Requires-Python is pyproject.toml's `[project] requires-python`. A field
  pyproject.toml's `[project]` states itself (not in `dynamic`) wins, as setuptools builds it: verl main at 1dda039
  moved its extras ([verl-core] among them) there.
A `python_requires=` in setup.py is taken first, pyproject.toml's `requires-python` otherwise.

`check` compares each pinned commit's declaration with the table; `rows` gives the entries to write
(`--write-git-requirements`).
"""

from __future__ import annotations

import ast
import json
import posixpath
from collections.abc import Iterable
from typing import Any, Protocol

from tools.refresh_knowledge.diff import Difference, Findings
from tools.refresh_knowledge.gitdir import GitDir, GitError

# project -> (the --option whose clone holds it, its GitHub repository)
PROJECTS = {"vllm-ascend": ("vllm-ascend", "vllm-project/vllm-ascend"), "verl": ("verl", "verl-project/verl")}


class Files(Protocol):
    """What the readers need of a source tree: a file's text at a commit (None when absent). A git clone
    (`GitDir`), or the members of an sdist (tools/refresh_knowledge/vllm_empty.py, which has no commit)."""

    def show(self, commit: str, path: str) -> str | None: ...


class Unreadable(Exception):
    """The files at the commit do not have the shape this reader knows (setup.py changed how it lists them): the
    refresh stops (exit 2) rather than write a guess."""


def requirement_lines(git: Files, commit: str, path: str, seen: frozenset[str] = frozenset()) -> list[str]:
    """A requirements file as vllm-ascend's setup.py reads it: every line but blanks, comments and `--` options;
    `-r FILE` is read in its place (relative to the including file)."""
    if path in seen:
        raise Unreadable(f"{path}: -r includes itself")
    text = git.show(commit, path)
    if text is None:
        raise Unreadable(f"{path} is not in the commit")
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line or line.startswith("--"):
            continue
        if line.startswith("-r "):
            inc = posixpath.normpath(posixpath.join(posixpath.dirname(path), line.split()[1]))
            out += requirement_lines(git, commit, inc, seen | {path})
            continue
        out.append(line)
    return out


def _setup_call(tree: ast.Module) -> ast.Call:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "setup":
            return node
    raise Unreadable("setup.py has no setup(...) call")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _literal(node: ast.expr | None, names: dict[str, ast.expr], what: str) -> Any:
    """A literal, or a module-level name bound to one (lists of strings, a dict of such lists)."""
    if node is None:
        return None
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise Unreadable(f"setup.py: {what} names {node.id}, which is not a module-level literal")
        return _literal(names[node.id], names, what)
    if isinstance(node, ast.Dict):
        return {_literal(k, names, what): _literal(v, names, what) for k, v in zip(node.keys, node.values, strict=True)
                if k}
    if isinstance(node, ast.List):
        return [_literal(e, names, what) for e in node.elts]
    try:
        return ast.literal_eval(node)
    except ValueError as e:
        raise Unreadable(f"setup.py: {what} is not a literal ({ast.dump(node)[:60]})") from e


def _module_names(tree: ast.Module) -> dict[str, ast.expr]:
    return {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def _pyproject(git: Files, commit: str) -> dict[str, Any]:
    """pyproject.toml's [project] table at `commit`, {} without one."""
    import tomllib

    text = git.show(commit, "pyproject.toml")
    project = tomllib.loads(text).get("project", {}) if text else {}
    return project if isinstance(project, dict) else {}


def _pyproject_python(git: Files, commit: str) -> str:
    """pyproject.toml's [project] requires-python (verl states it there, not in setup.py), "" without one."""
    value = _pyproject(git, commit).get("requires-python", "")
    return value if isinstance(value, str) else ""


def _static(project: dict[str, Any], field: str) -> Any:
    """A [project] field pyproject.toml states itself (not listed in `dynamic`): setuptools builds the metadata from
    it and ignores what setup.py passes for it (verl main at 1dda039: optional-dependencies, with [verl-core]).
    None when the field is dynamic or absent."""
    dynamic = project.get("dynamic", [])
    return None if not isinstance(dynamic, list) or field in dynamic else project.get(field)


def declared(git: GitDir, project: str, commit: str) -> dict[str, Any]:
    """{requires_python, requires_dist, read_from, path} of `project` at `commit`, read as its setup.py builds them."""
    text = git.show(commit, "setup.py")
    if text is None:
        raise Unreadable("no setup.py in the commit")
    tree = ast.parse(text)
    call, names = _setup_call(tree), _module_names(tree)
    python = _literal(_keyword(call, "python_requires"), names, "python_requires") or _pyproject_python(git, commit)
    if project == "vllm-ascend":
        inst = _keyword(call, "install_requires")
        if not (isinstance(inst, ast.Call) and getattr(inst.func, "id", None) == "get_requirements"
                and '"requirements.txt"' in text):
            raise Unreadable("setup.py no longer takes install_requires from get_requirements() / requirements.txt")
        return {"requires_python": python, "requires_dist": requirement_lines(git, commit, "requirements.txt"),
                "read_from": "setup.py: python_requires, install_requires = get_requirements() (requirements.txt, "
                             "following -r)", "path": "requirements.txt"}
    meta = _pyproject(git, commit)
    base = _static(meta, "dependencies")
    if base is None:
        base = _literal(_keyword(call, "install_requires"), names, "install_requires") or []
    extras = _static(meta, "optional-dependencies")
    static = extras is not None
    if extras is None:
        extras = _literal(_keyword(call, "extras_require"), names, "extras_require") or {}
    if not isinstance(base, list) or not isinstance(extras, dict):
        raise Unreadable("pyproject.toml: [project] dependencies / optional-dependencies of another shape")
    # PEP 508: a URL requirement needs a space before its marker's ';'
    dist = list(base) + [f'{r}{" " if "://" in r else ""}; extra == "{x}"' for x, reqs in extras.items() for r in reqs]
    if not all(isinstance(r, str) for r in dist):
        raise Unreadable("setup.py: a requirement is not a string")
    return {"requires_python": python, "requires_dist": dist,
            "read_from": ("setup.py: install_requires, extras_require (module-level lists)" if not static else
                          "setup.py: install_requires (module-level list); pyproject.toml: [project] "
                          "optional-dependencies (static: setuptools ignores setup.py's extras_require)"),
            # a static [project] table is the file the extras' findings point at (its `dynamic` names setup.py's part)
            "path": "pyproject.toml" if static else "setup.py"}


def pinned(profiles: Iterable[Any]) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(project, commit) -> (ref, version, a profile pinning it) for the source builds the profiles pin."""
    out: dict[tuple[str, str], tuple[str, str, str]] = {}
    for p in profiles:
        for name, g in p.git.items():
            if name in PROJECTS and g.commit and getattr(g, "install", None) != "wheel":
                out.setdefault((name, g.commit), (g.ref, g.version or "", p.name))
    return out


def rows(repos: dict[str, GitDir], profiles: Iterable[Any]) -> list[dict[str, Any]]:
    """The requirements-git.toml entries for every pinned vllm-ascend / verl commit whose clone was given."""
    out = []
    for (project, commit), (ref, version, _p) in sorted(pinned(profiles).items()):
        option, repo = PROJECTS[project]
        if option not in repos:
            continue
        d = declared(repos[option], project, commit)
        out.append({"project": project, "commit": commit, "ref": ref, "version": version,
                    "requires_python": d["requires_python"], "requires_dist": d["requires_dist"],
                    "read_from": d["read_from"], "source": f"https://github.com/{repo}/blob/{commit}/{d['path']}"})
    return out


def check(repos: dict[str, GitDir], profiles: Iterable[Any], table: Any, out: Findings) -> None:
    """Each pinned commit's declaration, read from its clone, against the table's entry for it."""
    for (project, commit), (_ref, _version, profile) in sorted(pinned(profiles).items()):
        option, repo = PROJECTS[project]
        if option not in repos:
            continue
        out.count(option)
        subject, where = f"{profile} git.{project} requirements", f"{repo} @ {commit[:12]}"
        try:
            d = declared(repos[option], project, commit)
        except (Unreadable, GitError, SyntaxError) as e:
            out.add(Difference(option, "not-in-clone", subject, commit[:12], None, f"{where}: {e}"))
            continue
        ours = table.at(project, commit)
        if ours is None:
            out.add(Difference(option, "missing-row", subject, None, f"{len(d['requires_dist'])} requirements", where))
        elif (list(ours.requires_dist), ours.requires_python or "") != (d["requires_dist"], d["requires_python"]):
            out.add(Difference(option, "changed", subject, f"{len(ours.requires_dist)} requirements",
                               f"{len(d['requires_dist'])} requirements", where))


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a TOML basic string: JSON's escapes are TOML's


def _project_commit(block: str) -> tuple[str, str]:
    fields = dict(line.split(" = ", 1) for line in block.split("\n") if line.startswith(("project = ", "commit = ")))
    return json.loads(fields.get("project", '""')), json.loads(fields.get("commit", '""'))


_EMPTY_SECTION = "\n[[vllm_empty_target]]\n"
_EMPTY_FIELDS = ("version", "sdist", "requires_python", "requires_dist", "read_from", "source")


def _fields(r: dict[str, Any], keys: Iterable[str]) -> str:
    return "".join(f"{k} = {json.dumps(r[k], ensure_ascii=False)}\n" for k in keys)


def write(path: str, new: list[dict[str, Any]], date: str, projects: Iterable[str] = tuple(PROJECTS),
          empty: list[dict[str, Any]] | None = None) -> None:
    """Replace the table's entries of `projects` (vllm-ascend, verl: those whose clone was read) with `new` (the
    other projects' entries, MindSpeed's and Megatron's written by hand from their setup.py, stay as they are) and
    set its `read` date; with `empty` (tools/refresh_knowledge/vllm_empty.py), replace the `[[vllm_empty_target]]`
    entries too and set `vllm_empty_target_read` (else they are kept as they are). Validated before the file is
    replaced."""
    from doctor.atomic import write_text_atomic
    from doctor.knowledge.requirements_git import parse

    with open(path, encoding="utf-8") as f:
        body, _, tail = f.read().partition(_EMPTY_SECTION)
    head, *blocks = body.split("\n[[release]]\n")
    replaced = tuple(projects)
    kept = [b for b in blocks if not any(f"project = {_toml_str(p)}\n" in b for p in replaced)]
    for r in new:
        kept.append(_fields(r, ("project", "commit", "ref", "version", "requires_python", "requires_dist",
                                "read_from", "source")))
    # the hand-written entries first, then vllm-ascend's and verl's by (project, commit), as `rows` gives them: a
    # write of one project's entries leaves the other's where they were
    ours = [b for b in kept if any(f"project = {_toml_str(p)}\n" in b for p in PROJECTS)]
    kept = [b for b in kept if b not in ours] + sorted(ours, key=_project_commit)
    empties = [_EMPTY_SECTION.lstrip("\n") + b for b in tail.split(_EMPTY_SECTION)] if tail else []
    lines = head.split("\n")
    if replaced:
        lines = [f'read = "{date}"' if line.startswith("read = ") else line for line in lines]
    if empty is not None:
        empties = [_EMPTY_SECTION.lstrip("\n") + _fields(r, _EMPTY_FIELDS) for r in empty]
        lines = [line for line in lines if not line.startswith("vllm_empty_target_read = ")]
        at = next(i for i, line in enumerate(lines) if line.startswith("read = ")) + 1
        lines.insert(at, f'vllm_empty_target_read = "{date}"')
    text = "\n[[release]]\n".join(["\n".join(lines), *(b.rstrip("\n") + "\n" for b in kept)])
    text += "".join("\n" + e.rstrip("\n") + "\n" for e in empties)
    import tomllib

    parse(tomllib.loads(text), path)
    write_text_atomic(path, text)
