"""The SDK's errors, each from a fault the sandbox really serves, sync and async (issue 29):
openai-python's classes and attributes, dims' one-line messages, no key anywhere."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time

import pytest
from hostile_servers import Connection, Request, serve

import dims
from dims._errors import retry_after
from dims.sandbox import Faults, run_sandbox

KEY = "sk-right-key-0123456789"
WRONG = "sk-wrong-key-9876543210"
MISSING = "00000000-0000-4000-8000-00000000abcd"


def calls(mode, make):
    """Run `call(client)` with a fresh Client or AsyncClient made by `make(cls)`; the error it
    raises, or its result."""

    def run(call):
        if mode == "sync":
            with make(dims.Client) as client:
                return call(client)

        async def main():
            async with make(dims.AsyncClient) as client:
                return await call(client)

        return asyncio.run(main())

    return run


def listing(mode, **filters):
    """A call that lists the deployments, as the mode does it."""
    if mode == "sync":
        return lambda client: list(client.deployments.list(**filters))

    async def collect(client):
        return [d async for d in client.deployments.list(**filters)]

    return collect


def assert_clean(error, *secrets):
    """One line; no secret in the message, repr, body or the request it carries."""
    shown = f"{error} {error!r} {error.body!r} {error.response.request.headers!r}"
    assert "\n" not in str(error)
    for secret in secrets:
        assert secret not in shown


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


@MODES
def test_401_is_an_authentication_error_with_the_response(mode):
    with run_sandbox(deployments=5, seed=1, api_key=KEY) as sb:
        run = calls(mode, lambda cls: cls(base_url=sb.base_url, api_key=WRONG))
        with pytest.raises(dims.AuthenticationError) as info:
            run(listing(mode))
        assert sb.stats.faults["unauthorized"] == 1  # not retried
    error = info.value
    assert isinstance(error, dims.APIStatusError)
    assert error.status_code == error.response.status_code == 401
    assert error.body == {"detail": "Missing or invalid API key (header X-Api-Key)"}
    assert error.headers["content-type"] == "application/json"
    assert "HTTP 401" in str(error) and "DIMS_API_KEY" in str(error)
    assert "x-api-key" not in {k.lower() for k in error.response.request.headers}
    assert_clean(error, WRONG, KEY)


@MODES
def test_403_is_a_permission_denied_error_not_an_authentication_error(mode):
    with run_sandbox(deployments=5, seed=1, api_key=KEY) as sb:
        unknown = "99999999-9999-4999-8999-999999999999"
        run = calls(mode, lambda cls: cls(base_url=sb.base_url, api_key=KEY, tenant_id=unknown))
        with pytest.raises(dims.PermissionDeniedError) as info:
            run(listing(mode))
    error = info.value
    assert not isinstance(error, dims.AuthenticationError)
    assert error.status_code == 403 and isinstance(error, dims.APIStatusError)
    assert "no access to that tenant" in error.body["detail"]
    assert "HTTP 403" in str(error) and "DIMS_TENANT_ID" in str(error)  # the CLI's line
    assert error.response.request.headers["x-tenant-id"] == unknown  # not a secret: kept
    assert_clean(error, KEY)


@MODES
def test_404_is_a_not_found_error(mode, sandbox):
    run = calls(mode, lambda cls: cls(base_url=sandbox.base_url))
    with pytest.raises(dims.NotFoundError) as info:
        run(lambda client: client.providers.get("no-such-provider"))
    assert info.value.status_code == 404 and "no-such-provider" in str(info.value)
    with pytest.raises(dims.NotFoundError) as info:
        run(lambda client: client.repositories.list(MISSING))
    assert info.value.body == {"detail": "Integration not found"}


@MODES
def test_422_is_a_validation_error_with_the_services_body(mode):
    """A value only the service can refuse (the spec lists no statuses; a deployment type it
    does not list is refused before a request, tests/fetch/test_filters.py)."""
    with serve(refuses_status) as server:
        run = calls(mode, lambda cls: cls(base_url=server.base_url, max_retries=0))
        with pytest.raises(dims.ValidationError) as info:
            run(listing(mode, status="RUNNING"))
    assert info.value.status_code == 422
    assert info.value.body["detail"][0]["loc"] == ["query", "status"]
    assert "status=RUNNING" in server.requests[0].target


async def refuses_status(request: Request, connection: Connection) -> None:
    """The published service's 422 (FastAPI's shape) for a status it does not know."""
    detail = [{"type": "enum", "loc": ["query", "status"], "msg": "Input should be 'READY'"}]
    body = json.dumps({"detail": detail}).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    await connection.head("422 Unprocessable Entity", {**headers, "Connection": "close"})
    await connection.send(body)


@MODES
def test_429_beyond_the_policy_is_a_rate_limit_error_with_retry_after(mode):
    """A Retry-After longer than the retry policy honours (30 s) ends at once."""
    with run_sandbox(
        deployments=5, seed=1, faults=Faults(rate_limit_every=1, retry_after_s=45)
    ) as sb:
        run = calls(mode, lambda cls: cls(base_url=sb.base_url))
        with pytest.raises(dims.RateLimitError) as info:
            run(lambda client: client.providers.list())
        assert sb.stats.faults["rate_limit"] == 1
    assert info.value.status_code == 429
    assert info.value.retry_after == 45.0 and info.value.headers["retry-after"] == "45"


@MODES
@pytest.mark.parametrize("html", [False, True])
def test_5xx_after_retries_is_a_server_error(mode, html):
    faults = Faults(error_every=1, error_status=502, error_html=html)
    with run_sandbox(deployments=5, seed=1, faults=faults) as sb:
        run = calls(mode, lambda cls: cls(base_url=sb.base_url, max_retries=1))
        with pytest.raises(dims.ServerError) as info:
            run(lambda client: client.providers.list())
        assert sb.stats.faults["error"] == 2
    assert info.value.status_code == 502 and isinstance(info.value, dims.APIStatusError)
    if html:  # a proxy's page: the body is its text
        assert isinstance(info.value.body, str) and "sandbox-proxy" in info.value.body
    else:
        assert info.value.body == {"detail": "Service temporarily unavailable (injected fault)"}


@MODES
def test_an_unreachable_service_is_an_api_connection_error(mode):
    run = calls(mode, lambda cls: cls(base_url="http://127.0.0.1:9", max_retries=0))
    with pytest.raises(dims.APIConnectionError) as info:
        run(lambda client: client.providers.list())
    assert not isinstance(info.value, dims.APITimeoutError)
    assert "is the service up at http://127.0.0.1:9?" in str(info.value)


def test_the_errors_have_one_name_each():
    assert {"TransportError", "APIError"}.isdisjoint(dir(dims))
    assert not hasattr(dims, "TransportError") and not hasattr(dims, "APIError")
    assert issubclass(dims.DeadlineExceededError, dims.APITimeoutError)
    assert issubclass(dims.APITimeoutError, dims.APIConnectionError)


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("7") == 7.0 and retry_after("-3") == 0.0 and retry_after(None) is None
    assert retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 100 < (retry_after(later) or 0) <= 120
    assert retry_after("Sun, 06 Nov 1994 08:49:37 GMT") == 0.0  # past: no wait
