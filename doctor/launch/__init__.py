"""Launch specs for verl + MindSpeed: build, validate (rules + real Hydra composition), render.

Public API (used by `doctor launch`, `doctor lint` and `doctor smoke`):

- `doctor.launch.spec.LaunchSpec` (also `doctor.launch.LaunchSpec`): the frozen spec.
- `validate(spec, *, compose=None, config_dir=None, model=None) -> list[Finding]`.
- `overrides(spec) -> list[str]`: the Hydra overrides, in order.
- `render_script(spec, *, findings=None) -> str`: the bash launch script.

Heavy modules (hydra, yaml) are imported lazily inside the functions that need them.
"""

from __future__ import annotations

from typing import Any

from doctor.launch.spec import LaunchSpec


def validate(spec: LaunchSpec, **kwargs: Any) -> list[Any]:
    from doctor.launch.validation import validate as _validate

    return _validate(spec, **kwargs)


def overrides(spec: LaunchSpec) -> list[str]:
    from doctor.launch.override_list import overrides as _overrides

    return _overrides(spec)


def render_script(spec: LaunchSpec, **kwargs: Any) -> str:
    from doctor.launch.render import render_script as _render

    return _render(spec, **kwargs)


__all__ = ["LaunchSpec", "overrides", "render_script", "validate"]
