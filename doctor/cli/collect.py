"""`doctor collect`: write a snapshot of this host and a Python environment (and optionally a bundle)."""

from __future__ import annotations

import os

import click

from doctor.cli._common import doctor_command, output_options


def resolve_python(value: str | None) -> str | None:
    """`--python`: a path (kept as given, made absolute — a venv's python is a symlink that must not be
    resolved out of the venv) or a bare name looked up on PATH. Usage error (exit 2) when neither works."""
    import shutil

    if not value:
        return None
    if os.sep in value or os.path.exists(value):
        if not os.path.isfile(value):
            raise click.BadParameter(f"{value}: no such file", param_hint="--python")
        return os.path.abspath(value)
    found = shutil.which(value)
    if not found:
        raise click.BadParameter(f"{value}: not found on PATH", param_hint="--python")
    return found


@click.command("collect")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=False), default=None,
              help="Write the snapshot to FILE (atomically) instead of printing it on stdout.")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default="/", show_default=True,
              help="Read the machine's files under this prefix (a mounted image, a test fixture).")
@click.option("--python", "python", default=None, metavar="PATH|NAME",
              help="Target interpreter whose packages are probed: a path, or a name on PATH such as python3.9 "
                   "(default: the one running doctor).")
@click.option("--npu-smi-timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds all npu-smi calls together may take; past it npu-smi is killed.")
@click.option("--bundle", type=click.Path(dir_okay=False), default=None,
              help="Also write FILE.tar.gz with the raw inputs (npu-smi output, version files, pip freeze), redacted.")
@output_options
@doctor_command
def command(console, output, root, python, npu_smi_timeout, bundle):
    """Write a snapshot (doctor.snapshot/1) of this host and Python environment.

    Without -o the snapshot JSON goes to stdout. With --json stdout holds one doctor.report/1 object
    instead (the snapshot under "snapshot" when no -o is given). Secrets in env values are redacted.
    """
    from doctor.collect import collect_report, summary_line, write_bundle
    from doctor.errors import DoctorError
    from doctor.probes.collect import CollectOptions, collect
    from doctor.render import emit, write_text_atomic

    python_path = resolve_python(python)
    collection = collect(CollectOptions(root=root, python=python_path, npu_smi_timeout=npu_smi_timeout))
    text = collection.snapshot.to_json(indent=2) + "\n"
    if output:
        try:
            write_text_atomic(output, text)
        except OSError as e:
            raise DoctorError(f"cannot write the snapshot: {e.strerror or e}", source=output) from None
    if bundle:
        try:
            write_bundle(bundle, collection, text)
        except OSError as e:
            raise DoctorError(f"cannot write the bundle: {e.strerror or e}", source=bundle) from None
    report = collect_report(collection, output=output, bundle=bundle)
    if console.json_mode:
        return emit(report, console)
    if not output:
        console.out.write(text)
        console.out.flush()
    status = console.print if output else console.status
    status(summary_line(collection) + (f"; wrote {output}" if output else "") + (f"; bundle {bundle}" if bundle else ""))
    for f in report.findings:
        if console.verbosity >= 0:
            line = f"{f.title}: {f.detail}" if f.detail else f.title
            console.err.write(console.style("warning: ", "yellow", "bold") + line + "\n")
    if console.verbosity >= 1:
        for name, st in collection.probes.items():
            console.status(f"  probe {name}: {st.status} in {st.seconds:.3f} s" + "".join(f"\n    {e}" for e in st.errors))
    return report.exit_code()
