"""Injectable faults, so retry, paging and error handling are tested against real HTTP.

The faults are the failures a fetch over a real network meets: rate limiting, 5xx (with
JSON or an HTML proxy page), bodies cut short, dropped connections, slow responses and a
listing that changes or stops advancing while it is paged. Each is off by default and
counted, so tests can assert both the client's behaviour and what the server did.
"""

from __future__ import annotations

import asyncio
import hmac
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

Scope = dict[str, Any]
#: The ways a listing's last page can answer an `offset` that does not advance.
FINAL_OFFSETS = ("echo", "zero", "back")
ASGIApp = Callable[..., Any]


@dataclass(frozen=True)
class Faults:
    """Which faults to inject. `*_every = N` fires on every Nth API request (0 = never).

    API requests are numbered from 1 in arrival order across all API routes; when several
    `*_every` faults fall on the same request, reset wins over rate limit over error.
    `truncate_every` counts successful (200) responses instead, `insert_while_paging` counts
    deployment-list requests, and `latency_ms` delays every API request.
    """

    rate_limit_every: int = 0
    retry_after_s: int = 1
    error_every: int = 0
    error_status: int = 503
    error_html: bool = False
    truncate_every: int = 0
    stuck_offset: bool = False
    insert_while_paging: int = 0
    reset_every: int = 0
    latency_ms: float = 0
    #: Listing behaviours of real services: pages capped below `limit`; `offset` ignored
    #: (the first page again and again, while the response offset advances); the last
    #: page's response offset not advancing ("echo" the request's, "zero", or "back" one).
    page_cap: int = 0
    ignore_offset: bool = False
    final_offset: str | None = None
    #: Every API request for this workspace (`X-Tenant-Id`) fails with `fail_tenant_status`:
    #: one workspace of several failing (403: the key lost access; 5xx: its shard is down).
    fail_tenant: str | None = None
    fail_tenant_status: int = 500

    def __post_init__(self) -> None:
        for name in (
            "rate_limit_every",
            "retry_after_s",
            "error_every",
            "truncate_every",
            "insert_while_paging",
            "reset_every",
            "page_cap",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"Faults.{name} must be a non-negative integer, got {value!r}")
        if not 500 <= self.error_status <= 599:
            raise ValueError(f"Faults.error_status must be a 5xx status, got {self.error_status}")
        if not 400 <= self.fail_tenant_status <= 599:
            raise ValueError(
                f"Faults.fail_tenant_status must be a 4xx or 5xx status, "
                f"got {self.fail_tenant_status}"
            )
        if self.latency_ms < 0:
            raise ValueError("Faults.latency_ms must be >= 0")
        if self.final_offset not in (None, *FINAL_OFFSETS):
            raise ValueError(
                f"Faults.final_offset must be one of {FINAL_OFFSETS}, got {self.final_offset!r}"
            )


class SandboxStats:
    """Requests served per URL path and faults injected per kind; safe to read from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: Counter[str] = Counter()
        self._faults: Counter[str] = Counter()
        self._inserted: list[str] = []
        self._in_flight = 0
        self._peak_in_flight = 0

    def started(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._peak_in_flight = max(self._peak_in_flight, self._in_flight)

    def ended(self) -> None:
        with self._lock:
            self._in_flight -= 1

    @property
    def peak_in_flight(self) -> int:
        """The most requests the sandbox was serving at once."""
        with self._lock:
            return self._peak_in_flight

    def count_request(self, path: str) -> None:
        with self._lock:
            self._requests[path] += 1

    def count_fault(self, kind: str) -> None:
        with self._lock:
            self._faults[kind] += 1

    def record_insert(self, deployment_id: str) -> None:
        with self._lock:
            self._faults["insert"] += 1
            self._inserted.append(deployment_id)

    @property
    def requests(self) -> Counter[str]:
        """A copy: URL path -> requests received (every route, unknown paths included)."""
        with self._lock:
            return Counter(self._requests)

    @property
    def faults(self) -> Counter[str]:
        """A copy: fault kind (reset, rate_limit, error, truncate, insert, unauthorized,
        forbidden, tenant_failure) -> n."""
        with self._lock:
            return Counter(self._faults)

    @property
    def inserted_ids(self) -> list[str]:
        """Ids of deployments the insert-while-paging fault added to the listing."""
        with self._lock:
            return list(self._inserted)

    @property
    def total_requests(self) -> int:
        with self._lock:
            return sum(self._requests.values())

    def __repr__(self) -> str:
        return f"SandboxStats(requests={dict(self.requests)}, faults={dict(self.faults)})"


class Sequencer:
    """Numbers API requests and 200 responses so that `every N` is exact under concurrency."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests = 0
        self._successes = 0

    def next_request(self) -> int:
        with self._lock:
            self._requests += 1
            return self._requests

    def next_success(self) -> int:
        with self._lock:
            self._successes += 1
            return self._successes


def bytes_response(
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    content_type: bytes = b"application/json",
) -> Any:
    """An ASGI callable sending `body` (JSON unless told otherwise) with its length."""

    async def respond(scope: Scope, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type),
                    (b"content-length", str(len(body)).encode()),
                    *(headers or ()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return respond


def _detail(status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    return bytes_response(status, orjson.dumps({"detail": detail}), headers)


_HTML_ERROR = (
    b"<!DOCTYPE html>\n<html><head><title>%d</title></head>"
    b"<body><h1>%d Service Unavailable</h1><hr><center>sandbox-proxy</center></body></html>\n"
)


def tenant_of(scope: Mapping[str, Any]) -> str | None:
    """The workspace a request names in `X-Tenant-Id`, or None when it names none."""
    for name, value in scope["headers"]:
        if name == b"x-tenant-id":
            return bytes(value).decode("latin-1")
    return None


class FaultInjector:
    """Wraps one API route: latency, faults, then the API-key check, then the route itself.

    Faults come before authentication because in production they come from the proxies and
    gateways in front of the service. `connection_aborter` is installed by the server that
    runs the app (see server.py): it drops the TCP connection of a request without a
    response, which the ASGI interface itself cannot express.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        faults: Faults,
        stats: SandboxStats,
        sequencer: Sequencer,
        api_key: str | None,
        latency_ms: float,
        aborter: Callable[[], Callable[[Scope], bool] | None],
        tenants: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self.faults = faults
        self.stats = stats
        self.sequencer = sequencer
        self.api_key = api_key.encode() if api_key is not None else None
        self.tenants = frozenset(t.encode() for t in tenants)
        self.latency_s = max(latency_ms, faults.latency_ms) / 1000
        self.aborter = aborter

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        f = self.faults
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        n = self.sequencer.next_request()
        if f.reset_every and n % f.reset_every == 0:
            self.stats.count_fault("reset")
            await self._reset(scope, receive, send)
            return
        if f.rate_limit_every and n % f.rate_limit_every == 0:
            self.stats.count_fault("rate_limit")
            retry = [(b"retry-after", str(f.retry_after_s).encode())]
            await _detail(429, "Too many requests (injected fault)", retry)(scope, receive, send)
            return
        if f.error_every and n % f.error_every == 0:
            self.stats.count_fault("error")
            await self._error(scope, receive, send)
            return
        if self.api_key is not None and not self._authorized(scope):
            self.stats.count_fault("unauthorized")
            await _detail(401, "Missing or invalid API key (header X-Api-Key)")(
                scope, receive, send
            )
            return
        if self.api_key is not None and not self._tenant_allowed(scope):
            self.stats.count_fault("forbidden")
            await _detail(403, "The API key has no access to that tenant (header X-Tenant-Id)")(
                scope, receive, send
            )
            return
        if f.fail_tenant is not None and tenant_of(scope) == f.fail_tenant:
            self.stats.count_fault("tenant_failure")
            status = f.fail_tenant_status
            await _detail(status, f"Workspace unavailable (injected fault, {status})")(
                scope, receive, send
            )
            return
        if f.truncate_every:
            await self.app(scope, receive, self._truncating(send))
        else:
            await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        assert self.api_key is not None
        for name, value in scope["headers"]:
            if name == b"x-api-key":
                return hmac.compare_digest(value, self.api_key)
        return False

    def _tenant_allowed(self, scope: Scope) -> bool:
        """A tenant header, when sent, must name one of the fleet's tenants."""
        for name, value in scope["headers"]:
            if name == b"x-tenant-id":
                return value in self.tenants
        return True

    async def _error(self, scope: Scope, receive: Any, send: Any) -> None:
        status = self.faults.error_status
        if not self.faults.error_html:
            await _detail(status, "Service temporarily unavailable (injected fault)")(
                scope, receive, send
            )
            return
        body = _HTML_ERROR % (status, status)
        html = b"text/html; charset=utf-8"
        await bytes_response(status, body, content_type=html)(scope, receive, send)

    async def _reset(self, scope: Scope, receive: Any, send: Any) -> None:
        abort = self.aborter()
        if abort is not None and abort(scope):
            # Let the event loop deliver connection_lost, so the server sees a disconnected
            # client instead of an app that returned without answering.
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            return
        # Without a cooperating server: promise a body and never send it. The server must
        # then close the connection mid-response, which a client also sees as a failure.
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", b"1048576"),
                ],
            }
        )
        raise ConnectionAbortedError("sandbox: injected connection reset")

    def _truncating(self, send: Any) -> Any:
        """A `send` that buffers the response and, on every Nth 200, sends only half the body."""
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def wrapped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            headers = list(start.get("headers", ()))
            if start["status"] == 200 and len(body) > 1:
                n = self.sequencer.next_success()
                if n % self.faults.truncate_every == 0:
                    self.stats.count_fault("truncate")
                    body = body[: len(body) // 2]
                    headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
                    headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        return wrapped
