"""`doctor collect`: write a snapshot of this host and a Python environment (and optionally a bundle)."""

from __future__ import annotations

import contextlib
import os

import click

from doctor.cli.options import (
    add_deep,
    doctor_command,
    npu_smi_timeout_option,
    output_file_options,
    output_options,
    python_option,
    ray_options,
    refuse_overwrite,
    refuse_unrunnable_python,
    root_option,
)


@click.command("collect")
@output_file_options("the snapshot")
@root_option()
@python_option()
@npu_smi_timeout_option()
@click.option("--bundle", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write a .tar.gz of the raw inputs (npu-smi output, version files, pip freeze), redacted, to "
                   "FILE (e.g. bug.tar.gz; the name is used as given).")
@click.option("--deep", is_flag=True,
              help="Also record what `check --deep` probes: the imports of torch_npu, mindspeed.megatron_adaptor and "
                   "vllm_ascend, and the installed files of the stack compared with their RECORD (so `check --from` "
                   "judges them).")
@click.option("--deep-timeout", type=click.FloatRange(min=1), default=120.0, show_default=True, metavar="SECONDS",
              help="Seconds per --deep import, and for the file comparison (with --ray: on each node, added to "
                   "--ray-timeout).")
@ray_options
@output_options
@doctor_command(data_stdout=True)
def command(console, output, overwrite, root, python, npu_smi_timeout, bundle, deep, deep_timeout, use_ray, address,
            ray_timeout):
    """Write a snapshot (doctor.snapshot/1) of this host and Python environment.

    Without -o the snapshot JSON goes to stdout. With --json stdout holds one doctor.report/1 object
    instead (the snapshot under "snapshot" when no -o is given). Secrets in env values are redacted.
    """
    from doctor.atomic import write_text_atomic
    from doctor.errors import DoctorError
    from doctor.probes.host import CollectOptions, collect
    from doctor.render import emit
    from doctor.snapshot.bundle import collect_report, summary_line, write_bundle

    refuse_overwrite(bundle, overwrite, "--bundle")
    if use_ray:
        return _collect_ray(console, output, root, python, address, ray_timeout, bundle,
                            deep_timeout if deep else None)
    collection = collect(CollectOptions(root=root, python=python, npu_smi_timeout=npu_smi_timeout))
    refuse_unrunnable_python(collection.probes, python)
    if deep:
        add_deep(collection.snapshot, python, deep_timeout, console)
    text = collection.snapshot.to_json(indent=2) + "\n"
    # the bundle first: when either cannot be written the command fails (exit 2) and leaves no file of this run
    if bundle:
        try:
            write_bundle(bundle, collection, text)
        except OSError as e:
            raise DoctorError(f"cannot write the bundle: {e.strerror or e}", source=bundle) from None
    if output:
        try:
            write_text_atomic(output, text)
        except OSError as e:
            if bundle:
                with contextlib.suppress(OSError):
                    os.unlink(bundle)
            raise DoctorError(f"cannot write the snapshot: {e.strerror or e}", source=output) from None
    report = collect_report(collection, output=output, bundle=bundle)
    if console.json_mode:
        return emit(report, console)
    if not output:
        console.write_json(text)
    status = console.print if output else console.status
    status(summary_line(collection) + (f"; wrote {output}" if output else "") + (f"; bundle {bundle}" if bundle else ""))
    for f in report.findings:
        if console.verbosity >= 0:
            line = f"{f.title}: {f.detail}" if f.detail else f.title
            console.err.write(console.err_style("warning: ", "yellow", "bold") + line + "\n")
    if console.verbosity >= 1:
        for name, st in collection.probes.items():
            console.status(f"  probe {name}: {st.status} in {st.seconds:.3f} s" + "".join(f"\n    {e}" for e in st.errors))
    return report.exit_code()


def _collect_ray(console, output, root, python, address, timeout, bundle,  # type: ignore[no-untyped-def]
                 deep_timeout=None) -> int:
    """`collect --ray`: one doctor.cluster/1 document; a node that failed is in it with its error. `deep_timeout`
    (`--deep`): every node records the `--deep` facts too, as `check --ray --deep` gathers them (the imports, the
    installed files against RECORD, and the ping round between the nodes' NPUs), so `check --from` judges them."""
    import json

    from doctor.atomic import write_text_atomic
    from doctor.cluster.collect_ray import REACH_TIMEOUT, collect_ray
    from doctor.errors import DoctorError, UsageError
    from doctor.render import emit
    from doctor.report import Report, finding

    if bundle:
        raise UsageError("--bundle is per host; run `doctor collect --bundle` on the node you want to report")
    console.status(f"probing every node of the Ray cluster at {address or 'RAY_ADDRESS/auto'}…")
    cl = collect_ray(address=address, python=python, timeout=timeout, root=root, deep_timeout=deep_timeout,
                     reach_timeout=min(deep_timeout, REACH_TIMEOUT) if deep_timeout else None)
    text = json.dumps(cl.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if output:
        try:
            write_text_atomic(output, text)
        except OSError as e:
            raise DoctorError(f"cannot write the cluster document: {e.strerror or e}", source=output) from None
    failed = [n for n in cl.nodes if n.snapshot is None]
    report = Report("collect", nodes=[{"node": n.node, "ok": n.snapshot is not None, "error": n.error} for n in cl.nodes])
    for n in failed:
        report.findings.append(finding(
            "collect-node-failed", "warning", ("cluster", "ray"), f"node {n.node} could not be probed",
            detail=n.error or "", evidence={"node": n.node, "error": n.error}, node=n.node,
            fix="Check the node with `ray status` / its raylet logs; re-run with a longer --ray-timeout if it is busy."))
    if output:
        report.extra["output"] = output
    elif console.json_mode:
        report.extra["cluster"] = cl.to_dict()
    if console.json_mode:
        return emit(report, console)
    if not output:
        console.write_json(text)
    say = console.print if output else console.status
    say(f"collected {len(cl.nodes)} node(s), {len(failed)} failed" + (f"; wrote {output}" if output else ""))
    for f in report.findings:
        console.err.write(console.err_style("warning: ", "yellow", "bold") + f"{f.title}: {f.detail}\n")
    return report.exit_code()
