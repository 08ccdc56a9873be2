"""A 401 or 403 says what to fix: whether a key was sent at all, and which setting gave it.

A missing key and a wrong one used to read the same ("check DIMS_API_KEY / --api-key and
DIMS_TENANT_ID / --tenant-id"); now a 401 without a key says that none was sent and how to
set one, a 401 with a key names where the key came from, and a 403 names the tenant the key
cannot see. The key itself is never in the message.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dims import _fetch as fetch
from dims._connection import connect
from dims._errors import APIStatusError, AuthenticationError, PermissionDeniedError
from dims.sandbox import run_sandbox

RIGHT = "dims-right-key-5c1e2a"
WRONG = "dims-wrong-key-0b7d44"
DIMS = Path(sys.executable).parent / "dims"
NOT_SENT = "(no API key was sent: set DIMS_API_KEY or pass --api-key)"


@pytest.fixture
def sandbox():
    with run_sandbox(deployments=5, seed=1, api_key=RIGHT) as sb:
        yield sb


@pytest.fixture(autouse=True)
def no_key_in_the_environment(monkeypatch):
    monkeypatch.delenv("DIMS_API_KEY", raising=False)
    monkeypatch.delenv("DIMS_TENANT_ID", raising=False)


def refusal(client, mode: str = "sync") -> APIStatusError:
    """The error a listing's refusal raises (401: AuthenticationError, 403:
    PermissionDeniedError), one line without the key."""
    with pytest.raises((AuthenticationError, PermissionDeniedError)) as info:
        if mode == "sync":
            fetch.list_providers(client)
        else:
            asyncio.run(fetch.alist_providers(client))
    message = str(info.value)
    assert "\n" not in message and RIGHT not in message and WRONG not in message
    return info.value


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_401_without_a_key_says_none_was_sent_and_how_to_set_one(sandbox, mode):
    error = refusal(connect(sandbox.base_url), mode)
    assert error.status_code == 401
    assert str(error).endswith(NOT_SENT)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_401_with_a_key_from_the_environment_names_the_variable(sandbox, monkeypatch, mode):
    monkeypatch.setenv("DIMS_API_KEY", WRONG)
    error = refusal(connect(sandbox.base_url), mode)
    assert error.status_code == 401
    assert str(error).endswith(
        "(the API key sent, from DIMS_API_KEY, was refused: check it, or give another with "
        "DIMS_API_KEY or --api-key)"
    )


def test_a_401_with_a_key_given_as_an_argument_names_the_argument(sandbox, monkeypatch):
    monkeypatch.setenv("DIMS_API_KEY", RIGHT)  # the argument wins, and it is the one named
    error = refusal(connect(sandbox.base_url, api_key=WRONG))
    assert "the API key sent, from --api-key or api_key=, was refused" in str(error)


def test_a_403_names_the_tenant_the_key_cannot_see(sandbox):
    error = refusal(connect(sandbox.base_url, api_key=RIGHT, tenant_id="nobody"))
    assert error.status_code == 403 and isinstance(error, PermissionDeniedError)
    assert str(error).endswith(
        "(the API key sent, from --api-key or api_key=, has no access to tenant 'nobody', "
        "from DIMS_TENANT_ID or --tenant-id: check the tenant id, or use a key of that "
        "workspace)"
    )


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (None, NOT_SENT),
        (WRONG, "the API key sent, from DIMS_API_KEY, was refused"),
    ],
    ids=["no-key", "wrong-key"],
)
def test_the_command_line_says_the_same_in_one_line(sandbox, tmp_path, key, expected):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIMS_")}
    if key is not None:
        env["DIMS_API_KEY"] = key
    done = subprocess.run(
        [str(DIMS), "export", "--base-url", sandbox.base_url, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dims export: error: GET "), done.stderr
    assert "HTTP 401" in lines[0] and expected in lines[0]
    assert WRONG not in done.stderr and RIGHT not in done.stderr
