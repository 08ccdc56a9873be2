"""`retries` means the same in the CLI and in Python: the attempts after the first.

`dims --retries N` and `RetryPolicy(retries=N)` both send a failing request N + 1 times, as
curl's and pip's `--retries` do; `attempts=`, which counted the first attempt too, is gone.
"""

from __future__ import annotations

import dataclasses

import pytest
from cli_in_process import run

from dims import _fetch as fetch
from dims._connection import RetryPolicy, connect
from dims._errors import ServerError
from dims.sandbox import Faults, run_sandbox

FAST = {"initial_backoff": 0.001, "max_backoff": 0.005, "jitter": 0.0}
PROVIDERS = "/v2/auth/providers"


@pytest.mark.parametrize("retries", [0, 2])
def test_retries_in_python_are_the_attempts_after_the_first(retries):
    with run_sandbox(deployments=5, seed=1, faults=Faults(error_every=1)) as sb:
        client = connect(sb.base_url, retry=RetryPolicy(retries=retries, **FAST))
        with pytest.raises(ServerError):
            fetch.list_providers(client)
        assert sb.stats.requests[PROVIDERS] == retries + 1


@pytest.mark.parametrize("retries", [0, 2])
def test_retries_on_the_command_line_are_the_same(capsys, tmp_path, retries):
    """`dims export --retries N`: its first request (the providers) is sent N + 1 times."""
    with run_sandbox(deployments=5, seed=1, faults=Faults(error_every=1)) as sb:
        code, _, err = run(
            capsys, "export", "--base-url", sb.base_url, "--retries", str(retries),
            "--out", str(tmp_path / "o"),
        )  # fmt: skip
        assert sb.stats.requests[PROVIDERS] == retries + 1
    assert code == 1 and "HTTP 503" in err


def test_the_default_is_the_command_lines_default():
    from dims import _defaults as defaults

    assert RetryPolicy().retries == defaults.RETRIES == 5
    assert RetryPolicy.none().retries == 0


def test_a_policy_is_still_a_frozen_dataclass():
    policy = RetryPolicy(retries=3)
    assert dataclasses.replace(policy, jitter=0.0) == RetryPolicy(retries=3, jitter=0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.retries = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="retries must be 0 or more"):
        RetryPolicy(retries=-1)
