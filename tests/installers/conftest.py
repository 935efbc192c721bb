"""Fixtures for installer tests: a hermetic pip/uv environment (this host's pip.conf, PIP_* and UV_* must not
leak in), a shared uv cache, and a profile loader."""

from __future__ import annotations

import os

import pytest

from tests.installers import wheelkit


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("uv-cache"))


@pytest.fixture
def hermetic(monkeypatch: pytest.MonkeyPatch, tmp_path, uv_cache: str) -> dict[str, str]:
    """Strip PIP_*/UV_* from the environment, point pip at no config, uv at no config and a private cache."""
    env = wheelkit.hermetic_env(tmp_path, UV_CACHE_DIR=uv_cache)
    for k in list(os.environ):
        if k.startswith(("PIP_", "UV_")):
            monkeypatch.delenv(k)
    for k, v in env.items():
        if k.startswith(("PIP_", "UV_")):
            monkeypatch.setenv(k, v)
    return env


@pytest.fixture(scope="session")
def profiles():
    from doctor.knowledge.profiles import load_profiles

    return load_profiles()


@pytest.fixture
def profile(profiles):
    def get(name: str):
        return next(p for p in profiles if p.name == name)

    return get
