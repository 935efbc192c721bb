"""verl: every release tag against the release table and the profiles; every fact a profile or a release row
cites from the verl repository, re-read at the cited tag or commit; the dated main snapshot against main."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from doctor.knowledge.profiles import Profile
from doctor.knowledge.releases import ReleaseTable
from tools.refresh_knowledge import extract
from tools.refresh_knowledge.diff import (
    Difference,
    Findings,
    cann_text,
    python_spec,
    ref_version,
    same_cann,
    same_driver,
    same_pin,
    same_spec,
    upstream_spec,
    version_key,
)
from tools.refresh_knowledge.gitdir import GitDir

REPO = "verl-project/verl"
_URL = re.compile(r"^https://github\.com/(?P<repo>[\w.\-]+/[\w.\-]+)/(?:blob|tree)/(?P<ref>[^/]+)(?:/(?P<path>.*))?$")
PACKAGES = ("torch", "torch-npu", "torchvision", "torchaudio", "triton", "triton-ascend", "transformers", "vllm",
            "vllm-ascend", "numpy", "ray", "mbridge")
GIT_FIELDS = ("vllm", "vllm-ascend", "mindspeed", "megatron-lm")


def parse_url(url: str) -> tuple[str, str, str] | None:
    """(owner/name, ref, path) of a GitHub blob/tree URL; None for anything else (PyPI, issues, other hosts)."""
    m = _URL.match(url)
    return (m["repo"], m["ref"], m["path"] or "") if m else None


def file_facts(text: str | None, path: str) -> extract.DocFacts:
    """What a cited file states, by its kind: install doc or script, requirements file, setup.py/pyproject."""
    if text is None:
        return extract.DocFacts()
    name = path.rsplit("/", 1)[-1]
    if name.startswith("requirements"):
        return extract.DocFacts(pip=extract.requirements(text))
    if name in ("setup.py", "pyproject.toml"):
        facts = extract.DocFacts()
        rp = extract.requires_python(text if name == "pyproject.toml" else None, text if name == "setup.py" else None)
        if rp:
            facts.versions["python"] = rp
        for pkg in ("numpy", "transformers"):
            spec = extract.setup_requirement(text, pkg)
            if spec is not None:
                facts.pip[pkg] = spec
        return facts
    return extract.doc_facts(text)


def check(git: GitDir, releases: ReleaseTable, profiles: Iterable[Profile], out: Findings) -> None:
    profiles = list(profiles)
    tags = [t for t in git.tags() if re.match(r"^v\d+\.\d+\.\d+$", t)]
    _tags(git, tags, releases, profiles, out)
    for r in releases.rows:
        _release_row(git, r, out)
    _launch_keys(git, releases, out)
    _snapshots(git, releases, out)
    for p in profiles:
        _profile(git, p, out)


def _tags(git: GitDir, tags: list[str], releases: ReleaseTable, profiles: list[Profile], out: Findings) -> None:
    oldest = releases.rows[0].version
    for tag in sorted(tags, key=lambda t: version_key(t[1:])):
        v = tag[1:]
        if version_key(v) < oldest:
            continue
        out.count("verl")
        where = f"https://github.com/{REPO}/tree/{tag}"
        row = releases.by_version.get(v)
        if row is None:
            out.add(Difference("verl", "new-release", f"verl {v}", None, f"tag {tag} ({git.date(tag)})", where,
                               None))
            continue
        if row.tag and row.tag != tag:
            out.add(Difference("verl", "changed", f"release {v} tag", row.tag, tag, where))
        if row.commit and not git.commit(tag).startswith(row.commit):
            out.add(Difference("verl", "changed", f"release {v} commit", row.commit, git.commit(tag), where))
        if version_key(v) >= version_key(releases.profiles_from) and row.no_profile is None \
                and not any(p.verl == v for p in profiles):
            out.add(Difference("verl", "new-release", f"verl {v} profiles", None, f"tag {tag}", where))


def _cited(git: GitDir, url: str | None, repo: str = REPO) -> tuple[str, str] | None:
    """(ref, path) of the first URL (of a '; '-joined list) into a file of `repo`; None when none is one."""
    for part in (url or "").split("; "):
        p = parse_url(part)
        if p is not None and p[0] == repo:
            return p[1], p[2]
    return None


def _release_row(git: GitDir, r: Any, out: Findings) -> None:
    for key, ours in (("python", r.python), ("numpy", r.numpy), ("transformers", r.transformers)):
        url = getattr(r, f"{key}_source")
        cited = _cited(git, url)
        if cited is None:
            if ours is not None:
                out.skip("verl", f"release {r.verl} {key} ({url})")
            continue
        ref, path = cited
        if not _has_ref(git, ref, f"release {r.verl} {key}", url, out):
            continue
        facts = file_facts(git.show(ref, path), path)
        url = f"https://github.com/{REPO}/blob/{ref}/{path}"
        up = facts.versions.get("python") if key == "python" else facts.pip.get(key)
        if key == "python" or path.endswith(("setup.py", "pyproject.toml")):
            out.count("verl")
            if not same_spec(ours, up or None):
                out.add(Difference("verl", "changed", f"release {r.verl} {key}", ours, up, url))
        else:
            out.skip("verl", f"release {r.verl} {key} ({url}: prose)")


def _has_ref(git: GitDir, ref: str, subject: str, url: str, out: Findings) -> bool:
    if git.has(ref):
        return True
    out.add(Difference("verl", "not-in-clone", subject, ref, None, url))
    return False


def _launch_keys(git: GitDir, releases: ReleaseTable, out: Findings) -> None:
    """The actor.megatron keys of each release's generated trainer yaml against the table's key history."""
    import yaml  # the maintainer tool only

    for r in releases.launch_rows():
        ref = r.tag or r.commit
        if not ref or not git.has(ref):
            out.skip("verl", f"release {r.verl} megatron keys ({r.launch.source if r.launch else ''})")
            continue
        path = "verl/trainer/config/_generated_ppo_megatron_trainer.yaml"
        text = git.show(ref, path)
        if text is None:
            continue
        keys = set(yaml.safe_load(text)["actor_rollout_ref"]["actor"].get("megatron") or {}) - {"_target_"}
        ours = set(releases.megatron_keys_at(r.verl) or ())
        out.count("verl")
        url = f"https://github.com/{REPO}/blob/{ref}/{path}"
        for k in sorted(keys - ours):
            out.add(Difference("verl", "changed", f"release {r.verl} megatron key {k}", "absent", "present", url))
        for k in sorted(ours - keys):
            out.add(Difference("verl", "changed", f"release {r.verl} megatron key {k}", "present", "absent", url))


def _snapshots(git: GitDir, releases: ReleaseTable, out: Findings) -> None:
    head = git.head_branch() or "main"
    if not git.has(head):
        return
    for r in releases.rows:
        if not r.snapshot or not r.commit:
            continue
        out.count("verl")
        where = f"https://github.com/{REPO}/tree/{head}"
        if not git.has(r.commit):
            out.add(Difference("verl", "not-in-clone", f"snapshot {r.verl}", r.commit, None, where))
            continue
        ahead = git.count(r.commit, head)
        newest = max((x for x in releases.rows if x.snapshot), key=lambda x: x.version)
        if ahead and r is newest:
            out.add(Difference("verl", "stale", f"snapshot {r.verl}", f"{r.commit[:9]} ({r.date})",
                               f"{head} is {ahead} commits ahead ({git.commit(head)[:9]}, {git.date(head)})", where))


def _profile(git: GitDir, p: Profile, out: Findings) -> None:
    for fld, url in p.provenance.items():
        cited = _cited(git, url)
        if cited is None:
            if parse_url(url) is None or parse_url(url)[0] == REPO:  # type: ignore[index]
                out.skip("verl", f"{p.name} {fld} ({url})")
            continue
        ref, path = cited
        if not _has_ref(git, ref, f"{p.name} {fld}", url, out):
            continue
        if not path:
            continue  # a tree URL: the ref exists
        facts = file_facts(git.show(ref, path), path)
        _compare(p, fld, facts, url, out)
    src = _cited(git, p.source)
    if src is not None and git.has(src[0]):
        facts = file_facts(git.show(*src), src[1])
        for fld in sorted(set(facts.versions) & set(PACKAGES)):
            if p.pin(fld) is None and fld not in p.provenance and fld not in p.choices and fld not in p.unknown:
                out.add(Difference("verl", "changed", f"{p.name} {fld}", None, facts.versions[fld], p.source,
                                   None))


def _compare(p: Profile, fld: str, facts: extract.DocFacts, url: str, out: Findings) -> None:
    """One provenance claim of a profile against the file it cites."""
    choice = p.choices.get(fld)
    ours, up, same = _values(p, fld, facts)
    if up is _MISSING:
        out.add(Difference("verl", "changed", f"{p.name} {fld}", ours, "not stated", url, choice))
        return
    out.count("verl")
    if not same:
        out.add(Difference("verl", "changed", f"{p.name} {fld}", ours, up, url, choice))


_MISSING = "\0missing"


def _values(p: Profile, fld: str, f: extract.DocFacts) -> tuple[str | None, str | None, bool]:
    up: str | None
    ours: str | None
    if fld == "python":
        up = f.versions.get("python")
        return p.python, up, same_spec(p.python, python_spec(up)) if up else False
    if fld == "cann":
        up = f.versions.get("cann")
        ours = "unknown" if p.cann_unknown else p.cann_version
        return ours, up, up is not None and same_cann(ours, cann_text(up))
    if fld == "driver_min":
        up = f.versions.get("driver")
        return p.driver_min, up, same_driver(p.driver_min, up)
    if fld.startswith("git."):
        comp = fld[4:]
        g = p.git.get(comp)
        gref = f.refs.get(comp) or f.versions.get(comp)
        if g is None or gref is None:
            return (g.ref if g else None), _MISSING, False
        return g.commit or g.ref, gref, gref in (g.ref, g.commit) or bool(g.commit and gref.startswith(g.commit[:7]))
    if fld in PACKAGES:
        ours = p.pin(fld)
        if fld in f.versions:
            up = f.versions[fld]
        elif fld in f.pip:
            up = f.pip[fld]
        elif fld in f.refs:
            v = ref_version(f.refs[fld])
            up = f"=={v}" if v else None
        else:
            return ours, _MISSING, False
        return ours, up, same_pin(ours, upstream_spec(up))
    return None, None, True
