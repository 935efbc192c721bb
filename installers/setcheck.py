"""A `--set` pin judged the way `doctor check` would judge the stack it leaves.

`--set transformers=4.57.1` on a verl 0.9.1 stack (verl declares transformers>=5.5.3,!=5.6.0,<5.11) used to give
`install: ok` and a multi-GB install that check then calls broken; `--set vllm=0.22.0` beside vllm-ascend 0.23
gave `0 warning(s)` where check warns `vllm-ascend-vllm-mismatch`. So before anything runs, check's own per-node
checks (doctor/checks: declared-requirements, vllm-ascend-matrix, transformers-window, ...) run on the stack the
plan would leave: the plan's pins (after `--set`) and the versions its source builds report, over what the target
already has, for the snapshot's Python and arch, with the chosen profile. The same checks run on the plan without
the `--set` pins; only what is new counts (the verified stack's own state is check's business, not the pin's):
an error refuses the install, exit 2, naming `--set`; a warning is allowed and said as an
`install-set-breaks-requirement` finding (the check's own finding id in its evidence and title).
`package-off-profile` is not repeated: a `--set` pin is off the profile's pin by definition, and the plan says so.

A pinned release PyPI does not have (`--set numpy=3.0.0`) is refused too, when profiles/requirements/ lists
that project's releases for the period the pin falls in (its size policy keeps releases since 2023 and no dev
builds: an older or dev version cannot be told apart from one left out, and is not refused), and so is a release
that publishes no wheel for the plan's Python and machine and no sdist (`--set torch=2.1.0` for Python 3.12: its
wheels are cp38-cp311), naming the nearest release that has one, or whose Requires-Python excludes the target's.
What a wheelhouse or a local index serves of a pinned version must fit the target too (wheelfit: wheel tags and
Requires-Python against the target's Python, machine and glibc), and so must the files the release table records
for it online (the same judge: a release whose wheels all need a newer glibc than the target's is refused).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from doctor.errors import RefusedError
from doctor.installers.wheelfit import (
    Offer,
    TargetPython,
    judge,
    python_admits,
    release_offers,
    release_unfit,
    requires_python,
    some,
)
from doctor.report import Finding, finding
from doctor.snapshot.model import normalize_name

# What a --set pin means on its own (check says it too, but the plan already states the pin).
_INHERENT = frozenset({"package-off-profile"})


def plan_packages(plan: Any, installed: Mapping[str, str | None]) -> dict[str, str]:
    """name -> version the target holds after the plan: what is installed, overlaid by what the plan's source
    builds report (their `expect`, e.g. vllm-ascend 0.23.1.dev12 from releases/v0.23.0) and by its exact pins.
    A range or wildcard pin leaves the version a step expects or the installed one when it satisfies the pin,
    else the version unknown; what a step removes (triton) is gone."""
    from doctor.installers import steps as st
    from doctor.knowledge.versions import pkg_satisfies

    out = {normalize_name(n): v for n, v in installed.items() if v}
    for step in plan.steps:
        for name, spec in step.expect:
            n = normalize_name(name)
            if spec is None:
                out.pop(n, None)
            elif (v := st.exact(spec)) is not None and "*" not in spec:
                out[n] = v
    for name, spec in plan.pins:
        v = st.exact(spec) if "*" not in spec else None
        if v is not None:
            out[name] = v
        elif not (name in out and pkg_satisfies(out[name], spec)):
            out.pop(name, None)
    return out


def plan_snapshot(plan: Any, facts: Any) -> Any:
    """The snapshot `doctor check --from` would read of the target once the plan ran: versions only (a
    bug-report-like snapshot), so declared requirements come from the published-metadata table."""
    from doctor.snapshot.model import snapshot_from_dict

    return snapshot_from_dict({
        "schema": "doctor.snapshot/1",
        "host": {"arch": facts.arch},
        "python": {"version": f"{facts.python_version}.0", "implementation": "CPython"},
        "packages": {n: {"version": v} for n, v in plan_packages(plan, facts.installed).items()},
    }, "<the plan>")


def check_findings(snap: Any, profile: Any) -> list[Finding]:
    """Every per-node check of doctor/checks on `snap` with `profile` (what `doctor check --from` runs)."""
    from doctor.checks.runner import run_checks

    found, _ = run_checks([(None, snap, None)], profile_for=lambda _s: profile)
    return found


def _key(f: Finding) -> tuple[Any, ...]:
    return (f.check, f.id, f.key, f.components, f.severity.value)


def check_release_exists(profile: Any, sets: Mapping[str, str], python: str | None = None,
                         arch: str | None = None, python_full: str | None = None,
                         target: TargetPython | None = None) -> list[str]:
    """Refuse a --set version PyPI does not list, where the release table covers that project and period, or one
    whose row the table judges uninstallable for the target, the first reason that applies (`_refuse_release`): no
    wheel for the plan's Python (X.Y) and machine and no sdist (pip cannot install it); a Requires-Python (the
    table's, read from the release's METADATA) that excludes the target's Python (`python_full`, X.Y.Z where known,
    else `python`): pip skips every file of it; for a `target`, every wheel for its Python and machine needs a newer
    glibc than the target's (torch-npu 2.8.0.post2: manylinux_2_28 only) and there is no sdist. Returns the --set names it could not judge (the
    table does not cover the project, or a version older than it keeps, or a dev build): only the install step
    finds out whether the index serves those."""
    from doctor.knowledge.requirements import load_requirements
    from doctor.knowledge.versions import parse_pkg_version

    table = load_requirements()
    built: frozenset[str] = getattr(profile, "built_from_source", frozenset())
    unjudged = []
    for raw, version in sets.items():
        name = normalize_name(raw)
        rels = table.projects.get(name)
        v = parse_pkg_version(version)
        if name in built:
            continue  # a source build's versions are its tags (resolve checks those)
        if not rels or v is None or v.is_devrelease:
            unjudged.append(name)
            continue
        d = table.declared(name, version)
        if d is not None:
            if python:
                _refuse_release(name, version, raw, python, arch, python_full or python, target, d, table)
            continue
        if any(parse_pkg_version(u) == v for u in table.unstated(name)):
            continue  # on PyPI, as an sdist that states no requirements (flash-attn 2.3.6)
        known = sorted(k for k in (parse_pkg_version(r) for r in rels) if k is not None)
        if not known or v < known[0]:
            unjudged.append(name)
            continue  # older than the table keeps: cannot tell
        near = [str(k) for k in known if k.release[:2] == v.release[:2]][-3:] or [str(known[-1])]
        raise RefusedError(
            f"{name} {version} is not a release of {name} on PyPI (profiles/requirements/, read {table.read}: "
            f"{'nearest' if len(near) > 1 else 'newest'} {', '.join(near)}); pin a published release, or refresh the "
            "knowledge if it is newer", source="--set", path=raw)
    return unjudged


def check_served_offline(sets: Mapping[str, str], house: str, files: Sequence[str],
                         installed: Mapping[str, str | None], target: TargetPython | None = None) -> dict[str, str]:
    """Refuse (exit 2, before anything is made or changed) a --set version an --offline install cannot get: the
    wheelhouse `house` holds no wheel or sdist of it (`files`: the paths of those its manifest lists) and the target
    does not have it already, or every file of it it holds is for another Python, machine or glibc than `target`'s
    (wheelfit). Found otherwise only by the last install step, after every clone and build (pip: "No matching
    distribution found"), the whole run restored. pip's `==5.2.0` matches 5.2.0+cpu: a local label in the file
    counts as that version when the pin has none. Returns, per --set name, why the fit of what it holds cannot be
    told (an sdist only: pip builds it)."""
    from doctor.knowledge.versions import parse_pkg_version

    have = {normalize_name(n): v for n, v in installed.items()}
    unjudged: dict[str, str] = {}
    for raw, version in sets.items():
        name, pin = normalize_name(raw), parse_pkg_version(version)
        if pin is None or _same(pin, have.get(name)):
            continue
        offers = held_offers(files, name)
        if any(_same(pin, o.version) for o in offers):
            why = _fit(name, version, raw, pin, offers, target, f"the wheelhouse {house}", "it holds")
            if why:
                unjudged[name] = why
            continue
        vers = _in_order(o.version for o in offers)
        raise RefusedError(
            f"{name} {version} is not in the wheelhouse {house} ("
            + (f"it holds {name} {', '.join(vers)}" if vers else f"it holds no {name}")
            + "), and an --offline install reads nothing else: the last install step would fail after every clone "
            f"and build. Pin a version it holds, or make a wheelhouse with `--download-only --set {name}={version}` "
            "where the index is reachable", source="--set", path=raw)
    return unjudged


def _fit(name: str, version: str, raw: str, pin: Any, offers: Sequence[Offer], target: TargetPython | None,
         where: str, holds: str) -> str | None:
    """A --set version `where` serves (`offers`: every file of the project there): None when a file of it fits
    the target (or the target is unknown), why when that cannot be told; RefusedError (exit 2) when none fits,
    naming each file, why, and the versions there that do fit."""
    if target is None:
        return None
    fits, why = judge((o for o in offers if _same(pin, o.version)), target)
    if fits is None:
        return why
    if fits is False:
        ok = _in_order(o.version for o in offers if judge([o], target)[0])
        # the nearest: the versions after the pin first, then the newest before it
        good = [v for v in ok if _newer(v, pin)] + [v for v in reversed(ok) if not _newer(v, pin)]
        raise RefusedError(
            f"{name} {version}: no file of it that {where} serves fits the target ({target}): {why}. pip "
            "would skip each one, and the last install step would fail after every clone and build. "
            + (f"Pin a version that fits: {holds} {name} {some(good, 'version')}" if good
               else f"{holds[0].upper() + holds[1:]} no {name} that fits: add a file built for the target"),
            source="--set", path=raw)
    return None


def _local_dir(url: str) -> str | None:
    """The folder a `file://` URL or a plain path names; None for anything read over the network (http(s))."""
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    u = urlparse(url)
    if u.scheme == "file":
        return url2pathname(unquote(u.path))
    return url if not u.scheme and os.path.isabs(url) else None


def index_offers(root: str, name: str) -> list[Offer] | None:
    """The files a local PEP 503 simple index at folder `root` serves of `name` (normalised): the wheels and sdists
    its `name/index.html` links to, which is the page pip and uv read for it (no page: none), each with the
    `data-requires-python` of its link (none stated: no constraint, as pip's finder reads it). None when `root` is
    not a folder: nothing to read, so nothing is judged."""
    if not os.path.isdir(root):
        return None
    page = os.path.join(root, name, "index.html")
    try:
        with open(page, encoding="utf-8", errors="replace") as f:
            html = f.read()
    except OSError:
        return []
    return _offers(((posixpath.basename(unquote(h.split("#")[0])), None, rp) for h, rp in _links(html)), name)


def _links(html: str) -> list[tuple[str, str | None]]:
    """The href and data-requires-python of every <a> of a PEP 503 project page, read by the standard library's
    HTML parser (attribute quoting, case and entities as browsers and pip read them)."""
    from html.parser import HTMLParser

    found: list[tuple[str, str | None]] = []

    class _Anchors(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = dict(attrs) if tag == "a" else {}
            if a.get("href"):
                found.append((str(a["href"]), a.get("data-requires-python")))

    parser = _Anchors()
    parser.feed(html)
    parser.close()
    return found


def folder_offers(folder: str, name: str) -> list[Offer] | None:
    """The files of `name` a `--find-links` folder holds (its wheels and sdists, with the Requires-Python they
    state); None if not a folder."""
    if not os.path.isdir(folder):
        return None
    return _offers(((f, os.path.join(folder, f), None) for f in sorted(os.listdir(folder))), name)


def held_offers(paths: Iterable[str], name: str) -> list[Offer]:
    """The files of `name` among local `paths` (a wheelhouse's manifest lists them), each with the Requires-Python it
    states of itself."""
    return _offers(((os.path.basename(f), f, None) for f in paths), name)


def _offers(files: Iterable[tuple[str, str | None, str | None]], name: str) -> list[Offer]:
    """The files of a project among (file name, local path, stated Requires-Python) triples, names read as packaging
    reads them (download.dist_of): a local file's Requires-Python is read from its METADATA or PKG-INFO; a PEP 503
    link's is what it states (None: none)."""
    from doctor.installers.download import dist_of

    out = []
    for file, path, rp in files:
        d = dist_of(file)
        if d is None or normalize_name(d[0]) != name:
            continue
        stated = True
        if path is not None:
            rp, stated = requires_python(path)
        out.append(Offer(file, d[1], rp, stated))
    return out


def _in_order(versions: Iterable[str]) -> list[str]:
    """Distinct versions, oldest first, for a refusal that lists what a source has (unparsable ones last)."""
    from doctor.knowledge.versions import parse_pkg_version

    def key(v: str) -> tuple[bool, Any]:
        p = parse_pkg_version(v)
        return (p is None, p if p is not None else v)

    return sorted(set(versions), key=key)


def check_served_by_index(sets: Mapping[str, str], indexes: Sequence[str], find_links: Sequence[str],
                          installed: Mapping[str, str | None], *, built: frozenset[str] = frozenset(),
                          target: TargetPython | None = None
                          ) -> tuple[set[str], dict[str, list[str]], dict[str, str]]:
    """A --set version the `--index-url` mirror (with its `--extra-index-url`s and find-links folders: together the
    only places the steps look) does not serve, or serves only in files that do not fit `target` (wheelfit), found
    when the plan is made: refused (exit 2) when every one of them is local (a `file://` simple index, a folder),
    whose listing is read here without downloading anything; else found only by the last install step, after every
    clone and build. Returns the --set names a local source serves in a file that fits (or the target has); for the
    rest, the http(s) indexes (or unreadable places) that were not read: the install step finds out there; and, per
    --set name, why the fit of what the local ones serve cannot be told (an sdist only). `built`: the names the plan
    builds from a git source (their versions are its tags, not the index's)."""
    from doctor.knowledge.versions import parse_pkg_version

    served: set[str] = set()
    unread: dict[str, list[str]] = {}
    unjudged: dict[str, str] = {}
    have = {normalize_name(n): v for n, v in installed.items()}
    for raw, version in sets.items():
        name, pin = normalize_name(raw), parse_pkg_version(version)
        if pin is None or name in built or _same(pin, have.get(name)):
            served.add(name)
            continue
        seen: dict[str, list[Offer]] = {}
        blind: list[str] = []
        for place, read in [*((u, index_offers) for u in indexes), *((u, folder_offers) for u in find_links)]:
            local = _local_dir(place)
            offers = read(local, name) if local is not None else None
            if offers is None:
                blind.append(place)
            else:
                seen[place] = offers
        offers = [o for os_ in seen.values() for o in os_]
        mine = [o for o in offers if _same(pin, o.version)]
        if mine and (target is None or judge(mine, target)[0]):
            served.add(name)
        elif blind:
            unread[name] = blind
        elif mine:
            why = _fit(name, version, raw, pin, offers, target, " or ".join(seen), "it serves")
            if why:
                unjudged[name] = why
        else:
            listed = _in_order(o.version for o in offers)
            raise RefusedError(
                f"{name} {version} is not served by {' nor by '.join(seen)} ("
                + (f"it serves {name} {', '.join(listed)}" if listed else f"it serves no {name}")
                + "; its listing read, nothing downloaded), and the steps look nowhere else: the last install step "
                "would fail after every clone and build. Pin a version it serves, or add that version to the index",
                source="--set", path=raw)
    return served, unread, unjudged


def _newer(v: str, pin: Any) -> bool:
    from doctor.knowledge.versions import parse_pkg_version

    p = parse_pkg_version(v)
    return p is not None and p > pin


def _same(pin: Any, have: str | None) -> bool:
    """pip's `==5.2.0` matches 5.2.0+cpu: a local label in the file counts as that version when the pin has none."""
    from doctor.knowledge.versions import parse_pkg_version

    v = parse_pkg_version(have)
    return v is not None and (v == pin or pin.local is None and v.public == pin.public)


def _refuse_release(name: str, version: str, raw: str, python: str, arch: str | None, python_full: str,
                    target: TargetPython | None, d: Any, table: Any) -> None:
    """The release table's row of a --set release judged once for the target (`release_unfit`): refused (exit 2)
    for the first reason that applies, which names the release to pin instead. check_sets' declared-requirements
    check would find a Requires-Python that excludes the target later, as the pin's own requires-python-unmet: this
    says it first, as a Python the release does not admit, with one that does."""
    glibc = target.glibc if target is not None else None
    reason = release_unfit(d, python, arch, glibc, python_full)
    if reason is None:
        return
    if reason == "files":
        where = f"Python {python}" + (f" on {arch}" if arch else "")
        near = table.nearest_installable(name, version, python, arch)
        raise RefusedError(
            f"{name} {version} publishes no wheel for {where} and no sdist (PyPI's files, profiles/requirements/, "
            f"read {table.read}: wheels for {d.wheel_targets} only): pip cannot install it; "
            + (f"pin {near}, the nearest release with a wheel for {where}" if near
               else "pin a release built for this target"),
            source="--set", path=raw)
    # the nearest release with a wheel for the target (its glibc too) that admits its Python
    near = table.nearest_installable(name, version, python, arch, glibc=glibc, admits=lambda e: python_admits(
        (e.on(python, arch) or e).requires_python, python_full) is True)
    if reason == "requires-python":
        decl = d.on(python, arch) or d
        raise RefusedError(
            f"{name} {version} requires Python {decl.requires_python} (its Requires-Python, {decl.source}; "
            f"profiles/requirements/, read {table.read}), and the target is Python {python_full}: pip skips every file "
            "of it; " + (f"pin {near}, the nearest release that admits Python {python_full} and has a wheel for it"
                         if near else f"pin a release that admits Python {python_full}"),
            source="--set", path=raw)
    assert target is not None  # "glibc": judged for a target's glibc only
    offers = release_offers(name, version, d.files, (d.on(python, arch) or d).requires_python)
    raise RefusedError(
        f"{name} {version}: no file of it that PyPI publishes fits the target ({target}): {judge(offers, target)[1]} "
        f"(PyPI's files, profiles/requirements/, read {table.read}; {d.source.rpartition('#')[0]}). pip would skip "
        "each one, and the last install step would fail after every clone and build; "
        + (f"pin {near}, the nearest release with a wheel that fits the target" if near
           else "pin a release built for this target"),
        source="--set", path=raw)


def check_sets(profile: Any, facts: Any, plan: Any, sets: Mapping[str, str],
               base: Callable[[], Any] | None = None) -> list[Finding]:
    """Refuse (RefusedError, exit 2) a --set pin that leaves a stack check would call an error (whether the source
    serves the release is check_release_exists's and check_served_offline's); the warning-level ones back, as
    install findings. `base` builds the plan without the pins."""
    if not sets:
        return []

    pkgs = plan_packages(plan, facts.installed)
    before = {_key(f) for f in check_findings(plan_snapshot(base(), facts), profile)} if base is not None else set()
    names = {normalize_name(n) for n in sets}
    new = [f for f in check_findings(plan_snapshot(plan, facts), profile)
           if _key(f) not in before and f.id not in _INHERENT and f.severity.value != "info"]
    if base is None:  # no baseline: only what names a --set package
        new = [f for f in new if names & _named(f)]

    def pin(f: Finding) -> str:
        hit = [n for n in sorted(names) if n in _named(f)] or sorted(names)
        return ", ".join(f"{n}={sets.get(n) or pkgs.get(n)}" for n in hit)

    # the declaration itself first: it names the package and the range that the pin breaks
    errors = sorted((f for f in new if f.severity.value == "error"), key=lambda f: f.check != "declared-requirements")
    if errors:
        f = errors[0]
        e = f.evidence
        if f.check == "declared-requirements":
            culprit = e["requires"] if e.get("requires") in names else e["package"]
            what = f"breaks what {e['package']} {e.get('version')} declares ({e.get('requirement')})"
        else:
            culprit, what = pin(f), f"leaves a stack where {f.title}"
        raise RefusedError(
            f"{culprit if '=' in culprit else culprit + '=' + str(sets.get(culprit) or pkgs.get(culprit))} {what}; "
            f"`doctor check` would report it as an error ({f.id}, {f.source}). Pin a version that fits, or leave it "
            "to the profile", source="--set", path=culprit.split("=")[0])

    def title(f: Finding) -> str:
        e = f.evidence
        if f.check == "declared-requirements":
            culprit = e["requires"] if e.get("requires") in names else e["package"]
            return (f"--set {culprit}={sets.get(culprit) or pkgs.get(culprit)}: {e['package']} {e.get('version')} "
                    f"requires {e.get('requirement')}")
        return f"--set {pin(f)}: {f.title} [{f.id}]"

    return [finding(
        "install-set-breaks-requirement", "warning", f.components, title(f),
        detail=(f.detail + " " if f.detail else "") + "Allowed (`doctor check` would warn, not fail); installed as asked.",
        evidence={**f.evidence, "finding": f.id}, fix=f.fix.text if f.fix else None, source=f.source) for f in new
        if f.severity.value == "warning"]


def _named(f: Finding) -> set[str]:
    """The package names a finding's evidence mentions (keys and string values), PEP 503 normalised."""

    out: set[str] = set()
    for k, v in f.evidence.items():
        out.add(normalize_name(str(k)))
        if isinstance(v, str):
            out.add(normalize_name(v))
    return out
