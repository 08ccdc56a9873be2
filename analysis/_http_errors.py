"""From HTTP to dims' errors: a response's status to its typed error, a transport failure to
a connection error, and what a request or response may show of itself.

Why apart from the tree (`errors.py`): the tree is what a user catches and needs no HTTP
library to import (the CLI starts without httpx); this is how the layers that speak HTTP
(the transport, the fetch, the SDK) turn what came over the wire into one of those errors.
Every text taken from the service (a `detail`, a body, a reason phrase) is scrubbed of
secrets (`secrets.scrub`) and made one line before an error holds it, and a response an
error keeps carries no secret header (`without_secrets`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from ._errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ValidationError,
    scrubbed_line,
)
from ._secrets import scrub

if TYPE_CHECKING:  # only in annotations, and imported where a function needs it
    import httpx


def describe(request: httpx.Request) -> str:
    """`GET /path?query` of a request: enough to find it, nothing secret (no headers)."""
    url = request.url
    target = url.raw_path.decode("ascii", "replace")
    return f"{request.method} {url.scheme}://{url.netloc.decode('ascii', 'replace')}{target}"


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


#: The class of each error status dims names; other 4xx are APIStatusError, 5xx ServerError.
_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: ValidationError,
    429: RateLimitError,
}


def error_for(response: httpx.Response, hint: str | None = None) -> APIStatusError:
    """The typed error for a non-success response; `hint`, when given, says what to do
    instead of the class's advice."""
    status = response.status_code
    cls = _STATUS_ERRORS.get(status, ServerError if status >= 500 else APIStatusError)
    return cls(
        describe(response.request),
        status,
        _detail(response),
        hint,
        response=without_secrets(response),
    )


def without_secrets(response: httpx.Response) -> httpx.Response:
    """`response` (its body read) with a copy of its request that lacks every header holding
    a secret (the API key the auth flow added): an error, or a raw response, may be logged
    or pickled whole, and must not carry the key with it."""
    import httpx  # here: this module is imported by the CLI before httpx is needed

    request = response.request
    headers = [(k, v) for k, v in request.headers.items() if scrub(v) == v]
    return httpx.Response(
        response.status_code,
        headers=response.headers,
        content=response.content,
        request=httpx.Request(request.method, request.url, headers=headers),
    )


def connection_error(
    base_url: httpx.URL, method: str, url: str, exc: httpx.TransportError
) -> APIConnectionError:
    """One line naming the full URL and the last failure (the transport retried it, as many
    times as its policy allows; `--retries` sets that): APITimeoutError for a timeout."""
    import httpx  # here: see without_secrets

    where = base_url.join(url).copy_with(query=None)
    service = f"{base_url.scheme}://{base_url.netloc.decode()}"
    cls = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    return cls(
        f"{method.upper()} {where} failed: {type(exc).__name__}: {str(exc) or 'no detail'} "
        f"(is the service up at {service}? check DIMS_BASE_URL / --base-url)"
    )


def raise_for_status(response: httpx.Response, hint: str | None = None) -> None:
    if response.status_code >= 400:
        raise error_for(response, hint)
