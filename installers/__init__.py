"""`doctor install`: plan -> execute for the Python-level verl + MindSpeed stack.

Modules, in data-flow order: `target` (facts from the target interpreter), `resolve` (facts + profile + pins ->
`plan.Plan`), `satisfy` (is a step already done), `backends` (pip / uv command lines), `gitsrc` (clones at
pinned commits, mirrors, bundles), `wheelhouse` (offline artifacts with sha256), `journal` (record, restore,
rollback), `envfile` (doctor-env.sh), `execute` (runs a plan), `command` (the `doctor install` flow).
"""
