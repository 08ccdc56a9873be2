"""One exception hierarchy for everything dims raises on purpose.

Each error prints as one line that says what failed, where, and what to do about it, so
the CLI can show `str(error)` instead of a traceback. No message ever contains the API key:
requests are described by method and URL only, never by their headers.
"""

from __future__ import annotations

import httpx
import orjson

_DETAIL_MAX = 300


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


class APIError(DimsError):
    """The service answered with an error status."""

    hint = "check the request and the service's status"

    def __init__(self, request: str, status_code: int, detail: str) -> None:
        self.request = request
        self.status_code = status_code
        self.detail = detail
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
