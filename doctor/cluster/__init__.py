"""A whole Ray cluster: collect one snapshot per node over Ray (`collect_ray`, which runs `_ray_driver.py` under the
target interpreter) and show nodes side by side (`table`). The cross-node checks live in `doctor.checks.cluster`."""
