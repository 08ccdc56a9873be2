"""What every layer's tests share: Hypothesis profiles and the standard sandbox.

Hypothesis: a fast profile for `make test`, a thorough one for `make test-thorough`
(`HYPOTHESIS_PROFILE=thorough`). Deadlines are off in both: examples write real Parquet
files, whose timing varies with the machine's load, and a flaky deadline would say nothing
about correctness.

The sandbox: one real HTTP server on loopback per test process, serving the standard fleet
(`generate_fleet`'s defaults) without faults or a key. Tests only read from it; a test that
needs faults, a key, canaries or another fleet starts its own `run_sandbox(...)`.

Profiles: every test runs with an empty config file of its own (`DIMS_CONFIG`), and no
`DIMS_PROFILE` or `DIMS_OUT`.

Object storage: `s3_server` and `s3_out`, a real S3 server (SeaweedFS, tests/object_store.py)
per test process, started only by the tests that ask for it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from object_store import S3Server

from dims._connection import RetryPolicy, connect
from dims.sandbox import SandboxHandle, run_sandbox
from dims_client import Client

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
def _no_config(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("dims-config") / "config.toml"
    path.write_text("# no profiles: the tests' own\n", encoding="utf-8")
    return str(path)


@pytest.fixture(autouse=True)
def _isolated_profiles(_no_config: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the user's own config file or profile (a `default` profile there would
    point every `connect()` elsewhere): an empty config file, no profile or DIMS_OUT named.
    A test of profiles sets its own."""
    monkeypatch.setenv("DIMS_CONFIG", _no_config)
    for name in ("DIMS_PROFILE", "DIMS_OUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """A piped export prints a progress line every few seconds (docs/cli.md); a test that
    holds a command's stderr to its exact lines would then depend on how fast this machine
    is. A day between lines, unless a test asks for them (tests/cli/test_cli_conventions.py)."""
    monkeypatch.setenv("DIMS_PROGRESS_EVERY_S", "86400")


@pytest.fixture(scope="session")
def fast_retry() -> RetryPolicy:
    """Retries that recover from a fault in milliseconds, not seconds, and give up in 20 s."""
    return RetryPolicy(retries=5, initial_backoff=0.01, max_backoff=0.05, total_seconds=20)


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxHandle]:
    """The standard fleet served on loopback; read-only, so one server per test process."""
    with run_sandbox() as handle:
        yield handle


@pytest.fixture
def client(sandbox: SandboxHandle, fast_retry: RetryPolicy) -> Client:
    """A dims client (`connect()`: timeout, retries, typed errors) of the standard sandbox."""
    return connect(sandbox.base_url, retry=fast_retry)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3 server (SeaweedFS) on loopback for the session, with one empty bucket."""
    server = S3Server.start_retrying(tmp_path_factory)
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
