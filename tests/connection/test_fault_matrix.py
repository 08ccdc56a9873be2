"""The fault matrix: one test per row, through the public fetch API, against the live sandbox.

Each row injects one failure a real network or service produces and asserts the exact
outcome: either every record arrives exactly once (a transient fault, retried), or a typed
one-line error after a bounded number of attempts (a persistent one), never a hang.

| row | fault                          | outcome                                               |
|-----|--------------------------------|-------------------------------------------------------|
|  1  | 429 + Retry-After: 1           | waits >= 1 s, retried, every record once              |
|  2  | 429 + Retry-After > the policy | RateLimitError at once (no stall), one request        |
| 3-6 | 500 / 502 / 503 / 504          | transient: every record once; persistent: ServerError |
|     |                                | after exactly `retries` + 1 requests                  |
|  7  | connection reset (no answer)   | transient: retried; persistent: APIConnectionError        |
|  8  | read timeout                   | APIConnectionError (ReadTimeout) after `retries` + 1 tries|
|  9  | truncated 200 body             | transient: retried; persistent: ResponseFormatError   |
| 10  | non-JSON body (HTML 500 page)  | transient: retried; persistent: ServerError, one line |
| 11  | offset ignored (first page     | PaginationError naming the offset, a few requests     |
|     | again, response offset grows)  |                                                       |
| 12  | listing shifts while paging    | one ListingShiftedWarning, duplicates dropped         |
| 13  | 401 wrong key                  | AuthenticationError, not retried                      |
| 14  | 403 (tenant the key can't see) | PermissionDeniedError, one line, not retried         |
| 15  | 404 for an integration         | NotFoundError; fetch_repositories lists it missing    |
| 16  | 422 bad limit / filter value   | ValidationError naming the parameter, not retried     |

The sandbox serves no 200 with a non-JSON body; row 10 covers non-JSON with the HTML error
page a proxy sends, and row 9 covers a 200 whose JSON is cut (also not JSON).
"""

from __future__ import annotations

import json
import re
import time
import uuid
import warnings

import httpx
import pytest
from hostile_servers import Connection, Request, serve

from dims import _fetch as fetch
from dims._connection import RetryPolicy, connect, retry_transport
from dims._errors import (
    APIConnectionError,
    AuthenticationError,
    ConfigurationError,
    NotFoundError,
    PaginationError,
    PermissionDeniedError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    ValidationError,
)
from dims.sandbox import Faults, generate_fleet, run_sandbox
from dims_client.api.deployments import list_deployments
from dims_client.models import ValidationErrorBody

N = 30
RETRIES = 2
#: Requests a persistent fault gets: the first, then RETRIES more.
ATTEMPTS = RETRIES + 1
#: Retries that recover from every-Nth faults, with backoffs short enough for a test.
RECOVER = RetryPolicy(retries=5, initial_backoff=0.005, max_backoff=0.02, jitter=0.0)
#: A persistent fault exhausts these quickly and exactly.
GIVE_UP = RetryPolicy(retries=RETRIES, initial_backoff=0.005, max_backoff=0.02, jitter=0.0)
PROVIDERS = "/v2/auth/providers"


def full_fetch(base_url: str, concurrency: int = 1):
    """Every deployment through the full fetch (a probe, then one listing per type).

    One request in flight by default, so the retries counted match the faults the sandbox
    counted exactly: with more, a speculative request made stale by a short page is let go
    unawaited, and its retries may land after the fetch returns.
    """
    client = connect(base_url, retry=RECOVER)
    stats = fetch.FetchStats()
    pages = list(fetch.fetch_deployments(client, stats=stats, page_size=7, concurrency=concurrency))
    ids = [record["id"] for page in pages for record in page.records]
    return ids, stats, retry_transport(client).stats


def assert_every_record_once(sandbox, ids) -> None:
    assert sorted(ids) == sorted(r["id"] for r in sandbox.fleet.deployments)


def assert_one_line(error: BaseException) -> None:
    assert "\n" not in str(error) and str(error)


# --- rows 1-2: rate limiting ---------------------------------------------------------------


def test_row01_429_with_retry_after_is_waited_out_and_retried():
    """Retry-After is obeyed (not the shorter backoff), and the retried page is not lost."""
    # Request 3 is the first listing page of some type; it alone is rate limited.
    faults = Faults(rate_limit_every=3, retry_after_s=1)
    with run_sandbox(deployments=N, seed=1, faults=faults) as sb:
        started = time.monotonic()
        ids, _, retries = full_fetch(sb.base_url)
        elapsed = time.monotonic() - started
        assert_every_record_once(sb, ids)
        assert sb.stats.faults["rate_limit"] >= 1
        assert retries.by_reason.get("HTTP 429") == sb.stats.faults["rate_limit"]
    assert elapsed >= 1.0


def test_row02_429_with_a_retry_after_beyond_the_policy_fails_at_once():
    """A Retry-After longer than the policy allows is a RateLimitError now, not a stall."""
    faults = Faults(rate_limit_every=1, retry_after_s=3600)
    with run_sandbox(deployments=N, seed=1, faults=faults) as sb:
        client = connect(sb.base_url, retry=RetryPolicy(max_retry_after=30))
        started = time.monotonic()
        with pytest.raises(RateLimitError, match="HTTP 429") as info:
            fetch.list_providers(client)
        assert time.monotonic() - started < 5
        assert sb.stats.requests[PROVIDERS] == 1
    assert_one_line(info.value)
    assert "lower --concurrency or retry later" in str(info.value)


# --- rows 3-6: server errors ------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_row03_06_server_errors_transient_are_retried(status):
    """Every 4th request fails with `status`: retried, every record arrives exactly once."""
    faults = Faults(error_every=4, error_status=status)
    with run_sandbox(deployments=N, seed=2, faults=faults) as sb:
        ids, stats, retries = full_fetch(sb.base_url)
        assert_every_record_once(sb, ids)
        assert stats.duplicates == 0
        assert retries.by_reason == {f"HTTP {status}": sb.stats.faults["error"]}
        assert retries.retries >= 1


def test_row03_06_server_errors_with_requests_in_flight_lose_nothing():
    """The same with 4 requests in flight: retried pages still come out in order, once."""
    with run_sandbox(deployments=N, seed=2, faults=Faults(error_every=3)) as sb:
        ids, stats, retries = full_fetch(sb.base_url, concurrency=4)
        assert_every_record_once(sb, ids)
        assert stats.duplicates == 0 and retries.retries >= 1


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_row03_06_server_errors_persistent_fail_after_exactly_the_attempts(status):
    """A service that keeps failing gets `retries` + 1 requests, then a typed one-line error."""
    with run_sandbox(
        deployments=N, seed=2, faults=Faults(error_every=1, error_status=status)
    ) as sb:
        client = connect(sb.base_url, retry=GIVE_UP)
        with pytest.raises(ServerError, match=f"HTTP {status}") as info:
            fetch.list_providers(client)
        assert sb.stats.requests[PROVIDERS] == ATTEMPTS
    assert info.value.status_code == status
    assert_one_line(info.value)
    assert "GET http://127.0.0.1" in str(info.value) and "retry later" in str(info.value)


# --- row 7: connection reset -------------------------------------------------------------------


def test_row07_connection_reset_transient_is_retried():
    with run_sandbox(deployments=N, seed=3, faults=Faults(reset_every=4)) as sb:
        ids, _, retries = full_fetch(sb.base_url)
        assert_every_record_once(sb, ids)
        assert sb.stats.faults["reset"] >= 1
        assert sum(retries.by_reason.values()) == sb.stats.faults["reset"]
        assert set(retries.by_reason) <= {"RemoteProtocolError", "ReadError", "ConnectError"}


def test_row07_connection_reset_persistent_is_a_transport_error():
    with run_sandbox(deployments=N, seed=3, faults=Faults(reset_every=1)) as sb:
        client = connect(sb.base_url, retry=GIVE_UP)
        with pytest.raises(APIConnectionError, match="/v2/auth/providers failed") as info:
            fetch.list_providers(client)
        assert sb.stats.faults["reset"] == ATTEMPTS
    assert_one_line(info.value)
    # the whole URL and the host to check, not "the base URL"
    assert f"{sb.base_url}/v2/auth/providers" in str(info.value)
    assert f"is the service up at {sb.base_url}?" in str(info.value)


# --- row 8: read timeout --------------------------------------------------------------------------


def test_row08_read_timeout_is_a_transport_error_after_bounded_attempts():
    """A service slower than the timeout: bounded attempts, bounded time, then one line."""
    with run_sandbox(deployments=N, seed=4, faults=Faults(latency_ms=600)) as sb:
        client = connect(sb.base_url, retry=GIVE_UP, timeout=httpx.Timeout(0.1, connect=2.0))
        with pytest.raises(APIConnectionError, match="ReadTimeout") as info:
            list(fetch.fetch_deployments(client, page_size=10))
        # each attempt gave up on its slow answer (no timed assertion: the count shows it)
        assert retry_transport(client).stats.by_reason == {"ReadTimeout": RETRIES}
    assert_one_line(info.value)


# --- row 9: truncated body ------------------------------------------------------------------------


def test_row09_truncated_body_transient_is_retried():
    with run_sandbox(deployments=N, seed=5, faults=Faults(truncate_every=3)) as sb:
        ids, _, retries = full_fetch(sb.base_url)
        assert_every_record_once(sb, ids)
        assert retries.by_reason == {"invalid JSON body": sb.stats.faults["truncate"]}
        assert sb.stats.faults["truncate"] >= 1


def test_row09_truncated_body_persistent_is_a_format_error():
    with run_sandbox(deployments=N, seed=5, faults=Faults(truncate_every=1)) as sb:
        client = connect(sb.base_url, retry=GIVE_UP)
        with pytest.raises(ResponseFormatError, match="truncated or non-JSON body") as info:
            list(fetch.fetch_deployments(client))
        assert sb.stats.faults["truncate"] == ATTEMPTS
    assert_one_line(info.value)


# --- row 10: non-JSON body ------------------------------------------------------------------------


def test_row10_non_json_html_error_page_transient_is_retried():
    faults = Faults(error_every=4, error_status=502, error_html=True)
    with run_sandbox(deployments=N, seed=6, faults=faults) as sb:
        ids, _, retries = full_fetch(sb.base_url)
        assert_every_record_once(sb, ids)
        assert retries.by_reason == {"HTTP 502": sb.stats.faults["error"]}


def test_row10_non_json_html_error_page_persistent_is_one_line():
    """The proxy's HTML page becomes a short, single-line detail, not a JSONDecodeError."""
    faults = Faults(error_every=1, error_status=500, error_html=True)
    with run_sandbox(deployments=N, seed=6, faults=faults) as sb:
        client = connect(sb.base_url, retry=GIVE_UP)
        with pytest.raises(ServerError, match="HTTP 500") as info:
            list(fetch.fetch_deployments(client))
        assert sb.stats.faults["error"] == ATTEMPTS
    assert_one_line(info.value)
    assert "Service Unavailable" in str(info.value)
    assert len(str(info.value)) < 500


# --- rows 11-12: paging -------------------------------------------------------------------------


def test_row11_ignored_offset_is_a_pagination_error_not_a_loop():
    with run_sandbox(deployments=N, seed=7, faults=Faults(ignore_offset=True)) as sb:
        client = connect(sb.base_url, retry=RECOVER)
        with pytest.raises(PaginationError, match=r"ignore `offset`") as info:
            list(fetch.fetch_deployments(client, page_size=5, concurrency=2))
        # the first page, then at most a few windows of requests: no endless loop
        assert sb.stats.requests["/v2/deployments"] <= 1 + 3 * 2
    assert_one_line(info.value)
    assert re.search(r"at offset \d+ brought only records already seen", str(info.value))


def test_row12_listing_shift_while_paging_drops_duplicates_with_one_warning():
    fleet = generate_fleet(N, seed=8)
    _, inserted_type = generate_fleet(N, seed=8).new_deployment()
    original = {i for i, kind in fleet.deployment_types.items() if kind == inserted_type}
    with run_sandbox(fleet=fleet, faults=Faults(insert_while_paging=2)) as sb:
        client = connect(sb.base_url, retry=RECOVER)
        stats = fetch.FetchStats()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pages = list(
                fetch.fetch_deployments(
                    client, stats=stats, page_size=3, concurrency=1, deployment_type=inserted_type
                )
            )
        ids = [record["id"] for page in pages for record in page.records]
        shifted = [w for w in caught if issubclass(w.category, fetch.ListingShiftedWarning)]
        assert sb.stats.faults["insert"] == 1
        original = {
            r["id"] for r in fleet.deployments if fleet.deployment_types[r["id"]] == inserted_type
        }
    assert len(ids) == len(set(ids))
    assert original <= set(ids)
    assert stats.duplicates == 1 and len(shifted) == 1


# --- rows 13-16: client errors ----------------------------------------------------------------


def test_row13_401_wrong_key_is_an_authentication_error_without_retry():
    with run_sandbox(deployments=N, seed=9, api_key="right-key") as sb:
        client = connect(sb.base_url, api_key="wrong-key", retry=RECOVER)
        with pytest.raises(AuthenticationError, match="HTTP 401") as info:
            list(fetch.fetch_deployments(client))
        assert sb.stats.faults["unauthorized"] == 1
        assert retry_transport(client).stats.retries == 0
    assert info.value.status_code == 401
    assert "DIMS_API_KEY" in str(info.value)
    assert_one_line(info.value)


def test_row14_403_forbidden():
    """A 403 is not an AuthenticationError (the key was known, the workspace refused: issue
    29, as openai-python has it); its one line is what it always was."""
    with run_sandbox(deployments=N, seed=10, api_key="right-key") as sb:
        client = connect(sb.base_url, api_key="right-key", tenant_id=str(uuid.UUID(int=7)))
        with pytest.raises(PermissionDeniedError, match="HTTP 403") as info:
            list(fetch.fetch_deployments(client))
        assert sb.stats.faults["forbidden"] == 1
        assert retry_transport(client).stats.retries == 0
    assert info.value.status_code == 403
    assert not isinstance(info.value, AuthenticationError)
    assert "right-key" not in str(info.value)
    assert "DIMS_TENANT_ID" in str(info.value)
    assert_one_line(info.value)


def test_row15_404_for_an_integration():
    with run_sandbox(deployments=N, seed=10) as sb:
        client = connect(sb.base_url, retry=RECOVER)
        unknown = str(uuid.UUID(int=0x1234, version=4))
        with pytest.raises(NotFoundError, match="HTTP 404: Integration not found") as info:
            fetch.list_repositories(client, unknown)
        known = next(iter(sb.fleet.repositories))
        repos = fetch.fetch_repositories(client, [known, unknown])
        assert retry_transport(client).stats.retries == 0
    assert info.value.status_code == 404
    assert repos.missing == [unknown]
    assert repos.by_integration == {known: sb.fleet.repositories[known]}
    assert_one_line(info.value)


@pytest.mark.parametrize("limit", [0, 101])
def test_row16_422_out_of_range_limit_through_the_generated_client(limit):
    """fetch refuses such a limit before sending; the generated client sends it as is (and,
    asked for bodies, gets the service's validation error parsed)."""
    with run_sandbox(deployments=N, seed=11) as sb:
        client = connect(sb.base_url, retry=RECOVER, raise_errors=False)
        response = list_deployments.sync_detailed(client=client, limit=limit)
        assert retry_transport(client).stats.retries == 0
    assert response.status_code == 422
    assert isinstance(response.parsed, ValidationErrorBody)
    assert [item.loc[-1] for item in response.parsed.detail] == ["limit"]


def test_row16_422_bad_filter_value_through_fetch():
    """A value the spec lists choices for is refused before any request (the CLI's words);
    one only the service can refuse (the spec lists no statuses) is its 422, typed."""
    with run_sandbox(deployments=N, seed=11) as sb:
        client = connect(sb.base_url, retry=RECOVER)
        with pytest.raises(ConfigurationError, match="deployment_type: invalid choice") as told:
            list(fetch.fetch_deployments(client, deployment_type="nightly"))
        assert sb.stats.requests["/v2/deployments"] == 0
    assert_one_line(told.value)
    with serve(_refuses_status) as server:
        client = connect(server.base_url, retry=RECOVER)
        with pytest.raises(ValidationError, match="HTTP 422") as info:
            list(fetch.fetch_deployments(client, status="RUNNING"))
    assert "status" in str(info.value) and info.value.status_code == 422
    assert len(server.requests) == 1
    assert_one_line(info.value)


async def _refuses_status(request: Request, connection: Connection) -> None:
    """The published service's 422 (FastAPI's shape) for a status it does not know."""
    detail = [{"type": "enum", "loc": ["query", "status"], "msg": "Input should be 'READY'"}]
    body = json.dumps({"detail": detail}).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    await connection.head("422 Unprocessable Entity", {**headers, "Connection": "close"})
    await connection.send(body)


def test_a_refused_connection_is_tried_twice_not_six_times():
    """A wrong URL fails fast: connection refused is retried once (a restarting service)."""
    client = connect("http://127.0.0.1:1", retry=RetryPolicy(initial_backoff=0.01))
    with pytest.raises(APIConnectionError, match="Connection refused"):
        fetch.list_providers(client)
    assert retry_transport(client).stats.by_reason == {"ConnectError": 1}
