"""The reports layer's shared data: one fleet, exported once per test process.

The fleet carries both canaries, so every report built from it can be searched for them;
tests read the dataset and add nothing to it but the report test_reports.py writes once;
a test that changes records exports its own into tmp_path.
"""

from __future__ import annotations

from pathlib import Path

import fleet_math as fm
import pytest

from dims import _reports as reports
from dims._reports import Snapshot
from dims.sandbox import Fleet, generate_fleet

CANARY_SECRET = "canary-secret-9f3e1c7a"
CANARY_ENV = "canary-env-4b2d8e60"


@pytest.fixture(scope="session")
def canaries() -> frozenset[str]:
    """The secret and env values planted in `fleet`, which no report may show."""
    return frozenset({CANARY_SECRET, CANARY_ENV})


@pytest.fixture(scope="session")
def fleet() -> Fleet:
    """300 deployments of every type and shape, with the canaries planted."""
    return generate_fleet(300, seed=7, canary_secret=CANARY_SECRET, canary_env_value=CANARY_ENV)


@pytest.fixture(scope="session")
def dataset_date() -> str:
    """The snapshot date of `dataset`."""
    return "2025-06-02"


@pytest.fixture(scope="session")
def dataset(tmp_path_factory: pytest.TempPathFactory, fleet: Fleet, dataset_date: str) -> Path:
    """`fleet` written by the real export, as one snapshot on `dataset_date`."""
    out = tmp_path_factory.mktemp("dataset")
    fm.export_fleet(fleet.deployments, fleet.deployment_types, out, dataset_date)
    return out


@pytest.fixture(scope="session")
def snap(dataset: Path) -> Snapshot:
    """The snapshot of `dataset`, loaded once."""
    return reports.load_snapshot(dataset)
