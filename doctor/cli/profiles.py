"""`doctor profiles` (list the verified stacks) and `doctor profiles show NAME` (one stack in full)."""

from __future__ import annotations

import click

from doctor.cli.options import doctor_command, output_options


@click.group("profiles", invoke_without_command=True)
@click.option("--dir", "profiles_dir", metavar="DIR", help="Read profiles from DIR instead of the installed ones.")
@output_options
@click.pass_context
def command(ctx: click.Context, profiles_dir: str | None, **kw: object) -> None:
    """List or show the verified stacks (profiles)."""
    ctx.ensure_object(dict)
    ctx.obj["profiles_dir"] = profiles_dir
    ctx.obj["profiles_out"] = kw
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd, **{k: v for k, v in kw.items()})


@command.command("list")
@output_options
@doctor_command
def list_cmd(console, **_: object) -> int:  # type: ignore[no-untyped-def]
    """List every profile: name, verl, CANN range, chips, Python."""
    from doctor.knowledge.profiles import load_profiles
    from doctor.knowledge.releases import knowledge_date
    from doctor.render import emit
    from doctor.report import Report, finding

    where = _dir()
    profiles = load_profiles(where)
    report = Report("profiles", extra={"profiles": [p.to_dict() for p in profiles]})
    if not profiles:
        report.findings.append(finding(
            "no-profiles-found", "warning", ("system",), f"no verified stack (profile) found in {where or 'the install'}",
            evidence={"dir": where}, fix="Point --dir at a directory of profile TOML files (profiles/stacks/*.toml)."))
    if console.json_mode or not profiles:
        return emit(report, console)
    rows = [("NAME", "VERL", "CANN", "CHIPS", "PYTHON", "TORCH-NPU", "VLLM-ASCEND")]
    for p in profiles:
        rows.append((p.name, p.verl, f"[{p.cann_min}, {p.cann_max})", ",".join(p.chips), p.python,
                     p.pin("torch-npu") or "-", p.pin("vllm-ascend") or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        line = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        console.print(console.style(line, "bold") if i == 0 else line)
    from doctor.knowledge.location import override_dir, override_named_by

    copy = f" ({override_dir()}, {override_named_by()})" if override_dir() else ""
    console.print(console.style("`doctor profiles show NAME` prints one; `doctor check --profile NAME` forces one. "
                                f"Knowledge from {knowledge_date()}{copy}.", "dim"))
    return 0


@command.command("show")
@click.argument("name")
@output_options
@doctor_command
def show_cmd(console, name: str, **_: object) -> int:  # type: ignore[no-untyped-def]
    """Print one profile in full: pins, git sources, indexes, env, known deviations, sources."""
    from doctor.knowledge.profiles import find_profile, load_profiles
    from doctor.render import emit
    from doctor.report import Report

    p = find_profile(load_profiles(_dir()), name, source="doctor profiles show")
    if console.json_mode:
        return emit(Report("profiles", extra={"profiles": [p.to_dict()]}), console)
    c = console
    c.print(c.style(p.name, "bold") + f"  — {p.description}")
    c.print(f"source: {p.source}")
    for s in p.sources:
        c.print(f"        {s}")
    c.print(f"CANN {'unknown' if p.cann_unknown else p.cann_version} (matches [{p.cann_min}, {p.cann_max}))"
            + (f", driver >= {p.driver_min}" if p.driver_min else "") + (", NNAL required" if p.nnal else ""))
    c.print(f"chips: {', '.join(p.chips)}   arches: {', '.join(p.arches)}   Python {p.python}"
            + (f" (recommended {p.python_recommended})" if p.python_recommended else ""))
    c.print(c.style("pins:", "bold"))
    for k, v in p.pins.items():
        c.print(f"  {k}{v}")
    if p.git:
        c.print(c.style("git sources:", "bold"))
        for k, g in p.git.items():
            c.print(f"  {k}: {g.repo} @ {g.ref}" + (f" ({g.commit})" if g.commit else "") + f" [{g.install}]")
    c.print(c.style("indexes:", "bold") + f" x86 CPU torch: {p.index_x86_cpu_torch or '-'}"
            + (f"; extra: {', '.join(p.index_extra)}" if p.index_extra else ""))
    if p.set_env or p.exports:
        c.print(c.style("env:", "bold"))
        for s in p.set_env:
            c.print(f"  source {s}")
        for k, v in p.exports.items():
            c.print(f"  export {k}={v}")
    if p.deviations:
        c.print(c.style("known deviations (reported as info for this stack):", "bold"))
        for d in p.deviations:
            when = ", ".join(f"{k}={v}" for k, v in d.when.items())
            c.print(f"  {d.finding}" + (f" when {when}" if when else "") + f": {d.reason}")
            c.print(c.style(f"      source: {d.source}", "dim"))
    for label, table in (("unknown upstream", p.unknown), ("where sources disagree", p.choices)):
        if table:
            c.print(c.style(f"{label}:", "bold"))
            for k, v in table.items():
                c.print(f"  {k}: {v}")
    if p.provenance:
        c.print(c.style("provenance:", "bold"))
        for k, v in p.provenance.items():
            c.print(c.style(f"  {k}: {v}", "dim"))
    for n in p.notes:
        c.print(c.style(f"note: {n}", "dim"))
    return 0


def _dir() -> str | None:
    ctx = click.get_current_context()
    root = ctx.find_root()
    for c in (ctx, ctx.parent, root):
        if c is not None and isinstance(c.obj, dict) and c.obj.get("profiles_dir"):
            return str(c.obj["profiles_dir"])
    return None
