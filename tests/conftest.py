"""Hypothesis profiles: a fast one for `make test`, a thorough one for `make test-thorough`.

`HYPOTHESIS_PROFILE=thorough` (set by `make test-thorough`) selects the thorough profile.
Deadlines are off in both: examples write real Parquet files, whose timing varies with
the machine's load, and a flaky deadline would say nothing about correctness.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
