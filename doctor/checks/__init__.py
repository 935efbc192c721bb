"""Checks: one module per area, each a set of pure functions `snapshot (+ profile) -> findings`.

`runner` registers and runs them, `diagnose` is the whole `doctor check` verdict (profile selection, waivers,
known deviations), `facts` and `cluster_facts` read the snapshot for the checks."""
