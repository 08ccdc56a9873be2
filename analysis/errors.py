"""One exception hierarchy for everything dims raises on purpose.

Each error prints as one line that says what failed, where, and what to do about it, so
the CLI can show `str(error)` instead of a traceback. No message ever contains the API key:
requests are described by method and URL only, never by their headers, and any text that
came from the service (an error body, a reason phrase, a header in a debug log) passes
through `scrub` first, because a service may echo the key it rejected.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import orjson

from .secrets import REDACTED

if TYPE_CHECKING:  # only in annotations: the CLI starts without loading httpx
    import httpx

_DETAIL_MAX = 300
#: Every secret configured in this process (API keys); `scrub` removes them from text.
_SECRETS: set[str] = set()


class DimsError(Exception):
    """Base class: catch this to handle every failure dims reports on purpose."""


class ConfigurationError(DimsError):
    """The settings (base URL, key, options) cannot work; nothing was sent."""


class TransportError(DimsError):
    """The service could not be reached or did not answer, after retries."""


class ResponseFormatError(DimsError):
    """The service answered 200 with a body that is not the JSON the spec promises."""


class PaginationError(DimsError):
    """The listing's paging broke its rule: the response offset did not advance."""


class DumpError(DimsError):
    """A saved dump file cannot be read."""


class ExportError(DimsError):
    """A snapshot could not be written; earlier snapshots are untouched."""


class ReportError(DimsError):
    """A report could not be written; the dataset and earlier reports are untouched."""


class ResponseTooLargeError(ResponseFormatError):
    """The service sent a body larger than the limit, as sent or once decompressed."""


class DeadlineExceededError(TransportError):
    """One request (its attempts and waits included) did not finish within the deadline."""


class APIError(DimsError):
    """The service answered with an error status."""

    hint = "check the request and the service's status"

    def __init__(self, request: str, status_code: int, detail: str) -> None:
        self.request = request
        self.status_code = status_code
        self.detail = detail = scrub(detail)
        super().__init__(f"{request} failed: HTTP {status_code}: {detail} ({self.hint})")


class AuthenticationError(APIError):
    hint = "check DIMS_API_KEY / --api-key and DIMS_TENANT_ID / --tenant-id"


class NotFoundError(APIError):
    hint = "check the identifier; list the records to see which exist"


class ValidationError(APIError):
    hint = "check the parameter values against the interface spec"


class RateLimitError(APIError):
    hint = "the service kept rate-limiting after retries; lower --concurrency or retry later"


class ServerError(APIError):
    hint = "the service failed after retries; retry later"


def describe(request: httpx.Request) -> str:
    """`GET /path?query` of a request: enough to find it, nothing secret (no headers)."""
    url = request.url
    target = url.raw_path.decode("ascii", "replace")
    return f"{request.method} {url.scheme}://{url.netloc.decode('ascii', 'replace')}{target}"


def one_line(text: str, limit: int = _DETAIL_MAX) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _detail(response: httpx.Response) -> str:
    """The service's `detail`, whatever its shape, as one short line."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return one_line(response.text or response.reason_phrase or "no body")
    detail = body.get("detail", body) if isinstance(body, dict) else body
    if isinstance(detail, list):  # FastAPI validation errors: [{loc, msg, type}]
        parts = []
        for item in detail:
            if isinstance(item, dict):
                loc = ".".join(str(p) for p in item.get("loc", ()))
                parts.append(f"{loc}: {item.get('msg', '')}".strip(": "))
            else:
                parts.append(str(item))
        return one_line("; ".join(parts))
    return one_line(detail if isinstance(detail, str) else orjson.dumps(detail).decode())


def error_for(response: httpx.Response) -> APIError:
    """The typed error for a non-success response."""
    status = response.status_code
    if status in (401, 403):
        cls: type[APIError] = AuthenticationError
    elif status == 404:
        cls = NotFoundError
    elif status in (400, 422):
        cls = ValidationError
    elif status == 429:
        cls = RateLimitError
    elif status >= 500:
        cls = ServerError
    else:
        cls = APIError
    return cls(describe(response.request), status, _detail(response))


def raise_for_status(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise error_for(response)


# --- secrets in text from the service ------------------------------------------------------


#: Shorter values are not scrubbed: no real key is that short, and replacing every "k" in a
#: message would make it unreadable.
MIN_SECRET_LENGTH = 8


def add_secret(value: str) -> None:
    """Remember a secret (an API key) so that `scrub` removes it from any text shown later."""
    if len(value) >= MIN_SECRET_LENGTH:
        _SECRETS.add(value)


def scrub(text: str) -> str:
    """`text` with every known secret replaced by REDACTED (longest first: keys may nest)."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


class ScrubFilter(logging.Filter):
    """Rewrites a log record's message without secrets (a service can echo a key in a header
    that httpcore logs at DEBUG, or in a reason phrase that httpx logs at INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _SECRETS:
            message = record.getMessage()
            clean = scrub(message)
            if clean != message:
                record.msg, record.args = clean, None
        return True


#: Loggers of the HTTP stack that print text from the service.
HTTP_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.connection_pool",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
)


def scrub_http_logs() -> None:
    """Attach one ScrubFilter to each logger in HTTP_LOGGERS (once; idempotent)."""
    for name in HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, ScrubFilter) for f in logger.filters):
            logger.addFilter(ScrubFilter())
