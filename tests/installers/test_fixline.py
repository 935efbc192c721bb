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
