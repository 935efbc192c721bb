"""verl's config files for a release that is not installed here: unpacked from that release's PyPI wheel into
the doctor's cache (`verl/<version>/`) on first use, then read from there.

Only the yaml under `verl/**/config/`, the entry modules (`main_*.py`, `*_main.py`, the SFT trainers, for their
`@hydra.main` defaults), the config dataclasses' source (`verl/**/config*.py`, `verl/base_config.py`, read by
schema.py with `ast`), the enums values are checked against (`core_algos.py`, the rollout registry) and
`verl/version/version` are unpacked: composing needs nothing else, and nothing of verl is imported. The wheel is
fetched with the doctor interpreter's own pip (`pip download --no-deps --only-binary=:all:`, whatever Python the
release asks for: it is not run), so pip's index settings (`PIP_INDEX_URL`, `PIP_FIND_LINKS`, `PIP_NO_INDEX`, a local
wheelhouse) apply as they do to installs. A hit marks the release's directory used and an unpacking holds `verl/` to
the cache policy (`doctor.cacheprune`).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import zipfile
from pathlib import Path

_MEMBER = re.compile(r"^verl/(?:[\w/]*config/.+\.ya?ml|[\w/]*main_\w+\.py|[\w/]*\w_main\.py|[\w/]*sft_trainer\w*\.py"
                     r"|[\w/]*config[\w/]*\.py|trainer/ppo/core_algos\.py|workers/rollout/\w+\.py|version/version)$")
LAYOUT = ".doctor-layout-2"  # a cache unpacked before the dataclass sources were kept is unpacked again
DOWNLOAD_TIMEOUT = 180.0


# version -> where this run unpacked it when the cache could not be written (removed when the doctor exits)
_RUN_COPIES: dict[str, Path] = {}


def _config_in(root: Path) -> Path | None:
    cfg = root / "verl" / "trainer" / "config"
    return cfg if (cfg / "ppo_trainer.yaml").is_file() and (root / LAYOUT).is_file() else None


_VERSION = re.compile(r"[0-9][0-9A-Za-z.+!-]*")  # a release version, and so the name of its directory in the cache


def cached_config(version: str) -> Path | None:
    from doctor.cachedir import cache_dir

    if (have := _config_in(root := Path(cache_dir("verl", version)))) is not None:
        from doctor.cacheprune import touch

        touch(str(root))
    return have


def _run_copy_dir(version: str) -> Path:
    """A directory of this run's own for `version`'s config, removed at exit: the cache is not writable (a
    read-only HOME, HOME=/ for a non-root uid in a container), which says nothing about the index."""
    import atexit
    import shutil

    base = Path(tempfile.mkdtemp(prefix="doctor-verl-config-"))
    atexit.register(shutil.rmtree, base, True)
    return base / version


NO_SUCH_RELEASE = "the package index has no release"


def release_config(version: str) -> tuple[Path | None, str | None]:
    """(verl/trainer/config of release `version`, None) or (None, why it could not be had)."""
    have = cached_config(version) or (_config_in(_RUN_COPIES[version]) if version in _RUN_COPIES else None)
    if have is not None:
        return have, None
    if not _VERSION.fullmatch(version):
        return None, f"not a release version: {version}"
    from doctor.cachedir import cache_dir
    from doctor.probes._run import run_bounded

    dest = Path(cache_dir("verl", version))
    with tempfile.TemporaryDirectory(prefix="doctor-verl-") as tmp:
        # --ignore-requires-python: only config files are unpacked, nothing of verl runs here; without it a doctor
        # on Python 3.13 could not have verl 0.9.1 (Requires-Python <3.13), which pip leaves out of "from versions"
        r = run_bounded([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                         "--ignore-requires-python", "-q", "--disable-pip-version-check", "-d", tmp,
                         f"verl=={version}"], DOWNLOAD_TIMEOUT, env=dict(os.environ))
        wheels = sorted(Path(tmp).glob("verl-*.whl"))
        if r.status != "ok" or r.returncode != 0 or not wheels:
            listed = re.search(r"\(from versions: ([^)]*)\)", r.err or "")
            if listed and listed.group(1).strip() not in ("", "none"):
                # the index answered and lists other releases: this one is not among them (a typo, an unreleased
                # build), which no reachable index or cache fixes
                return None, (f"{NO_SUCH_RELEASE} verl {version} (the newest it lists: "
                              f"{listed.group(1).split(',')[-1].strip()})")
            tail = (r.err.strip().splitlines() or [r.error or r.status])[-1]
            return None, f"could not download the verl {version} wheel ({tail})"
        try:
            try:
                _unpack(wheels[0], dest)
            except OSError:  # the cache cannot be written: this run keeps its own copy
                dest = _RUN_COPIES[version] = _run_copy_dir(version)
                _unpack(wheels[0], dest)
        except (OSError, zipfile.BadZipFile) as e:
            return None, f"could not unpack {wheels[0].name}: {e}"
    if version not in _RUN_COPIES:  # written into the cache
        from doctor.cacheprune import prune

        prune(str(dest.parent), _VERSION, str(dest), directories=True)
    have = _config_in(dest)
    return (have, None) if have is not None else (None, f"the verl {version} wheel holds no trainer config")


def _unpack(wheel: Path, dest: Path) -> None:
    """Extract the config members into a fresh directory beside `dest`, then move it into place. The directory has
    the atomic writer's temp name (this process's pid), so a killed unpacking's is pruned as its leftover."""
    from doctor.atomic import temp_name

    dest.parent.mkdir(parents=True, exist_ok=True)
    work = dest.parent / temp_name()
    work.mkdir(mode=0o700)
    with zipfile.ZipFile(wheel) as z:
        for member in z.namelist():
            if _MEMBER.match(member) and ".." not in member:
                z.extract(member, work)
    (work / LAYOUT).write_text("", encoding="utf-8")
    if dest.exists():  # an older layout: replaced whole
        import shutil

        shutil.rmtree(dest, ignore_errors=True)
    try:
        os.replace(work, dest)
    except OSError:  # another run got there first
        import shutil

        shutil.rmtree(work, ignore_errors=True)
