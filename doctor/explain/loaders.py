"""A loader that names the extension or plugin it could not load: the package that ships that extension.

torch loads its device backends from the `torch.backends` entry points at import (torch 2.13 torch/__init__.py,
`_import_device_backends`) and, when one fails, raises "Failed to load the backend extension: {name}. You can
disable extension auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0." from the extension's own error. The loader
(torch) is only the messenger: the extension named (torch_npu registers `torch_npu = torch_npu:_autoload`) failed
to import or initialise, so its package (a build made for another torch or CANN, a CANN environment not sourced) is
where to look. The same holds for any message of this shape naming a plugin, backend or extension whose name is a
component's import name. Pure logic apart from the ownership table.
"""

from __future__ import annotations

import re
from typing import Any

from doctor.explain.attributed import Attribution
from doctor.knowledge.ownership import component_of_distribution, distribution_of_module
from doctor.report import Severity

SOURCE = "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/__init__.py"
_LOAD_FAILED = re.compile(
    r"\b(?:failed to|cannot|can't|could not|couldn't|unable to) (?:load|import|initiali[sz]e|register) (?:the )?"
    r"(?:device |general |platform |backend |custom )?(?:backend |device )?(?:extension|plugin|backend)s?"
    r"(?: module)?:? [`'\"]?(?P<name>[A-Za-z_][\w.-]*)", re.I)


def extension_named(text: str, snapshot: Any = None) -> Attribution | None:
    m = _LOAD_FAILED.search(text)
    if m is None:
        return None
    name = m.group("name").rstrip(".")
    dist = distribution_of_module(name.split(".", 1)[0], snapshot) or name
    comp = component_of_distribution(dist)
    if comp in (None, "python"):
        return None
    return Attribution(
        "extension-failed-to-load", Severity.ERROR, (comp, "env"),
        f"{dist}'s extension {name} failed to load",
        f"Read: the extension {name} -> {dist} ({comp}). The loader that printed the line only reports it: "
        f"importing or initialising {name} failed (its own error is printed above this line when the log has it): "
        f"a {dist} build made for another release of what it links to (torch, CANN), or an environment it needs "
        "that is not set (CANN's set_env.sh not sourced).",
        f"Run `python -c \"import {name.split('.', 1)[0]}\"` in the job's environment to see the extension's own "
        f"error; install the {dist} release the stack profile pins with its torch / CANN (doctor check).",
        SOURCE, f"the extension {name} -> {dist}")
