"""installers.journal: record before the first change, restore exactly (offline, no pip in the target)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from doctor.installers import journal as jr
from doctor.installers.backends import PipBackend, Source, UvBackend
from doctor.installers.target import probe
from tests.installers.wheelkit import freeze, make_venv, make_wheel


def tree(prefix: Path) -> dict[str, str]:
    """Every file under site-packages and bin with its hash (what 'identical' means)."""
    out = {}
    for sub in ("lib", "bin"):
        for p in sorted((prefix / sub).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                out[str(p.relative_to(prefix))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("wheels")
    for v in ("1.26.0", "1.26.4"):
        make_wheel(d, "numpy", v, files={"numpy/__init__.py": f"v = {v!r}\n", "numpy/core/x.py": v})
    make_wheel(d, "triton", "3.3.0", files={"triton/__init__.py": "mainline\n"})
    make_wheel(d, "triton-ascend", "3.2.0", files={"triton/__init__.py": "ascend\n", "triton/backends/ascend.py": "x"})
    make_wheel(d, "transformers", "4.57.6", requires=["numpy>=1.17"])
    return d


def install(py: Path, wheels: Path, *reqs: str, backend=None) -> None:
    cmd = (backend or UvBackend(isolated=True)).install(str(py), reqs, source=Source(find_links=(str(wheels),), no_index=True))
    cp = subprocess.run(cmd.argv, env=cmd.environ(), capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr


@pytest.mark.parametrize("backend", [pytest.param(PipBackend(isolated=True), marks=pytest.mark.slow, id="pip"),
                                     pytest.param(UvBackend(isolated=True), id="uv")])
def test_restore_puts_back_replaced_removed_and_removes_added(backend, wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    install(py, wheels, "numpy==1.26.0", "triton==3.3.0", backend=backend)
    before_freeze, before_tree = freeze(py), tree(tmp_path / "v")
    j = jr.Journal.start(probe(str(py), files=True), profile="p", files=(str(tmp_path / "doctor-env.sh"),))
    # what a plan does: remove triton, upgrade numpy, add packages, write the env file
    cmd = backend.uninstall(str(py), ["triton"])
    subprocess.run(cmd.argv, env=cmd.environ(), check=True, capture_output=True, timeout=60)
    install(py, wheels, "numpy==1.26.4", "triton-ascend==3.2.0", "transformers==4.57.6", backend=backend)
    (tmp_path / "doctor-env.sh").write_text("export X=1\n")
    assert freeze(py) != before_freeze
    res = j.restore(str(py))
    assert res["ok"], res
    assert freeze(py) == before_freeze
    assert tree(tmp_path / "v") == before_tree
    assert not (tmp_path / "doctor-env.sh").exists()
    assert res["diff"] == {"added": ["transformers", "triton-ascend"], "changed": ["numpy"], "removed": ["triton"]}


def test_finish_keeps_only_replaced_and_rollback_undoes_the_run(wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    install(py, wheels, "numpy==1.26.0", "triton==3.3.0")
    before = freeze(py)
    j = jr.Journal.start(probe(str(py), files=True), profile="p")
    install(py, wheels, "numpy==1.26.4", "transformers==4.57.6")
    diff = j.finish(probe(str(py)))
    assert diff == {"added": ["transformers"], "changed": ["numpy"], "removed": []}
    assert sorted(os.listdir(j.dir / "kept")) == ["numpy"]  # triton was untouched: its copy is pruned
    assert jr.latest(str(tmp_path / "v")).state == jr.DONE
    # the user installs something else afterwards; rollback must not touch it
    install(py, wheels, "triton-ascend==3.2.0")
    res = jr.Journal.load(j.dir).restore(str(py), only=set(j.data["changed"]))
    assert res["ok"]
    assert freeze(py) == sorted(before + ["triton-ascend==3.2.0"])


def test_transaction_restores_on_exception_and_keyboard_interrupt(wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    install(py, wheels, "numpy==1.26.0")
    before = freeze(py)
    for exc in (RuntimeError("step failed"), KeyboardInterrupt()):
        tx = jr.Transaction(str(py), profile="p")
        with pytest.raises(type(exc)):
            with tx:
                tx.begin()
                install(py, wheels, "numpy==1.26.4", "transformers==4.57.6")
                raise exc
        assert tx.restored and tx.restored["ok"]
        assert freeze(py) == before
        assert tx.journal.state == jr.ROLLED_BACK


def test_no_change_no_journal_and_interrupted_detection(wheels, tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    with jr.Transaction(str(py), profile="p") as tx:
        pass
    assert tx.journal is None and jr.latest(str(tmp_path / "v")) is None
    j = jr.Journal.start(probe(str(py), files=True), profile="p")  # a run that was SIGKILLed here
    assert jr.interrupted(str(tmp_path / "v")).dir == j.dir
    j.set_state(jr.ROLLED_BACK)
    assert jr.interrupted(str(tmp_path / "v")) is None


def test_a_journal_that_cannot_be_written_leaves_no_half_journal(tmp_path, hermetic, monkeypatch) -> None:
    """A full disk or a file size limit while the run records the environment (before any change): the journal's
    directory, with the files kept so far, went on taking space under <prefix>/.doctor/journal."""
    import errno

    py = make_venv(tmp_path / "v")

    def full(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jr.Journal, "save", full)
    with pytest.raises(OSError):
        jr.Journal.start(probe(str(py), files=True), profile="p")
    assert list((jr.state_root(str(tmp_path / "v")) / "journal").iterdir()) == []


def test_lock_refuses_a_second_install(tmp_path) -> None:
    from doctor.errors import RefusedError

    with jr.lock(str(tmp_path)):
        with pytest.raises(RefusedError, match="another `doctor install`"):
            with jr.lock(str(tmp_path)):
                pass


def test_old_finished_journals_are_pruned(tmp_path, hermetic) -> None:
    py = make_venv(tmp_path / "v")
    made = []
    for _ in range(jr.KEEP_JOURNALS + 2):
        j = jr.Journal.start(probe(str(py), files=True), profile="p")
        j.set_state(jr.DONE)
        made.append(j.dir)
    left = [j.dir for j in jr.journals(str(tmp_path / "v"))]
    assert left == made[-jr.KEEP_JOURNALS:]


def test_a_record_importlib_metadata_cannot_parse_is_still_kept_and_put_back(wheels, tmp_path, hermetic) -> None:
    """A blank line in RECORD makes importlib.metadata's `files` raise (Python 3.8 to 3.13): the journal's probe still
    lists that distribution's files (read from the same RECORD), so a restore puts the replaced release back byte for
    byte instead of leaving the new one's files removed and the old one's gone."""
    py = make_venv(tmp_path / "v")
    install(py, wheels, "numpy==1.26.0")
    record = next((tmp_path / "v").rglob("numpy-1.26.0.dist-info/RECORD"))
    record.write_text("\n" + record.read_text())
    before_freeze, before_tree = freeze(py), tree(tmp_path / "v")
    j = jr.Journal.start(probe(str(py), files=True), profile="p")
    install(py, wheels, "numpy==1.26.4")
    res = j.restore(str(py))
    assert res["ok"], res
    assert freeze(py) == before_freeze and tree(tmp_path / "v") == before_tree


def test_rollback_of_a_finished_install_removes_the_empty_tree_it_left(wheels, tmp_path, hermetic) -> None:
    """pip uninstalls mainline triton file by file where triton-ascend shares `triton/`, leaving triton's own
    subdirectories empty; the real-world tier's `--rollback` of verl-0.7.1-cann8.5.0-a2 then left
    site-packages/triton/include/python behind and the venv was not as before. An empty tree that was there
    before the run is the user's and stays."""
    py = make_venv(tmp_path / "v")
    site = Path(probe(str(py)).purelib)
    (site / "mine" / "empty").mkdir(parents=True)
    before_freeze = freeze(py)
    before = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if "__pycache__" not in p.parts)
    j = jr.Journal.start(probe(str(py), files=True), profile="p")
    install(py, wheels, "triton-ascend==3.2.0", "transformers==4.57.6")
    (site / "triton" / "include" / "python").mkdir(parents=True)  # what pip's uninstall of mainline triton leaves
    j.finish(probe(str(py)))
    res = jr.Journal.load(j.dir).restore(str(py), only=set(j.data["changed"]))
    assert res["ok"] and freeze(py) == before_freeze
    assert not (site / "triton").exists() and (site / "mine" / "empty").is_dir()
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if "__pycache__" not in p.parts) == before


def test_rollback_of_a_finished_install_removes_the_empty_tree_it_left_in_the_prefix(wheels, tmp_path, hermetic) -> None:
    """A wheel's data files land under the prefix (sympy's share/man/man1/isympy.1), and pip's uninstall removes
    man1 whole but leaves share/man: the real-world tier's `--rollback` of verl-0.6.1-cann8.2.rc1-a2 left
    venv/share/man behind and the venv was not as before. An empty tree that was there before the run stays."""
    py = make_venv(tmp_path / "v")
    prefix = tmp_path / "v"
    (prefix / "mine" / "empty").mkdir(parents=True)
    before_freeze = freeze(py)
    before = sorted(p.name for p in prefix.iterdir())
    j = jr.Journal.start(probe(str(py), files=True), profile="p")
    install(py, wheels, "transformers==4.57.6")
    (prefix / "share" / "man").mkdir(parents=True)  # what pip's uninstall of sympy leaves
    j.finish(probe(str(py)))
    res = jr.Journal.load(j.dir).restore(str(py), only=set(j.data["changed"]))
    assert res["ok"] and freeze(py) == before_freeze
    assert not (prefix / "share").exists() and (prefix / "mine" / "empty").is_dir()
    assert sorted(p.name for p in prefix.iterdir() if p.name != ".doctor") == [n for n in before if n != ".doctor"]
    # and the restore after a failed run (the forced failure's): the same
    j = jr.Journal.start(probe(str(py), files=True), profile="p")
    install(py, wheels, "transformers==4.57.6")
    (prefix / "share" / "man").mkdir(parents=True)
    assert jr.Journal.load(j.dir).restore(str(py))["ok"] and freeze(py) == before_freeze
    assert not (prefix / "share").exists() and (prefix / "mine" / "empty").is_dir()
