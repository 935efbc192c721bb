"""`doctor install --rollback`: undo installs one at a time, newest first, from the journal history.

An interrupted run (journal `running` / `restore-failed`) is restored in full first. Otherwise each `--rollback`
undoes the newest finished install not yet undone, so running it again goes one install further back;
`--rollback --list` shows the history (the newest KEEP_JOURNALS runs) and what the next `--rollback` would undo.
"""

from __future__ import annotations

from typing import Any

from doctor.console import Console
from doctor.errors import RefusedError
from doctor.installers import journal as jr
from doctor.installers.restoreline import clones_left
from doctor.report import Report, finding


def next_to_undo(journals: list[jr.Journal]) -> jr.Journal | None:
    """The newest interrupted run, else the newest finished install that was not undone yet."""
    return next((j for j in reversed(journals) if j.state in (jr.RUNNING, jr.RESTORE_FAILED, jr.DONE)), None)


def listing(python: str, console: Console) -> Report:
    from doctor.installers.target import probe

    env = probe(python)
    js = jr.journals(env.prefix)
    nxt = next_to_undo(js)
    rows: list[dict[str, Any]] = []
    for j in reversed(js):
        rows.append({"id": j.data.get("id"), "journal": str(j.dir), "state": j.state, "profile": j.data.get("profile"),
                     "started": j.data.get("started"), "changed": list(j.data.get("changed") or []),
                     "next": j is nxt})
    report = Report(command="install")
    report.extra["journals"] = rows
    if not rows:
        console.print(f"no install is recorded for {env.prefix}")
    for r in rows:
        console.print(f"  {'→' if r['next'] else ' '} {r['id']}  {r['state']:<14} {r['profile']}  "
                      f"{len(r['changed'])} distribution(s) changed")
    if nxt is not None:
        console.print(f"`doctor install --rollback --python {python}` undoes {nxt.data.get('id')} next")
    return report


def rollback(python: str, console: Console) -> Report:
    from doctor.installers.target import probe

    env = probe(python)
    js = jr.journals(env.prefix)
    if not js:  # not "every install ... is already undone": there was none to undo
        raise RefusedError(f"nothing to roll back: no install by the doctor is recorded for {env.prefix} (it undoes "
                           "only what `doctor install` changed there)", source=str(jr.state_root(env.prefix) / "journal"))
    j = next_to_undo(js)
    if j is None:
        raise RefusedError("nothing to roll back: every install recorded for this environment is already undone "
                           "(see `doctor install --rollback --list`)", source=str(jr.state_root(env.prefix) / "journal"))
    report = Report(command="install")
    only = None if j.state in (jr.RUNNING, jr.RESTORE_FAILED) else set(j.data.get("changed") or [])
    console.status(f"rolling back {j.dir} ({j.state})")
    with jr.lock(env.prefix), jr.signals_deferred():
        res = j.restore(python, only=only)
        j.set_state(jr.UNDONE if j.state == jr.DONE and res["ok"] else jr.ROLLED_BACK if res["ok"] else jr.RESTORE_FAILED)
    report.extra["rollback"] = {"journal": str(j.dir), "ok": res["ok"], "diff": res["diff"],
                                **({"clones": res["clones"]} if res.get("clones") else {})}
    if res["ok"]:
        report.findings.append(finding("install-rolled-back", "info", "system",
                                       f"restored the environment recorded before install {j.data.get('id')}",
                                       evidence={"journal": str(j.dir), "diff": res["diff"]}))
    else:
        report.findings.append(finding("install-restore-failed", "error", "system", "rollback did not restore every distribution",
                                       evidence={"journal": str(j.dir), "diff": res["diff"]},
                                       fix="Compare `pip freeze` with freeze_before in the journal and reinstall what differs."))
    report.findings += clones_left(res.get("clones_left") or [], f"the rollback of install {j.data.get('id')}")
    removed, back = res["diff"]["added"], res["diff"]["changed"] + res["diff"]["removed"]
    console.print(f"rollback {'done' if res['ok'] else 'INCOMPLETE'}: removed {', '.join(removed) or 'nothing'}; "
                  f"put back {', '.join(back) or 'nothing'}")
    for c in res.get("clones") or ():
        console.print(f"  clone {c}")
    return report

