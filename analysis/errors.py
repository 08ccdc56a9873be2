"""One exception hierarchy for everything dims raises on purpose.

Each error prints as one line that says what failed, where, and what to do about it, so
the CLI can show `str(error)` instead of a traceback. No message ever contains the API key:
requests are described by method and URL only, never by their headers, and any text that
came from the service (an error body, a reason phrase, a header in a debug log) passes
through `scrub` first, because a service may echo the key it rejected.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

import orjson

from .secrets import REDACTED

if TYPE_CHECKING:  # only in annotations: the CLI starts without loading httpx
    import httpx

_DETAIL_MAX = 300
#: Characters of a body read for its detail: scrubbing is not free, and bodies can be huge.
_DETAIL_SCAN = 64 * 1024
#: Every secret configured in this process (API keys), with the pattern `scrub` finds it by.
_SECRETS: dict[str, re.Pattern[str]] = {}


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


class ManifestError(DimsError):
    """A dataset's manifest (`_manifests/<day>.json`) is not one dims wrote: not JSON, or
    not the manifest's schema (`analysis.storage.manifest`)."""


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


def scrubbed_line(text: str, limit: int = _DETAIL_MAX) -> str:
    """Text from the service as one short line, secrets replaced before it is cut (a key
    cut in two would leave a piece that no longer matches). Only the start of a long text
    is read, cut where whitespace is, which no form of a key holds."""
    if len(text) > _DETAIL_SCAN:
        text = (text[:_DETAIL_SCAN].rsplit(None, 1) or [""])[0]
    return one_line(scrub(text), limit)


def _detail(response: httpx.Response) -> str:
    """The service's `detail`, whatever its shape, as one short line."""
    try:
        body = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return scrubbed_line(response.text or response.reason_phrase or "no body")
    detail = body.get("detail", body) if isinstance(body, dict) else body
    if isinstance(detail, list):  # FastAPI validation errors: [{loc, msg, type}]
        parts = []
        for item in detail:
            if isinstance(item, dict):
                loc = ".".join(str(p) for p in item.get("loc", ()))
                parts.append(f"{loc}: {item.get('msg', '')}".strip(": "))
            else:
                parts.append(str(item))
        return scrubbed_line("; ".join(parts))
    return scrubbed_line(detail if isinstance(detail, str) else orjson.dumps(detail).decode())


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
    if len(value) >= MIN_SECRET_LENGTH and value not in _SECRETS:
        pattern = "".join(_any_form(char) for char in value)
        _SECRETS[value] = re.compile(f"(?=({pattern}))")  # a lookahead finds overlaps too


#: In a pattern: no backslash or some, and at least one. Each escaping doubles the
#: backslashes before a character (a backslash shows as two in a repr, four in the repr of
#: that repr), so a secret is found however many times it was escaped.
_ANY_BACKSLASHES, _SOME_BACKSLASHES = r"\\*", r"\\+"
#: The letter of a control character's escape in Python reprs and JSON.
_NAMED_ESCAPES = {"\n": "n", "\r": "r", "\t": "t", "\b": "b", "\f": "f", "\0": "0"}


def _hex(value: int, digits: int) -> str:
    return f"(?i:{value:0{digits}x})"


def _any_form(char: str) -> str:
    """A pattern for `char` as a log line may show it: itself (after backslashes: an escaped
    quote or backslash), or as an escape of its code (repr, JSON, `\\u…` of any encoder) or
    of its UTF-8 bytes (a bytes repr)."""
    code = ord(char)
    codes = [f"u{_hex(code, 4)}" if code < 0x10000 else f"U{_hex(code, 8)}"]
    if code < 0x100:
        codes.append(f"x{_hex(code, 2)}")
    if code > 0x7F:
        utf8 = char.encode("utf-8", "surrogatepass")
        codes.append(_SOME_BACKSLASHES.join(f"x{_hex(byte, 2)}" for byte in utf8))
    if code >= 0x10000:  # JSON writes a surrogate pair
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        codes.append(f"u{_hex(high, 4)}{_SOME_BACKSLASHES}u{_hex(low, 4)}")
    if char in _NAMED_ESCAPES:
        codes.append(_NAMED_ESCAPES[char])
    escaped = f"{_SOME_BACKSLASHES}(?:{'|'.join(codes)})"
    return f"(?:{_ANY_BACKSLASHES}{re.escape(char)}|{escaped})"


def scrub(text: str) -> str:
    """`text` with every known secret replaced by REDACTED, in every form a log line may
    give it (see `_any_form`). Where secrets overlap, or one holds another, all that any of
    them covers goes: no piece of either is left."""
    if not _SECRETS:
        return text
    spans = sorted(
        match.span(1) for pattern in _SECRETS.values() for match in pattern.finditer(text)
    )
    covered: list[list[int]] = []
    for start, stop in spans:
        if covered and start <= covered[-1][1]:
            covered[-1][1] = max(covered[-1][1], stop)
        else:
            covered.append([start, stop])
    parts, at = [], 0
    for start, stop in covered:
        parts += [text[at:start], REDACTED]
        at = stop
    parts.append(text[at:])
    return "".join(parts)


class ScrubFilter(logging.Filter):
    """Rewrites a log record's message and traceback without secrets (a service can echo a
    key in a header that httpcore logs at DEBUG, or in a reason phrase that httpx logs at
    INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _SECRETS:
            message = record.getMessage()
            clean = scrub(message)
            if clean != message:
                record.msg, record.args = clean, None
            if record.exc_info and not record.exc_text:  # the traceback shown with it
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = scrub(record.exc_text)
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
