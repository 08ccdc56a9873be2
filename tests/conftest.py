"""Hypothesis profiles: a fast one for `make test`, a thorough one for `make test-thorough`.

`HYPOTHESIS_PROFILE=thorough` (set by `make test-thorough`) selects the thorough profile.
Deadlines are off in both: examples write real Parquet files, whose timing varies with
the machine's load, and a flaky deadline would say nothing about correctness.

`s3_server` and `s3_out`: a real S3 server for the object-storage tests (tests/object_store.py).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from object_store import S3Server

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


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3 server (SeaweedFS) on loopback for the session, with one empty bucket."""
    server = S3Server.start(tmp_path_factory.mktemp("s3-server"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_out(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh `s3://` dataset root on the server; its credentials and endpoint in this
    process's environment (the standard AWS variables), so children inherit them."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    return f"s3://{s3_server.bucket}/{secrets.token_hex(6)}/dims-data"
