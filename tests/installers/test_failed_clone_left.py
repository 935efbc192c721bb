"""A failed install whose restore leaves something in a clone says so the way `--rollback` does: the warning
`install-clone-left` beside `install-step-failed`, built from the same records, not only a line of the failure's
detail. The world: a user's Megatron-LM checkout at `--src` on `main`, with the egg-info of their own earlier
editable build (0.13.0); the run checks the pinned tag out and builds it editable, which rewrites that egg-info
(0.12.1); a later wheel breaks midway. The restore puts back the branch and the packages, and leaves the rewritten
egg-info, whose earlier content it never kept: everything else is as before, sha256 for sha256."""

from __future__ import annotations

from pathlib import Path

from doctor.installers import findings as fd
from doctor.report import Report
from tests.installers.test_clone_restore import clone_state, run, tree, world  # noqa: F401  (world: a fixture)
from tests.installers.wheelkit import freeze, git, make_venv


def test_a_failed_install_that_leaves_a_rewritten_build_output_in_a_users_clone_warns_and_names_it(
        world, tmp_path: Path, hermetic) -> None:  # noqa: F811
    py = make_venv(tmp_path / "v")
    clone = tmp_path / "work" / "Megatron-LM"
    git("clone", "-q", "--no-tags", str(world["upstream"]), str(clone))
    info = clone / "megatron_core.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: megatron-core\nVersion: 0.13.0\n")
    venv_before, before = tree(tmp_path / "v", skip=(".doctor",)), clone_state(clone)
    out = run(tmp_path, world, tmp_path / "work", fail=True)
    assert not out.ok and out.restored["ok"]  # type: ignore[attr-defined]
    report = Report(command="install", findings=fd.outcome_findings(out, str(tmp_path / "install.log"), str(py)))  # type: ignore[arg-type]
    assert [(f.id, f.severity.value) for f in report.findings] == [("install-step-failed", "error"),
                                                                   ("install-clone-left", "warning")]
    assert report.exit_code() == 1
    left = report.findings[1]
    assert left.title == (f"the restore after the failed install left 1 clone(s) as they are, not as before it: {clone}")
    assert left.evidence["clones"] == [str(clone)]
    assert any("rewritten" in ln and "megatron_core.egg-info" in ln for ln in left.evidence["lines"]), left.evidence
    assert left.fix is not None and "megatron_core.egg-info" in left.fix.text and not left.fix.commands
    # the same line is still in the failure's detail and evidence, as before
    assert left.evidence["lines"][0] in report.findings[0].evidence["clones"]
    # everything but the egg-info the run's build rewrote is as it was
    assert freeze(py) == [] and tree(tmp_path / "v", skip=(".doctor",)) == venv_before
    after = clone_state(clone)
    assert after[1:] == before[1:]  # status, refs, remotes, config, branch, FETCH_HEAD
    changed = {k for k in set(after[0]) | set(before[0]) if after[0].get(k) != before[0].get(k)}
    assert changed == {"megatron_core.egg-info/PKG-INFO"}
    assert "Version: 0.12.1" in (info / "PKG-INFO").read_text()

