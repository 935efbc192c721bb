"""`doctor install`: resolve the verified stack for the target, plan it, install it, verify, roll back.

Options only; the flow is installers.command.run (inputs -> plan -> dry-run | download | execute | rollback).
"""

from __future__ import annotations

import click

from doctor.cli.options import doctor_command, output_options, profile_option, python_option, root_option


@click.command("install")
@profile_option(more=" No stack matches a machine without CANN (an image build, a CI runner): name one here, "
                     "with --no-host-check.")
@click.option("--set", "sets", multiple=True, metavar="PKG=VER", help="Override one pin (validated against the rules). "
              "For a git source (vllm, vllm-ascend, megatron-core, verl) it picks that release's tag. Repeatable.")
@click.option("--git-ref", "git_refs", multiple=True, metavar="NAME=REF", help="Clone this git source at another branch, "
              "tag or commit, deliberately (its version is then read from the clone). Repeatable.")
@python_option("For install: the environment to install into, or with --venv the interpreter a new venv is made "
               "from; --venv or --python is required (never the doctor's own environment by default).")
@click.option("--venv", metavar="DIR", help="Install into this venv; created if it does not exist.")
@click.option("--backend", type=click.Choice(["auto", "pip", "uv"]), default="auto", show_default=True,
              help="Installer; auto picks uv when present.")
@click.option("--dry-run", is_flag=True, help="Print the plan (host prerequisites, which steps would run) and change nothing.")
@click.option("--from", "from_snapshot", metavar="SNAPSHOT", help="Plan for the machine in this snapshot (with --dry-run or --download-only).")
@click.option("--arch", type=click.Choice(["x86_64", "aarch64"]), help="Target arch (overrides the snapshot / this host).")
@click.option("--python-version", metavar="X.Y", help="Target Python version (overrides the snapshot / target).")
@click.option("--glibc", metavar="X.Y", help="Target glibc: decides the manylinux wheels a wheelhouse gets.")
@click.option("--download-only", metavar="DIR", help="Build an offline wheelhouse (wheels, sdists with their build "
              "requirements, git bundles, manifest with sha256).")
@click.option("--wheelhouse", metavar="DIR", help="Install from this wheelhouse (hashes verified first).")
@click.option("--offline", is_flag=True, help="With --wheelhouse: no index, no network.")
@click.option("--index-url", metavar="URL", help="Primary index (a PyPI mirror). Given indexes replace the profile's "
              "(PyTorch CPU, triton-ascend): mirror those too with --extra-index-url.")
@click.option("--extra-index-url", "extra_index_urls", multiple=True, metavar="URL", help="Extra index (mirror). Repeatable.")
@click.option("--git-mirror", "git_mirrors", multiple=True, metavar="ORIG=URL", help="Clone ORIG from URL instead. Repeatable.")
@click.option("--rollback", is_flag=True, help="Undo the newest install not yet undone (again: one further back), or "
              "restore after an interrupted one.")
@click.option("--list", "list_journals", is_flag=True, help="With --rollback: show the install history and what the "
              "next --rollback undoes.")
@click.option("--log", metavar="FILE", help="Full log of every command (default: <prefix>/.doctor/logs/).")
@click.option("--src", metavar="DIR", help="Where git sources are cloned (default: <prefix>/src).")
@click.option("--env-file", metavar="PATH", help="Where doctor-env.sh is written (default: <prefix>/doctor-env.sh).")
@click.option("--isolated", is_flag=True, help="Ignore pip/uv configuration files and PIP_*/UV_* variables.")
@click.option("--no-check", is_flag=True, help="Do not run `doctor check` after installing.")
@click.option("--no-host-check", is_flag=True, help="Image builds / CI runners without CANN or NPU: report host "
              "findings separately; a complete, verified Python stack exits 0.")
@click.option("--step-timeout", type=float, metavar="SECONDS", help="Give up on a step after this long (default 3 h).")
@root_option(hidden=True)
@click.option("--profiles-dir", hidden=True, metavar="DIR", help="Load profiles from this directory.")
@output_options
@doctor_command
def command(console, **kw) -> int:  # type: ignore[no-untyped-def]
    """Resolve, plan and install the verified verl + MindSpeed stack for this machine.

    Python-level packages only: CANN, kernels, NNAL and the driver are checked and named, never installed.
    A failed or interrupted run restores the environment recorded before the first change and removes the
    clones it made, unless changed since (exit 1); so does --rollback of a finished one. The dry run names each
    clone it would make.
    """
    from doctor.installers.command import Options, run
    from doctor.render import emit

    for k in ("sets", "git_refs", "extra_index_urls", "git_mirrors"):
        kw[k] = tuple(kw[k])
    report = run(Options(**kw), console)
    return emit(report, console)
