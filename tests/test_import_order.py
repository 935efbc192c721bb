"""Every module of the doctor package imports on its own, first, in a fresh interpreter: an import cycle that only
bites when a module is imported before its partner (doctor.snapshot.loader before doctor.snapshot.model did) fails
here, not in a user's script or a test run alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import importlib, pkgutil, sys, traceback
import doctor
names = sorted(m.name for m in pkgutil.walk_packages(doctor.__path__, "doctor."))
failed = []
for name in names:
    for loaded in [k for k in sys.modules if k == "doctor" or k.startswith("doctor.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
print(len(names))
print("\n".join(failed))
"""


def test_every_doctor_module_imports_first():
    r = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    count, *failed = r.stdout.strip().splitlines()
    assert int(count) > 150 and not [f for f in failed if f], failed
