"""Fixtures for tests/launch (defined in helpers.py so tests/cli can import them too)."""

from tests.launch.helpers import models, verl_config_dir  # noqa: F401
