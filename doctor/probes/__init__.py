"""Probes: one module per fact source (ascend_files, npu_smi, hccn + hccn_parse, pci, pyenv + _target_probe,
envvars, system, network). `collect_snapshot` runs them all; it is imported lazily so `import doctor.probes` stays cheap
(the Ray node runner imports submodules of this package)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from doctor.probes.host import CollectOptions
    from doctor.snapshot.model import Snapshot


def collect_snapshot(
    root: str | CollectOptions = "/",
    python: str | None = None,
    npu_smi_timeout: float = 10.0,
    environ: Mapping[str, str] | None = None,
    path: str | None = None,
    cwd: str | None = None,
    python_timeout: float = 60.0,
) -> Snapshot:
    """The live snapshot of this host (files read through `root`) and of the `python` environment.

    Keyword arguments only matter for tests and remote runners: `environ` (default os.environ) is what
    env vars, $ASCEND_HOME_PATH and the target interpreter see; `path` (default environ PATH) is where
    npu-smi is looked up; `cwd` is where the target interpreter runs. A CollectOptions may be passed
    instead of the keywords. Never raises for machine problems."""
    from doctor.probes.host import CollectOptions, collect

    opts = root if isinstance(root, CollectOptions) else CollectOptions(
        root=root, python=python, npu_smi_timeout=npu_smi_timeout, environ=environ, path=path, cwd=cwd,
        python_timeout=python_timeout)
    return collect(opts).snapshot


__all__ = ["collect_snapshot"]
