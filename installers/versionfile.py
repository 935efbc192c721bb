"""The version a clone reports once installed, read from the clone itself (its own version file, or its git tags
for setuptools-scm projects), so a step's expectation follows the commit that is checked out.

Each source project keeps its version in one place (read at the pinned commits):
- verl: `verl/version/version` (https://github.com/verl-project/verl/blob/v0.9.0/setup.py reads it);
- Megatron-LM: `megatron/core/package_info.py` MAJOR/MINOR/PATCH/PRE_RELEASE
  (https://github.com/NVIDIA/Megatron-LM/blob/ddc0d6774783b032ddceacc5714e653651daecb9/megatron/core/package_info.py);
- MindSpeed: `__version__` in `setup.py`
  (https://gitcode.com/Ascend/MindSpeed/blob/e4772499f7eb9fa9a68919dd1eaddef00e915b2d/setup.py);
- vLLM and vllm-ascend: setuptools-scm, i.e. `git describe` against the tags
  (https://github.com/vllm-project/vllm-ascend/blob/c835624845a279a0f13074c0d2e684a7ec5fb632/setup.py
  `get_version(write_to=...)`), with setuptools-scm's default `guess-next-dev` scheme: on a tag, the tag; N commits
  past tag X, X with its last number bumped plus `.devN` (a pre-release tag bumps its pre-release number).
  Without tags the project computes `0.1.devN`: a shallow clone that dropped them builds the wrong version.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.version import InvalidVersion, Version

SCM, VERL_FILE, MEGATRON_FILE, SETUP_PY = "scm", "verl", "megatron", "setup-py"
KINDS = (SCM, VERL_FILE, MEGATRON_FILE, SETUP_PY)


def read(kind: str | None, clone: str | Path) -> str | None:
    """The version the clone at `clone` computes, None when it cannot be read (not a clone, no file, no tag).
    The files are read by the in-target probe's own readers (doctor/probes/_target_probe.py), so the version an
    install step expects and the version `doctor check` later reads from the same tree cannot disagree."""
    from doctor.probes import _target_probe as tp

    d = Path(clone)
    if kind == VERL_FILE:
        return _normal(tp.file_version(str(d / "verl")))
    if kind == MEGATRON_FILE:
        return _normal(tp.megatron_version(str(d / "megatron")))
    if kind == SETUP_PY:
        text = tp._read(str(d / "setup.py"))
        m = tp._VERSION_RE.search(text) if text else None
        return _normal(m.group(1) if m else None)
    if kind == SCM:
        return scm_version(d)
    return None


def _normal(text: str | None) -> str | None:
    if not text:
        return None
    try:
        return str(Version(text))
    except InvalidVersion:
        return None


def scm_version(clone: str | Path) -> str | None:
    """setuptools-scm's version for HEAD (public part: no +g<sha>), from `git describe --tags --long`."""
    from doctor.installers.gitsrc import describe

    desc = describe(clone)
    if desc is None:
        return None
    m = re.fullmatch(r"(.+)-(\d+)-g[0-9a-f]+", desc)
    if not m:
        return None
    tag, distance = m.group(1), int(m.group(2))
    return next_dev(tag, distance)


def next_dev(tag: str, distance: int) -> str | None:
    """guess-next-dev: tag `v0.23.0` at distance 0 -> 0.23.0; at 11 -> 0.23.1.dev11; `v0.23.0rc1` at 138 ->
    0.23.0rc2.dev138."""
    try:
        v = Version(tag[1:] if tag[:1] in "vV" else tag)
    except InvalidVersion:
        return None
    if distance == 0:
        return str(v)
    if v.pre is not None:
        base = f"{v.base_version}{v.pre[0]}{v.pre[1] + 1}"
    elif v.dev is not None:
        base = v.base_version
    else:
        rel = list(v.release)
        rel[-1] += 1
        base = ".".join(str(x) for x in rel)
    return str(Version(f"{base}.dev{distance}"))
