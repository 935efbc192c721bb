"""Example budget for fuzz targets: small in the normal suite, >= 10,000 under `nox -s fuzz`."""

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("DOCTOR_FUZZ_EXAMPLES", "300"))

fuzz = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    database=None,
)
