"""Fixtures for tests/launch (defined in helpers.py so tests/cli can import them too)."""
import pytest

from tests.launch.helpers import models, verl_config_dir  # noqa: F401


@pytest.fixture(autouse=True, scope="session")
def _compose_cache(tmp_path_factory):
    """The compose cache (and unpacked verl releases) live in a per-run directory, never in ~/.cache."""
    import os

    if "DOCTOR_KEEP_CACHE" not in os.environ:
        os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    os.environ.setdefault("PIP_NO_INDEX", "1")  # an unpacked release comes from a local wheelhouse only
    wheels = os.path.join(os.environ.get("DOCTOR_TEST_VERL_CONFIGS", ""), "wheels")
    if os.path.isdir(wheels):
        os.environ.setdefault("PIP_FIND_LINKS", wheels)
