"""installers.fixline: the `doctor install` target a finding's line names runs as written."""

from __future__ import annotations

from doctor.installers.fixline import install_target
from doctor.snapshot.model import snapshot_from_dict


def _snap(**python: object) -> object:
    return snapshot_from_dict({"schema": "doctor.snapshot/1", "python": {"executable": "/opt/v/bin/python", **python}})


def test_the_examined_interpreter_is_the_target_unless_the_os_manages_it() -> None:
    """install refuses an externally managed interpreter (PEP 668): the line makes a venv from it instead."""
    assert install_target(_snap()) == "--python /opt/v/bin/python"
    assert install_target(_snap(externally_managed=False)) == "--python /opt/v/bin/python"
    assert install_target(_snap(externally_managed=True)) == "--venv verl-venv --python /opt/v/bin/python"


def test_a_managed_interpreter_whose_user_turned_pips_guard_off_is_the_target_as_install_then_goes_ahead() -> None:
    """Rule 15: an override for both commands a plan runs makes install plan into the interpreter itself; one for
    `[install]` only does not (install refuses it), so the line still makes a venv."""
    both = {"install": "PIP_BREAK_SYSTEM_PACKAGES=1", "uninstall": "PIP_BREAK_SYSTEM_PACKAGES=1"}
    assert install_target(_snap(externally_managed=True, break_system_packages=both)) == "--python /opt/v/bin/python"
    assert install_target(_snap(externally_managed=True, break_system_packages={"install": "/etc/pip.conf"})) == \
        "--venv verl-venv --python /opt/v/bin/python"
    assert install_target(_snap(externally_managed=True, break_system_packages={})) == \
        "--venv verl-venv --python /opt/v/bin/python"
