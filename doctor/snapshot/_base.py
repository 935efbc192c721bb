"""The base of every snapshot section: the UNKNOWN sentinel ("not probed") and `_Model` (unknown keys ride
along in `extra`). Kept apart from `model.py` so section modules (e.g. `npu_net.py`) can subclass `_Model`
without importing the whole model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


class _Unknown:
    """Sentinel for "not probed". Falsy, a singleton, and never written to JSON."""

    _inst: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __copy__(self) -> _Unknown:
        return self

    def __deepcopy__(self, memo: Any) -> _Unknown:
        return self


UNKNOWN: Any = _Unknown()
Unknown = _Unknown


def known(value: Any) -> bool:
    return value is not UNKNOWN


_SEPARATORS = re.compile(r"[-_.]+")  # compiled once: ~700 names per `doctor check`, each a lookup in re's cache


def normalize_name(name: str) -> str:
    """PEP 503: lower case, runs of -_. become '-'; `torch_npu` and `Torch-NPU` are one key."""
    return _SEPARATORS.sub("-", name).lower()


def _uk() -> Any:
    return field(default=UNKNOWN)


@dataclass
class _Model:
    """Base of every snapshot section: keys the model does not know ride along in `extra` and are written back."""

    extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
