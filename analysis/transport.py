"""Retries, implemented once at the transport so every generated call gets them.

The generated client takes one `httpx_args` for its sync and async clients, so a single
`RetryTransport` serves both. It retries what is safe to retry for the service's GETs:
429 (honouring Retry-After), 5xx gateways, connection errors and timeouts, and a 200
whose JSON body is truncated or not JSON. Backoff and stopping come from tenacity.
The parsed JSON of a validated body rides along in `response.extensions["dims.json"]`
so callers do not parse it twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import orjson
import tenacity

from .errors import ResponseFormatError, describe

log = logging.getLogger("dims.transport")

JSON_EXTENSION = "dims.json"
#: A request extension: the function that parses a 200 JSON body instead of orjson.loads
#: (the fetch layer reads pages as raw msgspec values). It raises ValueError for a body
#: that is not JSON, which is retried like one.
DECODER_EXTENSION = "dims.decoder"


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. The defaults are bounded: at most 6 attempts and 60 s per request."""

    attempts: int = 6
    total_seconds: float = 60.0
    initial_backoff: float = 0.2
    max_backoff: float = 8.0
    jitter: float = 0.2
    #: Longest Retry-After honoured; a longer one gives up at once rather than stall.
    max_retry_after: float = 30.0
    statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})
    validate_json: bool = True

    @classmethod
    def none(cls) -> RetryPolicy:
        return cls(attempts=1)


class _Retry(Exception):
    """Raised inside an attempt to ask tenacity for another one."""

    def __init__(
        self, reason: str, response: httpx.Response | None = None, *, bad_body: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.response = response
        #: The status was fine but the body was not JSON: never hand that response back.
        self.bad_body = bad_body
        self.retry_after = _retry_after(response) if response is not None else None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to backoff rather than parse calendars


def _is_json(response: httpx.Response) -> bool:
    return "json" in response.headers.get("content-type", "")


@dataclass
class RetryStats:
    """Counts the progress bar and the tests read."""

    retries: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)

    def record(self, reason: str) -> None:
        self.retries += 1
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1


class RetryTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport (sync and async) that retries around an inner transport."""

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        sync_transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self._sync = sync_transport
        self._async = async_transport
        self.stats = RetryStats()
        self.on_retry = on_retry

    def __repr__(self) -> str:
        return f"RetryTransport(policy={self.policy!r})"

    # -- tenacity wiring ---------------------------------------------------------------
    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retry) and exc.retry_after is not None:
            return exc.retry_after
        backoff = tenacity.wait_exponential_jitter(
            multiplier=self.policy.initial_backoff,
            max=self.policy.max_backoff,
            jitter=self.policy.jitter,
        )
        return backoff(state)

    def _should_retry(self, state: tenacity.RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Retry):
            return not (
                exc.retry_after is not None and exc.retry_after > self.policy.max_retry_after
            )
        return isinstance(exc, httpx.TransportError)

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        reason = exc.reason if isinstance(exc, _Retry) else type(exc).__name__
        self.stats.record(reason)
        log.info("retrying (%s), attempt %d", reason, state.attempt_number + 1)
        if self.on_retry is not None:
            self.on_retry(reason)

    def _retrying_kwargs(self) -> dict:
        return {
            "stop": tenacity.stop_after_attempt(self.policy.attempts)
            | tenacity.stop_after_delay(self.policy.total_seconds),
            "wait": self._wait,
            "retry": self._should_retry,
            "before_sleep": self._before_sleep,
            "reraise": True,
        }

    # -- one attempt's verdict -----------------------------------------------------------
    def _check(self, request: httpx.Request, response: httpx.Response) -> httpx.Response:
        """Return the response if it is final, or raise _Retry (after closing it)."""
        if response.status_code in self.policy.statuses:
            raise _Retry(f"HTTP {response.status_code}", response)
        if response.status_code == 200 and self.policy.validate_json and _is_json(response):
            decode = request.extensions.get(DECODER_EXTENSION, orjson.loads)
            try:
                response.extensions[JSON_EXTENSION] = decode(response.content)
            except ValueError as exc:  # orjson's and msgspec's decode errors are ValueErrors
                raise _Retry("invalid JSON body", response, bad_body=True) from exc
        return response

    @staticmethod
    def _final(request: httpx.Request, exc: _Retry) -> httpx.Response:
        """Out of attempts: hand back the last error response, or say the body was bad."""
        if exc.response is not None and not exc.bad_body:
            return exc.response
        raise ResponseFormatError(
            f"{describe(request)} returned a truncated or non-JSON body on every attempt "
            "(a proxy or the service is cutting responses); retry later"
        )

    # -- sync --------------------------------------------------------------------------
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._sync is None:
            self._sync = httpx.HTTPTransport()
        try:
            for attempt in tenacity.Retrying(**self._retrying_kwargs()):
                with attempt:
                    response = self._sync.handle_request(request)
                    try:
                        response.read()
                    finally:
                        response.close()
                    return self._check(request, response)
        except _Retry as exc:
            return self._final(request, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()

    # -- async -------------------------------------------------------------------------
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._async is None:
            self._async = httpx.AsyncHTTPTransport()
        try:
            async for attempt in tenacity.AsyncRetrying(**self._retrying_kwargs()):
                with attempt:
                    response = await self._async.handle_async_request(request)
                    try:
                        await response.aread()
                    finally:
                        await response.aclose()
                    return self._check(request, response)
        except _Retry as exc:
            return self._final(request, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.aclose()
