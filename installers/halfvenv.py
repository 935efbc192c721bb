"""A `--venv` (or a `--python` in one) that is half a venv: refused before anything is planned or made.

A venv is three things that only work together (https://docs.python.org/3/library/venv.html): `bin/python`, the
`pyvenv.cfg` beside `bin/` that makes that interpreter take the directory as its `sys.prefix` (PEP 405), and
`lib/pythonX.Y/site-packages`, where its packages live. An interrupted `rm -rf`, a cleanup script or a copied
directory leaves one of them gone, and each case misleads the run in its own way:

- `bin/python` without `pyvenv.cfg`: the interpreter no longer knows it is a venv; it runs as the Python it links
  to, with that Python's prefix and site-packages (a pyenv or /usr/local build), so the plan judges that
  interpreter's packages and every step installs into it, not into DIR;
- `bin/python` and `pyvenv.cfg` without `site-packages`: the venv's packages (pip's too) are gone; the plan sees an
  empty target and would install the whole stack into a directory pip has to make again;
- `pyvenv.cfg` (and its packages) without `bin/python`: taken as a venv still to be made, so `python3 -m venv` of
  whatever Python runs the doctor (another X.Y makes a second `lib/pythonX.Y` beside the packages) or `uv venv`,
  which stops on the directory that is already there.

`pythonX.Y -m venv DIR`, of the Python the venv was made from, puts the missing parts back in place and keeps the
packages that are left (checked on CPython 3.11 for each case); the refusal names it, and `rm -rf DIR` for a new one.
A dead `bin/python` link and a directory with neither `bin/python` nor `pyvenv.cfg` are refused by the command's own
checks, with their own repairs.
"""

from __future__ import annotations

import glob
import os
import re
import shlex

from doctor.errors import InputError


def parts(venv: str) -> dict[str, bool]:
    """Which of a venv's three parts DIR has (`bin/python` as a file or link, `pyvenv.cfg`, a
    `lib/python*/site-packages` directory)."""
    return {"bin/python": os.path.lexists(os.path.join(venv, "bin", "python")),
            "pyvenv.cfg": os.path.isfile(os.path.join(venv, "pyvenv.cfg")),
            "site-packages": bool(glob.glob(os.path.join(glob.escape(venv), "lib", "python*", "site-packages")))}


def made_from(venv: str) -> str | None:
    """The X.Y of the Python the venv was made from: `pyvenv.cfg`'s version, else its `lib/pythonX.Y` directory,
    else the name `bin/python` links to; None when nothing says."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition("=")
                m = re.match(r"\s*(\d+\.\d+)", value)
                if key.strip() in ("version", "version_info") and m:
                    return m.group(1)
    except OSError:
        pass
    for d in sorted(glob.glob(os.path.join(glob.escape(venv), "lib", "python*"))):
        m = re.fullmatch(r"python(\d+\.\d+)", os.path.basename(d))
        if m:
            return m.group(1)
    m = re.search(r"python(\d+\.\d+)$", os.path.realpath(os.path.join(venv, "bin", "python")))
    return m.group(1) if m else None


def missing(venv: str) -> list[str] | None:
    """The parts a half venv lacks, or None when DIR is a whole venv, no venv at all (neither `bin/python` nor
    `pyvenv.cfg`: the command's foreign-directory check), or not a directory."""
    if not os.path.isdir(venv):
        return None
    have = parts(venv)
    if not (have["bin/python"] or have["pyvenv.cfg"]):
        return None
    gone = [k for k, v in have.items() if not v]
    return gone or None


def refuse(venv: str, flag: str = "--venv") -> None:
    """InputError (exit 2) for a half venv, naming what it lacks, what that would do to the run, and the repair."""
    gone = missing(venv)
    if not gone:
        return
    why = {
        "pyvenv.cfg": f"without it {os.path.join(venv, 'bin', 'python')} runs as the Python it links to "
                      f"({os.path.realpath(os.path.join(venv, 'bin', 'python'))}), and the steps would install there",
        "site-packages": "its packages, pip's among them, are gone",
        "bin/python": "there is no interpreter to install into",
    }
    version = made_from(venv)
    python = f"python{version}" if version else "python3"
    q = shlex.quote(venv)
    shown = [f"lib/python{version or 'X.Y'}/site-packages" if g == "site-packages" else g for g in gone]
    raise InputError(
        f"{venv} is half a venv: it has no {' and no '.join(shown)} ({'; '.join(why[g] for g in gone)}), so nothing "
        f"was done. `{python} -m venv {q}` puts the missing parts back and keeps the packages that are left; or "
        f"`rm -rf {q}` and let the install make a new venv there", source=flag)


def venv_of(python: str) -> str | None:
    """The directory a `--python` interpreter's venv would be (the one above its `bin/`), when that directory
    carries a venv's marks (`pyvenv.cfg`, or `bin/activate`, which only venv and virtualenv write); None for an
    interpreter outside any venv (/usr/bin/python3, a pyenv build)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    marks = (os.path.isfile(os.path.join(root, "pyvenv.cfg")) or os.path.isfile(os.path.join(root, "bin", "activate")))
    return root if marks else None
