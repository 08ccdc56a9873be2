"""Retries, implemented once at the transport so every generated call gets them.

The generated client takes one `httpx_args` for its sync and async clients, so a single
`RetryTransport` serves both. It retries what is safe to retry for the service's GETs:
429 (honouring Retry-After), 5xx gateways, connection errors and timeouts, and a 200
whose JSON body is truncated or not JSON. Backoff and stopping come from tenacity.
The JSON of a validated body is parsed once, here: a caller picks the parser for its
request (`with_decoder`) and reads the value off the response (`decoded_json`). httpx's
per-request `extensions` carry both; their keys are this module's own, so the fetch layer
and the transport agree on two typed functions instead of two strings.

It also bounds what one request may cost, whatever the service does (`ResponseLimits`):
a deadline for the whole request (attempts and waits included; httpx's timeouts are per
read, so a body dripping a byte a second would never end), and a size limit on the body as
sent and once decompressed. The body is streamed and decoded here, chunk by chunk, and
reading stops at the first byte over a limit: a 2 GiB body or a gzip bomb costs at most the
limit in memory. A breach is not retried: it is its own one-line error saying what the
service did. The async client bounds the whole exchange with the deadline. The sync one
cannot cancel a blocking read, so its default transport caps every socket read and write
at the time left (`DeadlineTransport`): a service dripping its headers a byte at a time,
which httpx's per-read timeouts never end, ends at the deadline there too.
"""

from __future__ import annotations

import logging
import math
import ssl
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpcore
import httpx
import orjson
import tenacity

from .. import _defaults as defaults
from .._errors import (
    DeadlineExceededError,
    ResponseFormatError,
    ResponseTooLargeError,
)
from .._http_errors import describe, raise_for_status
from .._secrets import scrub

log = logging.getLogger("dims.transport")

#: Parses a 200 JSON body instead of orjson.loads (the fetch layer reads pages as raw
#: msgspec values). It raises ValueError for a body that is not JSON, retried like one.
JsonDecoder = Callable[[bytes], Any]
#: httpx extension keys, used only in this module (`with_decoder`, `decoded_json`,
#: `with_refusal_hints`).
_DECODER = "dims.decoder"
_DECODED = "dims.json"
_REFUSAL_HINTS = "dims.refusal_hints"


@dataclass(frozen=True)
class Decoded:
    """A body the transport parsed, whatever its value (JSON `null` is None, and parsed)."""

    value: Any


def with_decoder(request: Mapping[str, Any], decoder: JsonDecoder) -> dict[str, Any]:
    """`request` (the keyword arguments of `httpx.Client.request`) asking RetryTransport to
    parse its 200 JSON body with `decoder`; the extensions it had are kept."""
    return {**request, "extensions": {**request.get("extensions", {}), _DECODER: decoder}}


def decoded_json(response: httpx.Response) -> Decoded | None:
    """The body RetryTransport parsed for `response`, or None when it parsed none (not a
    200 JSON body, validation off, or a client without it)."""
    if _DECODED in response.extensions:
        return Decoded(response.extensions[_DECODED])
    return None


def with_refusal_hints(request: httpx.Request, hints: Mapping[int, str]) -> None:
    """Say what an error status of `request` means for the credentials it carries (401: was
    a key sent at all, and from which setting): the typed error gives that advice instead of
    its class's. Whoever attaches the credentials knows it (`settings.ApiKeyAuth`); the
    hints never hold the key itself."""
    request.extensions[_REFUSAL_HINTS] = hints


def _refusal_hint(response: httpx.Response) -> str | None:
    hints: Mapping[int, str] = response.request.extensions.get(_REFUSAL_HINTS, {})
    return hints.get(response.status_code)


@dataclass(frozen=True, init=False)
class RetryPolicy:
    """How hard to try. The defaults are bounded: at most 5 retries and 60 s per request.

    `retries` counts the attempts after the first, as `dims --retries`, curl's and pip's
    `--retries` do: `retries=0` sends each request once.
    """

    #: Attempts after the first, for the statuses and failures worth another one.
    retries: int
    total_seconds: float
    initial_backoff: float
    max_backoff: float
    jitter: float
    #: Longest Retry-After honoured; a longer one gives up at once rather than stall.
    max_retry_after: float
    statuses: frozenset[int]
    validate_json: bool
    #: Retries when the connection is refused or cannot be made at all: one, for a service
    #: restarting; a wrong URL then fails in well under a second, not ~8 s.
    connect_retries: int

    def __init__(
        self,
        retries: int = defaults.RETRIES,
        total_seconds: float = 60.0,
        initial_backoff: float = 0.2,
        max_backoff: float = 8.0,
        jitter: float = 0.2,
        max_retry_after: float = 30.0,
        statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504}),
        validate_json: bool = True,
        connect_retries: int = 1,
    ) -> None:
        if retries < 0 or connect_retries < 0:
            raise ValueError(f"retries must be 0 or more: {retries}, {connect_retries}")
        chosen = {
            "retries": retries,
            "total_seconds": total_seconds,
            "initial_backoff": initial_backoff,
            "max_backoff": max_backoff,
            "jitter": jitter,
            "max_retry_after": max_retry_after,
            "statuses": statuses,
            "validate_json": validate_json,
            "connect_retries": connect_retries,
        }
        for name, value in chosen.items():  # frozen: as the generated __init__ would
            object.__setattr__(self, name, value)

    @classmethod
    def none(cls) -> RetryPolicy:
        return cls(retries=0)


MIB = defaults.MIB


@dataclass(frozen=True)
class ResponseLimits:
    """What one request may cost. Generous: far above any real page, far below harm."""

    #: Seconds for the whole request: every attempt, body and wait between them.
    deadline: float = defaults.DEADLINE_S
    #: Bytes of body as sent (compressed or not).
    max_body_bytes: int = defaults.MAX_BODY_MIB * MIB
    #: Bytes of body once gzip or deflate is undone.
    max_decoded_bytes: int = defaults.MAX_DECODED_MIB * MIB

    def __post_init__(self) -> None:
        if not (math.isfinite(self.deadline) and self.deadline > 0):
            raise ValueError(f"deadline must be a positive number of seconds: {self.deadline}")
        if self.max_body_bytes < 1 or self.max_decoded_bytes < 1:
            raise ValueError("body size limits must be at least 1 byte")


#: Content codings dims asks for and decodes itself (so the size limit holds for each).
ACCEPT_ENCODING = "gzip, deflate"
_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}
#: Most bytes one decompression step may produce: bounds memory within a chunk too.
_STEP = 4 * MIB


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n % MIB == 0 else f"{n:,} bytes"


class _Decoder:
    """Undoes one content coding (identity, gzip or deflate) with a bound on its output."""

    def __init__(self, request: httpx.Request, coding: str, limit: int) -> None:
        self.request = request
        self.coding = coding
        self.limit = limit
        self.produced = 0
        self._zlib = zlib.decompressobj(_WBITS[coding]) if coding in _WBITS else None
        self._started = False

    def decode(self, data: bytes) -> list[bytes]:
        if self._zlib is None:
            return [self._count(data)] if data else []
        if not self._started and self.coding == "deflate":
            self._started = True
            try:  # "deflate" is zlib-wrapped by the RFC, raw by some servers
                zlib.decompressobj().decompress(data[:64], 1)
            except zlib.error:
                self._zlib = zlib.decompressobj(-15)
        out = []
        try:
            while data and not self._zlib.eof:
                part = self._zlib.decompress(data, min(_STEP, self.limit - self.produced + 1))
                out.append(self._count(part))
                data = self._zlib.unconsumed_tail
        except zlib.error as exc:  # corrupt: like a truncated body, worth another attempt
            raise _Retry(f"invalid {self.coding} body", bad_body=True) from exc
        return out

    def _count(self, part: bytes) -> bytes:
        self.produced += len(part)
        if self.produced > self.limit:
            what = "body" if self._zlib is None else f"{self.coding} body that expands"
            raise ResponseTooLargeError(
                f"{describe(self.request)}: the service sent a {what} beyond "
                f"{_size(self.limit)} (the decompressed size limit); if such a response is "
                "expected, raise --max-decoded-mib (max_decoded_bytes)"
            )
        return part


class _Body:
    """One response's body, read chunk by chunk within the limits and the deadline."""

    def __init__(
        self,
        request: httpx.Request,
        response: httpx.Response,
        limits: ResponseLimits,
        deadline: float,
    ) -> None:
        self.request = request
        self.response = response
        self.limits = limits
        self.deadline = deadline
        self.received = 0
        self.parts: list[bytes] = []
        coding = response.headers.get("content-encoding", "identity").strip().lower()
        if response.is_stream_consumed:  # a response made whole (httpx.MockTransport)
            coding = "identity"
        if coding not in ("identity", "", *_WBITS):
            raise ResponseFormatError(
                f"{describe(request)}: the service sent a body in content-encoding "
                f"{scrub(coding)[:40]!r}, which dims did not ask for (it accepts "
                f"{ACCEPT_ENCODING}); check the service"
            )
        self.decoder = _Decoder(request, coding, limits.max_decoded_bytes)
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > limits.max_body_bytes:
            raise self._too_large(f" (it announced {int(announced):,} bytes)")

    def feed(self, chunk: bytes) -> None:
        self.received += len(chunk)
        if self.received > self.limits.max_body_bytes:
            raise self._too_large("")
        if time.monotonic() > self.deadline:
            raise _deadline_error(self.request, self.limits, self.received)
        self.parts.extend(self.decoder.decode(chunk))

    def _too_large(self, announced: str) -> ResponseTooLargeError:
        return ResponseTooLargeError(
            f"{describe(self.request)}: the service sent more than "
            f"{_size(self.limits.max_body_bytes)}{announced} (the response size limit); "
            "if such a response is expected, raise --max-body-mib (max_body_bytes)"
        )

    def response_with_body(self) -> httpx.Response:
        """A response holding the decoded body (content headers now describe that body)."""
        dropped = (b"content-encoding", b"content-length", b"transfer-encoding")
        return httpx.Response(
            self.response.status_code,
            headers=[(k, v) for k, v in self.response.headers.raw if k.lower() not in dropped],
            content=b"".join(self.parts),
            request=self.request,
            extensions=self.response.extensions,
        )


def _deadline_error(
    request: httpx.Request, limits: ResponseLimits, received: int | None
) -> DeadlineExceededError:
    progress = (
        "had not sent its whole response head"
        if received is None
        else f"was still sending after {received:,} bytes"
    )
    return DeadlineExceededError(
        f"{describe(request)} did not finish within {limits.deadline:g} s (the service "
        f"{progress}; the deadline covers every attempt); raise --deadline or retry later"
    )


def _remaining(request: httpx.Request, limits: ResponseLimits, deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _deadline_error(request, limits, None)
    return remaining


#: The deadline (time.monotonic()) of the request this thread is sending through a
#: DeadlineTransport; None outside one. Each thread and task has its own.
_DEADLINE: ContextVar[float | None] = ContextVar("dims_request_deadline", default=None)
#: A timeout this close to the deadline is the deadline's.
_DEADLINE_SLACK_S = 0.05


def _capped(timeout: float | None, expired: type[httpcore.TimeoutException]) -> float | None:
    """`timeout` cut to what is left of the request's deadline; `expired` once none is left."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the request's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket whose every read and write ends by the deadline of the request using it."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _capped(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _capped(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        limit = _capped(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, limit))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sockets, each wrapped in a _DeadlineStream."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        limit = _capped(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, limit, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        limit = _capped(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, limit, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's sync transport (its defaults), on sockets that end by the request's deadline.

    httpx takes no network backend, so its connection pool is replaced by one like it that
    has ours. RetryTransport sets the deadline around each request it sends through it.
    """

    def __init__(self) -> None:
        context = httpx.create_ssl_context()
        super().__init__(verify=context)
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._pool = httpcore.ConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_DeadlineBackend(),
        )


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
        limits: ResponseLimits | None = None,
        sync_transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        on_retry: Callable[[str], None] | None = None,
        raise_errors: bool = True,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.limits = limits or ResponseLimits()
        self._sync = sync_transport
        self._async = async_transport
        self.stats = RetryStats()
        self.on_retry = on_retry
        #: An error status (after retries) raises dims' typed error (`dims._errors`), so
        #: every call through the client, the generated operations included, fails with one
        #: clear line instead of handing back an error body to be mistaken for data.
        self.raise_errors = raise_errors

    def __repr__(self) -> str:
        return f"RetryTransport(policy={self.policy!r}, limits={self.limits!r})"

    def with_policy(self, policy: RetryPolicy) -> RetryTransport:
        """A transport retrying by `policy` over this one's connections (its pools made now,
        if not yet, so both share them): a client copy with other retries keeps its
        connections. Closing either closes them for both."""
        if self._sync is None:
            self._sync = DeadlineTransport()
        if self._async is None:
            self._async = httpx.AsyncHTTPTransport()
        return RetryTransport(
            policy,
            limits=self.limits,
            sync_transport=self._sync,
            async_transport=self._async,
            on_retry=self.on_retry,
            raise_errors=self.raise_errors,
        )

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
        if isinstance(exc, httpx.ConnectError):
            retries = min(self.policy.connect_retries, self.policy.retries)
            return state.attempt_number <= retries
        return isinstance(exc, httpx.TransportError)

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        reason = exc.reason if isinstance(exc, _Retry) else type(exc).__name__
        self.stats.record(reason)
        log.info("retrying (%s), attempt %d", reason, state.attempt_number + 1)
        if self.on_retry is not None:
            self.on_retry(reason)

    def _retrying_kwargs(self) -> dict[str, Any]:
        return {
            "stop": tenacity.stop_after_attempt(self.policy.retries + 1)
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
            decode: JsonDecoder = request.extensions.get(_DECODER, orjson.loads)
            try:
                response.extensions[_DECODED] = decode(response.content)
            except ValueError as exc:  # orjson's and msgspec's decode errors are ValueErrors
                raise _Retry("invalid JSON body", response, bad_body=True) from exc
        return response

    def _verdict(self, response: httpx.Response) -> httpx.Response:
        if self.raise_errors:
            raise_for_status(response, _refusal_hint(response))
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

    # -- one attempt, bounded ------------------------------------------------------------
    def _prepare(self, request: httpx.Request, deadline: float, timeouts: dict[str, Any]) -> float:
        """Before an attempt: no read may outlast the deadline; only codings we decode."""
        remaining = _remaining(request, self.limits, deadline)
        request.extensions["timeout"] = {
            name: remaining if value is None else min(value, remaining)
            for name, value in timeouts.items()
        }
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        return remaining

    def _start(self, request: httpx.Request) -> tuple[float, dict[str, Any]]:
        return time.monotonic() + self.limits.deadline, dict(request.extensions.get("timeout", {}))

    # -- sync --------------------------------------------------------------------------
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._sync is None:
            self._sync = DeadlineTransport()
        deadline, timeouts = self._start(request)
        token = _DEADLINE.set(deadline)
        try:
            for attempt in tenacity.Retrying(**self._retrying_kwargs()):
                with attempt:
                    self._prepare(request, deadline, timeouts)
                    return self._verdict(self._check(request, self._exchange(request, deadline)))
        except _Retry as exc:
            return self._verdict(self._final(request, exc))
        except httpx.TransportError as exc:
            raise _scrubbed(exc, request) from None
        finally:
            _DEADLINE.reset(token)
        raise AssertionError("unreachable")  # pragma: no cover

    def _exchange(self, request: httpx.Request, deadline: float) -> httpx.Response:
        """One attempt: the response with its whole body; a timeout at the deadline is the
        deadline's error (it is not retried)."""
        assert self._sync is not None
        body: _Body | None = None
        try:
            response = self._sync.handle_request(request)
            try:
                body = _Body(request, response, self.limits, deadline)
                for chunk in _raw_chunks(response):
                    body.feed(chunk)
            finally:
                response.close()
        except httpx.TimeoutException:
            if time.monotonic() < deadline - _DEADLINE_SLACK_S:
                raise
            received = None if body is None else body.received
            raise _deadline_error(request, self.limits, received) from None
        return body.response_with_body()

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()

    # -- async -------------------------------------------------------------------------
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._async is None:
            self._async = httpx.AsyncHTTPTransport()
        deadline, timeouts = self._start(request)
        try:
            async for attempt in tenacity.AsyncRetrying(**self._retrying_kwargs()):
                with attempt:
                    remaining = self._prepare(request, deadline, timeouts)
                    bodies: list[_Body] = []
                    try:
                        # Async can bound the whole exchange, headers included.
                        with anyio.fail_after(remaining):
                            await self._aread(request, deadline, bodies)
                    except TimeoutError:
                        received = bodies[0].received if bodies else None
                        raise _deadline_error(request, self.limits, received) from None
                    return self._verdict(self._check(request, bodies[0].response_with_body()))
        except _Retry as exc:
            return self._verdict(self._final(request, exc))
        except httpx.TransportError as exc:
            raise _scrubbed(exc, request) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _aread(self, request: httpx.Request, deadline: float, out: list[_Body]) -> None:
        """One exchange; its body goes into `out` as soon as it starts (so that the
        deadline's message can say how far it got, should the exchange be cancelled)."""
        assert self._async is not None
        response = await self._async.handle_async_request(request)
        try:
            body = _Body(request, response, self.limits, deadline)
            out.append(body)
            if response.is_stream_consumed:
                body.feed(response.content)
            else:
                async for chunk in response.aiter_raw():
                    body.feed(chunk)
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.aclose()


def _raw_chunks(response: httpx.Response) -> Iterator[bytes]:
    """The body as sent, chunk by chunk; or whole, when the response was made whole."""
    if response.is_stream_consumed:
        yield response.content
    else:
        yield from response.iter_raw()


def _scrubbed(exc: httpx.TransportError, request: httpx.Request) -> httpx.TransportError:
    """The same error, its text without secrets (protocol errors can quote what was sent)."""
    text = str(exc)
    clean = scrub(text)
    return exc if clean == text else type(exc)(clean, request=request)
