"""verl's config for a release that is not installed is unpacked from its wheel into the doctor's cache; a cache
this user cannot write (a read-only HOME, HOME=/ for a non-root uid in a container) must not turn into "could
not be composed" with a fix that blames the index."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from doctor.launch import verl_release
from doctor.probes import _run


def _fake_download(monkeypatch: pytest.MonkeyPatch, calls: list[list[str]]) -> None:
    """`pip download verl==X -d DIR` answered with a tiny wheel holding the config members; nothing downloads."""

    def run_bounded(argv, timeout, *, env=None, cwd=None, stdin_data=None):  # noqa: ANN001, ANN202
        calls.append(list(argv))
        dest = Path(argv[argv.index("-d") + 1])
        version = argv[-1].split("==")[1]
        with zipfile.ZipFile(dest / f"verl-{version}-py3-none-any.whl", "w") as z:
            z.writestr("verl/trainer/config/ppo_trainer.yaml", "trainer:\n  total_epochs: 1\n")
            z.writestr("verl/version/version", version)
        return _run.RunResult(list(argv), "ok", returncode=0)

    monkeypatch.setattr(_run, "run_bounded", run_bounded)


def test_an_unwritable_cache_still_gives_the_release_config_for_this_run(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))  # mkdir fails, as root too (NotADirectoryError)
    monkeypatch.setattr(verl_release, "_RUN_COPIES", {}, raising=False)
    calls: list[list[str]] = []
    _fake_download(monkeypatch, calls)
    cfg, why = verl_release.release_config("0.7.1")
    assert why is None and cfg is not None, why
    assert (cfg / "ppo_trainer.yaml").read_text().startswith("trainer:")
    assert not str(cfg).startswith(str(blocker))
    again, _ = verl_release.release_config("0.7.1")  # the same run: the copy is reused, not downloaded again
    assert again == cfg and len(calls) == 1


def test_a_writable_cache_is_where_the_config_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(verl_release, "_RUN_COPIES", {}, raising=False)
    calls: list[list[str]] = []
    _fake_download(monkeypatch, calls)
    cfg, why = verl_release.release_config("0.7.1")
    assert why is None and cfg == tmp_path / "cache" / "verl-ascend-doctor" / "verl" / "0.7.1" / "verl" / "trainer" / "config"
    assert verl_release.cached_config("0.7.1") == cfg


def test_a_release_whose_requires_python_excludes_the_doctors_python_is_still_unpacked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only its config is read, nothing of verl runs. Real: the doctor under pyenv's Python 3.13 asked for verl 0.9.1
    (Requires-Python <3.13,>=3.10); pip left it out of '(from versions: ..., 0.9.0)' and the doctor said 'the
    package index has no release verl 0.9.1' with the fix 'Check --verl-version'. Real pip, a local index."""
    import sys

    from tests.installers.wheelkit import make_wheel

    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    make_wheel(tmp_path / "index", "verl", "0.9.1", requires_python=f"<{here}",
               files={"verl/trainer/config/ppo_trainer.yaml": "trainer:\n  total_epochs: 1\n"})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(verl_release, "_RUN_COPIES", {}, raising=False)
    cfg, why = verl_release.release_config("0.9.1")
    assert why is None and cfg is not None and (cfg / "ppo_trainer.yaml").is_file(), why


def test_unpacking_a_release_holds_the_cache_to_the_budget_and_a_killed_unpackings_directory_goes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`verl/` got a directory per release and a killed unpacking left its work directory: both are pruned now, the
    releases used most recently kept up to 32 MB; a release read from the cache is marked used."""
    from tests.cachefakes import MB, age, cache_entry, dead_pid

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(verl_release, "_RUN_COPIES", {}, raising=False)
    _fake_download(monkeypatch, [])
    root = tmp_path / "cache" / "verl-ascend-doctor" / "verl"
    old = ["0.6.0", "0.5.0", "0.4.1", "0.4.0", "0.3.0"]
    for i, version in enumerate(old):
        cache_entry(root / version / "verl" / "trainer" / "config", "ppo_trainer.yaml", 0, 10 * MB)
        age(root / version, 86_400 + i)
    killed = root / f".doctor-{dead_pid()}-0123456789ab"
    cache_entry(killed / "verl", "version", 0)
    age(killed, 7200)
    cfg, why = verl_release.release_config("0.7.1")
    assert why is None and cfg is not None
    assert sorted(p.name for p in root.iterdir()) == ["0.4.1", "0.5.0", "0.6.0", "0.7.1"]  # 30 MB fit, 40 do not
    age(root / "0.7.1", 86_400 * 2)
    assert verl_release.release_config("0.7.1") == (cfg, None)
    assert (root / "0.7.1").stat().st_mtime > (root / "0.6.0").stat().st_mtime
